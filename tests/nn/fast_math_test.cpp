#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "nn/fast_math.hpp"

namespace seqbench::nn {
namespace {

TEST(FastMath, ExpRelativeErrorOverItsRange) {
  double worst = 0;
  for (float x = -87.0f; x <= 88.0f; x += 0.00731f) {
    const double ref = std::exp(double(x));
    worst = std::max(worst, std::fabs(double(fast_exp(x)) - ref) / ref);
  }
  EXPECT_LT(worst, 3e-7);
}

TEST(FastMath, ExpSaturatesAndKeepsNaN) {
  EXPECT_GT(fast_exp(200.0f), 1e38f);
  EXPECT_TRUE(std::isfinite(fast_exp(200.0f)));
  EXPECT_LT(fast_exp(-200.0f), 1e-37f);
  EXPECT_GE(fast_exp(-200.0f), 0.0f);
  EXPECT_TRUE(std::isnan(fast_exp(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(fast_tanh(std::numeric_limits<float>::quiet_NaN())));
}

TEST(FastMath, TanhAndSigmoidAbsoluteError) {
  double worst_tanh = 0, worst_sig = 0, worst_small_rel = 0;
  bool bounded = true, odd = true;
  for (float x = -20.0f; x <= 20.0f; x += 0.000917f) {
    bounded = bounded && std::fabs(fast_tanh(x)) <= 1.0f;
    odd = odd && fast_tanh(-x) == -fast_tanh(x);
    worst_tanh = std::max(worst_tanh, std::fabs(double(fast_tanh(x)) - std::tanh(double(x))));
    const double sig = 1.0 / (1.0 + std::exp(-double(x)));
    worst_sig = std::max(worst_sig, std::fabs(double(sigmoid(x)) - sig));
    if (x != 0.0f && std::fabs(x) < 0.1f)
      worst_small_rel = std::max(
          worst_small_rel, std::fabs(double(fast_tanh(x)) - std::tanh(double(x))) / std::fabs(std::tanh(double(x))));
  }
  EXPECT_LT(worst_tanh, 4e-7);  // 2.7e-7 with FMA, 3.4e-7 in the portable build
  EXPECT_TRUE(bounded) << "|tanh| exceeded 1";
  EXPECT_TRUE(odd) << "tanh(-x) != -tanh(x)";
  EXPECT_LT(worst_sig, 2e-7);
  // Near zero tanh keeps its relative accuracy (no 1 - e^-2x cancellation).
  EXPECT_LT(worst_small_rel, 1e-6);
  EXPECT_EQ(fast_tanh(0.0f), 0.0f);
  EXPECT_EQ(fast_tanh(30.0f), 1.0f);
  EXPECT_EQ(fast_tanh(-30.0f), -1.0f);
}

TEST(FastMath, DoubleIsLibm) {
  EXPECT_EQ(fast_exp(1.3), std::exp(1.3));
  EXPECT_EQ(fast_tanh(-0.7), std::tanh(-0.7));
}

}  // namespace
}  // namespace seqbench::nn
