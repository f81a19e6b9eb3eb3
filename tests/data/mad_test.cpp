// MAD's six tasks (lib/data/mad.hpp): the rules written there hold on many draws, checked
// from the inputs alone; MAD's baseline settings give their chance levels; a seed gives one
// batch; bad settings are usage errors naming their key.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/check.hpp"
#include "data/mad.hpp"
#include "data/recall.hpp"

using namespace seqbench;

namespace {

// MAD's baseline settings (athms/mad-lab configs/tasks/*.yml; compression in its causal
// form of twice MAD's length).
data::RecallTaskConfig mad(const std::string& name) {
  data::RecallTaskConfig c;
  c.name = name;
  c.vocab = 16;
  c.seq_len = 128;
  if (name == "mad_noisy_recall") {
    c.vocab = 32;
    c.noise_vocab = 16;
    c.frac_noise = 0.2;
  } else if (name == "mad_fuzzy_recall") {
    c.k_motif = 3;
    c.v_motif = 3;
  } else if (name == "mad_selective_copy") {
    c.seq_len = 256;
    c.n_tokens = 16;
  } else if (name == "mad_compression") {
    c.seq_len = 64;
  } else if (name == "mad_memorization") {
    c.vocab = 256;
    c.seq_len = 32;
  }
  return c;
}

const std::vector<std::string> kNames{"mad_recall",         "mad_fuzzy_recall",
                                      "mad_noisy_recall",   "mad_selective_copy",
                                      "mad_compression",    "mad_memorization"};

std::string usage_error(const data::RecallTaskConfig& cfg) {
  try {
    data::check_rules(cfg);
  } catch (const core::UsageError& e) {
    return e.what();
  }
  return "";
}

void expect_in_vocab(const data::RecallBatch& b, int64_t V) {
  ASSERT_EQ(b.ids.size(), size_t(b.B * b.N));
  ASSERT_EQ(b.targets.size(), b.ids.size());
  ASSERT_EQ(b.mask.size(), b.ids.size());
  for (size_t i = 0; i < b.ids.size(); ++i) {
    ASSERT_GE(b.ids[i], 0);
    ASSERT_LT(b.ids[i], V);
    ASSERT_GE(b.targets[i], 0);
    ASSERT_LT(b.targets[i], V);
    ASSERT_TRUE(b.mask[i] == 0.f || b.mask[i] == 1.f);
    if (b.mask[i] == 0.f) ASSERT_EQ(b.targets[i], 0);
  }
}

// In-context recall (noisy or not), recomputed from the inputs: pairs at even positions,
// keys below S/2, values from S/2, noise pairs from S; a key keeps its value; a key's
// position is scored iff the key occurred before, and the last pair always repeats one.
// Returns the number of noise pairs seen.
int64_t check_recall(const data::RecallTaskConfig& cfg, const data::RecallBatch& ev,
                     const data::RecallBatch& tr) {
  const int64_t V = cfg.vocab, N = cfg.seq_len, S = V - cfg.noise_vocab, H = S / 2;
  expect_in_vocab(ev, V);
  expect_in_vocab(tr, V);
  int64_t noise = 0;
  for (int64_t b = 0; b < ev.B; ++b) {
    const int32_t* ids = ev.ids.data() + b * N;
    const int32_t* tg = ev.targets.data() + b * N;
    const float* mask = ev.mask.data() + b * N;
    std::map<int32_t, int32_t> value_of;
    for (int64_t t = 0; t < N; t += 2) {
      const int32_t k = ids[t], v = ids[t + 1];
      EXPECT_EQ(mask[t + 1], 0.f) << "values are inputs, never scored positions";
      if (k >= S) {
        EXPECT_GE(v, S) << "a noise pair is two noise tokens";
        EXPECT_EQ(mask[t], 0.f);
        EXPECT_LT(t, N - 2) << "the last pair is a key";
        ++noise;
        continue;
      }
      EXPECT_LT(k, H);
      EXPECT_GE(v, H);
      EXPECT_LT(v, S);
      const auto it = value_of.find(k);
      if (it == value_of.end()) {
        EXPECT_LT(t, N - 2) << "the last pair repeats a key";
        EXPECT_EQ(mask[t], 0.f) << "a first occurrence is not scored";
        value_of[k] = v;
      } else {
        EXPECT_EQ(v, it->second) << "a key keeps its value within the sequence";
        EXPECT_EQ(mask[t], 1.f);
        EXPECT_EQ(tg[t], v);
      }
    }
    EXPECT_EQ(mask[N - 2], 1.f);
    // Training: every next token, the last position has none.
    for (int64_t t = 0; t < N; ++t) {
      const int64_t i = b * N + t;
      EXPECT_EQ(tr.mask[size_t(i)], t + 1 < N ? 1.f : 0.f);
      if (t + 1 < N) EXPECT_EQ(tr.targets[size_t(i)], tr.ids[size_t(i + 1)]);
    }
  }
  return noise;
}

}  // namespace

TEST(MadTasks, BaselineSettingsGiveTheirChanceAndScoredCounts) {
  const std::map<std::string, double> chance{
      {"mad_recall", 1.0 / 8},         {"mad_fuzzy_recall", 1.0 / 8},
      {"mad_noisy_recall", 1.0 / 8},   {"mad_selective_copy", 1.0 / 14},
      {"mad_compression", 1.0 / 15},   {"mad_memorization", 1.0 / 127}};
  const std::map<std::string, int64_t> scored{
      {"mad_recall", 0},          {"mad_fuzzy_recall", 0}, {"mad_noisy_recall", 0},
      {"mad_selective_copy", 16}, {"mad_compression", 31}, {"mad_memorization", 16}};
  for (const auto& name : kNames) {
    const data::RecallTask task(mad(name));
    EXPECT_DOUBLE_EQ(task.chance_accuracy(), chance.at(name)) << name;
    EXPECT_EQ(task.scored_per_sequence(), scored.at(name)) << name;
    EXPECT_EQ(task.trains_on_all_tokens(), scored.at(name) == 0) << name;
  }
}

TEST(MadRecall, PairsKeepTheirValuesAndRepeatedKeysAreScored) {
  const auto cfg = mad("mad_recall");
  const data::RecallTask task(cfg);
  core::Rng a(3), b(3);
  data::RecallBatch ev, tr;
  task.generate(a, 300, ev, data::Split::kEval);
  task.generate(b, 300, tr, data::Split::kTrain);
  EXPECT_EQ(ev.ids, tr.ids) << "the split changes the targets, not the draws";
  EXPECT_EQ(check_recall(cfg, ev, tr), 0);
  // 63 keys from 8 drawn uniformly: every key and value occurs, and almost every key
  // position after the first few is a repeat.
  std::set<int32_t> keys, values;
  double scored = 0;
  for (size_t i = 0; i < ev.ids.size(); i += 2) keys.insert(ev.ids[i]);
  for (size_t i = 1; i < ev.ids.size(); i += 2) values.insert(ev.ids[i]);
  for (const float m : ev.mask) scored += m;
  EXPECT_EQ(keys.size(), 8u);
  EXPECT_EQ(values.size(), 8u);
  // Expected scored per sequence: 64 - E[distinct keys among 63 draws] = 64 - 8(1 - (7/8)^63).
  const double expect = 64 - 8 * (1 - std::pow(7.0 / 8, 63));
  EXPECT_NEAR(scored / 300, expect, 0.2);
}

TEST(MadNoisyRecall, NoisePairsComeAtTheirRateAndAreNeverScored) {
  auto cfg = mad("mad_noisy_recall");
  cfg.frac_noise = 0.6;
  const data::RecallTask task(cfg);
  core::Rng a(8), b(8);
  data::RecallBatch ev, tr;
  task.generate(a, 400, ev, data::Split::kEval);
  task.generate(b, 400, tr, data::Split::kTrain);
  const int64_t noise = check_recall(cfg, ev, tr);
  // Of the 63 pairs before the last, one (the z-th, when z < 63) is never noise.
  const double P = 64, per_seq = cfg.frac_noise * ((P - 1) - (P - 1) / P);
  EXPECT_NEAR(double(noise) / 400, per_seq, 0.5);
  // Even at 0.8 noise every sequence keeps a key before its last pair.
  cfg.frac_noise = 0.8;
  cfg.seq_len = 6;
  core::Rng c(1), d(1);
  data::RecallTask(cfg).generate(c, 2000, ev, data::Split::kEval);
  data::RecallTask(cfg).generate(d, 2000, tr, data::Split::kTrain);
  check_recall(cfg, ev, tr);
}

TEST(MadFuzzyRecall, TheProbeClosesTheSequenceAndValuesAreScoredTokens) {
  const auto cfg = mad("mad_fuzzy_recall");
  const int64_t V = cfg.vocab, N = cfg.seq_len, S = V - 1, H = S / 2;
  const data::RecallTask task(cfg);
  core::Rng a(11), b(11);
  data::RecallBatch ev, tr;
  task.generate(a, 300, ev, data::Split::kEval);
  expect_in_vocab(ev, V);
  int64_t probe_in_context = 0;
  std::set<size_t> value_sizes;
  for (int64_t s = 0; s < ev.B; ++s) {
    const int32_t* ids = ev.ids.data() + s * N;
    const int32_t* tg = ev.targets.data() + s * N;
    const float* mask = ev.mask.data() + s * N;
    EXPECT_EQ(ids[0], V - 1) << "padding opens the sequence";
    EXPECT_EQ(mask[N - 1], 1.f) << "the last value token is always scored";
    // The final value: the scored run that ends the sequence, after a key of 3 tokens.
    std::vector<int32_t> value;
    int64_t t = N - 1;
    while (t >= 0 && mask[t] == 1.f) value.insert(value.begin(), tg[t--]);
    ASSERT_GE(value.size(), 1u);
    ASSERT_LE(value.size(), 3u);
    value_sizes.insert(value.size());
    // Inputs t-1, t, t+1 ... : the probe key is the 3 tokens ending at position t + 1
    // (the target at t is the value's first token), all key tokens, distinct.
    const std::vector<int32_t> key(ids + t - 1, ids + t + 2);
    for (const int32_t k : key) EXPECT_LT(k, H);
    EXPECT_EQ(std::set<int32_t>(key.begin(), key.end()).size(), 3u);
    for (const int32_t v : value) {
      EXPECT_GE(v, H);
      EXPECT_LT(v, S);
    }
    // The probe pair also occurs earlier (the model can recall it), barring mad-lab's
    // quirk of a probe position past the loop's end.
    std::vector<int32_t> pair = key;
    pair.insert(pair.end(), value.begin(), value.end());
    if (std::search(ids, ids + t - 1, pair.begin(), pair.end()) != ids + t - 1) ++probe_in_context;
    // Every scored target is a value token.
    for (int64_t i = 0; i < N; ++i)
      if (mask[i] == 1.f) {
        EXPECT_GE(tg[i], H);
        EXPECT_LT(tg[i], S);
      }
  }
  EXPECT_GE(probe_in_context, 270) << "the probe pair is in the context in most sequences";
  EXPECT_EQ(value_sizes, (std::set<size_t>{1, 2, 3}));
  // Training: every next token is a target, padding included.
  task.generate(b, 50, tr, data::Split::kTrain);
  expect_in_vocab(tr, V);
  for (int64_t i = 0; i < tr.B * N; ++i) {
    EXPECT_EQ(tr.mask[size_t(i)], 1.f);
    if ((i + 1) % N != 0) EXPECT_EQ(tr.targets[size_t(i)], tr.ids[size_t(i + 1)]);
  }
}

TEST(MadSelectiveCopy, DataTokensAmongBlanksComeBackInOrderAfterTheMarker) {
  const auto cfg = mad("mad_selective_copy");
  const int64_t V = cfg.vocab, N = cfg.seq_len, K = cfg.n_tokens;
  const int32_t copy = int32_t(V - 1), blank = int32_t(V - 2);
  const data::RecallTask task(cfg);
  core::Rng rng(5);
  data::RecallBatch b;
  task.generate(rng, 500, b, data::Split::kTrain);
  expect_in_vocab(b, V);
  double blanks_first = 0;  // blanks before the first data token
  for (int64_t s = 0; s < b.B; ++s) {
    const int32_t* ids = b.ids.data() + s * N;
    const int32_t* tg = b.targets.data() + s * N;
    const float* mask = b.mask.data() + s * N;
    std::vector<int32_t> data;
    for (int64_t t = 0; t < N - K - 1; ++t) {
      EXPECT_NE(ids[t], copy);
      if (ids[t] != blank) data.push_back(ids[t]);
    }
    ASSERT_EQ(int64_t(data.size()), K);
    EXPECT_NE(ids[N - K - 2], blank) << "the last data token is right before the marker";
    EXPECT_EQ(ids[N - K - 1], copy);
    int64_t first = 0;
    while (ids[first] == blank) ++first;
    blanks_first += double(first);
    for (int64_t i = 0; i < K; ++i) {
      EXPECT_EQ(ids[N - K + i], blank);
      EXPECT_EQ(mask[N - K + i], 1.f);
      EXPECT_EQ(tg[N - K + i], data[size_t(i)]);
    }
    for (int64_t t = 0; t < N - K; ++t) EXPECT_EQ(mask[t], 0.f);
  }
  // Each of the N - 2K - 1 = 223 blanks lands before one of the 16 tokens uniformly.
  EXPECT_NEAR(blanks_first / 500, 223.0 / 16, 1.0);
}

TEST(MadCompression, TheTokensComeBackAfterTheCompressionToken) {
  const auto cfg = mad("mad_compression");
  const int64_t V = cfg.vocab, N = cfg.seq_len, L = N / 2;
  const data::RecallTask task(cfg);
  core::Rng rng(9);
  data::RecallBatch b;
  task.generate(rng, 200, b, data::Split::kTrain);
  expect_in_vocab(b, V);
  std::set<int32_t> data;
  for (int64_t s = 0; s < b.B; ++s) {
    const int32_t* ids = b.ids.data() + s * N;
    for (int64_t i = 0; i + 1 < L; ++i) {
      EXPECT_LT(ids[i], V - 1);
      data.insert(ids[i]);
      EXPECT_EQ(b.mask[size_t(s * N + L + i)], 1.f);
      EXPECT_EQ(b.targets[size_t(s * N + L + i)], ids[i]);
      EXPECT_EQ(b.mask[size_t(s * N + i)], 0.f);
    }
    for (int64_t t = L - 1; t < N; ++t) EXPECT_EQ(ids[t], V - 1);
    EXPECT_EQ(b.mask[size_t(s * N + N - 1)], 0.f);
  }
  EXPECT_EQ(data.size(), size_t(V - 1));
}

TEST(MadMemorization, OneFixedMapForEverySeedAndSplit) {
  auto cfg = mad("mad_memorization");
  const int64_t V = cfg.vocab, N = cfg.seq_len, S = V - 1, H = S / 2;
  const std::vector<int32_t> map = data::mad_memorization_map(cfg);
  ASSERT_EQ(int64_t(map.size()), H);
  EXPECT_EQ(std::set<int32_t>(map.begin(), map.end()).size(), map.size()) << "injective";
  for (const int32_t v : map) {
    EXPECT_GE(v, H);
    EXPECT_LT(v, S);
  }
  const data::RecallTask task(cfg);
  for (const uint64_t seed : {1u, 2u})
    for (const auto split : {data::Split::kTrain, data::Split::kEval}) {
      core::Rng rng(seed);
      data::RecallBatch b;
      task.generate(rng, 100, b, split);
      expect_in_vocab(b, V);
      for (int64_t i = 0; i < b.B * N; i += 2) {
        ASSERT_LT(b.ids[size_t(i)], H);
        EXPECT_EQ(b.mask[size_t(i)], 0.f);
        EXPECT_EQ(b.ids[size_t(i + 1)], V - 1) << "the insert token";
        EXPECT_EQ(b.mask[size_t(i + 1)], 1.f);
        EXPECT_EQ(b.targets[size_t(i + 1)], map[size_t(b.ids[size_t(i)])]);
      }
    }
  cfg.map_seed = 7;
  EXPECT_NE(data::mad_memorization_map(cfg), map) << "map_seed draws another map";
}

TEST(MadTasks, SameSeedSameBatchOtherSeedAnother) {
  for (const auto& name : kNames)
    for (const auto split : {data::Split::kTrain, data::Split::kEval}) {
      const data::RecallTask task(mad(name));
      core::Rng a(42), b(42), c(43);
      data::RecallBatch x, y, z;
      task.generate(a, 8, x, split);
      task.generate(b, 8, y, split);
      task.generate(c, 8, z, split);
      EXPECT_EQ(x.ids, y.ids) << name;
      EXPECT_EQ(x.targets, y.targets) << name;
      EXPECT_EQ(x.mask, y.mask) << name;
      EXPECT_NE(x.ids, z.ids) << name;
      task.generate(a, 8, x, split);
      EXPECT_NE(x.ids, y.ids) << name << ": a fresh batch each call";
    }
}

TEST(MadTasks, CheckRulesNameTheirKey) {
  const auto expect_names = [](const data::RecallTaskConfig& cfg, const std::string& key) {
    const std::string msg = usage_error(cfg);
    EXPECT_NE(msg.find(key), std::string::npos) << "'" << msg << "' should name " << key;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  };
  for (const auto& name : kNames) EXPECT_EQ(usage_error(mad(name)), "") << name;
  auto c = mad("mad_recall");
  c.seq_len = 127;
  expect_names(c, "task.seq_len");
  c = mad("mad_recall");
  c.frac_noise = 0.2;
  c.noise_vocab = 4;
  expect_names(c, "task.frac_noise");
  c = mad("mad_recall");
  c.noise_vocab = 15;
  expect_names(c, "task.vocab");
  c = mad("mad_noisy_recall");
  c.frac_noise = 0;
  expect_names(c, "task.frac_noise");
  c = mad("mad_noisy_recall");
  c.frac_noise = 1.0;
  expect_names(c, "task.frac_noise");
  c = mad("mad_fuzzy_recall");
  c.vocab = 6;  // 5 ids: keys from 2 tokens cannot make keys of 3
  expect_names(c, "task.vocab");
  c = mad("mad_fuzzy_recall");
  c.seq_len = 12;
  expect_names(c, "task.seq_len");
  c = mad("mad_fuzzy_recall");
  c.frac_noise = 0.1;
  expect_names(c, "task.noise_vocab");
  c = mad("mad_selective_copy");
  c.seq_len = 33;
  expect_names(c, "task.seq_len");
  c.vocab = 3;
  c.seq_len = 256;
  expect_names(c, "task.vocab");
  c = mad("mad_compression");
  c.seq_len = 63;
  expect_names(c, "task.seq_len");
  c = mad("mad_memorization");
  c.seq_len = 31;
  expect_names(c, "task.seq_len");
  c.seq_len = 32;
  c.vocab = 3;
  expect_names(c, "task.vocab");
  c = mad("mad_memorization");
  c.train_examples = -1;
  expect_names(c, "task.train_examples");
  // The edges that hold.
  c = mad("mad_selective_copy");
  c.seq_len = 34;
  EXPECT_EQ(usage_error(c), "");
  c = mad("mad_fuzzy_recall");
  c.seq_len = 13;
  c.vocab = 8;  // 7 ids: 3 key tokens, 4 value tokens
  EXPECT_EQ(usage_error(c), "");
  core::Rng rng(1);
  data::RecallBatch b;
  data::RecallTask(c).generate(rng, 200, b, data::Split::kEval);
  expect_in_vocab(b, c.vocab);
}

// MAD's difficulty variants (athms/mad-lab configs/tasks/*.yml, "changes": one key changed
// from the baseline at a time) are all valid settings and draw sequences in the vocabulary.
TEST(MadTasks, EveryDifficultyVariantDraws) {
  struct Variant {
    std::string task;
    std::vector<std::pair<std::string, std::vector<double>>> changes;
  };
  const std::vector<Variant> variants{
      {"mad_recall", {{"vocab", {32, 64, 128}}, {"seq_len", {256, 512, 1024}}}},
      {"mad_fuzzy_recall", {{"vocab", {32, 64, 128}}, {"seq_len", {256, 512, 1024}}}},
      {"mad_noisy_recall",
       {{"vocab", {48, 80, 144}}, {"seq_len", {256, 512, 1024}}, {"frac_noise", {0.4, 0.6, 0.8}}}},
      {"mad_selective_copy",
       {{"vocab", {32, 64, 128}}, {"seq_len", {512, 1024}}, {"n_tokens", {32, 64, 96}}}},
      {"mad_compression", {{"vocab", {32, 64, 128}}, {"seq_len", {128, 256, 512}}}},
      {"mad_memorization", {{"vocab", {512, 1024, 2048, 4096, 8192}}}},
  };
  int drawn = 0;
  for (const auto& v : variants)
    for (const auto& change : v.changes)
      for (const double x : change.second) {
        auto c = mad(v.task);
        if (change.first == "vocab") c.vocab = int64_t(x);
        if (change.first == "seq_len") c.seq_len = int64_t(x);
        if (change.first == "n_tokens") c.n_tokens = int64_t(x);
        if (change.first == "frac_noise") c.frac_noise = x;
        SCOPED_TRACE(v.task + " " + change.first + " " + std::to_string(x));
        ASSERT_EQ(usage_error(c), "");
        const data::RecallTask task(c);
        core::Rng rng(3);
        data::RecallBatch b;
        task.generate(rng, 4, b, data::Split::kEval);
        expect_in_vocab(b, c.vocab);
        double scored = 0;
        for (const float m : b.mask) scored += m;
        EXPECT_GE(scored, 4) << "every sequence has a scored position";
        ++drawn;
      }
  EXPECT_EQ(drawn, 40);
}
