// The recurrent layers that give each thread a slice of batch rows (nn/parallel.hpp)
// give the one-thread result: a shape above the thresholds, run with 1 and with 2
// threads; outputs, input and parameter gradients, the initial-state gradient and the
// per-step norms of dL/dh. (Only rounding of the GEMMs may differ, hence the tolerance.)
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/param_store.hpp"
#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "core/threads.hpp"
#include "nn/model_config.hpp"
#include "nn/parallel.hpp"
#include "nn/seq_model.hpp"

using namespace seqbench;

namespace {

std::vector<float> run(const std::string& cell, int threads) {
  core::set_threads(threads);
  EXPECT_EQ(core::num_threads(), threads) << "the comparison needs a team of this size";
  nn::ModelConfig cfg;
  cfg.cell = cell;
  cfg.hidden = 128;
  const int64_t T = 5, B = 72, I = 7;
  static_assert(72 * 4 * 128 >= nn::kRowParallelMin);
  core::ParamStore ps;
  auto layer = nn::make_recurrent(cfg, ps, "rnn", I, 0);
  ps.finalize(0);
  core::Rng rng(5);
  layer->init(rng);
  core::Tensor x(core::Shape{T, B, I}), y(core::Shape{T, B, 128}), dy(core::Shape{T, B, 128}),
      dx(core::Shape{T, B, I}), ds0(core::Shape{B, layer->state_size()});
  for (auto* t : {&x, &dy})
    for (int64_t i = 0; i < t->numel(); ++i) (*t)[i] = float(rng.normal());
  layer->forward(x.cview(), core::ConstView(), y.view());
  std::vector<double> dh_norms;
  layer->backward(dy.cview(), dx.view(), ds0.view(), &dh_norms);
  EXPECT_EQ(dh_norms.size(), size_t(T));
  std::vector<float> out(y.data(), y.data() + y.numel());
  out.insert(out.end(), dx.data(), dx.data() + dx.numel());
  out.insert(out.end(), ds0.data(), ds0.data() + ds0.numel());
  out.insert(out.end(), dh_norms.begin(), dh_norms.end());
  out.insert(out.end(), ps.grads().begin(), ps.grads().end());
  return out;
}

class RowParallel : public ::testing::TestWithParam<std::string> {};

TEST_P(RowParallel, TwoThreadsGiveTheOneThreadResult) {
  const int before = core::num_threads();
  const auto one = run(GetParam(), 1), two = run(GetParam(), 2);
  core::set_threads(before);
  ASSERT_EQ(one.size(), two.size());
  for (size_t i = 0; i < one.size(); ++i)
    ASSERT_NEAR(one[i], two[i], 1e-4 * (1 + std::abs(one[i]))) << GetParam() << " at " << i;
}

INSTANTIATE_TEST_SUITE_P(Cells, RowParallel,
                         ::testing::Values("lstm", "momentum_lstm", "adam_lstm", "sr_lstm",
                                           "stable_lstm", "rel_lstm"));

}  // namespace

namespace {

// Column sums (bias gradients): correct against a double-precision sum, with a row
// stride wider than the columns and a width that is not a multiple of the block, and
// bitwise the same on 1 and 2 threads.
TEST(ColumnSums, MatchTheExactSumAndDoNotDependOnTheThreadCount) {
  const int64_t n = 3001, cols = 150, ld = 173;
  static_assert(3001 * 150 >= nn::kRowParallelMin);
  core::Rng rng(9);
  std::vector<float> src(static_cast<size_t>(n * ld));
  for (auto& v : src) v = float(rng.normal());
  std::vector<double> exact(static_cast<size_t>(cols), 0.5);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t j = 0; j < cols; ++j) exact[size_t(j)] += src[size_t(r * ld + j)];
  const int before = core::num_threads();
  std::vector<std::vector<float>> sums;
  for (int threads : {1, 2}) {
    core::set_threads(threads);
    EXPECT_EQ(core::num_threads(), threads) << "the comparison needs a team of this size";
    std::vector<float> dst(static_cast<size_t>(cols) + 1, 0.5f);
    dst.back() = 7.0f;  // past the last column: untouched
    nn::add_column_sums(n, cols, src.data(), ld, dst.data());
    EXPECT_EQ(dst.back(), 7.0f);
    for (int64_t j = 0; j < cols; ++j)
      EXPECT_NEAR(dst[size_t(j)], exact[size_t(j)], 1e-3) << "column " << j;
    sums.push_back(dst);
  }
  core::set_threads(before);
  EXPECT_EQ(sums[0], sums[1]);
}

}  // namespace
