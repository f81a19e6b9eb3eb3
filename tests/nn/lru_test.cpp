// The LRU mixer (nn/mixers/lru.hpp): the shared mixer checks (finite-difference gradients,
// step = forward, chunk invariance, memory estimate), the paper's initialisation ring, the
// stability of the exponential parameterisation at extreme nu_log, and the closed form of
// the impulse response.
#include "nn/mixers/lru.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <string>

#include "nn/mixer_check.hpp"
#include "nn/parallel.hpp"

using namespace seqbench;

namespace {

nn::MixerConfig small_cfg() {
  nn::MixerConfig cfg;
  cfg.d_state = 4;
  cfg.chunk = 3;
  return cfg;
}

}  // namespace

TEST(LruMixer, GradientsMatchFiniteDifferences) {
  mixercheck::expect_gradients(nn::kLruMixer, small_cfg(), 5, 6, 2, 7, 41);
}

TEST(LruMixer, GradientsWithOneChunkAndChunkOfOne) {
  auto cfg = small_cfg();
  cfg.chunk = 1;
  mixercheck::expect_gradients(nn::kLruMixer, cfg, 3, 2, 2, 4, 42);
  cfg.chunk = 64;
  mixercheck::expect_gradients(nn::kLruMixer, cfg, 3, 2, 2, 4, 43);
}

TEST(LruMixer, StepMatchesForward) {
  mixercheck::expect_step_matches_forward(nn::kLruMixer, small_cfg(), 5, 6, 2, 7, 44);
}

TEST(LruMixer, ChunkInvariance) {
  mixercheck::expect_chunk_invariance(nn::kLruMixer, small_cfg(), 5, 6, 2, 7, 45);
}

TEST(LruMixer, EstimateMatchesHeld) {
  mixercheck::expect_estimate_matches_held(nn::kLruMixer, small_cfg(), 5, 6, 2, 7);
  auto cfg = small_cfg();
  cfg.chunk = 64;  // one partial chunk
  mixercheck::expect_estimate_matches_held(nn::kLruMixer, cfg, 5, 6, 3, 10);
}

TEST(LruMixer, StateSizeAndParameterCount) {
  core::ParamStoreT<double> ps;
  auto cfg = small_cfg();
  cfg.d_state = 7;
  auto m = nn::make_mixer<double>(nn::kLruMixer, cfg, ps, "lru", 3, 5);
  ps.finalize(0);
  EXPECT_EQ(m->state_size(), 14);
  // 3P + 2PI + 2OP + OI
  EXPECT_EQ(ps.size(), 3 * 7 + 2 * 7 * 3 + 2 * 5 * 7 + 5 * 3);
}

// Appendix A: |λ| on the ring [r_min, r_max], θ in (0, 2π), γ = sqrt(1 - |λ|²), and the
// scales of B (1/(2I)) and C (1/P).
TEST(LruMixer, InitIsThePapersRing) {
  core::ParamStoreT<double> ps;
  nn::MixerConfig cfg;
  cfg.d_state = 256;
  const int64_t I = 32, O = 48;
  nn::LruMixer<double> m(cfg, ps, "lru", I, O);
  ps.finalize(0);
  core::Rng rng(7);
  m.init(rng);
  const double* theta_log = ps.get("lru.theta_log").value;
  const double* gamma_log = ps.get("lru.gamma_log").value;
  double rmin = 1, rmax = 0, r2sum = 0;
  for (int64_t n = 0; n < m.units(); ++n) {
    const double r = std::abs(m.lambda(n));
    ASSERT_GE(r, nn::LruMixer<double>::kRMin - 1e-12) << n;
    ASSERT_LE(r, nn::LruMixer<double>::kRMax + 1e-12) << n;
    const double th = std::exp(theta_log[n]);
    ASSERT_GT(th, 0.0) << n;
    ASSERT_LT(th, nn::LruMixer<double>::kMaxPhase) << n;
    ASSERT_NEAR(std::exp(gamma_log[n]), std::sqrt(1 - r * r), 1e-12) << n;
    rmin = std::min(rmin, r);
    rmax = std::max(rmax, r);
    r2sum += r * r;
  }
  // Spread over the ring, uniform in r² (area): E[r²] = (r_min² + r_max²) / 2.
  EXPECT_LT(rmin, 0.92);
  EXPECT_GT(rmax, 0.99);
  EXPECT_NEAR(r2sum / 256, (0.81 + 0.998001) / 2, 0.02);
  const auto var = [&](const std::string& name) {
    const auto& p = ps.get(name);
    double s = 0;
    for (int64_t i = 0; i < p.numel(); ++i) s += p.value[i] * p.value[i];
    return s / double(p.numel());
  };
  EXPECT_NEAR(var("lru.B_re") * 2 * I, 1.0, 0.1);
  EXPECT_NEAR(var("lru.B_im") * 2 * I, 1.0, 0.1);
  EXPECT_NEAR(var("lru.C_re") * 256, 1.0, 0.1);
  EXPECT_NEAR(var("lru.C_im") * 256, 1.0, 0.1);
  EXPECT_NEAR(var("lru.D") * I, 1.0, 0.1);
}

// The exponential parameterisation keeps |λ| < 1 for any nu_log; in float, nu_log = -20
// (|λ| = 1 - 2e-9, which float rounds to 1) and 20 (λ = 0) run 512 tokens forward and
// backward without NaN or blow-up.
TEST(LruMixer, StableAtExtremeNuLogInFloat) {
  for (const float nu : {-20.0f, 20.0f}) {
    core::ParamStoreT<float> ps;
    nn::MixerConfig cfg;
    cfg.d_state = 8;
    cfg.chunk = 64;
    const int64_t B = 2, N = 512, I = 3, O = 4;
    nn::LruMixer<float> m(cfg, ps, "lru", I, O);
    ps.finalize(0);
    core::Rng rng(5);
    m.init(rng);
    auto& nu_log = ps.get("lru.nu_log");
    for (int64_t n = 0; n < nu_log.numel(); ++n) nu_log.value[n] = nu;
    for (int64_t n = 0; n < m.units(); ++n) {
      const double r = std::abs(m.lambda(n));
      EXPECT_LT(r, 1.0) << "nu_log " << nu << " unit " << n;
      EXPECT_GE(r, 0.0);
      if (nu > 0) {
        EXPECT_EQ(r, 0.0);
      }
    }
    core::TensorT<float> x(core::Shape{B, N, I}), y(core::Shape{B, N, O}), dy(core::Shape{B, N, O}),
        dx(core::Shape{B, N, I}), ds0(core::Shape{B, 2 * m.units()});
    for (int64_t i = 0; i < x.numel(); ++i) x[i] = float(rng.normal());
    for (int64_t i = 0; i < dy.numel(); ++i) dy[i] = float(rng.normal());
    m.forward(x.cview(), core::ViewT<const float>(), y.view());
    ps.zero_grad();
    m.backward(dy.cview(), dx.view(), ds0.view());
    // |h_t| <= Σ_k |λ|^k g |u| <= 512 g |u|: the outputs stay within a few hundred.
    for (int64_t i = 0; i < y.numel(); ++i) {
      ASSERT_TRUE(std::isfinite(y[i])) << "nu_log " << nu << " y " << i;
      ASSERT_LT(std::abs(y[i]), 1e3f) << "nu_log " << nu << " y " << i;
    }
    for (int64_t i = 0; i < dx.numel(); ++i)
      ASSERT_TRUE(std::isfinite(dx[i])) << "nu_log " << nu << " dx " << i;
    for (int64_t i = 0; i < ds0.numel(); ++i)
      ASSERT_TRUE(std::isfinite(ds0[i])) << "nu_log " << nu << " ds0 " << i;
    for (float gv : ps.grads()) ASSERT_TRUE(std::isfinite(gv)) << "nu_log " << nu;
    for (int64_t i = 0; i < B * 2 * m.units(); ++i)
      ASSERT_TRUE(std::isfinite(m.final_state()[i])) << "nu_log " << nu;
  }
}

// Impulse response: one input (I = 1) of 1 at t = 0, zero state, D = 0, C = c·identity
// (O = P), B = β (complex, per unit): h_t = λ^t g β, y_t[n] = Re(c λ_n^t g_n β_n).
TEST(LruMixer, ImpulseResponseIsPowersOfLambda) {
  core::ParamStoreT<double> ps;
  nn::MixerConfig cfg;
  cfg.d_state = 5;
  cfg.chunk = 4;
  const int64_t P = 5, N = 11;
  nn::LruMixer<double> m(cfg, ps, "lru", 1, P);
  ps.finalize(0);
  core::Rng rng(9);
  m.init(rng);
  const std::complex<double> c(0.7, -0.4);
  auto& b_re = ps.get("lru.B_re");
  auto& b_im = ps.get("lru.B_im");
  auto& c_re = ps.get("lru.C_re");
  auto& c_im = ps.get("lru.C_im");
  auto& d = ps.get("lru.D");
  std::fill_n(c_re.value, c_re.numel(), 0.0);
  std::fill_n(c_im.value, c_im.numel(), 0.0);
  for (int64_t n = 0; n < P; ++n) {
    c_re.value[n * P + n] = c.real();
    c_im.value[n * P + n] = c.imag();
  }
  std::fill_n(d.value, d.numel(), 0.0);
  core::TensorT<double> x(core::Shape{1, N, 1}), y(core::Shape{1, N, P});
  x[0] = 1.0;
  m.forward(x.cview(), core::ViewT<const double>(), y.view());
  const double* gamma_log = ps.get("lru.gamma_log").value;
  for (int64_t t = 0; t < N; ++t)
    for (int64_t n = 0; n < P; ++n) {
      const std::complex<double> beta(b_re.value[n], b_im.value[n]);
      const double want =
          (c * std::pow(m.lambda(n), double(t)) * std::exp(gamma_log[n]) * beta).real();
      ASSERT_NEAR(y[t * P + n], want, 1e-12) << "token " << t << " unit " << n;
    }
}

TEST(LruMixer, BadSizesAreUsageErrors) {
  core::ParamStoreT<float> ps;
  nn::MixerConfig cfg;
  cfg.d_state = 0;
  try {
    nn::LruMixer<float> m(cfg, ps, "lru", 4, 4);
    FAIL() << "d_state = 0 was accepted";
  } catch (const core::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("model.mixer.d_state"), std::string::npos) << e.what();
  }
  cfg.d_state = 4;
  EXPECT_THROW(nn::LruMixer<float>(cfg, ps, "lru2", 0, 4), core::UsageError);
}

// A batch large enough to split its rows across the OpenMP team (B·N·S >= kRowParallelMin)
// gives what its rows give one at a time (no split): outputs, dx, ds0 and the parameter
// gradients (summed over the rows, per-thread buffers reduced in order).
TEST(LruMixer, SplitRowsEqualRowsOneAtATime) {
  nn::MixerConfig cfg;
  cfg.d_state = 64;
  cfg.chunk = 16;
  const int64_t B = 4, N = 70, I = 3, O = 2, S = 2 * cfg.d_state;
  ASSERT_GE(B * N * S, nn::kRowParallelMin);
  mixercheck::MixerFixture<double> all(nn::kLruMixer, cfg, I, O, B, N, 51);
  all.loss();
  core::TensorT<double> dx(all.x.shape()), ds0(all.s0.shape());
  all.ps.zero_grad();
  all.mixer->backward(all.w_y.cview(), dx.view(), ds0.view());
  mixercheck::MixerFixture<double> one(nn::kLruMixer, cfg, I, O, 1, N, 51);
  one.ps.zero_grad();
  core::TensorT<double> dx1(one.x.shape()), ds01(one.s0.shape());
  for (int64_t b = 0; b < B; ++b) {
    std::copy_n(all.x.data() + b * N * I, N * I, one.x.data());
    std::copy_n(all.s0.data() + b * S, S, one.s0.data());
    std::copy_n(all.w_y.data() + b * N * O, N * O, one.w_y.data());
    one.loss();
    one.mixer->backward(one.w_y.cview(), dx1.view(), ds01.view());
    for (int64_t i = 0; i < N * O; ++i) ASSERT_NEAR(one.y[i], all.y[b * N * O + i], 1e-12);
    for (int64_t i = 0; i < N * I; ++i) ASSERT_NEAR(dx1[i], dx[b * N * I + i], 1e-12);
    for (int64_t i = 0; i < S; ++i) ASSERT_NEAR(ds01[i], ds0[b * S + i], 1e-12);
  }
  const auto g_all = all.ps.grads(), g_one = one.ps.grads();
  ASSERT_EQ(g_all.size(), g_one.size());
  for (size_t i = 0; i < g_all.size(); ++i)
    ASSERT_NEAR(g_all[i], g_one[i], 1e-10 * (1 + std::abs(g_one[i]))) << "grad " << i;
  mixercheck::expect_estimate_matches_held(nn::kLruMixer, cfg, I, O, B, N);
}
