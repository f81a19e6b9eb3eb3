// Miller & Hardt's Proposition 2 on a random λ-contractive instance: recurrent and
// truncated models trained by projected GD with step α/t stay close in weight space, and
// the gap shrinks like λ^k in the truncation window k.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

#include "core/check.hpp"
#include "analysis/weight_gap.hpp"

using namespace seqbench;

namespace {

// gap[k][step]
using GapTable = std::map<int64_t, std::map<int64_t, double>>;

GapTable table(const std::vector<analysis::WeightGapRow>& rows) {
  GapTable t;
  for (const auto& r : rows) t[r.k][r.step] = r.gap;
  return t;
}

// Least-squares slope of log(gap at the final step) against k.
double log_slope(const GapTable& t, int64_t final_step) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [k, by_step] : t) {
    const double x = double(k), y = std::log(by_step.at(final_step));
    n += 1;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

// The default configuration (λ = 0.8, T = 40, k = 2, 4, 8, 16, 200 steps) is run once and
// shared: one run is about 0.4 s at -O1.
const GapTable& default_table() {
  static const GapTable t = table(analysis::weight_gap(analysis::WeightGapConfig{}));
  return t;
}

}  // namespace

TEST(WeightGap, RowsCoverEveryKAndRecordedStep) {
  const analysis::WeightGapConfig cfg;
  const GapTable& t = default_table();
  ASSERT_EQ(t.size(), cfg.ks.size());
  for (const int64_t k : cfg.ks) {
    ASSERT_EQ(t.count(k), 1u) << "k " << k;
    EXPECT_EQ(t.at(k).size(), size_t(cfg.steps / cfg.record_every + 1)) << "k " << k;
    EXPECT_EQ(t.at(k).rbegin()->first, cfg.steps) << "k " << k;
  }
}

TEST(WeightGap, ZeroAtInitialisationThenGrowsSublinearly) {
  const int64_t N = analysis::WeightGapConfig{}.steps;
  for (const auto& [k, by_step] : default_table()) {
    EXPECT_EQ(by_step.at(0), 0.0) << "k " << k;  // same initialisation
    EXPECT_GT(by_step.at(10), 0.0) << "k " << k;
    // Grows with the step count (measured: monotone at every recorded step)...
    double prev = 0;
    for (const auto& [step, gap] : by_step) {
      EXPECT_GE(gap, prev) << "k " << k << " step " << step;
      prev = gap;
    }
    // ...but the α/t steps shrink, so the second half of training (total step length
    // α ln 2) adds little: measured 7-8% of the final gap for every k; a constant step
    // would add about half.
    const double final_gap = by_step.at(N), half = by_step.at(N / 2);
    EXPECT_LT(final_gap - half, 0.15 * final_gap) << "k " << k;
    EXPECT_LT(final_gap, 1.0) << "k " << k;  // measured ≤ 0.13 (k = 2)
  }
}

TEST(WeightGap, FinalGapDecaysGeometricallyInK) {
  const int64_t N = analysis::WeightGapConfig{}.steps;
  const GapTable& t = default_table();
  EXPECT_LT(t.at(16).at(N), t.at(8).at(N));
  EXPECT_LT(t.at(8).at(N), t.at(4).at(N));
  EXPECT_LT(t.at(4).at(N), t.at(2).at(N));
  // Slope of log gap vs k over k = 2, 4, 8, 16 against log λ. Measured ratios over seeds
  // 1-4: λ = 0.5: 0.94-1.01; λ = 0.8: 0.92-1.13 (seed 1: -0.252 vs -0.223). The bound's
  // extra factor k steepens the fit at small k, tanh and a projected W_h with singular
  // values below λ steepen it too, so the ratio is allowed [0.75, 1.35].
  const double slope = log_slope(t, N);
  EXPECT_NEAR(slope / std::log(0.8), 1.05, 0.3) << "fitted " << slope;
}

TEST(WeightGap, GeometricRateAtSmallerLambda) {
  analysis::WeightGapConfig cfg;
  cfg.lambda = 0.5;
  cfg.steps = 100;
  cfg.record_every = 100;
  const GapTable t = table(analysis::weight_gap(cfg));
  const double slope = log_slope(t, cfg.steps);
  EXPECT_NEAR(slope / std::log(0.5), 1.05, 0.3) << "fitted " << slope;
  // A faster contraction gives a much smaller gap at the same k: (0.5 / 0.8)^16 = 5.4e-4,
  // measured 5e-4 (1.8e-6 vs 3.6e-3).
  EXPECT_LT(t.at(16).at(cfg.steps), 2e-3 * default_table().at(16).at(200));
}

TEST(WeightGap, WindowCoveringTheSequenceIsTheRecurrentModel) {
  analysis::WeightGapConfig cfg;
  cfg.T = 12;
  cfg.steps = 30;
  cfg.record_every = 5;
  cfg.ks = {11, 12, 20};
  const GapTable t = table(analysis::weight_gap(cfg));
  for (const auto& [step, gap] : t.at(12)) EXPECT_EQ(gap, 0.0) << "k = T, step " << step;
  for (const auto& [step, gap] : t.at(20)) EXPECT_EQ(gap, 0.0) << "k > T, step " << step;
  EXPECT_GT(t.at(11).at(30), 0.0);  // one step short of T is a different model
}

TEST(WeightGap, DeterministicForASeed) {
  analysis::WeightGapConfig cfg;
  cfg.T = 16;
  cfg.steps = 40;
  cfg.ks = {2, 6};
  const auto a = analysis::weight_gap(cfg);
  const auto b = analysis::weight_gap(cfg);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].k, b[i].k);
    EXPECT_EQ(a[i].step, b[i].step);
    EXPECT_EQ(a[i].gap, b[i].gap) << "row " << i;
  }
  cfg.seed = 2;
  const auto c = analysis::weight_gap(cfg);
  EXPECT_NE(a.back().gap, c.back().gap);  // the seed is actually used
}

TEST(WeightGap, RejectsBadConfigs) {
  auto bad = [](auto edit) {
    analysis::WeightGapConfig cfg;
    edit(cfg);
    EXPECT_THROW(analysis::weight_gap(cfg), core::UsageError);
  };
  bad([](analysis::WeightGapConfig& c) { c.lambda = 1.0; });
  bad([](analysis::WeightGapConfig& c) { c.ks = {}; });
  bad([](analysis::WeightGapConfig& c) { c.ks = {4, 0}; });
  bad([](analysis::WeightGapConfig& c) { c.record_every = 0; });
  bad([](analysis::WeightGapConfig& c) { c.steps = -1; });
  bad([](analysis::WeightGapConfig& c) { c.n = 0; });
}
