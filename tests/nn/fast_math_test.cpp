#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "nn/additive_energy.hpp"
#include "nn/fast_math.hpp"
#include "nn/mixers/mixer_math.hpp"

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

// log1p_unit over its domain [0, 1], down to denormal-sized y where log1p(y) = y, and
// the softplus and log σ built on it against double libm over a wide range of x.
TEST(FastMath, Log1pUnitAndTheSoftplusOnIt) {
  double worst = 0;
  for (double y : {0.0, 1e-38, 1e-30, 1e-12, 1e-7, 3e-4}) {
    const double ref = std::log1p(double(float(y)));
    const double got = log1p_unit(float(y));
    worst = std::max(worst, ref == 0 ? std::fabs(got) : std::fabs(got - ref) / ref);
  }
  for (float y = 0.0f; y <= 1.0f; y += 0.000137f) {
    const double ref = std::log1p(double(y));
    if (ref > 0) worst = std::max(worst, std::fabs(double(log1p_unit(y)) - ref) / ref);
  }
  EXPECT_LT(worst, 3e-7);
  EXPECT_EQ(log1p_unit(0.0f), 0.0f);
  EXPECT_TRUE(std::isnan(log1p_unit(std::numeric_limits<float>::quiet_NaN())));
  double worst_sp = 0, worst_ls = 0;
  for (float x = -80.0f; x <= 80.0f; x += 0.00731f) {
    const double sp = std::max(double(x), 0.0) + std::log1p(std::exp(-std::fabs(double(x))));
    const double ls = std::min(double(x), 0.0) - std::log1p(std::exp(-std::fabs(double(x))));
    worst_sp = std::max(worst_sp, std::fabs(double(mixer_math::softplus(x)) - sp) / sp);
    worst_ls = std::max(worst_ls, std::fabs(double(mixer_math::log_sigmoid(x)) - ls) / std::fabs(ls));
  }
  EXPECT_LT(worst_sp, 5e-7);
  EXPECT_LT(worst_ls, 5e-7);
}

TEST(FastMath, DoubleIsLibm) {
  EXPECT_EQ(log1p_unit(0.3), std::log1p(0.3));
  EXPECT_EQ(fast_exp(1.3), std::exp(1.3));
  EXPECT_EQ(fast_tanh(-0.7), std::tanh(-0.7));
}


// The vector kernels of additive_energy.hpp against the same arithmetic one element at a
// time (fast_tanh, the sum in double), at lengths around the vector widths (8, 16), with
// arguments past tanh's clamp on both sides and a NaN that must come through. Both forms
// are within fast_tanh's 4e-7 of tanh and may differ in the last bits where the compiler
// fuses the scalar form's multiply-adds otherwise.
TEST(FastMath, AdditiveEnergyKernelsMatchTheElementwiseFormula) {
  for (const int64_t n : {1, 7, 8, 9, 15, 16, 17, 33, 128, 131}) {
    std::vector<float> v(n), q(n), u(n), dv(n), dq(n), du(n);
    for (int64_t j = 0; j < n; ++j) {
      v[j] = 0.37f * std::sin(0.9f * float(j) + 0.2f);
      q[j] = 6.0f * std::cos(1.3f * float(j));       // some q + u beyond ±7.9
      u[j] = 5.0f * std::sin(0.7f * float(j) + 1.0f);
      dv[j] = 0.1f * float(j % 5);
      dq[j] = -0.2f * float(j % 3);
      du[j] = 0.05f * float(j % 7);
    }
    double ref = 0;
    for (int64_t j = 0; j < n; ++j) ref += double(v[j]) * double(fast_tanh(q[j] + u[j]));
    EXPECT_NEAR(additive_energy(n, v.data(), q.data(), u.data()), ref, 1e-6 * (1 + std::fabs(ref)))
        << "n=" << n;
    const float de = -0.83f;
    std::vector<float> dv0 = dv, dq0 = dq, du0 = du;
    additive_energy_backward(n, de, v.data(), q.data(), u.data(), dv.data(), dq.data(), du.data());
    for (int64_t j = 0; j < n; ++j) {
      const float t = fast_tanh(q[j] + u[j]);
      const float p = de * v[j] * (1.0f - t * t);
      EXPECT_NEAR(dv[j], dv0[j] + de * t, 1e-6f) << "n=" << n << " j=" << j;
      EXPECT_NEAR(dq[j], dq0[j] + p, 1e-6f) << "n=" << n << " j=" << j;
      EXPECT_NEAR(du[j], du0[j] + p, 1e-6f) << "n=" << n << " j=" << j;
    }
  }
  std::vector<float> v(16, 1.0f), q(16, 0.5f), u(16, 0.0f), g(16, 0.0f), gq(16, 0.0f), gu(16, 0.0f);
  u[11] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(additive_energy(16, v.data(), q.data(), u.data())));
  additive_energy_backward(16, 1.0f, v.data(), q.data(), u.data(), g.data(), gq.data(), gu.data());
  EXPECT_TRUE(std::isnan(g[11]) && std::isnan(gq[11]) && std::isnan(gu[11]));
  EXPECT_FALSE(std::isnan(g[10]) || std::isnan(gq[12]));
  // The clamp: far outside ±7.9 each term is ±v exactly.
  std::fill(u.begin(), u.end(), 40.0f);
  u[3] = -40.0f;
  EXPECT_FLOAT_EQ(additive_energy(16, v.data(), q.data(), u.data()), 14.0f);
}

}  // namespace
}  // namespace seqbench::nn
