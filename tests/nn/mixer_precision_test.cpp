// Precision on record: every sequence mixer's float training form (chunked or scanned,
// forward and backward), as models train with it, against a double-precision reference
// on the same weights and inputs, at sequence lengths up to 4096:
//   - forward: the double recurrent form (step(), token by token), the plainest statement
//     of each mixer's recurrence;
//   - backward: the double training form's backward, which the finite-difference checks of
//     each mixer's own test establish (a recurrent form has no backward).
// Errors are relative, ||float - double||_2 / ||double||_2 over the whole tensor: the output
// y, the input gradient dx, and the worst of the parameter gradients. Each mixer has its
// bounds (kBounds), about ten times what was measured; docs/experiments/recall.md lists the
// measured values, which the test prints (lines starting "precision").
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/param_store.hpp"
#include "gradcheck.hpp"
#include "nn/mixers/mixer.hpp"

using namespace seqbench;

namespace {

struct Case {
  const char* name;
  const nn::MixerFactory* factory;
  // Bounds on the relative errors at T = 4096 (shorter sequences must meet them too).
  double forward, dx, params;
};

struct Errors {
  double forward = 0, dx = 0, params = 0;
  std::string worst_param;
};

double rel_error(const float* a, const double* ref, int64_t n) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = double(a[i]) - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

// One measurement: B sequences of N tokens, width 32, two heads, the default chunk (64),
// inputs N(0, scale²): a scale of 4 drives gates and decays towards their extremes (decays
// near 0 are where chunked forms that divide by cumulative decays lose precision).
Errors measure(const nn::MixerFactory& f, int64_t N, double scale, uint64_t seed) {
  constexpr int64_t B = 2, W = 32;
  nn::MixerConfig cfg;
  cfg.heads = 2;
  core::ParamStoreT<double> psd;
  core::ParamStoreT<float> psf;
  auto md = nn::make_mixer<double>(f, cfg, psd, "mix", W, W);
  auto mf = nn::make_mixer<float>(f, cfg, psf, "mix", W, W);
  psd.finalize(0);
  psf.finalize(0);
  core::Rng rng(seed);
  md->init(rng);
  // The float mixer gets the double one's weights, rounded.
  EXPECT_EQ(psd.params().size(), psf.params().size());
  for (size_t p = 0; p < psd.params().size(); ++p) {
    const auto& d = psd.params()[p];
    auto& fl = psf.params()[p];
    EXPECT_EQ(d.name, fl.name);
    EXPECT_EQ(d.numel(), fl.numel());
    for (int64_t i = 0; i < d.numel(); ++i) fl.value[i] = float(d.value[i]);
  }
  // Inputs and output weights exactly representable in float, so that both sides see the
  // same numbers.
  core::TensorT<double> xd(core::Shape{B, N, W}), dyd(core::Shape{B, N, W}), yd(core::Shape{B, N, W}),
      dxd(core::Shape{B, N, W});
  core::TensorT<float> xf(core::Shape{B, N, W}), dyf(core::Shape{B, N, W}), yf(core::Shape{B, N, W}),
      dxf(core::Shape{B, N, W});
  for (int64_t i = 0; i < xd.numel(); ++i) {
    xf[i] = float(scale * rng.normal());
    xd[i] = xf[i];
    dyf[i] = float(rng.normal());
    dyd[i] = dyf[i];
  }
  Errors e;
  // Forward: the float training form against the double recurrence.
  mf->forward(xf.cview(), core::ViewT<const float>(), yf.view());
  const int64_t S = md->state_size();
  core::TensorT<double> state(core::Shape{B, S}), xt(core::Shape{B, W}), yt(core::Shape{B, W});
  std::vector<double> y_ref(size_t(B * N * W));
  for (int64_t t = 0; t < N; ++t) {
    for (int64_t b = 0; b < B; ++b) std::copy_n(xd.data() + (b * N + t) * W, W, xt.data() + b * W);
    md->step(xt.cview(), state.view(), yt.view());
    for (int64_t b = 0; b < B; ++b) std::copy_n(yt.data() + b * W, W, y_ref.data() + (b * N + t) * W);
  }
  e.forward = rel_error(yf.data(), y_ref.data(), B * N * W);
  // Backward: the float training form's against the double one's.
  md->forward(xd.cview(), core::ViewT<const double>(), yd.view());
  psd.zero_grad();
  psf.zero_grad();
  md->backward(dyd.cview(), dxd.view(), core::ViewT<double>());
  mf->backward(dyf.cview(), dxf.view(), core::ViewT<float>());
  e.dx = rel_error(dxf.data(), dxd.data(), B * N * W);
  for (size_t p = 0; p < psd.params().size(); ++p) {
    const auto& d = psd.params()[p];
    const double err = rel_error(psf.params()[p].grad, d.grad, d.numel());
    if (!(err <= e.params)) e.params = err, e.worst_param = d.name;  // NaN becomes the worst
  }
  return e;
}

// About ten times the largest error measured (2026-11-27, AVX-512 build; the values are in
// docs/experiments/recall.md).
const Case kCases[] = {
    {"linear_attention", &nn::kLinearAttentionMixer, 2e-6, 4e-6, 3e-5},
    {"retention", &nn::kRetentionMixer, 4e-6, 5e-6, 2e-5},
    {"gla", &nn::kGlaMixer, 4e-6, 5e-6, 2e-5},
    // The LRU's eigenvalues sit near the unit circle (|lambda| up to 0.999), so rounding
    // compounds over the sequence: its errors grow with T (measured 9e-7 at T = 64, 9e-6
    // at T = 4096), the others' do not.
    {"lru", &nn::kLruMixer, 1e-4, 1e-4, 8e-4},
    {"mamba", &nn::kMambaMixer, 3e-6, 3e-6, 2e-5},
    {"deltanet", &nn::kDeltaNetMixer, 4e-6, 4e-5, 6e-5},
    // Exponential input gates: with inputs x 4 the gates span many orders of magnitude and
    // the chunked form's errors grow twentyfold (still within the stabiliser's reach).
    {"mlstm", &nn::kMlstmMixer, 1e-4, 4e-4, 6e-4},
    {"slstm", &nn::kSlstmMixer, 4e-6, 5e-6, 2e-5},
};

class MixerPrecision : public ::testing::TestWithParam<Case> {};

TEST_P(MixerPrecision, FloatTrainingFormStaysNearTheDoubleReferenceUpToT4096) {
  const Case& c = GetParam();
  for (const auto& [N, scale] : std::vector<std::pair<int64_t, double>>{{64, 1}, {512, 1}, {4096, 1}, {4096, 4}}) {
    const Errors e = measure(*c.factory, N, scale, 7);
    std::printf("precision %-16s T=%-5lld x~N(0,%g^2)  forward %.2e  dx %.2e  params %.2e (%s)\n", c.name,
                static_cast<long long>(N), scale, e.forward, e.dx, e.params, e.worst_param.c_str());
    EXPECT_LE(e.forward, c.forward) << c.name << " T=" << N << " scale " << scale;
    EXPECT_LE(e.dx, c.dx) << c.name << " T=" << N << " scale " << scale;
    EXPECT_LE(e.params, c.params) << c.name << " T=" << N << " scale " << scale << ", worst: " << e.worst_param;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryMixer, MixerPrecision, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

// The measure itself can fail: a float mixer whose weights differ from the double one's by
// one part in a thousand is far outside every bound.
TEST(MixerPrecisionCheck, AWeightPerturbationIsSeen) {
  constexpr int64_t B = 1, N = 64, W = 32;
  nn::MixerConfig cfg;
  cfg.heads = 2;
  core::ParamStoreT<double> psd;
  core::ParamStoreT<float> psf;
  auto md = nn::make_mixer<double>(nn::kGlaMixer, cfg, psd, "mix", W, W);
  auto mf = nn::make_mixer<float>(nn::kGlaMixer, cfg, psf, "mix", W, W);
  psd.finalize(0);
  psf.finalize(0);
  core::Rng rng(3);
  md->init(rng);
  for (size_t p = 0; p < psd.params().size(); ++p)
    for (int64_t i = 0; i < psd.params()[p].numel(); ++i)
      psf.params()[p].value[i] = float(psd.params()[p].value[i] * 1.001);
  core::TensorT<double> xd(core::Shape{B, N, W}), yd(core::Shape{B, N, W});
  core::TensorT<float> xf(core::Shape{B, N, W}), yf(core::Shape{B, N, W});
  for (int64_t i = 0; i < xd.numel(); ++i) xd[i] = xf[i] = float(rng.normal());
  md->forward(xd.cview(), core::ViewT<const double>(), yd.view());
  mf->forward(xf.cview(), core::ViewT<const float>(), yf.view());
  EXPECT_GT(rel_error(yf.data(), yd.data(), yd.numel()), kCases[2].forward);
}

}  // namespace
