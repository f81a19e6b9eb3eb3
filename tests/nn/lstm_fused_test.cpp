// The fused LSTM step (nn/cells/lstm_gates.hpp, set_lstm_fused_rows): the recurrent
// product and the gate math in row blocks of R rows. Its results are the unfused step's
// up to the GEMMs' summation order:
//  - float, the cells as the registry builds them (lstm, stable_lstm and the momentum
//    family), batch sizes 1, R - 1, R + 1, 2R + 3 and 13 for R = 3 and 4: outputs, dx,
//    the initial-state gradient and every parameter gradient against the unfused step;
//  - double: finite-difference gradients with blocks of 2 rows over 5 batch rows (two
//    full blocks and a remainder), for LstmCell and every MomentumLstmCell kind.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/param_store.hpp"
#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "nn/cell_check.hpp"
#include "nn/cells/lstm.hpp"
#include "nn/cells/lstm_gates.hpp"
#include "nn/cells/momentum.hpp"
#include "nn/model_config.hpp"
#include "nn/seq_model.hpp"

using namespace seqbench;

namespace {

// Restores the process's setting when a test ends (or fails).
struct FusedRows {
  int64_t before = nn::lstm_fused_rows();
  explicit FusedRows(int64_t rows) { nn::set_lstm_fused_rows(rows); }
  ~FusedRows() { nn::set_lstm_fused_rows(before); }
};

// y, dx, ds0 and every gradient of one forward and backward, with `rows` per block.
std::vector<float> run(const std::string& cell, int64_t B, int64_t rows) {
  FusedRows fused(rows);
  nn::ModelConfig cfg;
  cfg.cell = cell;
  cfg.hidden = 64;
  const int64_t T = 6, I = 5, H = 64;
  core::ParamStore ps;
  auto layer = nn::make_recurrent(cfg, ps, "rnn", I, 0);
  ps.finalize(0);
  core::Rng rng(11);
  layer->init(rng);
  const int64_t S = layer->state_size();
  core::Tensor x(core::Shape{T, B, I}), s0(core::Shape{B, S}), y(core::Shape{T, B, H}),
      dy(core::Shape{T, B, H}), dx(core::Shape{T, B, I}), ds0(core::Shape{B, S});
  for (auto* t : {&x, &dy})
    for (int64_t i = 0; i < t->numel(); ++i) (*t)[i] = float(rng.normal());
  // |N(0, 0.5)| + 0.1: a positive second moment for adam and rmsprop (harmless elsewhere).
  for (int64_t i = 0; i < s0.numel(); ++i) s0[i] = float(0.5 * std::abs(rng.normal()) + 0.1);
  layer->forward(x.cview(), s0.cview(), y.view());
  layer->backward(dy.cview(), dx.view(), ds0.view());
  std::vector<float> out(y.data(), y.data() + y.numel());
  out.insert(out.end(), dx.data(), dx.data() + dx.numel());
  out.insert(out.end(), ds0.data(), ds0.data() + ds0.numel());
  out.insert(out.end(), ps.grads().begin(), ps.grads().end());
  return out;
}

class LstmFused : public ::testing::TestWithParam<std::string> {};

TEST_P(LstmFused, RowBlocksGiveTheUnfusedResult) {
  for (const int64_t rows : {3, 4})
    for (const int64_t B : {int64_t(1), rows - 1, rows + 1, 2 * rows + 3, int64_t(13)}) {
      const auto ref = run(GetParam(), B, 0), fused = run(GetParam(), B, rows);
      ASSERT_EQ(ref.size(), fused.size());
      for (size_t i = 0; i < ref.size(); ++i) {
        ASSERT_TRUE(std::isfinite(ref[i])) << GetParam() << " B=" << B << " at " << i;
        ASSERT_NEAR(ref[i], fused[i], 1e-4 * (1 + std::abs(ref[i])))
            << GetParam() << " R=" << rows << " B=" << B << " at " << i;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Cells, LstmFused,
                         ::testing::Values("lstm", "stable_lstm", "momentum_lstm", "adam_lstm",
                                           "rmsprop_lstm", "sr_lstm"));

TEST(LstmFusedGrad, LstmBlocksOfTwoMatchFiniteDifferences) {
  FusedRows fused(2);
  cellcheck::expect_gradients<nn::LstmCell<double>>(
      [](auto& ps) { return nn::LstmCell<double>(ps, "lstm", 3, 4); }, 4, 5, 23);
}

TEST(LstmFusedGrad, MomentumLstmBlocksOfTwoMatchFiniteDifferences) {
  FusedRows fused(2);
  for (const char* kind : {"momentum", "rmsprop", "nesterov_restart", "adam"}) {
    SCOPED_TRACE(kind);
    nn::MomentumOptions o;
    o.kind = kind;
    o.eps = 0.5;  // m_0 from N(0, 0.5²) may be negative: m + ε stays positive (as momentum_test)
    auto make = [o](core::ParamStoreT<double>& ps) {
      return nn::MomentumLstmCell<double>(ps, "mlstm", 3, 4, o);
    };
    cellcheck::expect_gradients<nn::MomentumLstmCell<double>>(make, 4, 5, 29, 0.5);
  }
}

}  // namespace
