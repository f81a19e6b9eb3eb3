#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "core/check.hpp"
#include "data/recall.hpp"

using namespace seqbench;

namespace {

data::RecallTaskConfig mqar(int64_t vocab, int64_t seq_len, int64_t pairs) {
  data::RecallTaskConfig c;
  c.name = "mqar";
  c.vocab = vocab;
  c.seq_len = seq_len;
  c.n_pairs = pairs;
  return c;
}

data::RecallTaskConfig selective(int64_t vocab, int64_t seq_len, int64_t tokens) {
  data::RecallTaskConfig c;
  c.name = "selective_copy";
  c.vocab = vocab;
  c.seq_len = seq_len;
  c.n_tokens = tokens;
  return c;
}

data::RecallTaskConfig induction(int64_t vocab, int64_t seq_len) {
  data::RecallTaskConfig c;
  c.name = "induction";
  c.vocab = vocab;
  c.seq_len = seq_len;
  return c;
}

void expect_ids_in_vocab(const data::RecallBatch& batch, int64_t vocab) {
  ASSERT_EQ(batch.ids.size(), size_t(batch.B * batch.N));
  ASSERT_EQ(batch.targets.size(), batch.ids.size());
  ASSERT_EQ(batch.mask.size(), batch.ids.size());
  for (size_t i = 0; i < batch.ids.size(); ++i) {
    ASSERT_GE(batch.ids[i], 0);
    ASSERT_LT(batch.ids[i], vocab);
    ASSERT_GE(batch.targets[i], 0);
    ASSERT_LT(batch.targets[i], vocab);
    ASSERT_TRUE(batch.mask[i] == 0.f || batch.mask[i] == 1.f);
  }
}

// MQAR, recomputed from the inputs alone: the pairs open the sequence; after them every
// occurrence of a key is its query (scored, target = the key's value) and nothing else is.
void check_mqar(const data::RecallTaskConfig& cfg, const data::RecallBatch& batch) {
  const int64_t N = cfg.seq_len, P = cfg.n_pairs, V = cfg.vocab, H = V / 2;
  expect_ids_in_vocab(batch, V);
  for (int64_t b = 0; b < batch.B; ++b) {
    const int32_t* ids = batch.ids.data() + b * N;
    const int32_t* tg = batch.targets.data() + b * N;
    const float* mask = batch.mask.data() + b * N;
    std::map<int32_t, int32_t> value_of;
    std::set<int32_t> values;
    for (int64_t i = 0; i < P; ++i) {
      const int32_t k = ids[2 * i], v = ids[2 * i + 1];
      EXPECT_GE(k, 1);
      EXPECT_LT(k, H);
      EXPECT_GE(v, H);
      EXPECT_LT(v, V);
      EXPECT_TRUE(value_of.emplace(k, v).second) << "key " << k << " twice in the pairs";
      EXPECT_TRUE(values.insert(v).second) << "value " << v << " twice in the pairs";
      EXPECT_EQ(mask[2 * i], 0.f);
      EXPECT_EQ(mask[2 * i + 1], 0.f);
    }
    std::set<int32_t> queried;
    for (int64_t t = 2 * P; t < N; ++t) {
      const auto it = value_of.find(ids[t]);
      if (it != value_of.end()) {
        EXPECT_EQ(mask[t], 1.f) << "b=" << b << " t=" << t;
        EXPECT_EQ((t - 2 * P) % 2, 0) << "queries sit in 2-token slots";
        EXPECT_EQ(tg[t], it->second) << "b=" << b << " t=" << t;
        EXPECT_TRUE(queried.insert(ids[t]).second) << "key " << ids[t] << " queried twice";
      } else {
        EXPECT_EQ(mask[t], 0.f) << "b=" << b << " t=" << t;
        EXPECT_EQ(tg[t], 0);
        if (!cfg.random_non_queries) {
          EXPECT_EQ(ids[t], 0);
        }
      }
    }
    EXPECT_EQ(int64_t(queried.size()), P) << "every key is queried once";
  }
}

// The query gap g of each pair i (query at 2P + 2g), in pair order.
std::vector<int64_t> mqar_gaps(const data::RecallBatch& batch, int64_t b, int64_t P) {
  const int32_t* ids = batch.ids.data() + b * batch.N;
  const float* mask = batch.mask.data() + b * batch.N;
  std::vector<int64_t> gaps(size_t(P), -1);
  for (int64_t t = 2 * P; t < batch.N; ++t) {
    if (mask[t] == 0.f) continue;
    for (int64_t i = 0; i < P; ++i)
      if (ids[2 * i] == ids[t]) gaps[size_t(i)] = (t - 2 * P) / 2;
  }
  return gaps;
}

std::string usage_error(const data::RecallTaskConfig& cfg) {
  try {
    data::check_rules(cfg);
  } catch (const core::UsageError& e) {
    EXPECT_THROW(data::RecallTask{cfg}, core::UsageError);
    return e.what();
  }
  return "";
}

}  // namespace

TEST(RecallTask, DefaultsAreZoologysMqarScaledDown) {
  const data::RecallTaskConfig cfg;
  EXPECT_EQ(cfg.name, "mqar");
  EXPECT_EQ(cfg.vocab, 8192);
  EXPECT_EQ(cfg.seq_len, 64);
  EXPECT_EQ(cfg.n_pairs, 4);
  EXPECT_DOUBLE_EQ(cfg.power_a, 0.01);
  EXPECT_TRUE(cfg.random_non_queries);
  const data::RecallTask task(cfg);
  EXPECT_EQ(task.length(), 64);
  EXPECT_EQ(task.vocab(), 8192);
  EXPECT_EQ(task.scored_per_sequence(), 4);
  EXPECT_DOUBLE_EQ(task.chance_accuracy(), 1.0 / 4096);
  core::Rng rng(3);
  data::RecallBatch batch;
  task.generate(rng, 64, batch);
  EXPECT_EQ(batch.B, 64);
  EXPECT_EQ(batch.N, 64);
  check_mqar(cfg, batch);
}

TEST(RecallMqar, ScoredPositionsAreExactlyTheQueries) {
  // A small vocabulary, so random filler would often hit a key if it were allowed to.
  for (const bool random : {true, false}) {
    for (const int64_t N : {16, 17, 40}) {
      auto cfg = mqar(16, N, 4);
      cfg.random_non_queries = random;
      const data::RecallTask task(cfg);
      core::Rng rng(11);
      data::RecallBatch batch;
      task.generate(rng, 300, batch);
      SCOPED_TRACE(::testing::Message() << "random=" << random << " N=" << N);
      check_mqar(cfg, batch);
      if (N == 40) {
        std::set<int32_t> filler;
        for (size_t i = 0; i < batch.ids.size(); ++i)
          if (int64_t(i) % N >= 8 && batch.mask[i] == 0.f) filler.insert(batch.ids[i]);
        if (random) {
          EXPECT_GE(filler.size(), 10u) << "random filler over the vocabulary";
        } else {
          EXPECT_EQ(filler, std::set<int32_t>{0});
        }
      }
    }
  }
}

TEST(RecallMqar, QueryGapsFollowThePowerLaw) {
  const int64_t N = 64, P = 4, S = (N - 2 * P) / 2, B = 4000;
  for (const double a : {0.01, 1.0}) {
    auto cfg = mqar(8192, N, P);
    cfg.power_a = a;
    const data::RecallTask task(cfg);
    core::Rng rng(7);
    data::RecallBatch batch;
    task.generate(rng, B, batch);
    std::vector<double> all(size_t(S), 0), first(size_t(S), 0);
    for (int64_t b = 0; b < B; ++b) {
      const auto gaps = mqar_gaps(batch, b, P);
      for (const int64_t g : gaps) {
        ASSERT_GE(g, 0);
        ASSERT_LT(g, S);
        all[size_t(g)] += 1;
      }
      first[size_t(gaps[0])] += 1.0 / double(B);
    }
    // The first pair's gap is Zoology's first draw: exactly p(g) ∝ (g+1)^(a-1).
    double z = 0;
    for (int64_t g = 0; g < S; ++g) z += std::pow(double(g + 1), a - 1);
    for (const int64_t g : {int64_t{0}, int64_t{1}, S - 1})
      EXPECT_NEAR(first[size_t(g)], 1.0 / z * std::pow(double(g + 1), a - 1), 0.025)
          << "a=" << a << " g=" << g;
    const double head = std::accumulate(all.begin(), all.begin() + 7, 0.0);
    const double tail = std::accumulate(all.end() - 7, all.end(), 0.0);
    if (a < 1) {
      EXPECT_GT(all[0], 4 * all[size_t(S - 1)]) << "gap 0 far more often than the last";
      EXPECT_GT(head, 3 * tail);
    } else {
      EXPECT_NEAR(head / tail, 1.0, 0.15) << "a = 1 is uniform";
    }
  }
}

TEST(RecallSelectiveCopy, TargetsAreTheDataTokensInOrder) {
  for (const int64_t N : {33, 64, 300}) {
    const auto cfg = selective(16, N, 16);
    const data::RecallTask task(cfg);
    EXPECT_EQ(task.scored_per_sequence(), 16);
    EXPECT_DOUBLE_EQ(task.chance_accuracy(), 1.0 / 14);
    core::Rng rng(5);
    data::RecallBatch batch;
    task.generate(rng, 200, batch);
    expect_ids_in_vocab(batch, 16);
    const int64_t K = 16, D = N - K;
    std::set<int64_t> first_positions;
    for (int64_t b = 0; b < batch.B; ++b) {
      const int32_t* ids = batch.ids.data() + b * N;
      const int32_t* tg = batch.targets.data() + b * N;
      const float* mask = batch.mask.data() + b * N;
      std::vector<int32_t> data_tokens;
      for (int64_t t = 0; t < D; ++t) {
        EXPECT_NE(ids[t], 1) << "no marker before position D";
        if (ids[t] != 0) {
          data_tokens.push_back(ids[t]);
          if (data_tokens.size() == 1) first_positions.insert(t);
        }
        EXPECT_EQ(mask[t], 0.f);
        EXPECT_EQ(tg[t], 0);
      }
      ASSERT_EQ(int64_t(data_tokens.size()), K) << "b=" << b;
      for (int64_t i = 0; i < K; ++i) {
        EXPECT_EQ(ids[D + i], 1) << "copy marker";
        EXPECT_EQ(mask[D + i], 1.f);
        EXPECT_EQ(tg[D + i], data_tokens[size_t(i)]) << "b=" << b << " i=" << i;
      }
    }
    EXPECT_GE(first_positions.size(), 2u) << "the spacing is random";
  }
}

TEST(RecallInduction, AnswerFollowsTheFirstTriggerAtAnyLength) {
  for (const int64_t N : {3, 8, 1024}) {
    const data::RecallTask task(induction(16, N));
    EXPECT_EQ(task.length(), N);
    EXPECT_EQ(task.scored_per_sequence(), 1);
    EXPECT_DOUBLE_EQ(task.chance_accuracy(), 1.0 / 15);
    core::Rng rng(9);
    data::RecallBatch batch;
    const int64_t B = 300;
    task.generate(rng, B, batch);
    expect_ids_in_vocab(batch, 16);
    std::set<int64_t> trigger_at;
    std::set<int32_t> answers;
    for (int64_t b = 0; b < B; ++b) {
      const int32_t* ids = batch.ids.data() + b * N;
      const int32_t* tg = batch.targets.data() + b * N;
      const float* mask = batch.mask.data() + b * N;
      int64_t p = -1, triggers = 0;
      for (int64_t t = 0; t < N; ++t) {
        if (ids[t] == 0) {
          ++triggers;
          if (p < 0) p = t;
        }
        EXPECT_EQ(mask[t], t == N - 1 ? 1.f : 0.f);
        if (t < N - 1) {
          EXPECT_EQ(tg[t], 0);
        }
      }
      ASSERT_EQ(triggers, 2) << "b=" << b;
      ASSERT_EQ(ids[N - 1], 0) << "the last input is the trigger";
      ASSERT_LE(p, N - 3);
      EXPECT_EQ(tg[N - 1], ids[p + 1]);
      EXPECT_NE(tg[N - 1], 0);
      trigger_at.insert(p);
      answers.insert(tg[N - 1]);
    }
    if (N == 8) {
      EXPECT_EQ(trigger_at.size(), 6u) << "the trigger lands anywhere in 0 .. N-3";
    }
    EXPECT_GE(answers.size(), 10u);
  }
}

TEST(RecallTask, SameSeedSameBatchOtherSeedAnother) {
  for (const auto& cfg : {mqar(8192, 64, 4), selective(16, 64, 16), induction(16, 64)}) {
    const data::RecallTask task(cfg);
    core::Rng a(42), b(42), c(43);
    data::RecallBatch x, y, z;
    task.generate(a, 8, x);
    task.generate(b, 8, y);
    task.generate(c, 8, z);
    EXPECT_EQ(x.ids, y.ids) << cfg.name;
    EXPECT_EQ(x.targets, y.targets) << cfg.name;
    EXPECT_EQ(x.mask, y.mask) << cfg.name;
    EXPECT_NE(x.ids, z.ids) << cfg.name;
    EXPECT_NE(x.targets, z.targets) << cfg.name;
    task.generate(a, 8, x);
    EXPECT_NE(x.ids, y.ids) << cfg.name << ": a fresh batch each call";
  }
}

TEST(RecallTask, CheckRulesNameTheirKey) {
  const auto expect_names = [](const data::RecallTaskConfig& cfg, const std::string& key) {
    const std::string msg = usage_error(cfg);
    EXPECT_NE(msg.find(key), std::string::npos) << "'" << msg << "' should name " << key;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  };
  auto bad = mqar(8192, 64, 4);
  bad.name = "mqr";
  expect_names(bad, "task.name");
  expect_names(mqar(8, 64, 4), "task.n_pairs");     // keys {1, 2, 3}: only 3
  expect_names(mqar(8192, 15, 4), "task.seq_len");  // 4 pairs need 16
  bad = mqar(8192, 64, 4);
  bad.power_a = 0;
  expect_names(bad, "task.power_a");
  expect_names(mqar(2, 64, 1), "task.vocab");
  expect_names(selective(3, 64, 16), "task.vocab");
  expect_names(selective(16, 32, 16), "task.seq_len");
  expect_names(selective(16, 32, 16), "task.n_tokens");
  expect_names(induction(16, 2), "task.seq_len");
  // The edges that hold.
  EXPECT_EQ(usage_error(mqar(10, 16, 4)), "");
  EXPECT_EQ(usage_error(mqar(4, 4, 1)), "");
  EXPECT_EQ(usage_error(selective(4, 33, 16)), "");
  EXPECT_EQ(usage_error(induction(3, 3)), "");
  core::Rng rng(1);
  data::RecallBatch batch;
  data::RecallTask(mqar(4, 4, 1)).generate(rng, 50, batch);
  check_mqar(mqar(4, 4, 1), batch);
}
