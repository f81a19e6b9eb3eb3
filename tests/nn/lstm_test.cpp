// Our LSTM cell driven by Recurrent<LstmCell>: finite-difference gradients in double
// w.r.t. inputs, parameters and the initial (h, c), with full and truncated BPTT; the
// gradient-norm probe.
#include <gtest/gtest.h>

#include "gradcheck.hpp"
#include "nn/cells/lstm.hpp"
#include "nn/recurrent.hpp"

using namespace seqbench;
using core::Shape;
using DTensor = core::TensorT<double>;

namespace {

struct LstmFixture {
  int64_t T, B, I, H;
  core::ParamStoreT<double> ps;
  std::unique_ptr<nn::Recurrent<nn::LstmCell<double>>> rnn;
  DTensor x, s0, y, w_y;

  LstmFixture(int64_t t, int64_t b, int64_t i, int64_t h, int64_t bptt, uint64_t seed)
      : T(t), B(b), I(i), H(h), x(Shape{t, b, i}), s0(Shape{b, 2 * h}), y(Shape{t, b, h}),
        w_y(Shape{t, b, h}) {
    rnn = std::make_unique<nn::Recurrent<nn::LstmCell<double>>>(
        nn::LstmCell<double>(ps, "lstm", i, h), bptt, 1.0);
    ps.finalize(0);
    core::Rng rng(seed);
    rnn->init(rng);
    gradcheck::fill_normal(rng, x);
    gradcheck::fill_normal(rng, s0, 0.5);
    gradcheck::fill_normal(rng, w_y);
  }
  double loss() {
    rnn->forward(x.cview(), s0.cview(), y.view());
    return gradcheck::dot(w_y.data(), y.data(), y.numel());
  }
};

}  // namespace

class LstmGrad : public ::testing::TestWithParam<std::tuple<int, int, int, int>> {};

TEST_P(LstmGrad, FullBpttMatchesFiniteDifferences) {
  auto [T, B, I, H] = GetParam();
  LstmFixture f(T, B, I, H, 0, 11 + T * 7 + H);
  f.loss();
  DTensor dx(f.x.shape()), ds0(f.s0.shape());
  f.ps.zero_grad();
  f.rnn->backward(f.w_y.cview(), dx.view(), ds0.view());
  auto loss = [&] { return f.loss(); };
  gradcheck::expect_gradient("dx", f.x.data(), dx.data(), dx.numel(), loss);
  gradcheck::expect_gradient("ds0 (h0 and c0)", f.s0.data(), ds0.data(), ds0.numel(), loss);
  for (auto& p : f.ps.params()) {
    std::vector<double> analytic(p.grad, p.grad + p.numel());
    gradcheck::expect_gradient(p.name, p.value, analytic.data(), p.numel(), loss);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, LstmGrad,
                         ::testing::Values(std::make_tuple(1, 1, 1, 1), std::make_tuple(3, 2, 3, 4),
                                           std::make_tuple(6, 3, 2, 5)));

// Truncated BPTT(k) must equal the sum over chunks [0,k), [k,2k), ... of full BPTT
// run on each chunk alone, starting from the (constant) state the full forward reached.
TEST(LstmTruncated, EqualsChunkwiseFullBptt) {
  const int64_t T = 7, B = 2, I = 3, H = 4, k = 3;
  LstmFixture trunc(T, B, I, H, k, 5);
  trunc.loss();
  DTensor dx(trunc.x.shape()), ds0(trunc.s0.shape());
  trunc.ps.zero_grad();
  trunc.rnn->backward(trunc.w_y.cview(), dx.view(), ds0.view());

  LstmFixture full(T, B, I, H, 0, 5);  // same seed: same weights and data
  full.loss();                         // states of the full forward
  core::ParamStoreT<double>& ps = full.ps;
  ps.zero_grad();
  DTensor dx_ref(trunc.x.shape()), ds0_ref(trunc.s0.shape());
  DTensor state(Shape{B, 2 * H});
  std::copy_n(full.s0.data(), B * 2 * H, state.data());
  // Run each chunk through the full model's Recurrent with its own start state.
  for (int64_t t0 = 0; t0 < T; t0 += k) {
    const int64_t len = std::min(k, T - t0);
    DTensor xc(Shape{len, B, I}), yc(Shape{len, B, H}), dxc(Shape{len, B, I}),
        ds0c(Shape{B, 2 * H});
    std::copy_n(full.x.data() + t0 * B * I, len * B * I, xc.data());
    full.rnn->forward(xc.cview(), state.cview(), yc.view());
    core::TensorT<double> next(Shape{B, 2 * H});
    std::copy_n(full.rnn->final_state().data, B * 2 * H, next.data());
    core::ViewT<const double> wy(full.w_y.data() + t0 * B * H, Shape{len, B, H});
    full.rnn->backward(wy, dxc.view(), ds0c.view());
    std::copy_n(dxc.data(), len * B * I, dx_ref.data() + t0 * B * I);
    if (t0 == 0) std::copy_n(ds0c.data(), B * 2 * H, ds0_ref.data());
    state = next;
  }
  for (int64_t i = 0; i < dx.numel(); ++i) EXPECT_NEAR(dx[i], dx_ref[i], 1e-12) << "dx " << i;
  for (int64_t i = 0; i < ds0.numel(); ++i) EXPECT_NEAR(ds0[i], ds0_ref[i], 1e-12) << "ds0 " << i;
  auto g = trunc.ps.grads();
  auto g_ref = ps.grads();
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], g_ref[i], 1e-12) << "param grad " << i;
  // And truncation really changed something: full BPTT gradients differ.
  LstmFixture f2(T, B, I, H, 0, 5);
  f2.loss();
  DTensor dx_full(f2.x.shape());
  f2.rnn->backward(f2.w_y.cview(), dx_full.view(), core::ViewT<double>());
  double diff = 0;
  for (int64_t i = 0; i < dx.numel(); ++i) diff += std::abs(dx[i] - dx_full[i]);
  EXPECT_GT(diff, 1e-6);
}

TEST(LstmProbe, NormsAreThoseOfTheTotalStateGradient) {
  // Loss on the last step only: dh_T-1 = w, earlier norms come only through recurrence.
  LstmFixture f(5, 2, 2, 3, 0, 3);
  f.loss();
  for (int64_t t = 0; t < 4; ++t)
    for (int64_t i = 0; i < 2 * 3; ++i) f.w_y[t * 6 + i] = 0;
  std::vector<double> norms;
  f.rnn->backward(f.w_y.cview(), core::ViewT<double>(), core::ViewT<double>(), &norms);
  ASSERT_EQ(norms.size(), 5u);
  double last = 0;
  for (int64_t i = 0; i < 6; ++i) last += f.w_y[4 * 6 + i] * f.w_y[4 * 6 + i];
  EXPECT_NEAR(norms[4], std::sqrt(last), 1e-12);
  // Earlier norms come only through the recurrence: positive without truncation and
  // exactly zero with k = 1 (no gradient crosses any step).
  for (int t = 0; t < 4; ++t) EXPECT_GT(norms[t], 0.0);
  LstmFixture g(5, 2, 2, 3, 1, 3);
  g.loss();
  g.w_y = f.w_y;
  std::vector<double> tn;
  g.rnn->backward(g.w_y.cview(), core::ViewT<double>(), core::ViewT<double>(), &tn);
  for (int t = 0; t < 4; ++t) EXPECT_EQ(tn[t], 0.0);
  EXPECT_NEAR(tn[4], norms[4], 1e-12);
}
