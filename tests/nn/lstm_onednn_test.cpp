// Our LSTM (LstmCell + Recurrent) and oneDNN's primitive (DnnlLstmLayer) agree on
// outputs, final state and every gradient, given the same parameters.
#include <gtest/gtest.h>

#include "gradcheck.hpp"
#include "nn/recurrent/dnnl_lstm_layer.hpp"
#include "nn/seq_model.hpp"

using namespace seqbench;
using core::Shape;

namespace {

// Float sums over T steps cancel, so small entries carry the absolute error of the
// large ones: the error is measured relative to |b| plus a tenth of the tensor's scale.
void expect_close(const float* a, const float* b, int64_t n, const char* what) {
  double scale = 0;
  for (int64_t i = 0; i < n; ++i) scale = std::max(scale, std::abs(double(b[i])));
  double worst = 0;
  int64_t at = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double err =
        std::abs(double(a[i]) - double(b[i])) / (1e-3 + 0.1 * scale + std::abs(double(b[i])));
    if (err > worst) worst = err, at = i;
  }
  EXPECT_LT(worst, 2e-4) << what << " differs at " << at << ": " << a[at] << " vs " << b[at]
                         << " (scale " << scale << ")";
}

}  // namespace

class LstmOneDnn : public ::testing::TestWithParam<std::tuple<int, int, int, int>> {};

TEST_P(LstmOneDnn, OutputsAndGradientsAgree) {
  auto [T, B, I, H] = GetParam();
  core::ParamStore ps_ours, ps_dnnl;
  nn::Recurrent<nn::LstmCell<float>> ours(nn::LstmCell<float>(ps_ours, "rnn", I, H), 0);
  nn::DnnlLstmLayer dnnl(ps_dnnl, "rnn", I, H, 0.0);
  ps_ours.finalize(0);
  ps_dnnl.finalize(0);
  ASSERT_EQ(ps_ours.size(), ps_dnnl.size());
  core::Rng rng(100 + T * 13 + H);
  ours.init(rng);
  std::copy(ps_ours.values().begin(), ps_ours.values().end(), ps_dnnl.values().begin());

  core::Tensor x(Shape{T, B, I}), s0(Shape{B, 2 * H}), dy(Shape{T, B, H});
  for (auto* t : {&x, &s0, &dy})
    for (int64_t i = 0; i < t->numel(); ++i) (*t)[i] = float(rng.normal());
  core::Tensor y1(Shape{T, B, H}), y2(Shape{T, B, H});
  ours.forward(x.cview(), s0.cview(), y1.view());
  dnnl.forward(x.cview(), s0.cview(), y2.view());
  expect_close(y2.data(), y1.data(), y1.numel(), "y");
  expect_close(dnnl.final_state().data, ours.final_state().data, B * 2 * H, "final state");

  core::Tensor dx1(x.shape()), dx2(x.shape()), ds1(s0.shape()), ds2(s0.shape());
  ours.backward(dy.cview(), dx1.view(), ds1.view());
  dnnl.backward(dy.cview(), dx2.view(), ds2.view());
  expect_close(dx2.data(), dx1.data(), dx1.numel(), "dx");
  expect_close(ds2.data(), ds1.data(), ds1.numel(), "ds0 (dh0, dc0)");
  for (size_t p = 0; p < ps_ours.params().size(); ++p) {
    const auto& a = ps_ours.params()[p];
    const auto& b = ps_dnnl.params()[p];
    ASSERT_EQ(a.name, b.name);
    expect_close(b.grad, a.grad, a.numel(), a.name.c_str());
  }

  // The probe through the oneDNN layer equals the reference probe.
  std::vector<double> n1, n2;
  ours.forward(x.cview(), s0.cview(), y1.view());
  ours.backward(dy.cview(), core::View(), core::View(), &n1);
  dnnl.forward(x.cview(), s0.cview(), y2.view());
  dnnl.backward(dy.cview(), core::View(), core::View(), &n2);
  ASSERT_EQ(n1.size(), size_t(T));
  for (int t = 0; t < T; ++t) EXPECT_NEAR(n2[t], n1[t], 1e-5 * (1 + n1[t]));
}

INSTANTIATE_TEST_SUITE_P(RandomShapes, LstmOneDnn,
                         ::testing::Values(std::make_tuple(1, 1, 1, 4), std::make_tuple(5, 3, 7, 8),
                                           std::make_tuple(12, 10, 10, 16),
                                           std::make_tuple(30, 4, 2, 32)));

TEST(LstmOneDnn, TruncationIsRejectedWithAHint) {
  core::ParamStore ps;
  nn::ModelConfig cfg;
  cfg.backend = "onednn";
  try {
    nn::make_recurrent(cfg, ps, "rnn", 3, 5);
    FAIL() << "expected a UsageError";
  } catch (const core::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("model.backend: ours"), std::string::npos);
  }
}

// model.chrono_tmax: both backends get b_f = log U(1, tmax-1) and b_i = -b_f, the same
// for the same seed, while the weights are the default init's draws.
TEST(LstmChronoInit, GateBiasesSpreadOverLagsOnBothBackends) {
  const int64_t H = 64;
  const double tmax = 784;
  std::vector<std::vector<float>> biases;
  for (const char* backend : {"ours", "onednn"}) {
    core::ParamStore ps;
    nn::ModelConfig cfg;
    cfg.backend = backend;
    cfg.hidden = H;
    cfg.chrono_tmax = tmax;
    auto layer = nn::make_recurrent(cfg, ps, "rnn", 1, 0);
    ps.finalize(0);
    core::Rng rng(7);
    layer->init(rng);
    const float* b = ps.get("rnn.b").value;
    double lo = 1e9, hi = -1e9;
    for (int64_t j = 0; j < H; ++j) {
      EXPECT_EQ(b[j], -b[H + j]) << j;
      lo = std::min(lo, double(b[H + j]));
      hi = std::max(hi, double(b[H + j]));
    }
    EXPECT_GE(lo, 0.0);
    EXPECT_LE(hi, std::log(tmax - 1) + 1e-6);
    EXPECT_GT(hi - lo, 3.0) << "64 draws of log U(1, 783) should spread over several units";
    biases.emplace_back(b, b + 4 * H);
  }
  EXPECT_EQ(biases[0], biases[1]);
}

TEST(LstmChronoInit, MisuseIsAUsageErrorWithAHint) {
  auto message = [](nn::ModelConfig cfg) -> std::string {
    core::ParamStore ps;
    try {
      nn::make_recurrent(cfg, ps, "rnn", 1, 0);
    } catch (const core::UsageError& e) {
      return e.what();
    }
    return "no error";
  };
  nn::ModelConfig cfg;
  cfg.chrono_tmax = 2;
  EXPECT_NE(message(cfg).find("must exceed 2"), std::string::npos);
  cfg.chrono_tmax = 100;
  cfg.forget_bias = 1;
  EXPECT_NE(message(cfg).find("model.forget_bias: 0"), std::string::npos);
  cfg.forget_bias = 0;
  cfg.cell = "rel_lstm";
  EXPECT_NE(message(cfg).find("applies only to the lstm and stable_lstm cells"), std::string::npos);
  cfg.cell = "stable_lstm";
  EXPECT_EQ(message(cfg), "no error");
}
