// mLSTM mixer (nn/mixers/mlstm.hpp): the shared mixer checks (finite-difference gradients
// w.r.t. input, initial state and every parameter; step = forward; chunk invariance; memory
// estimate = held), with and without the short convolution; the stabilised forward against an
// unstabilised double reference written here from the paper's equations, on a fixture whose
// stabiliser max takes both branches and whose normaliser max(|n^T q|, 1) takes both
// branches, each far from a tie (and the gradient check runs on that same fixture); a float
// run with input gates of e^100 (beyond float) that matches the double reference; the
// parameter count, state size and the heads error.
#include "nn/mixers/mlstm.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "nn/mixer_check.hpp"

using namespace seqbench;
using DTensor = core::TensorT<double>;

namespace {

nn::MixerConfig cfg_of(int64_t heads, int64_t chunk, int64_t short_conv = 4) {
  nn::MixerConfig c;
  c.heads = heads;
  c.chunk = chunk;
  c.short_conv = short_conv;
  return c;
}

// Gate weights N(0, 1) (init leaves them 0, so ĩ and f̃ would not depend on the token), the
// input-gate biases 0.5, the forget-gate biases 1 (f about 0.73: the stabiliser's forget branch
// decays fast enough to lose to ĩ within a few tokens), and q scaled by 4 so that |n^T q|
// crosses 1.
mixercheck::Tweak branchy(int64_t H) {
  return [H](core::ParamStoreT<double>& ps) {
    core::Rng rng(99);
    auto& gw = ps.get("mix.gates.w");
    for (int64_t i = 0; i < gw.numel(); ++i) gw.value[i] = rng.normal();
    auto& gb = ps.get("mix.gates.b");
    for (int64_t h = 0; h < H; ++h) gb.value[h] = 0.5, gb.value[H + h] = 1.0;
    auto& w = ps.get("mix.qkvo.w");
    const int64_t O = w.shape[0] / 4, I = w.shape[1];
    for (int64_t i = 0; i < O * I; ++i) w.value[i] *= 4;
  };
}

struct Branches {
  int forget = 0, input = 0;  // m_t = log f_t + m_{t-1}  /  m_t = ĩ_t
  int switches = 0;       // tokens whose branch differs from the previous token's (same row, head)
  int norm = 0, one = 0;  // max(|n^T q|, 1) = |n^T q|  /  = 1
  double m_gap = 1e300, n_gap = 1e300;  // the smallest distance from a tie of each
};

// The unstabilised mLSTM (short_conv = 0) in double, from the parameters by name: y (B, N, O)
// for x (B, N, I) and s0 (B, S) (C = C' e^{m0}, n = n' e^{m0}; null for zeros). Also records
// which side of each max was taken.
template <class P>
std::vector<double> reference(P& ps, int64_t H, int64_t I, int64_t O, int64_t B, int64_t N,
                              const std::vector<double>& x, const double* s0, Branches& br) {
  auto val = [&](const char* name) {
    auto& p = ps.get(std::string("mix.") + name);
    return std::vector<double>(p.value, p.value + p.numel());
  };
  const auto W = val("qkvo.w"), Wg = val("gates.w"), bg = val("gates.b"), Wo = val("out.w");
  const int64_t d = O / H, hs = d * d + d + 1, S = H * hs;
  std::vector<double> y(size_t(B * N * O), 0.0), z(static_cast<size_t>(O)),
      p(static_cast<size_t>(4 * O));
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> C(size_t(H * d * d), 0.0), n(size_t(H * d), 0.0), m(size_t(H), 0.0);
    std::vector<int> last(size_t(H), -1);  // the previous token's branch
    if (s0)
      for (int64_t h = 0; h < H; ++h) {
        const double* st = s0 + b * S + h * hs;
        m[h] = st[d * d + d];
        for (int64_t i = 0; i < d * d; ++i) C[h * d * d + i] = st[i] * std::exp(m[h]);
        for (int64_t i = 0; i < d; ++i) n[h * d + i] = st[d * d + i] * std::exp(m[h]);
      }
    for (int64_t t = 0; t < N; ++t) {
      const double* xt = x.data() + (b * N + t) * I;
      for (int64_t r = 0; r < 4 * O; ++r) {
        p[r] = 0;
        for (int64_t c = 0; c < I; ++c) p[r] += W[r * I + c] * xt[c];
      }
      for (int64_t h = 0; h < H; ++h) {
        double ig = bg[h], fg = bg[H + h];
        for (int64_t c = 0; c < I; ++c)
          ig += Wg[h * I + c] * xt[c], fg += Wg[(H + h) * I + c] * xt[c];
        const double f = 1 / (1 + std::exp(-fg)), i = std::exp(ig);
        const double a = std::log(f) + m[h];
        (a >= ig ? br.forget : br.input)++;
        const int branch = a >= ig ? 0 : 1;
        if (last[size_t(h)] >= 0 && last[size_t(h)] != branch) ++br.switches;
        last[size_t(h)] = branch;
        br.m_gap = std::min(br.m_gap, std::abs(a - ig));
        m[h] = std::max(a, ig);
        const double* q = p.data() + h * d;
        std::vector<double> k(p.begin() + O + h * d, p.begin() + O + h * d + d);
        for (auto& kv : k) kv /= std::sqrt(double(d));
        const double* v = p.data() + 2 * O + h * d;
        double den = 0;
        for (int64_t r = 0; r < d; ++r) {
          for (int64_t c = 0; c < d; ++c)
            C[h * d * d + r * d + c] = f * C[h * d * d + r * d + c] + i * v[r] * k[c];
          n[h * d + r] = f * n[h * d + r] + i * k[r];
        }
        for (int64_t r = 0; r < d; ++r) den += n[h * d + r] * q[r];
        (std::abs(den) > 1 ? br.norm : br.one)++;
        br.n_gap = std::min(br.n_gap, std::abs(std::abs(den) - 1));
        const double mu = std::max(std::abs(den), 1.0);
        for (int64_t r = 0; r < d; ++r) {
          double num = 0;
          for (int64_t c = 0; c < d; ++c) num += C[h * d * d + r * d + c] * q[c];
          const double o = 1 / (1 + std::exp(-p[3 * O + h * d + r]));
          z[h * d + r] = o * num / mu;
        }
      }
      for (int64_t r = 0; r < O; ++r) {
        double acc = 0;
        for (int64_t c = 0; c < O; ++c) acc += Wo[r * O + c] * z[c];
        y[(b * N + t) * O + r] = acc;
      }
    }
  }
  return y;
}

}  // namespace

TEST(MlstmMixer, GradientsMatchFiniteDifferences) {
  mixercheck::expect_gradients(nn::kMlstmMixer, cfg_of(2, 3), 5, 6, 2, 7, 11);
}

TEST(MlstmMixer, GradientsOneHeadChunkOne) {
  mixercheck::expect_gradients(nn::kMlstmMixer, cfg_of(1, 1), 3, 4, 1, 4, 12);
}

TEST(MlstmMixer, GradientsWithoutShortConv) {
  mixercheck::expect_gradients(nn::kMlstmMixer, cfg_of(2, 3, 0), 5, 6, 2, 7, 15);
}

// Width 6 with 4 tokens: the convolution's buffer in the state reaches every output.
TEST(MlstmMixer, GradientsShortConvLongerThanSequence) {
  mixercheck::expect_gradients(nn::kMlstmMixer, cfg_of(2, 3, 6), 5, 6, 2, 4, 16);
}

TEST(MlstmMixer, StepMatchesForward) {
  mixercheck::expect_step_matches_forward(nn::kMlstmMixer, cfg_of(2, 3), 5, 6, 2, 7, 13);
  mixercheck::expect_step_matches_forward(nn::kMlstmMixer, cfg_of(2, 3, 0), 5, 6, 2, 7, 17);
  mixercheck::expect_step_matches_forward(nn::kMlstmMixer, cfg_of(2, 3, 6), 5, 6, 2, 4, 18);
  mixercheck::expect_step_matches_forward(nn::kMlstmMixer, cfg_of(2, 4), 5, 6, 2, 11, 19,
                                          mixercheck::normal_state, 1e-10, branchy(2));
}

TEST(MlstmMixer, ChunkInvariance) {
  mixercheck::expect_chunk_invariance(nn::kMlstmMixer, cfg_of(2, 3), 5, 6, 2, 7, 14);
}

TEST(MlstmMixer, EstimateMatchesHeld) {
  mixercheck::expect_estimate_matches_held(nn::kMlstmMixer, cfg_of(2, 3), 5, 6, 2, 7);
  mixercheck::expect_estimate_matches_held(nn::kMlstmMixer, cfg_of(3, 64), 4, 9, 3, 5);
  mixercheck::expect_estimate_matches_held(nn::kMlstmMixer, cfg_of(2, 64), 8, 8, 2, 200);
}

// The stabilised chunked forward equals the unstabilised recurrence (double, from the
// paper's equations) on a fixture where both maxes take both branches, each at least 1e-3
// from a tie (finite differences step 1e-6); the gradient check then runs on that fixture,
// so the backward is checked on both sides of both maxes.
TEST(MlstmMixer, StabilisedEqualsUnstabilisedAndGradientsOnBothBranches) {
  const int64_t H = 2, I = 5, O = 6, B = 2, N = 9;
  const auto cfg = cfg_of(H, 4, 0);
  mixercheck::MixerFixture<double> fx(nn::kMlstmMixer, cfg, I, O, B, N, 31,
                                      mixercheck::normal_state, branchy(H));
  fx.loss();
  Branches br;
  const std::vector<double> x(fx.x.data(), fx.x.data() + fx.x.numel());
  const auto want = reference(fx.ps, H, I, O, B, N, x, fx.s0.data(), br);
  for (int64_t i = 0; i < fx.y.numel(); ++i)
    ASSERT_NEAR(fx.y[i], want[size_t(i)], 1e-10 * (1 + std::abs(want[size_t(i)]))) << "y " << i;
  EXPECT_GT(br.forget, 0) << "the stabiliser never kept log f + m";
  EXPECT_GT(br.input, 0) << "the stabiliser never took ĩ";
  EXPECT_GT(br.switches, 0) << "the stabiliser never changed branch within a sequence";
  EXPECT_GT(br.norm, 0) << "|n^T q| never exceeded 1";
  EXPECT_GT(br.one, 0) << "|n^T q| never fell below 1";
  EXPECT_GT(br.m_gap, 1e-3);
  EXPECT_GT(br.n_gap, 1e-3);
  // The stabiliser the mixer kept is the recurrence's m (read back through stabilizer()).
  auto* m = dynamic_cast<nn::MlstmMixer<double>*>(fx.mixer.get());
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->stabilizer().numel(), B * N * H);
  mixercheck::expect_gradients(nn::kMlstmMixer, cfg, I, O, B, N, 31, mixercheck::normal_state, 1e-5,
                               branchy(H));
  // From the zero state too.
  DTensor y0(fx.y.shape());
  fx.mixer->forward(fx.x.cview(), core::ViewT<const double>(), y0.view());
  Branches br0;
  const auto want0 = reference(fx.ps, H, I, O, B, N, x, nullptr, br0);
  for (int64_t i = 0; i < y0.numel(); ++i)
    ASSERT_NEAR(y0[i], want0[size_t(i)], 1e-10 * (1 + std::abs(want0[size_t(i)]))) << "y " << i;
}

// Input gates of e^100 overflow a float (max about e^88.7) but not the stabilised state: the
// float mixer's output is finite and is the double unstabilised reference's.
TEST(MlstmMixer, FloatHugeInputGateMatchesDoubleReference) {
  const int64_t H = 2, I = 4, O = 8, B = 2, N = 40;
  core::ParamStoreT<float> ps;
  auto mixer = nn::make_mixer<float>(nn::kMlstmMixer, cfg_of(H, 16, 0), ps, "mix", I, O);
  ps.finalize(0);
  core::Rng rng(5);
  mixer->init(rng);
  auto& gw = ps.get("mix.gates.w");
  for (int64_t i = 0; i < gw.numel(); ++i) gw.value[i] = float(2 * rng.normal());
  auto& gb = ps.get("mix.gates.b");
  for (int64_t h = 0; h < H; ++h) gb.value[h] = 100;
  core::TensorT<float> x(core::Shape{B, N, I}), y(core::Shape{B, N, O});
  std::vector<double> xd(size_t(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) xd[size_t(i)] = x[i] = float(rng.normal());
  mixer->forward(x.cview(), core::ViewT<const float>(), y.view());
  Branches br;
  const auto want = reference(ps, H, I, O, B, N, xd, nullptr, br);
  double scale = 0;
  for (double v : want) scale = std::max(scale, std::abs(v));
  ASSERT_GT(scale, 0.0);
  for (int64_t i = 0; i < y.numel(); ++i) {
    ASSERT_TRUE(std::isfinite(y[i])) << "y " << i;
    ASSERT_NEAR(y[i], want[size_t(i)], 1e-4 * scale) << "y " << i;
  }
  const auto fin = mixer->final_state();
  for (int64_t i = 0; i < fin.numel(); ++i) ASSERT_TRUE(std::isfinite(fin[i])) << "state " << i;
}

TEST(MlstmMixer, ParameterCountAndStateSize) {
  const int64_t I = 5, O = 6, H = 3, d = O / H, W = 4;
  {
    core::ParamStoreT<double> ps;
    auto m = nn::make_mixer<double>(nn::kMlstmMixer, cfg_of(H, 4, 0), ps, "mix", I, O);
    ps.finalize(0);
    EXPECT_EQ(m->state_size(), H * (d * d + d + 1));
    EXPECT_EQ(ps.size(), 4 * O * I + 2 * H * I + 2 * H + O * O);
    EXPECT_EQ(ps.find("mix.conv.w"), nullptr);
  }
  core::ParamStoreT<double> ps;
  auto m = nn::make_mixer<double>(nn::kMlstmMixer, cfg_of(H, 4, W), ps, "mix", I, O);
  ps.finalize(0);
  EXPECT_EQ(m->state_size(), H * (d * d + d + 1) + (W - 1) * 2 * O);
  EXPECT_EQ(ps.size(), 4 * O * I + 2 * H * I + 2 * H + O * O + 2 * O * W);
  ASSERT_NE(ps.find("mix.conv.w"), nullptr);
}

// init: forget-gate biases linspace(3, 6) over the heads, gate weights 0.
TEST(MlstmMixer, InitForgetBiases) {
  core::ParamStoreT<double> ps;
  auto m = nn::make_mixer<double>(nn::kMlstmMixer, cfg_of(4, 4), ps, "mix", 3, 8);
  ps.finalize(0);
  core::Rng rng(1);
  m->init(rng);
  const auto& gb = ps.get("mix.gates.b");
  for (int64_t h = 0; h < 4; ++h) EXPECT_DOUBLE_EQ(gb.value[4 + h], 3.0 + h);
  const auto& gw = ps.get("mix.gates.w");
  for (int64_t i = 0; i < gw.numel(); ++i) EXPECT_EQ(gw.value[i], 0.0);
}

TEST(MlstmMixer, HeadsMustDivideWidth) {
  core::ParamStoreT<double> ps;
  try {
    nn::MlstmMixer<double> m(cfg_of(4, 64), ps, "mix", 5, 6);
    FAIL() << "no UsageError for 6 % 4 != 0";
  } catch (const core::UsageError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("model.mixer.heads"), std::string::npos) << msg;
  }
}
