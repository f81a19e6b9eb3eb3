// sLSTM mixer (nn/mixers/slstm.hpp): the shared mixer checks (finite-difference gradients
// w.r.t. input, initial state and every parameter through BPTT; step = forward; chunk
// invariance, trivially; memory estimate = held); the stabilised forward against an
// unstabilised double reference written here from the paper's equations, on a fixture where
// the stabiliser's max takes both branches far from a tie (and the gradient check runs on that
// fixture); a float run with input gates of e^100 that matches the double reference; the
// block-diagonal recurrence (a head reads only its own part of h_{t-1}); sizes; heads error.
#include "nn/mixers/slstm.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "nn/mixer_check.hpp"

using namespace seqbench;
using DTensor = core::TensorT<double>;

namespace {

nn::MixerConfig cfg_of(int64_t heads) {
  nn::MixerConfig c;
  c.heads = heads;
  c.chunk = 3;
  return c;
}

// A state [h | c' | n' | m] per row with n' in (0.5, 1.5): the normaliser of a state the
// mixer could have produced is positive.
mixercheck::StateFill slstm_state(int64_t O) {
  return [O](core::Rng& rng, double* s0, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t part = (i % (4 * O)) / O;
      s0[i] = part == 2 ? 0.5 + rng.uniform() : 0.5 * rng.normal();
    }
  };
}

// Forget-gate biases 0 (f about 0.5: the forget branch of the stabiliser loses to ĩ within a
// few tokens), input weights doubled so that ĩ varies from token to token.
mixercheck::Tweak branchy() {
  return [](core::ParamStoreT<double>& ps) {
    auto& w = ps.get("mix.w.w");
    for (int64_t i = 0; i < w.numel(); ++i) w.value[i] *= 2;
    auto& b = ps.get("mix.w.b");
    const int64_t O = b.numel() / 4;
    std::fill_n(b.value + O, O, 0.0);
  };
}

struct Branches {
  int forget = 0, input = 0;
  int switches = 0;  // tokens whose branch differs from the previous token's (same row, unit)
  double gap = 1e300;
};

// The unstabilised sLSTM in double from the parameters by name: c = c' e^{m0}, n = n' e^{m0}.
template <class P>
std::vector<double> reference(P& ps, int64_t H, int64_t I, int64_t O, int64_t B, int64_t N,
                              const std::vector<double>& x, const double* s0, Branches& br) {
  auto val = [&](const char* name) {
    auto& p = ps.get(std::string("mix.") + name);
    return std::vector<double>(p.value, p.value + p.numel());
  };
  const auto W = val("w.w"), bw = val("w.b"), R = val("r");
  const int64_t d = O / H;
  std::vector<double> y(size_t(B * N * O)), pre(size_t(4 * O));
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> h(size_t(O), 0.0), c(size_t(O), 0.0), n(size_t(O), 0.0), m(size_t(O), 0.0);
    std::vector<int> last(size_t(O), -1);  // the previous token's branch
    if (s0)
      for (int64_t u = 0; u < O; ++u) {
        const double* st = s0 + b * 4 * O;
        h[u] = st[u], m[u] = st[3 * O + u];
        c[u] = st[O + u] * std::exp(m[u]), n[u] = st[2 * O + u] * std::exp(m[u]);
      }
    for (int64_t t = 0; t < N; ++t) {
      const double* xt = x.data() + (b * N + t) * I;
      for (int64_t r = 0; r < 4 * O; ++r) {
        double acc = bw[r];
        for (int64_t k = 0; k < I; ++k) acc += W[r * I + k] * xt[k];
        const int64_t u = r % O, hd = (u / d) * d;
        for (int64_t j = 0; j < d; ++j) acc += R[r * d + j] * h[hd + j];
        pre[r] = acc;
      }
      for (int64_t u = 0; u < O; ++u) {
        const double i = std::exp(pre[u]), f = 1 / (1 + std::exp(-pre[O + u]));
        const double z = std::tanh(pre[2 * O + u]), o = 1 / (1 + std::exp(-pre[3 * O + u]));
        const double a = std::log(f) + m[u];
        (a >= pre[u] ? br.forget : br.input)++;
        const int branch = a >= pre[u] ? 0 : 1;
        if (last[size_t(u)] >= 0 && last[size_t(u)] != branch) ++br.switches;
        last[size_t(u)] = branch;
        br.gap = std::min(br.gap, std::abs(a - pre[u]));
        m[u] = std::max(a, pre[u]);
        c[u] = f * c[u] + i * z;
        n[u] = f * n[u] + i;
        h[u] = o * c[u] / n[u];
        y[size_t((b * N + t) * O + u)] = h[u];
      }
    }
  }
  return y;
}

}  // namespace

TEST(SlstmMixer, GradientsMatchFiniteDifferences) {
  mixercheck::expect_gradients(nn::kSlstmMixer, cfg_of(2), 5, 6, 2, 7, 11, slstm_state(6));
}

TEST(SlstmMixer, GradientsOneHead) {
  mixercheck::expect_gradients(nn::kSlstmMixer, cfg_of(1), 3, 4, 1, 5, 12, slstm_state(4));
}

TEST(SlstmMixer, StepMatchesForward) {
  mixercheck::expect_step_matches_forward(nn::kSlstmMixer, cfg_of(2), 5, 6, 2, 7, 13,
                                          slstm_state(6));
  mixercheck::expect_step_matches_forward(nn::kSlstmMixer, cfg_of(3), 4, 9, 3, 5, 14,
                                          slstm_state(9), 1e-10, branchy());
}

TEST(SlstmMixer, ChunkInvariance) {
  mixercheck::expect_chunk_invariance(nn::kSlstmMixer, cfg_of(2), 5, 6, 2, 7, 15, slstm_state(6));
}

TEST(SlstmMixer, EstimateMatchesHeld) {
  mixercheck::expect_estimate_matches_held(nn::kSlstmMixer, cfg_of(2), 5, 6, 2, 7);
  mixercheck::expect_estimate_matches_held(nn::kSlstmMixer, cfg_of(4), 8, 8, 2, 200);
}

TEST(SlstmMixer, StabilisedEqualsUnstabilisedAndGradientsOnBothBranches) {
  const int64_t H = 2, I = 5, O = 6, B = 2, N = 9;
  mixercheck::MixerFixture<double> fx(nn::kSlstmMixer, cfg_of(H), I, O, B, N, 31, slstm_state(O),
                                      branchy());
  fx.loss();
  Branches br;
  const std::vector<double> x(fx.x.data(), fx.x.data() + fx.x.numel());
  const auto want = reference(fx.ps, H, I, O, B, N, x, fx.s0.data(), br);
  for (int64_t i = 0; i < fx.y.numel(); ++i)
    ASSERT_NEAR(fx.y[i], want[size_t(i)], 1e-10) << "y " << i;
  EXPECT_GT(br.forget, 0) << "the stabiliser never kept log f + m";
  EXPECT_GT(br.input, 0) << "the stabiliser never took ĩ";
  EXPECT_GT(br.switches, 0) << "the stabiliser never changed branch within a sequence";
  EXPECT_GT(br.gap, 1e-3);
  mixercheck::expect_gradients(nn::kSlstmMixer, cfg_of(H), I, O, B, N, 31, slstm_state(O), 1e-5,
                               branchy());
  DTensor y0(fx.y.shape());
  fx.mixer->forward(fx.x.cview(), core::ViewT<const double>(), y0.view());
  Branches br0;
  const auto want0 = reference(fx.ps, H, I, O, B, N, x, nullptr, br0);
  for (int64_t i = 0; i < y0.numel(); ++i) ASSERT_NEAR(y0[i], want0[size_t(i)], 1e-10) << "y " << i;
}

TEST(SlstmMixer, FloatHugeInputGateMatchesDoubleReference) {
  const int64_t H = 2, I = 4, O = 8, B = 2, N = 40;
  core::ParamStoreT<float> ps;
  auto mixer = nn::make_mixer<float>(nn::kSlstmMixer, cfg_of(H), ps, "mix", I, O);
  ps.finalize(0);
  core::Rng rng(5);
  mixer->init(rng);
  auto& b = ps.get("mix.w.b");
  std::fill_n(b.value, O, 100.0f);  // ĩ about 100: i = e^100 > FLT_MAX
  core::TensorT<float> x(core::Shape{B, N, I}), y(core::Shape{B, N, O});
  std::vector<double> xd(size_t(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) xd[size_t(i)] = x[i] = float(rng.normal());
  mixer->forward(x.cview(), core::ViewT<const float>(), y.view());
  Branches br;
  const auto want = reference(ps, H, I, O, B, N, xd, nullptr, br);
  for (int64_t i = 0; i < y.numel(); ++i) {
    ASSERT_TRUE(std::isfinite(y[i])) << "y " << i;
    ASSERT_NEAR(y[i], want[size_t(i)], 1e-4) << "y " << i;
  }
}

// From the zero state with input gates of e^-200 (below float's smallest number): the first
// token's i' = exp(ĩ - m) must not underflow to 0, or c'/n' is 0 / 0; the output is finite and
// the double reference's (where e^-200 is representable).
TEST(SlstmMixer, FloatZeroStateTinyInputGateIsFinite) {
  const int64_t H = 2, I = 4, O = 8, B = 2, N = 6;
  core::ParamStoreT<float> ps;
  auto mixer = nn::make_mixer<float>(nn::kSlstmMixer, cfg_of(H), ps, "mix", I, O);
  ps.finalize(0);
  core::Rng rng(6);
  mixer->init(rng);
  std::fill_n(ps.get("mix.w.b").value, O, -200.0f);
  core::TensorT<float> x(core::Shape{B, N, I}), y(core::Shape{B, N, O});
  std::vector<double> xd(size_t(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) xd[size_t(i)] = x[i] = float(rng.normal());
  mixer->forward(x.cview(), core::ViewT<const float>(), y.view());
  Branches br;
  const auto want = reference(ps, H, I, O, B, N, xd, nullptr, br);
  for (int64_t i = 0; i < y.numel(); ++i) {
    ASSERT_TRUE(std::isfinite(y[i])) << "y " << i;
    ASSERT_NEAR(y[i], want[size_t(i)], 1e-4) << "y " << i;
  }
}

// Head 1's units read only head 1's part of h_{t-1}: a state differing only in head 0's h
// leaves head 1's first output unchanged, and changes head 0's.
TEST(SlstmMixer, RecurrenceIsBlockDiagonalPerHead) {
  const int64_t H = 2, I = 3, O = 6, d = 3, B = 1;
  core::ParamStoreT<double> ps;
  auto m = nn::make_mixer<double>(nn::kSlstmMixer, cfg_of(H), ps, "mix", I, O);
  ps.finalize(0);
  core::Rng rng(4);
  m->init(rng);
  DTensor x(core::Shape{B, 1, I}), s0(core::Shape{B, 4 * O}), s1(core::Shape{B, 4 * O});
  DTensor y0(core::Shape{B, 1, O}), y1(core::Shape{B, 1, O});
  for (int64_t i = 0; i < I; ++i) x[i] = rng.normal();
  slstm_state(O)(rng, s0.data(), 4 * O);
  s1 = s0;
  for (int64_t j = 0; j < d; ++j) s1[j] += 1.0;  // head 0's h only
  m->forward(x.cview(), s0.cview(), y0.view());
  m->forward(x.cview(), s1.cview(), y1.view());
  for (int64_t u = d; u < O; ++u) EXPECT_EQ(y0[u], y1[u]) << "head 1 unit " << u;
  double diff = 0;
  for (int64_t u = 0; u < d; ++u) diff += std::abs(y0[u] - y1[u]);
  EXPECT_GT(diff, 1e-6) << "head 0 ignores its own h_{t-1}";
}

TEST(SlstmMixer, ParameterCountAndStateSize) {
  const int64_t I = 5, O = 6, H = 3, d = O / H;
  core::ParamStoreT<double> ps;
  auto m = nn::make_mixer<double>(nn::kSlstmMixer, cfg_of(H), ps, "mix", I, O);
  ps.finalize(0);
  EXPECT_EQ(m->state_size(), 4 * O);
  EXPECT_EQ(ps.size(), 4 * O * I + 4 * O + 4 * O * d);
}

TEST(SlstmMixer, HeadsMustDivideWidth) {
  core::ParamStoreT<double> ps;
  try {
    nn::SlstmMixer<double> m(cfg_of(4), ps, "mix", 5, 6);
    FAIL() << "no UsageError for 6 % 4 != 0";
  } catch (const core::UsageError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("model.mixer.heads"), std::string::npos) << msg;
  }
}
