// Causal linear attention (lib/nn/mixers/linear_attention.hpp): the shared mixer checks and
// the equations' own properties.
#include <gtest/gtest.h>

#include <cmath>

#include "mixer_check.hpp"
#include "nn/mixers/linear_attention.hpp"
#include "test_util.hpp"

using namespace seqbench;

namespace {

// The normaliser column z = Σ φ(k) of a reachable state is positive: draw |N(0, 1)| there
// (and anywhere else, which changes nothing for the check).
void positive_state(core::Rng& rng, double* s0, int64_t n) {
  for (int64_t i = 0; i < n; ++i) s0[i] = 0.2 + std::abs(rng.normal());
}

// short_conv: the default 4 (the shared checks run with the convolution), 0 without it.
nn::MixerConfig cfg(int64_t heads, int64_t chunk, int64_t short_conv = 4) {
  nn::MixerConfig c;
  c.heads = heads;
  c.chunk = chunk;
  c.short_conv = short_conv;
  return c;
}

}  // namespace

TEST(LinearAttention, GradientsMatchFiniteDifferences) {
  mixercheck::expect_gradients(nn::kLinearAttentionMixer, cfg(2, 3), 5, 6, 2, 7, 11,
                               positive_state);
}

TEST(LinearAttention, OneChunkAndOneHeadGradients) {
  mixercheck::expect_gradients(nn::kLinearAttentionMixer, cfg(1, 16), 3, 4, 1, 5, 12,
                               positive_state);
}

// Without the short convolution (model.mixer.short_conv: 0), and with a buffer longer than
// the sequence (width 6, 4 tokens).
TEST(LinearAttention, GradientsWithoutShortConv) {
  mixercheck::expect_gradients(nn::kLinearAttentionMixer, cfg(2, 3, 0), 5, 6, 2, 7, 16,
                               positive_state);
}
TEST(LinearAttention, GradientsShortConvLongerThanSequence) {
  mixercheck::expect_gradients(nn::kLinearAttentionMixer, cfg(2, 3, 6), 5, 6, 2, 4, 17,
                               positive_state);
}
TEST(LinearAttention, StepMatchesForwardWithoutAndWithLongShortConv) {
  mixercheck::expect_step_matches_forward(nn::kLinearAttentionMixer, cfg(2, 3, 0), 5, 6, 3, 8,
                                          18, positive_state);
  mixercheck::expect_step_matches_forward(nn::kLinearAttentionMixer, cfg(2, 3, 6), 5, 6, 2, 4,
                                          19, positive_state);
}

// The state is the heads' [S | z] and then the convolution's last W - 1 projections; the
// filter is "<name>.conv.w" (3 O, W).
TEST(LinearAttention, ShortConvAddsItsBufferAndFilter) {
  const int64_t I = 5, O = 6, H = 2, d = 3, W = 4;
  core::ParamStoreT<double> off_ps, on_ps;
  auto off = nn::make_mixer<double>(nn::kLinearAttentionMixer, cfg(H, 4, 0), off_ps, "m", I, O);
  auto on = nn::make_mixer<double>(nn::kLinearAttentionMixer, cfg(H, 4, W), on_ps, "m", I, O);
  off_ps.finalize(0);
  on_ps.finalize(0);
  EXPECT_EQ(off->state_size(), H * d * (d + 1));
  EXPECT_EQ(on->state_size(), H * d * (d + 1) + (W - 1) * 3 * O);
  EXPECT_EQ(on_ps.size(), off_ps.size() + 3 * O * W);
  ASSERT_NE(on_ps.find("m.conv.w"), nullptr);
  EXPECT_EQ(off_ps.find("m.conv.w"), nullptr);
}

TEST(LinearAttention, StepMatchesChunkedForward) {
  mixercheck::expect_step_matches_forward(nn::kLinearAttentionMixer, cfg(2, 3), 5, 6, 3, 8, 13,
                                          positive_state);
}

TEST(LinearAttention, ChunkLengthChangesNothing) {
  mixercheck::expect_chunk_invariance(nn::kLinearAttentionMixer, cfg(3, 4), 4, 6, 2, 11, 14,
                                      positive_state);
}

TEST(LinearAttention, EstimateIsWhatItHolds) {
  mixercheck::expect_estimate_matches_held(nn::kLinearAttentionMixer, cfg(2, 8), 5, 8, 3, 21);
  mixercheck::expect_estimate_matches_held(nn::kLinearAttentionMixer, cfg(2, 8, 0), 5, 8, 3, 21);
}

// From the zero state the first token attends to itself only: o_0 = v_0 exactly (the
// normaliser divides φ(q)·φ(k) v by φ(q)·φ(k)), up to ε.
TEST(LinearAttention, FirstTokenReturnsItsOwnValue) {
  mixercheck::MixerFixture<double> f(nn::kLinearAttentionMixer, cfg(2, 4, 0), 3, 4, 2, 6, 15);
  auto& qkv = f.ps.params().front();  // "<name>.qkv.w" (3 O, I)
  auto& out = f.ps.params().back();   // "<name>.out.w" (O, O): make it the identity
  ASSERT_EQ(out.shape[0], 4);
  std::fill_n(out.value, out.numel(), 0.0);
  for (int64_t i = 0; i < 4; ++i) out.value[i * 4 + i] = 1;
  f.mixer->forward(f.x.cview(), core::ViewT<const double>(), f.y.view());
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t o = 0; o < 4; ++o) {
      double v = 0;  // v_0 = x_0 Wv^T, rows 2 O .. 3 O of W
      for (int64_t i = 0; i < 3; ++i) v += f.x[(b * 6) * 3 + i] * qkv.value[(8 + o) * 3 + i];
      EXPECT_NEAR(f.y[(b * 6) * 4 + o], v, 1e-5) << "row " << b << " unit " << o;
    }
}

TEST(LinearAttention, HeadsMustDivideTheWidth) {
  core::ParamStoreT<float> ps;
  const std::string msg = testutil::message_of(
      [&] { nn::make_mixer<float>(nn::kLinearAttentionMixer, cfg(3, 4), ps, "m", 4, 8); });
  EXPECT_NE(msg.find("model.mixer.heads = 3"), std::string::npos) << msg;
}
