#include "nn/cells/rnn.hpp"

#include <algorithm>
#include <cmath>

#include "backend/gemm.hpp"
#include "nn/parallel.hpp"
#include "nn/fast_math.hpp"
#include "nn/cells/input_projection.hpp"
#include "nn/init.hpp"

namespace seqbench::nn {

using backend::Trans;

template <class T>
typename RnnCell<T>::Phi RnnCell<T>::parse_phi(const std::string& name, const std::string& s) {
  if (s == "tanh") return Phi::Tanh;
  if (s == "relu") return Phi::Relu;
  if (s == "modrelu") return Phi::ModRelu;
  throw core::UsageError(
      fmt::format("{}: unknown RNN nonlinearity '{}' (hint: use tanh, relu or modrelu)", name, s));
}

template <class T>
typename RnnCell<T>::Init RnnCell<T>::parse_init(const std::string& name, const std::string& s) {
  if (s == "xavier") return Init::Xavier;
  if (s == "orthogonal") return Init::Orthogonal;
  if (s == "identity") return Init::Identity;
  if (s == "henaff") return Init::Henaff;
  throw core::UsageError(fmt::format(
      "{}: unknown RNN recurrent init '{}' (hint: use xavier, orthogonal, identity or henaff)",
      name, s));
}

template <class T>
RnnCell<T>::RnnCell(core::ParamStoreT<T>& ps, const std::string& name, int64_t input,
                    int64_t hidden, RnnOptions opt)
    : in_(input),
      h_(hidden),
      phi_(parse_phi(name, opt.nonlinearity)),
      init_(parse_init(name, opt.init)),
      w_x_(nullptr),
      w_h_(nullptr),
      b_(nullptr) {
  SB_CHECK(input > 0 && hidden > 0, "{}: sizes must be positive, got input={} hidden={}", name,
           input, hidden);
  w_x_ = &ps.add(name + ".w_x", core::Shape{input, hidden});
  w_h_ = &ps.add(name + ".w_h", core::Shape{hidden, hidden});
  b_ = &ps.add(name + ".b", core::Shape{hidden});
  if (phi_ == Phi::ModRelu) b_mod_ = &ps.add(name + ".b_mod", core::Shape{hidden});
}

template <class T>
void RnnCell<T>::init(core::Rng& rng, double /*forget_bias: no forget gate*/) {
  const double a = 1.0 / std::sqrt(static_cast<double>(h_));
  for (int64_t i = 0; i < w_x_->numel(); ++i) w_x_->value[i] = static_cast<T>(rng.uniform(-a, a));
  switch (init_) {
    case Init::Xavier:
      xavier_uniform(rng, w_h_->value, h_, h_, h_, h_);
      break;
    case Init::Orthogonal:
      orthogonal(rng, w_h_->value, h_, h_);
      break;
    case Init::Identity:
      identity(w_h_->value, h_);
      break;
    case Init::Henaff:
      henaff(rng, w_h_->value, h_);
      break;
  }
  std::fill_n(b_->value, h_, T(0));
  if (b_mod_)
    for (int64_t j = 0; j < h_; ++j) b_mod_->value[j] = static_cast<T>(rng.uniform(-0.01, 0.01));
}

template <class T>
void RnnCell<T>::input_forward(int64_t n, const T* x, T* xp) const {
  project_input(n, in_, h_, x, w_x_->value, b_->value, xp);
}

template <class T>
void RnnCell<T>::input_backward(int64_t n, const T* x, const T* dxp, T* dx) {
  project_input_backward(n, in_, h_, x, w_x_->value, dxp, dx, w_x_->grad, b_->grad);
}

template <class T>
void RnnCell<T>::step_forward(int64_t /*t*/, int64_t b, const T* xp, const T* s_prev, T* s,
                              T* cache) const {
  const int64_t H = h_;
  // a_t = xp_t + h_{t-1} w_h, built in s and then replaced by φ(a_t) in place.
  std::copy_n(xp, b * H, s);
  backend::gemm<T>(Trans::N, Trans::N, b, H, H, T(1), s_prev, H, w_h_->value, H, T(1), s, H);
  const int64_t n = b * H;
  switch (phi_) {
    case Phi::Tanh:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) {
        const T h = fast_tanh(s[i]);
        s[i] = h;
        cache[i] = T(1) - h * h;
      }
      break;
    case Phi::Relu:
      for (int64_t i = 0; i < n; ++i) {
        const bool on = s[i] > T(0);  // a = 0 counts as off: derivative 0 at the kink
        cache[i] = on ? T(1) : T(0);
        s[i] = on ? s[i] : T(0);
      }
      break;
    case Phi::ModRelu:
      for (int64_t r = 0; r < b; ++r)
        for (int64_t j = 0; j < H; ++j) {
          const T a = s[r * H + j];
          const T mag = std::abs(a) + b_mod_->value[j];
          // sign(0) = 0 and mag = 0 counts as inactive: derivative 0 at both kinks.
          const T m = (mag > T(0)) ? T((a > T(0)) - (a < T(0))) : T(0);
          cache[r * H + j] = m;
          s[r * H + j] = m * mag;
        }
      break;
  }
}

template <class T>
void RnnCell<T>::step_backward(int64_t /*t*/, int64_t b, const T* /*s_prev*/, T* cache, const T* ds,
                               T* dxp, T* ds_prev) const {
  const int64_t H = h_, n = b * H;
  if (phi_ == Phi::ModRelu) {
    for (int64_t i = 0; i < n; ++i) {
      const T m = cache[i];
      dxp[i] = ds[i] * m * m;  // |m|: slope 1 wherever the unit is active
      cache[i] = ds[i] * m;    // dL/db_mod for this row, summed in recurrent_weight_backward
    }
  } else {
    for (int64_t i = 0; i < n; ++i) dxp[i] = ds[i] * cache[i];
  }
  // dh_{t-1} = dA w_h^T.
  backend::gemm<T>(Trans::N, Trans::N, b, H, H, T(1), dxp, H, w_h_t_.data(), H, T(0), ds_prev, H);
}

template <class T>
void RnnCell<T>::recurrent_weight_backward(int64_t n, const T* s_prev, const T* dxp,
                                           const T* cache) {
  const int64_t H = h_;
  backend::gemm<T>(Trans::T, Trans::N, H, H, n, T(1), s_prev, H, dxp, H, T(1), w_h_->grad, H);
  if (b_mod_) add_column_sums(n, H, cache, H, b_mod_->grad);
}

template class RnnCell<float>;
template class RnnCell<double>;

}  // namespace seqbench::nn
