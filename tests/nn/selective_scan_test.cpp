// The selective scan (Mamba's mixer, nn/mixers/selective_scan.hpp): the shared mixer checks
// (finite-difference gradients, step = forward, chunk invariance, estimate = held), and its
// own: the conv is causal, the parameterisation keeps A < 0 and Δ > 0 (a closed-form decay
// of the state), init as mamba_simple.py, the sizes, the usage errors, a long float run, and
// the row-parallel scan equal to the serial one.
#include "nn/mixers/selective_scan.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "nn/mixer_check.hpp"

using namespace seqbench;

namespace {

nn::MixerConfig small_cfg() {
  nn::MixerConfig c;
  c.d_state = 4;
  c.expand = 2;
  c.conv = 3;
  c.chunk = 3;
  return c;
}

double softplus(double v) { return std::log1p(std::exp(v)); }

}  // namespace

TEST(SelectiveScan, GradientsMatchFiniteDifferences) {
  mixercheck::expect_gradients(nn::kMambaMixer, small_cfg(), 5, 6, 2, 7, 11);
}

TEST(SelectiveScan, GradientsWhenTheConvReachesPastTheSequence) {
  // K - 1 = 3 history entries, 2 tokens: the conv reads s0's history at every token; no
  // conv at all (K = 1) has no history in the state.
  auto cfg = small_cfg();
  cfg.conv = 4;
  mixercheck::expect_gradients(nn::kMambaMixer, cfg, 3, 2, 2, 2, 12);
  mixercheck::expect_step_matches_forward(nn::kMambaMixer, cfg, 3, 2, 2, 2, 13);
  cfg.conv = 1;
  cfg.chunk = 1;
  mixercheck::expect_gradients(nn::kMambaMixer, cfg, 3, 2, 2, 4, 14);
  mixercheck::expect_step_matches_forward(nn::kMambaMixer, cfg, 3, 2, 2, 4, 15);
}

TEST(SelectiveScan, StepMatchesForward) {
  mixercheck::expect_step_matches_forward(nn::kMambaMixer, small_cfg(), 5, 6, 2, 7, 21);
}

TEST(SelectiveScan, ChunkInvariance) {
  mixercheck::expect_chunk_invariance(nn::kMambaMixer, small_cfg(), 5, 6, 2, 7, 31);
}

TEST(SelectiveScan, EstimateMatchesHeld) {
  mixercheck::expect_estimate_matches_held(nn::kMambaMixer, small_cfg(), 5, 6, 3, 10);
  auto cfg = small_cfg();
  cfg.chunk = 64;  // longer than the sequence: one partial chunk
  mixercheck::expect_estimate_matches_held(nn::kMambaMixer, cfg, 5, 6, 2, 7);
}

TEST(SelectiveScan, SizesAndParameterCount) {
  core::ParamStoreT<double> ps;
  auto cfg = small_cfg();
  auto m = nn::make_mixer<double>(nn::kMambaMixer, cfg, ps, "mix", 33, 6);
  ps.finalize(0);
  const int64_t E = 12, N = 4, K = 3, R = 3;  // R = ceil(33 / 16)
  EXPECT_EQ(m->state_size(), E * N + (K - 1) * E);
  EXPECT_EQ(ps.size(), E * (2 * 33 + 6 + K + 2 * R + 3 * N + 3));
  EXPECT_EQ(ps.size(), nn::SelectiveScan<double>::param_count(cfg, 33, 6));
  EXPECT_EQ(ps.get("mix.x_proj.w").shape, (core::Shape{R + 2 * N, E}));
  EXPECT_EQ(ps.get("mix.dt_proj.w").shape, (core::Shape{E, R}));
}

TEST(SelectiveScan, BadSizesNameTheirKey) {
  core::ParamStoreT<double> ps;
  auto expect_key = [&](nn::MixerConfig cfg, int64_t out, const std::string& key) {
    try {
      nn::make_mixer<double>(nn::kMambaMixer, cfg, ps, "mix", 5, out);
      ADD_FAILURE() << "no error for " << key;
    } catch (const core::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("hint"), std::string::npos) << e.what();
    }
  };
  auto cfg = small_cfg();
  cfg.d_state = 0;
  expect_key(cfg, 6, "model.mixer.d_state");
  cfg = small_cfg();
  cfg.expand = 0;
  expect_key(cfg, 6, "model.mixer.expand");
  cfg = small_cfg();
  cfg.conv = 0;
  expect_key(cfg, 6, "model.mixer.conv");
  expect_key(small_cfg(), 0, "model.hidden / model.d_model");
}

TEST(SelectiveScan, InitAsMambaSimple) {
  core::ParamStoreT<double> ps;
  auto m = nn::make_mixer<double>(nn::kMambaMixer, small_cfg(), ps, "mix", 5, 6);
  ps.finalize(0);
  core::Rng rng(5);
  m->init(rng);
  const auto& a_log = ps.get("mix.A_log");
  for (int64_t e = 0; e < 12; ++e)
    for (int64_t n = 0; n < 4; ++n) EXPECT_DOUBLE_EQ(a_log.value[e * 4 + n], std::log(n + 1.0));
  const auto& dt_b = ps.get("mix.dt_proj.b");
  for (int64_t e = 0; e < 12; ++e) {
    const double dt = softplus(dt_b.value[e]);
    EXPECT_GE(dt, 0.001 * (1 - 1e-9)) << e;
    EXPECT_LE(dt, 0.1 * (1 + 1e-9)) << e;
  }
  const auto& d = ps.get("mix.D");
  for (int64_t e = 0; e < 12; ++e) EXPECT_EQ(d.value[e], 1.0);
  const auto& dt_w = ps.get("mix.dt_proj.w");  // R = 1: U(-1, 1)
  for (int64_t i = 0; i < dt_w.numel(); ++i) EXPECT_LE(std::abs(dt_w.value[i]), 1.0);
}

TEST(SelectiveScan, ConvIsCausal) {
  mixercheck::MixerFixture<double> fx(nn::kMambaMixer, small_cfg(), 5, 6, 2, 7, 41);
  fx.loss();
  const auto y0 = fx.y;
  const int64_t t = 3;
  for (int64_t i = 0; i < 5; ++i) fx.x[(1 * 7 + t) * 5 + i] += 1.0;  // row 1, token 3
  fx.loss();
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t s = 0; s < 7; ++s) {
      double change = 0;
      for (int64_t o = 0; o < 6; ++o)
        change = std::max(change, std::abs(fx.y[(b * 7 + s) * 6 + o] - y0[(b * 7 + s) * 6 + o]));
      if (b == 1 && s >= t)
        EXPECT_GT(change, 1e-6) << "row " << b << " token " << s;
      else
        EXPECT_EQ(change, 0.0) << "row " << b << " token " << s;
    }
}

// A = -exp(A_log) < 0 and Δ = softplus(.) > 0 whatever the parameters: with x = 0 and a
// zero conv bias, u = 0, so the scan only decays its initial state, and Δ = softplus(b_dt):
//   h_L[e, n] = exp(L softplus(b_dt[e]) (-exp(A_log[e, n]))) h_0[e, n], each factor in (0, 1).
TEST(SelectiveScan, StateDecaysInClosedForm) {
  auto cfg = small_cfg();
  mixercheck::MixerFixture<double> fx(nn::kMambaMixer, cfg, 5, 6, 2, 7, 51);
  core::Rng rng(52);
  auto& a_log = fx.ps.get("mix.A_log");
  auto& dt_b = fx.ps.get("mix.dt_proj.b");
  auto& conv_b = fx.ps.get("mix.conv.b");
  for (int64_t i = 0; i < a_log.numel(); ++i) a_log.value[i] = rng.uniform(-4, 1);
  for (int64_t i = 0; i < dt_b.numel(); ++i) dt_b.value[i] = rng.uniform(-4, 1);
  for (int64_t i = 0; i < conv_b.numel(); ++i) conv_b.value[i] = 0;
  for (int64_t i = 0; i < fx.x.numel(); ++i) fx.x[i] = 0;
  const int64_t E = 12, N = 4, S = fx.S;
  for (int64_t b = 0; b < 2; ++b)  // no conv history: u_in = 0 at every tap
    for (int64_t i = E * N; i < S; ++i) fx.s0[b * S + i] = 0;
  fx.loss();
  const auto fin = fx.mixer->final_state();
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t e = 0; e < E; ++e)
      for (int64_t n = 0; n < N; ++n) {
        const double factor =
            std::exp(7 * softplus(dt_b.value[e]) * -std::exp(a_log.value[e * N + n]));
        ASSERT_GT(factor, 0.0);
        ASSERT_LT(factor, 1.0);
        const double h0 = fx.s0[b * S + e * N + n], h = fin[b * S + e * N + n];
        EXPECT_NEAR(h, factor * h0, 1e-12 * std::abs(h0)) << b << " " << e << " " << n;
        if (h0 != 0) {
          EXPECT_LT(std::abs(h), std::abs(h0));
        }
      }
    for (int64_t i = E * N; i < S; ++i) EXPECT_EQ(fin[b * S + i], 0.0);  // u_in = 0
  }
  for (int64_t i = 0; i < fx.y.numel(); ++i) EXPECT_EQ(fx.y[i], 0.0);  // silu(z = 0) = 0
}

TEST(SelectiveScan, FloatLongSequenceIsFinite) {
  auto cfg = small_cfg();
  cfg.d_state = 16;
  cfg.chunk = 64;
  mixercheck::expect_estimate_matches_held(nn::kMambaMixer, cfg, 5, 6, 2, 512);
  mixercheck::MixerFixture<float> fx(nn::kMambaMixer, cfg, 5, 6, 2, 512, 61);
  fx.loss();
  core::TensorT<float> dx(fx.x.shape()), ds0(fx.s0.shape());
  fx.mixer->backward(fx.w_y.cview(), dx.view(), ds0.view());
  for (int64_t i = 0; i < fx.y.numel(); ++i) ASSERT_TRUE(std::isfinite(fx.y[i])) << i;
  for (int64_t i = 0; i < dx.numel(); ++i) ASSERT_TRUE(std::isfinite(dx[i])) << i;
  for (int64_t i = 0; i < ds0.numel(); ++i) ASSERT_TRUE(std::isfinite(ds0[i])) << i;
  for (float g : fx.ps.grads()) ASSERT_TRUE(std::isfinite(g));
}

// B L E N large enough for the row slices: two threads give the serial outputs and
// gradients (up to the order of the per-thread sums, and the BLAS's own threading).
TEST(SelectiveScan, RowParallelEqualsSerial) {
  auto cfg = small_cfg();
  cfg.d_state = 16;
  cfg.chunk = 16;
  const int keep = omp_get_max_threads();
  auto run = [&](int threads, std::vector<double>& out) {
    omp_set_num_threads(threads);
    mixercheck::MixerFixture<double> fx(nn::kMambaMixer, cfg, 5, 6, 4, 64, 71);
    fx.loss();
    core::TensorT<double> dx(fx.x.shape()), ds0(fx.s0.shape());
    fx.mixer->backward(fx.w_y.cview(), dx.view(), ds0.view());
    out.assign(fx.y.data(), fx.y.data() + fx.y.numel());
    out.insert(out.end(), dx.data(), dx.data() + dx.numel());
    out.insert(out.end(), ds0.data(), ds0.data() + ds0.numel());
    out.insert(out.end(), fx.ps.grads().begin(), fx.ps.grads().end());
    return fx.y.numel();
  };
  std::vector<double> serial, parallel;
  const int64_t ny = run(1, serial);
  run(2, parallel);
  omp_set_num_threads(keep);
  ASSERT_EQ(serial.size(), parallel.size());
  for (size_t i = 0; i < serial.size(); ++i)
    ASSERT_NEAR(serial[i], parallel[i], 1e-12 * (1 + std::abs(serial[i])))
        << (int64_t(i) < ny ? "y " : "gradient ") << i;
}
