// Gated DeltaNet mixer (nn/mixers/deltanet.hpp): the shared mixer checks (finite-difference
// gradients w.r.t. input, initial state and every parameter; step = forward; chunk
// invariance; memory estimate = held), the delta rule's overwrite (with α = β = 1 a second
// write of the same key replaces the value: S k = v2, not v1 + v2), the decay α in (0, 1)
// (a scalar per head), the parameter count and state size, a float run of 256 tokens that
// stays finite, and the heads error.
#include "nn/mixers/deltanet.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "nn/mixer_check.hpp"

using namespace seqbench;
using DTensor = core::TensorT<double>;

namespace {

// short_conv: the default 4 (the shared checks run with the convolution), 0 for the tests
// that set the projections by hand.
nn::MixerConfig cfg_of(int64_t heads, int64_t chunk, int64_t short_conv = 4) {
  nn::MixerConfig c;
  c.heads = heads;
  c.chunk = chunk;
  c.short_conv = short_conv;
  return c;
}

double silu(double a) { return a / (1 + std::exp(-a)); }

}  // namespace

TEST(DeltaNetMixer, GradientsMatchFiniteDifferences) {
  mixercheck::expect_gradients(nn::kDeltaNetMixer, cfg_of(2, 3), 5, 6, 2, 7, 11);
}

TEST(DeltaNetMixer, GradientsOneHeadChunkOne) {
  mixercheck::expect_gradients(nn::kDeltaNetMixer, cfg_of(1, 1), 3, 4, 1, 4, 12);
}

// The same checks without the short convolution (model.mixer.short_conv: 0), and with a
// buffer longer than the sequence (width 6, 4 tokens: the state's buffer reaches the output).
TEST(DeltaNetMixer, GradientsWithoutShortConv) {
  mixercheck::expect_gradients(nn::kDeltaNetMixer, cfg_of(2, 3, 0), 5, 6, 2, 7, 15);
}
TEST(DeltaNetMixer, GradientsShortConvLongerThanSequence) {
  mixercheck::expect_gradients(nn::kDeltaNetMixer, cfg_of(2, 3, 6), 5, 6, 2, 4, 16);
}
TEST(DeltaNetMixer, StepMatchesForwardWithoutShortConv) {
  mixercheck::expect_step_matches_forward(nn::kDeltaNetMixer, cfg_of(2, 3, 0), 5, 6, 2, 7, 17);
  mixercheck::expect_step_matches_forward(nn::kDeltaNetMixer, cfg_of(2, 3, 6), 5, 6, 2, 4, 18);
}

TEST(DeltaNetMixer, StepMatchesForward) {
  mixercheck::expect_step_matches_forward(nn::kDeltaNetMixer, cfg_of(2, 3), 5, 6, 2, 7, 13);
}

TEST(DeltaNetMixer, ChunkInvariance) {
  mixercheck::expect_chunk_invariance(nn::kDeltaNetMixer, cfg_of(2, 3), 5, 6, 2, 7, 14);
}

// A shape big enough for the (b, h) scans to run on the OpenMP team (B H N d² >= 2^15):
// the forward still equals step(), and forward + backward on the team give what one
// thread gives (each thread has its own workspace; no shared accumulation).
TEST(DeltaNetMixer, TeamScanMatchesOneThread) {
  const int64_t I = 8, O = 32, B = 4, N = 40;
  const auto cfg = cfg_of(2, 16);
  mixercheck::expect_step_matches_forward(nn::kDeltaNetMixer, cfg, I, O, B, N, 21);
  auto run = [&](int threads) {
    const int keep = omp_get_max_threads();
    omp_set_num_threads(threads);
    mixercheck::MixerFixture<double> fx(nn::kDeltaNetMixer, cfg, I, O, B, N, 22);
    fx.loss();
    DTensor dx(fx.x.shape()), ds0(fx.s0.shape());
    fx.ps.zero_grad();
    fx.mixer->backward(fx.w_y.cview(), dx.view(), ds0.view());
    omp_set_num_threads(keep);
    std::vector<double> all(fx.y.data(), fx.y.data() + fx.y.numel());
    all.insert(all.end(), dx.data(), dx.data() + dx.numel());
    all.insert(all.end(), ds0.data(), ds0.data() + ds0.numel());
    all.insert(all.end(), fx.ps.grads().begin(), fx.ps.grads().end());
    return all;
  };
  const auto one = run(1), team = run(std::max(2, omp_get_max_threads()));
  ASSERT_EQ(one.size(), team.size());
  for (size_t i = 0; i < one.size(); ++i)
    ASSERT_NEAR(one[i], team[i], 1e-10 * (1 + std::abs(one[i]))) << "entry " << i;
}

TEST(DeltaNetMixer, EstimateMatchesHeld) {
  mixercheck::expect_estimate_matches_held(nn::kDeltaNetMixer, cfg_of(2, 3), 5, 6, 2, 7);
  mixercheck::expect_estimate_matches_held(nn::kDeltaNetMixer, cfg_of(3, 64), 4, 9, 3, 5);
}

// Float over 256 tokens (several chunks, the default chunk): outputs, input gradients
// (checked by expect_estimate_matches_held) and the final state stay finite.
TEST(DeltaNetMixer, FloatLongSequenceIsFinite) {
  mixercheck::expect_estimate_matches_held(nn::kDeltaNetMixer, cfg_of(2, 64), 8, 8, 2, 256);
  core::ParamStoreT<float> ps;
  auto m = nn::make_mixer<float>(nn::kDeltaNetMixer, cfg_of(2, 64), ps, "mix", 8, 8);
  ps.finalize(0);
  core::Rng rng(5);
  m->init(rng);
  core::TensorT<float> x(core::Shape{2, 256, 8}), y(core::Shape{2, 256, 8});
  for (int64_t i = 0; i < x.numel(); ++i) x[i] = float(10 * rng.normal());  // saturating gates
  m->forward(x.cview(), core::ViewT<const float>(), y.view());
  for (int64_t i = 0; i < y.numel(); ++i) ASSERT_TRUE(std::isfinite(y[i])) << "y " << i;
  const auto fin = m->final_state();
  for (int64_t i = 0; i < fin.numel(); ++i) ASSERT_TRUE(std::isfinite(fin[i])) << "S " << i;
}

TEST(DeltaNetMixer, ParameterCountAndStateSize) {
  const int64_t I = 5, O = 6, H = 3, d = O / H, W = 4;
  {
    core::ParamStoreT<double> ps;
    auto m = nn::make_mixer<double>(nn::kDeltaNetMixer, cfg_of(H, 4, 0), ps, "mix", I, O);
    ps.finalize(0);
    EXPECT_EQ(m->state_size(), H * d * d);
    EXPECT_EQ(ps.size(), (4 * O + 2 * H) * I + O * O + 2 * H);
    EXPECT_EQ(ps.find("mix.conv.w"), nullptr);
  }
  // The short convolution adds its (3O, W) filter and its buffer of W - 1 projections.
  core::ParamStoreT<double> ps;
  auto m = nn::make_mixer<double>(nn::kDeltaNetMixer, cfg_of(H, 4, W), ps, "mix", I, O);
  ps.finalize(0);
  EXPECT_EQ(m->state_size(), H * d * d + (W - 1) * 3 * O);
  EXPECT_EQ(ps.size(), (4 * O + 2 * H) * I + O * O + 2 * H + 3 * O * W);
  ASSERT_NE(ps.find("mix.conv.w"), nullptr);
  EXPECT_EQ(ps.find("mix.conv.w")->numel(), 3 * O * W);
  EXPECT_NE(ps.find("mix.A_log"), nullptr);
  EXPECT_NE(ps.find("mix.dt_bias"), nullptr);
  EXPECT_NE(ps.find("mix.w_beta"), nullptr);
}

// With α = 1 (A_log = -200, so exp(A_log) underflows against softplus) and β = 1
// (β's pre-activation 60), writing (k, v1) and then (k, v2) leaves S k = v2: the delta
// rule replaces the value stored under a key, where linear attention would give v1 + v2
// (|k|² = 1 - 1e-6 / |silu(ak)|², hence the tolerance).
TEST(DeltaNetMixer, SecondWriteOfAKeyReplacesItsValue) {
  const int64_t I = 3, O = 2;
  core::ParamStoreT<double> ps;
  nn::DeltaNetMixer<double> m(cfg_of(1, 64, 0), ps, "mix", I, O);
  ps.finalize(0);
  core::Rng rng(7);
  m.init(rng);
  auto set = [&](const char* name, std::vector<double> v) {
    auto& p = ps.get(std::string("mix.") + name);
    ASSERT_EQ(p.numel(), int64_t(v.size())) << name;
    std::copy(v.begin(), v.end(), p.value);
  };
  // x = (1, v_a, v_b): key and gates from the constant 1, value (v_a, v_b).
  set("w_k", {10, 0, 0, 20, 0, 0});
  set("w_v", {0, 1, 0, 0, 0, 1});
  set("w_beta", {60, 0, 0});
  set("w_a", {0, 0, 0});
  set("A_log", {-200});
  const double v1[2] = {0.7, -1.3}, v2[2] = {-0.4, 2.1};
  DTensor x(core::Shape{1, 2, I}), y(core::Shape{1, 2, O});
  x[0] = 1, x[1] = v1[0], x[2] = v1[1];
  x[3] = 1, x[4] = v2[0], x[5] = v2[1];
  double k[2] = {silu(10.0), silu(20.0)};
  const double r = std::sqrt(k[0] * k[0] + k[1] * k[1] + 1e-6);
  k[0] /= r, k[1] /= r;
  auto Sk = [&](int row) {
    const auto s = m.final_state();  // [i][j], i value, j key
    return s[row * 2 + 0] * k[0] + s[row * 2 + 1] * k[1];
  };
  // One write from the zero state: S = v1 k^T.
  DTensor x1(core::Shape{1, 1, I}), y1(core::Shape{1, 1, O});
  std::copy_n(x.data(), I, x1.data());
  m.forward(x1.cview(), core::ViewT<const double>(), y1.view());
  for (int i = 0; i < 2; ++i) EXPECT_NEAR(Sk(i), v1[i], 1e-5) << "after the first write";
  // Two writes: the second replaces the first.
  m.forward(x.cview(), core::ViewT<const double>(), y.view());
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR(Sk(i), v2[i], 1e-5) << "after the second write, row " << i;
    EXPECT_GT(std::abs(Sk(i) - (v1[i] + v2[i])), 0.1) << "accumulated like linear attention";
  }
}

// With β ≈ 0 (pre-activation -60) a token only decays the state: S_1 = α S_0, one α per
// head, strictly inside (0, 1) at the paper's initialisation, and different tokens give
// different α (the gate is data dependent).
TEST(DeltaNetMixer, DecayIsAScalarPerHeadInsideZeroOne) {
  const int64_t I = 4, O = 6, H = 2, d = 3, B = 3, S = H * d * d;
  core::ParamStoreT<double> ps;
  nn::DeltaNetMixer<double> m(cfg_of(H, 64, 0), ps, "mix", I, O);
  ps.finalize(0);
  core::Rng rng(8);
  m.init(rng);
  auto& wb = ps.get("mix.w_beta");
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < I; ++i) wb.value[h * I + i] = i == 0 ? -60.0 : 0.0;
  DTensor x(core::Shape{B, 1, I}), y(core::Shape{B, 1, O}), s0(core::Shape{B, S});
  for (int64_t b = 0; b < B; ++b) {
    x[b * I] = 1;
    for (int64_t i = 1; i < I; ++i) x[b * I + i] = 3 * rng.normal();
  }
  for (int64_t i = 0; i < s0.numel(); ++i) s0[i] = 0.5 + rng.uniform();  // away from 0
  m.forward(x.cview(), s0.cview(), y.view());
  const auto fin = m.final_state();
  std::vector<double> alphas;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const double a = fin[b * S + h * d * d] / s0[b * S + h * d * d];
      EXPECT_GT(a, 0.0);
      EXPECT_LT(a, 1.0);
      for (int64_t e = 1; e < d * d; ++e)
        EXPECT_NEAR(fin[b * S + h * d * d + e] / s0[b * S + h * d * d + e], a, 1e-12)
            << "row " << b << " head " << h << " entry " << e;
      alphas.push_back(a);
    }
  EXPECT_NE(alphas[0], alphas[2]) << "α should depend on the token";
}

TEST(DeltaNetMixer, HeadsMustDivideWidth) {
  core::ParamStoreT<double> ps;
  try {
    nn::DeltaNetMixer<double> m(cfg_of(4, 64), ps, "mix", 5, 6);
    FAIL() << "no UsageError for 6 % 4 != 0";
  } catch (const core::UsageError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("model.mixer.heads"), std::string::npos) << msg;
    EXPECT_NE(msg.find("hint"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}
