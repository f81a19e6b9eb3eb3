// Retention and gated linear attention (lib/nn/mixers/gla.hpp): the shared mixer checks for
// both factories, the decays' closed forms, and GLA's numerical safety in float.
#include <gtest/gtest.h>

#include <cmath>

#include "mixer_check.hpp"
#include "nn/mixers/gla.hpp"
#include "test_util.hpp"

using namespace seqbench;

namespace {

using DTensor = core::TensorT<double>;

// short_conv: the default 4 (the shared checks run with the convolution), 0 without it.
nn::MixerConfig cfg(int64_t heads, int64_t chunk, int64_t short_conv = 4) {
  nn::MixerConfig c;
  c.heads = heads;
  c.chunk = chunk;
  c.short_conv = short_conv;
  return c;
}

double sigmoid(double a) { return 1.0 / (1.0 + std::exp(-a)); }

// One step from a random state with x = 0 (no short convolution, whose buffer would feed
// q, k, v): q = k = v = 0, so the state is only decayed,
// S'[h][i][j] = decay(h, i) S[h][i][j], and y = 0.
template <class Decay>
void expect_zero_input_decays(int64_t heads, int64_t O, Decay decay_of,
                              mixercheck::MixerFixture<double>& fx) {
  const int64_t B = fx.B, I = fx.I, S = fx.S, d = O / heads;
  ASSERT_EQ(S, heads * d * d);
  DTensor x(core::Shape{B, I}), y(core::Shape{B, O});
  DTensor state = fx.s0;
  fx.mixer->step(x.cview(), state.view(), y.view());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < d; ++i)
        for (int64_t j = 0; j < d; ++j) {
          const int64_t e = b * S + (h * d + i) * d + j;
          EXPECT_NEAR(state[e], decay_of(h, i) * fx.s0[e], 1e-14)
              << "row " << b << " head " << h << " key " << i << " value " << j;
        }
  for (int64_t i = 0; i < y.numel(); ++i) EXPECT_EQ(y[i], 0.0);
}

}  // namespace

TEST(GlaRetention, GradientsMatchFiniteDifferences) {
  mixercheck::expect_gradients(nn::kRetentionMixer, cfg(2, 3), 5, 6, 2, 7, 21);
}

TEST(GlaRetention, OneChunkAndOneHeadGradients) {
  mixercheck::expect_gradients(nn::kRetentionMixer, cfg(1, 16), 3, 4, 1, 5, 22);
}

TEST(GlaRetention, StepMatchesChunkedForward) {
  mixercheck::expect_step_matches_forward(nn::kRetentionMixer, cfg(2, 3), 5, 6, 3, 8, 23);
}

TEST(GlaRetention, ChunkLengthChangesNothing) {
  mixercheck::expect_chunk_invariance(nn::kRetentionMixer, cfg(3, 4), 4, 6, 2, 11, 24);
}

TEST(GlaRetention, EstimateIsWhatItHolds) {
  mixercheck::expect_estimate_matches_held(nn::kRetentionMixer, cfg(2, 8), 5, 8, 3, 21);
}

TEST(Gla, GradientsMatchFiniteDifferences) {
  mixercheck::expect_gradients(nn::kGlaMixer, cfg(2, 3), 5, 6, 2, 7, 31);
}

TEST(Gla, OneChunkAndOneHeadGradients) {
  mixercheck::expect_gradients(nn::kGlaMixer, cfg(1, 16), 3, 4, 1, 5, 32);
}

TEST(Gla, StepMatchesChunkedForward) {
  mixercheck::expect_step_matches_forward(nn::kGlaMixer, cfg(2, 3), 5, 6, 3, 8, 33);
}

TEST(Gla, ChunkLengthChangesNothing) {
  mixercheck::expect_chunk_invariance(nn::kGlaMixer, cfg(3, 4), 4, 6, 2, 11, 34);
}

TEST(Gla, EstimateIsWhatItHolds) {
  mixercheck::expect_estimate_matches_held(nn::kGlaMixer, cfg(2, 8), 5, 8, 3, 21);
}

// Both mixers without the short convolution (model.mixer.short_conv: 0) and with a buffer
// longer than the sequence (width 6, 4 tokens), and what the convolution adds to the state
// and the parameters.
TEST(GlaRetention, SharedChecksWithoutAndWithLongShortConv) {
  uint64_t seed = 50;
  for (const auto* f : {&nn::kRetentionMixer, &nn::kGlaMixer}) {
    mixercheck::expect_gradients(*f, cfg(2, 3, 0), 5, 6, 2, 7, ++seed);
    mixercheck::expect_gradients(*f, cfg(2, 3, 6), 5, 6, 2, 4, ++seed);
    mixercheck::expect_step_matches_forward(*f, cfg(2, 3, 0), 5, 6, 3, 8, ++seed);
    mixercheck::expect_step_matches_forward(*f, cfg(2, 3, 6), 5, 6, 2, 4, ++seed);
    mixercheck::expect_estimate_matches_held(*f, cfg(2, 8, 0), 5, 8, 3, 21);
  }
}

TEST(GlaRetention, ShortConvAddsItsBufferAndFilter) {
  const int64_t I = 5, O = 6, H = 2, d = 3, W = 4;
  for (const auto* f : {&nn::kRetentionMixer, &nn::kGlaMixer}) {
    core::ParamStoreT<double> off_ps, on_ps;
    auto off = nn::make_mixer<double>(*f, cfg(H, 4, 0), off_ps, "m", I, O);
    auto on = nn::make_mixer<double>(*f, cfg(H, 4, W), on_ps, "m", I, O);
    off_ps.finalize(0);
    on_ps.finalize(0);
    EXPECT_EQ(off->state_size(), H * d * d);
    EXPECT_EQ(on->state_size(), H * d * d + (W - 1) * 3 * O);
    EXPECT_EQ(on_ps.size(), off_ps.size() + 3 * O * W);
    ASSERT_NE(on_ps.find("m.conv.w"), nullptr);
    EXPECT_EQ(off_ps.find("m.conv.w"), nullptr);
  }
}

// Retention's decay of head h is 1 - 2^(-5-h): 31/32, 63/64, 127/128 for three heads.
TEST(GlaRetention, DecaysAreOneMinusTwoToTheMinusFiveMinusH) {
  EXPECT_EQ(nn::Retention<double>::retention_decay(0), 31.0 / 32);
  EXPECT_EQ(nn::Retention<double>::retention_decay(2), 127.0 / 128);
  mixercheck::MixerFixture<double> fx(nn::kRetentionMixer, cfg(3, 4, 0), 4, 6, 2, 5, 41);
  expect_zero_input_decays(3, 6,
                           [](int64_t h, int64_t) { return 1.0 - std::pow(2.0, -5.0 - h); }, fx);
}

// GLA's decay with x = 0 is sigmoid(ba)^(1/16) per key dimension (the gate's bias alone).
TEST(Gla, DecayIsSigmoidOfTheGateToTheOneSixteenth) {
  mixercheck::MixerFixture<double> fx(nn::kGlaMixer, cfg(2, 4, 0), 4, 6, 2, 5, 42);
  auto& ba = fx.ps.get("mix.gate2.b");
  ASSERT_EQ(ba.numel(), 6);
  for (int64_t o = 0; o < 6; ++o) ba.value[o] = -4.0 + 1.5 * double(o);
  expect_zero_input_decays(
      2, 6,
      [&](int64_t h, int64_t i) { return std::pow(sigmoid(ba.value[h * 3 + i]), 1.0 / 16); },
      fx);
}

// Every α of a forward is strictly inside (0, 1), also with large gate weights.
TEST(Gla, DecaysLieStrictlyBetweenZeroAndOne) {
  mixercheck::MixerFixture<double> fx(nn::kGlaMixer, cfg(2, 4), 5, 6, 2, 9, 43);
  for (const char* name : {"mix.gate1.w", "mix.gate2.w"}) {
    auto& w = fx.ps.get(name);
    for (int64_t i = 0; i < w.numel(); ++i) w.value[i] *= 10;
  }
  fx.loss();
  auto* gla = dynamic_cast<nn::GatedLinearAttention<double>*>(fx.mixer.get());
  ASSERT_NE(gla, nullptr);
  const auto la = gla->log_decay();
  ASSERT_EQ(la.numel(), 2 * 9 * 6);
  double lo = 1, hi = 0;
  for (int64_t i = 0; i < la.numel(); ++i) {
    const double a = std::exp(la[i]);
    lo = std::min(lo, a);
    hi = std::max(hi, a);
    ASSERT_GT(a, 0.0) << i;
    ASSERT_LT(a, 1.0) << i;
  }
  EXPECT_LT(lo, 0.8);  // the scaled weights do spread the decays
  EXPECT_GT(hi, 0.99);
}

// A very negative gate pre-activation (α = sigmoid(a)^(1/16) tiny, down to 0 in float) over
// N = 256 tokens in chunks of 64: a cumulative log decay of -120 per chunk (a = -30) already
// overflows exp(-Σ log α) in float, and a = -1e4 makes every α underflow to 0. The chunked
// forward and backward stay finite and still equal the recurrent form.
TEST(Gla, VeryNegativeGateStaysFiniteInFloat) {
  for (const double gate : {-30.0, -1e4}) {
    SCOPED_TRACE(gate);
    const int64_t B = 2, N = 256, I = 5, O = 8;
    core::ParamStoreT<float> ps;
    auto m = nn::make_mixer<float>(nn::kGlaMixer, cfg(2, 64), ps, "mix", I, O);
    ps.finalize(0);
    core::Rng rng(5);
    m->init(rng);
    std::fill_n(ps.get("mix.gate2.b").value, O, float(gate));
    const int64_t S = m->state_size();
    core::TensorT<float> x(core::Shape{B, N, I}), y(core::Shape{B, N, O}),
        dy(core::Shape{B, N, O}), dx(core::Shape{B, N, I}), s0(core::Shape{B, S}),
        ds0(core::Shape{B, S});
    for (int64_t i = 0; i < x.numel(); ++i) x[i] = float(rng.normal());
    for (int64_t i = 0; i < dy.numel(); ++i) dy[i] = float(rng.normal());
    for (int64_t i = 0; i < s0.numel(); ++i) s0[i] = float(rng.normal());
    m->forward(x.cview(), s0.cview(), y.view());
    m->backward(dy.cview(), dx.view(), ds0.view());
    for (int64_t i = 0; i < y.numel(); ++i) ASSERT_TRUE(std::isfinite(y[i])) << "y " << i;
    for (int64_t i = 0; i < dx.numel(); ++i) ASSERT_TRUE(std::isfinite(dx[i])) << "dx " << i;
    for (int64_t i = 0; i < ds0.numel(); ++i) ASSERT_TRUE(std::isfinite(ds0[i])) << "ds0 " << i;
    for (const auto& p : ps.params())
      for (int64_t i = 0; i < p.numel(); ++i)
        ASSERT_TRUE(std::isfinite(p.grad[i])) << p.name << " " << i;
    const auto fin = m->final_state();
    for (int64_t i = 0; i < fin.numel(); ++i) ASSERT_TRUE(std::isfinite(fin[i])) << "state " << i;
    // The recurrent form token by token gives the same outputs (float rounding).
    core::TensorT<float> state = s0, xt(core::Shape{B, I}), yt(core::Shape{B, O});
    double worst = 0, scale = 0;
    for (int64_t t = 0; t < N; ++t) {
      for (int64_t b = 0; b < B; ++b) std::copy_n(x.data() + (b * N + t) * I, I, xt.data() + b * I);
      m->step(xt.cview(), state.view(), yt.view());
      for (int64_t b = 0; b < B; ++b)
        for (int64_t o = 0; o < O; ++o)
        {
          worst = std::max(worst, std::abs(double(yt[b * O + o]) - y[(b * N + t) * O + o]));
          scale = std::max(scale, std::abs(double(y[(b * N + t) * O + o])));
        }
    }
    EXPECT_GT(scale, 0.0);
    EXPECT_LT(worst, 1e-4 * scale);
  }
}

TEST(Gla, HeadsMustDivideTheWidth) {
  for (const auto* f : {&nn::kGlaMixer, &nn::kRetentionMixer}) {
    core::ParamStoreT<float> ps;
    EXPECT_THROW(nn::make_mixer<float>(*f, cfg(4, 8), ps, "m", 5, 6), core::UsageError);
    const std::string msg =
        testutil::message_of([&] { nn::make_mixer<float>(*f, cfg(4, 8), ps, "m2", 5, 6); });
    EXPECT_NE(msg.find("model.mixer.heads = 4"), std::string::npos) << msg;
  }
}
