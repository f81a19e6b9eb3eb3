// Miller & Hardt's Lemma 2 on random λ-contractive RNNs: the gradient gap between the
// recurrent and the truncated model decays like k λ^k.
#include <gtest/gtest.h>

#include <cmath>

#include "core/check.hpp"
#include "analysis/truncation.hpp"

using namespace seqbench;

TEST(TruncationGap, DecaysAtTheContractionRate) {
  struct Case {
    double lambda;
    int64_t T, k_max, fit_from;
  };
  for (const Case c : {Case{0.5, 60, 40, 10}, Case{0.8, 60, 40, 20}, Case{0.9, 160, 120, 60}}) {
    analysis::TruncationGapConfig cfg;
    cfg.lambda = c.lambda;
    cfg.T = c.T;
    cfg.k_max = c.k_max;
    cfg.instances = 8;
    const auto rows = analysis::truncation_gradient_gap(cfg);
    ASSERT_EQ(rows.size(), size_t(c.k_max));
    // The gap shrinks with k at least as fast as the bound's rate.
    EXPECT_LT(rows[24].gap, rows[4].gap * std::pow(c.lambda, 15)) << "lambda " << c.lambda;
    // For large k the log-rate is within 20% of log λ (the acceptance).
    const double rate = analysis::fitted_log_rate(rows, c.fit_from, c.k_max);
    EXPECT_NEAR(rate / std::log(c.lambda), 1.0, 0.2)
        << "lambda " << c.lambda << ": fitted " << rate << " vs log λ " << std::log(c.lambda);
  }
}

TEST(TruncationGap, RejectsBadRanges) {
  analysis::TruncationGapConfig cfg;
  cfg.T = 10;
  cfg.k_max = 9;
  cfg.instances = 2;
  const auto rows = analysis::truncation_gradient_gap(cfg);
  EXPECT_GT(rows[0].gap, 0.0);
  EXPECT_THROW(analysis::fitted_log_rate(rows, 100, 200), core::Error);
  cfg.k_max = 10;  // k = T would be the full model: rejected
  EXPECT_THROW(analysis::truncation_gradient_gap(cfg), core::Error);
}
