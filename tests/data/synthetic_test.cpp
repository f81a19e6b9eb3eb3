#include <gtest/gtest.h>

#include <set>

#include "data/synthetic.hpp"

using namespace seqbench;

TEST(CopyTask, LayoutMatchesDefinition) {
  data::TaskConfig cfg;
  cfg.T = 6;
  cfg.copy_len = 3;
  cfg.n_symbols = 4;
  data::SyntheticTask task(cfg);
  EXPECT_EQ(task.length(), 12);
  EXPECT_EQ(task.input_size(), 6);
  EXPECT_EQ(task.output_size(), 5);
  core::Rng rng(1);
  data::SeqBatch batch;
  const int64_t B = 4, L = 12, I = 6;
  task.generate(rng, B, batch);
  for (int64_t b = 0; b < B; ++b) {
    std::vector<int> in(L);
    for (int64_t t = 0; t < L; ++t) {
      int hot = -1, count = 0;
      for (int64_t k = 0; k < I; ++k)
        if (batch.x.data()[(t * B + b) * I + k] == 1.f) hot = int(k), ++count;
      ASSERT_EQ(count, 1) << "one-hot at t=" << t;
      in[t] = hot;
    }
    for (int t = 0; t < 3; ++t) {
      EXPECT_GE(in[t], 1);
      EXPECT_LE(in[t], 4);
      EXPECT_EQ(batch.labels[(9 + t) * B + b], in[t]);  // recalled in the last 3 steps
    }
    for (int t = 3; t < 12; ++t) EXPECT_EQ(in[t], t == 8 ? 5 : 0) << "t=" << t;  // delimiter at T+K-1
    for (int t = 0; t < 9; ++t) EXPECT_EQ(batch.labels[t * B + b], 0);
  }
  EXPECT_NEAR(task.baseline_loss(), 3 * std::log(4.0) / 12, 1e-12);
}

TEST(CopyTask, SameSeedSameData) {
  data::SyntheticTask task(data::TaskConfig{});
  core::Rng a(5), b(5);
  data::SeqBatch x, y;
  task.generate(a, 3, x);
  task.generate(b, 3, y);
  EXPECT_EQ(x.labels, y.labels);
  task.generate(a, 3, x);
  EXPECT_NE(x.labels, y.labels);  // a fresh batch each call
}

TEST(AddingTask, TwoMarkersOneInEachHalfAndTheirSum) {
  data::TaskConfig cfg;
  cfg.name = "adding";
  cfg.T = 10;
  data::SyntheticTask task(cfg);
  EXPECT_FALSE(task.classification());
  EXPECT_EQ(task.length(), 10);
  EXPECT_EQ(task.input_size(), 2);
  core::Rng rng(2);
  data::SeqBatch batch;
  task.generate(rng, 50, batch);
  double mean_target = 0;
  for (int64_t b = 0; b < 50; ++b) {
    int first = 0, second = 0;
    double sum = 0;
    for (int64_t t = 0; t < 10; ++t) {
      const float* row = batch.x.data() + (t * 50 + b) * 2;
      EXPECT_GE(row[0], 0.f);
      EXPECT_LT(row[0], 1.f);
      if (row[1] == 1.f) {
        (t < 5 ? first : second)++;
        sum += row[0];
      }
    }
    EXPECT_EQ(first, 1);
    EXPECT_EQ(second, 1);
    EXPECT_FLOAT_EQ(batch.target[b], float(sum));
    mean_target += sum / 50;
  }
  EXPECT_NEAR(mean_target, 1.0, 0.2);
  EXPECT_NEAR(task.baseline_loss(), 1.0 / 6.0, 1e-12);
}

TEST(DenoiseTask, SymbolsAtSortedRandomPositionsThenMarkerThenRecall) {
  data::TaskConfig cfg;
  cfg.name = "denoise";
  cfg.T = 8;
  cfg.copy_len = 4;
  cfg.n_symbols = 5;
  data::SyntheticTask task(cfg);
  const int64_t L = 16, I = 8, B = 6;  // L = T + 2K; I = n + 3
  EXPECT_EQ(task.length(), L);
  EXPECT_EQ(task.input_size(), I);
  EXPECT_EQ(task.output_size(), 6);
  core::Rng rng(3);
  data::SeqBatch batch;
  task.generate(rng, B, batch);
  std::set<int64_t> first_positions;
  for (int64_t b = 0; b < B; ++b) {
    std::vector<int> seen;
    for (int64_t t = 0; t < L; ++t) {
      int hot = -1, count = 0;
      for (int64_t k = 0; k < I; ++k)
        if (batch.x.data()[(t * B + b) * I + k] == 1.f) hot = int(k), ++count;
      ASSERT_EQ(count, 1) << "one-hot at t=" << t;
      if (t < 11) {  // T + K - 1 = 11 steps carry the symbols
        EXPECT_NE(hot, 6) << "the value n+1 never occurs";
        EXPECT_NE(hot, 7);
        if (hot != 0) {
          seen.push_back(hot);
          if (seen.size() == 1) first_positions.insert(t);
        }
      } else if (t == 11) {
        EXPECT_EQ(hot, 7) << "marker n+2";
      } else {
        EXPECT_EQ(hot, 0);
      }
    }
    ASSERT_EQ(seen.size(), 4u) << "K symbols at distinct positions";
    for (int i = 0; i < 4; ++i) EXPECT_EQ(batch.labels[(12 + i) * B + b], seen[i]);
    for (int t = 0; t < 12; ++t) EXPECT_EQ(batch.labels[t * B + b], 0);
  }
  EXPECT_GT(first_positions.size(), 1u) << "positions are random";
}
