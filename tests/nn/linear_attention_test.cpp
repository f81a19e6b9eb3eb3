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

nn::MixerConfig cfg(int64_t heads, int64_t chunk) {
  nn::MixerConfig c;
  c.heads = heads;
  c.chunk = chunk;
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
}

// From the zero state the first token attends to itself only: o_0 = v_0 exactly (the
// normaliser divides φ(q)·φ(k) v by φ(q)·φ(k)), up to ε.
TEST(LinearAttention, FirstTokenReturnsItsOwnValue) {
  mixercheck::MixerFixture<double> f(nn::kLinearAttentionMixer, cfg(2, 4), 3, 4, 2, 6, 15);
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
