// Our LSTM cell driven by Recurrent<LstmCell>: finite-difference gradients in double
// w.r.t. inputs, parameters and the initial (h, c), with full and truncated BPTT; the
// gradient-norm probe.
#include <gtest/gtest.h>

#include "gradcheck.hpp"
#include "nn/cell_check.hpp"
#include "nn/cells/lstm.hpp"
#include "nn/recurrent/recurrent.hpp"

using namespace seqbench;

namespace {
nn::LstmCell<double> make_lstm(core::ParamStoreT<double>& ps, int64_t in, int64_t hidden) {
  return nn::LstmCell<double>(ps, "lstm", in, hidden);
}
}  // namespace

class LstmGrad : public ::testing::TestWithParam<std::tuple<int, int, int, int>> {};

TEST_P(LstmGrad, FullBpttMatchesFiniteDifferences) {
  const auto [T, B, I, H] = GetParam();
  const int in = I, hidden = H;  // clang 14 lambdas cannot capture structured bindings
  cellcheck::expect_gradients<nn::LstmCell<double>>(
      [&](auto& ps) { return make_lstm(ps, in, hidden); }, T, B, 11 + T * 7 + H);
}

INSTANTIATE_TEST_SUITE_P(Shapes, LstmGrad,
                         ::testing::Values(std::make_tuple(1, 1, 1, 1), std::make_tuple(3, 2, 3, 4),
                                           std::make_tuple(6, 3, 2, 5)));

TEST(LstmTruncated, EqualsChunkwiseFullBptt) {
  cellcheck::expect_truncation_is_chunkwise<nn::LstmCell<double>>(
      [](auto& ps) { return make_lstm(ps, 3, 4); }, 7, 2, 3, 5);
}

TEST(LstmProbe, NormsAreThoseOfTheTotalStateGradient) {
  // Loss on the last step only: dh_T-1 = w, earlier norms come only through recurrence.
  auto make = [](auto& ps) { return make_lstm(ps, 2, 3); };
  cellcheck::Fixture<nn::LstmCell<double>> f(make, 5, 2, 0, 3, 0.5);
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
  cellcheck::Fixture<nn::LstmCell<double>> g(make, 5, 2, 1, 3, 0.5);
  g.loss();
  g.w_y = f.w_y;
  std::vector<double> tn;
  g.rnn->backward(g.w_y.cview(), core::ViewT<double>(), core::ViewT<double>(), &tn);
  for (int t = 0; t < 4; ++t) EXPECT_EQ(tn[t], 0.0);
  EXPECT_NEAR(tn[4], norms[4], 1e-12);
}
