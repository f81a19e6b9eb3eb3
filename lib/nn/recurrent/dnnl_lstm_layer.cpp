#include "nn/recurrent/dnnl_lstm_layer.hpp"

#include <algorithm>

namespace seqbench::nn {

namespace {
// (B, 2H) state rows [h | c] <-> separate (B, H) arrays.
void split_state(const float* s, int64_t b, int64_t h, float* hs, float* cs) {
  for (int64_t r = 0; r < b; ++r) {
    std::copy_n(s + r * 2 * h, h, hs + r * h);
    std::copy_n(s + r * 2 * h + h, h, cs + r * h);
  }
}
void join_state(const float* hs, const float* cs, int64_t b, int64_t h, float* s) {
  for (int64_t r = 0; r < b; ++r) {
    std::copy_n(hs + r * h, h, s + r * 2 * h);
    std::copy_n(cs + r * h, h, s + r * 2 * h + h);
  }
}
void ensure(core::Tensor& t, core::Shape s) {
  if (!(t.shape() == s)) t.resize(s);
}
}  // namespace

DnnlLstmLayer::DnnlLstmLayer(core::ParamStore& ps, const std::string& name, int64_t input,
                             int64_t hidden, double forget_bias,
                             Recurrent<LstmCell<float>>::InitFn init_fn)
    : reference_(LstmCell<float>(ps, name, input, hidden), 0, forget_bias, std::move(init_fn)),
      dnnl_(input, hidden) {}

void DnnlLstmLayer::forward(core::ConstView x, core::ConstView s0, core::View y) {
  const int64_t T = x.dim(0), B = x.dim(1), I = input_size(), H = hidden();
  core::check_shape(x, core::Shape{T, B, I}, "DnnlLstmLayer.forward x");
  core::check_shape(y, core::Shape{T, B, H}, "DnnlLstmLayer.forward y");
  T_ = T;
  B_ = B;
  x_ = x;
  has_s0_ = s0.data != nullptr;
  ensure(hT_, core::Shape{B, H});
  ensure(cT_, core::Shape{B, H});
  ensure(final_, core::Shape{B, 2 * H});
  if (has_s0_) {
    core::check_shape(s0, core::Shape{B, 2 * H}, "DnnlLstmLayer.forward s0");
    ensure(s0_, core::Shape{B, 2 * H});
    ensure(h0_, core::Shape{B, H});
    ensure(c0_, core::Shape{B, H});
    std::copy_n(s0.data, B * 2 * H, s0_.data());
    split_state(s0.data, B, H, h0_.data(), c0_.data());
  }
  auto& cell = reference_.cell();
  dnnl_.forward(T, B, x.data, has_s0_ ? h0_.data() : nullptr, has_s0_ ? c0_.data() : nullptr,
                cell.w_x().value, cell.w_h().value, cell.b().value, y.data, hT_.data(),
                cT_.data());
  join_state(hT_.data(), cT_.data(), B, H, final_.data());
}

void DnnlLstmLayer::backward(core::ConstView dy, core::View dx, core::View ds0,
                             std::vector<double>* dh_norms) {
  const int64_t T = T_, B = B_, H = hidden();
  SB_CHECK(T > 0, "DnnlLstmLayer.backward called before forward");
  core::check_shape(dy, core::Shape{T, B, H}, "DnnlLstmLayer.backward dy");
  if (dh_norms) {
    // Probe: replay the sequence on our own cell, which exposes dL/dh_t per step.
    ensure(probe_y_, core::Shape{T, B, H});
    reference_.forward(x_, has_s0_ ? s0_.cview() : core::ConstView(), probe_y_.view());
    reference_.backward(dy, dx, ds0, dh_norms);
    return;
  }
  if (dx.data) core::check_shape(dx, x_.shape, "DnnlLstmLayer.backward dx");
  if (ds0.data) {
    core::check_shape(ds0, core::Shape{B, 2 * H}, "DnnlLstmLayer.backward ds0");
    ensure(dh0_, core::Shape{B, H});
    ensure(dc0_, core::Shape{B, H});
  }
  auto& cell = reference_.cell();
  dnnl_.backward(T, B, dy.data, nullptr, nullptr, dx.data, ds0.data ? dh0_.data() : nullptr,
                 ds0.data ? dc0_.data() : nullptr, cell.w_x().grad, cell.w_h().grad,
                 cell.b().grad);
  if (ds0.data) join_state(dh0_.data(), dc0_.data(), B, H, ds0.data);
}

size_t DnnlLstmLayer::held_bytes() const {
  return dnnl_.workspace_bytes() + sizeof(float) * size_t(s0_.numel() + h0_.numel() +
                                                          c0_.numel() + hT_.numel() + cT_.numel() +
                                                          final_.numel());
}

}  // namespace seqbench::nn
