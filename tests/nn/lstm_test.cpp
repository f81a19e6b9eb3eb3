// Our LSTM cell driven by Recurrent<LstmCell>: finite-difference gradients in double
// w.r.t. inputs, parameters and the initial (h, c), with full and truncated BPTT; the
// gradient-norm probe.
#include <gtest/gtest.h>

#include "gradcheck.hpp"
#include "nn/cell_check.hpp"
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

namespace {
nn::LstmCell<double> make_lstm(core::ParamStoreT<double>& ps, int64_t in, int64_t hidden) {
  return nn::LstmCell<double>(ps, "lstm", in, hidden);
}
}  // namespace

class LstmGrad : public ::testing::TestWithParam<std::tuple<int, int, int, int>> {};

TEST_P(LstmGrad, FullBpttMatchesFiniteDifferences) {
  auto [T, B, I, H] = GetParam();
  cellcheck::expect_gradients<nn::LstmCell<double>>(
      [&](auto& ps) { return make_lstm(ps, I, H); }, T, B, 11 + T * 7 + H);
}

INSTANTIATE_TEST_SUITE_P(Shapes, LstmGrad,
                         ::testing::Values(std::make_tuple(1, 1, 1, 1), std::make_tuple(3, 2, 3, 4),
                                           std::make_tuple(6, 3, 2, 5)));

TEST(LstmTruncated, EqualsChunkwiseFullBptt) {
  cellcheck::expect_truncation_is_chunkwise<nn::LstmCell<double>>(
      [](auto& ps) { return make_lstm(ps, 3, 4); }, 7, 2, 3, 5);
  // And truncation really changes something: full BPTT gradients differ.
  LstmFixture a(7, 2, 3, 4, 3, 5), b(7, 2, 3, 4, 0, 5);
  a.loss();
  b.loss();
  DTensor dxa(a.x.shape()), dxb(b.x.shape());
  a.rnn->backward(a.w_y.cview(), dxa.view(), core::ViewT<double>());
  b.rnn->backward(b.w_y.cview(), dxb.view(), core::ViewT<double>());
  double diff = 0;
  for (int64_t i = 0; i < dxa.numel(); ++i) diff += std::abs(dxa[i] - dxb[i]);
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
