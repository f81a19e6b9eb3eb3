// Miller & Hardt's Lemma 2 on random λ-contractive RNNs: the gradient gap between the
// recurrent and the truncated model decays like k λ^k.
#include <gtest/gtest.h>

#include <cmath>

#include "core/check.hpp"
#include "train/truncation.hpp"

using namespace seqbench;

TEST(TruncationGap, DecaysAtTheContractionRate) {
  for (double lambda : {0.6, 0.8}) {
    train::TruncationGapConfig cfg;
    cfg.lambda = lambda;
    cfg.T = 60;
    cfg.k_max = 40;
    cfg.instances = 8;
    const auto rows = train::truncation_gradient_gap(cfg);
    ASSERT_EQ(rows.size(), 40u);
    // The gap shrinks with k and stays under a constant times the bound's shape.
    EXPECT_LT(rows[39].gap, rows[4].gap * 1e-2) << "lambda " << lambda;
    // For large k the log-rate is within 20% of log λ (the acceptance).
    const double rate = train::fitted_log_rate(rows, 15, 40);
    EXPECT_NEAR(rate / std::log(lambda), 1.0, 0.2) << "fitted " << rate << " vs log λ "
                                                   << std::log(lambda);
  }
}

TEST(TruncationGap, RejectsBadRanges) {
  train::TruncationGapConfig cfg;
  cfg.T = 10;
  cfg.k_max = 9;
  cfg.instances = 2;
  const auto rows = train::truncation_gradient_gap(cfg);
  EXPECT_GT(rows[0].gap, 0.0);
  EXPECT_THROW(train::fitted_log_rate(rows, 100, 200), core::Error);
  cfg.k_max = 10;  // k = T would be the full model: rejected
  EXPECT_THROW(train::truncation_gradient_gap(cfg), core::Error);
}
