#include "data/recall.hpp"

#include "data/recall_ops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>
#include <utility>

#include "config/check.hpp"
#include "core/check.hpp"

namespace seqbench::data {

namespace {

// Config mistakes are usage errors (exit code 2), one line with a hint.
template <class... Args>
[[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw core::UsageError(fmt::format(f, std::forward<Args>(args)...));
}

// k distinct integers from [0, n) by Floyd's algorithm: a uniform k-subset, in the order
// Floyd produces (the callers shuffle or sort it). seen is a bitmap of at least n zeros
// when n is small enough for one, else empty (then a hash set); it is left all 0.
void floyd_subset(core::Rng& rng, int64_t n, int64_t k, std::vector<uint8_t>& seen,
                  std::vector<int64_t>& out) {
  out.clear();
  if (static_cast<int64_t>(seen.size()) >= n) {
    for (int64_t j = n - k; j < n; ++j) {
      int64_t t = rng.randint(j + 1);
      if (seen[size_t(t)]) t = j;
      seen[size_t(t)] = 1;
      out.push_back(t);
    }
    for (const int64_t t : out) seen[size_t(t)] = 0;
  } else {
    std::unordered_set<int64_t> set;
    for (int64_t j = n - k; j < n; ++j) {
      int64_t t = rng.randint(j + 1);
      if (!set.insert(t).second) {
        t = j;
        set.insert(t);
      }
      out.push_back(t);
    }
  }
}

// Fisher-Yates: a uniformly random order.
void shuffle(core::Rng& rng, std::vector<int64_t>& v) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[size_t(rng.randint(int64_t(i)))]);
}

constexpr int64_t kBitmapMax = int64_t{1} << 24;  // larger ranges use a hash set

void mqar(const RecallTaskConfig& cfg, const std::vector<double>& weight, core::Rng& rng,
          RecallScratch& s, Split, int32_t* ids, int32_t* targets, float* mask) {
  const int64_t V = cfg.vocab, N = cfg.seq_len, P = cfg.n_pairs, H = V / 2;
  const int64_t S = static_cast<int64_t>(weight.size());
  // Keys from {1 .. H-1}, values from {H .. V-1}: ordered draws without replacement.
  floyd_subset(rng, H - 1, P, s.seen, s.keys);
  shuffle(rng, s.keys);
  for (int64_t i = 0; i < P; ++i) ids[2 * i] = static_cast<int32_t>(1 + s.keys[size_t(i)]);
  floyd_subset(rng, V - H, P, s.seen, s.pick);
  shuffle(rng, s.pick);
  for (int64_t i = 0; i < P; ++i) ids[2 * i + 1] = static_cast<int32_t>(H + s.pick[size_t(i)]);

  // Gaps by successive sampling from p(g) ∝ weight[g] without replacement: the P largest
  // of log(u_g) / weight[g] (Efraimidis-Spirakis), largest first = drawn first.
  s.gap_key.resize(size_t(S));
  for (int64_t g = 0; g < S; ++g) {
    const double u = rng.uniform();
    s.gap_key[size_t(g)] = {
        u > 0.0 ? std::log(u) / weight[size_t(g)] : -std::numeric_limits<double>::infinity(), g};
  }
  std::partial_sort(s.gap_key.begin(), s.gap_key.begin() + P, s.gap_key.end(),
                    [](const auto& a, const auto& b) {
                      return a.first > b.first || (a.first == b.first && a.second < b.second);
                    });
  for (int64_t i = 0; i < P; ++i) {
    const int64_t q = 2 * P + 2 * s.gap_key[size_t(i)].second;
    ids[q] = ids[2 * i];
    targets[q] = ids[2 * i + 1];
    mask[q] = 1.f;
  }

  // Filler: 0, or uniform over the vocabulary minus this sequence's keys (rejection; keys
  // are fewer than V/2, so under 2 draws on average).
  if (cfg.random_non_queries) {
    s.sorted_keys.assign(size_t(P), 0);
    for (int64_t i = 0; i < P; ++i) s.sorted_keys[size_t(i)] = ids[2 * i];
    std::sort(s.sorted_keys.begin(), s.sorted_keys.end());
  }
  for (int64_t t = 2 * P; t < N; ++t) {
    if (mask[t] != 0.f) continue;
    int64_t tok = 0;
    if (cfg.random_non_queries) {
      do tok = rng.randint(V);
      while (std::binary_search(s.sorted_keys.begin(), s.sorted_keys.end(), tok));
    }
    ids[t] = static_cast<int32_t>(tok);
  }
}

void selective_copy(const RecallTaskConfig& cfg, const std::vector<double>&, core::Rng& rng,
                    RecallScratch& s, Split, int32_t* ids, int32_t* targets, float* mask) {
  const int64_t V = cfg.vocab, N = cfg.seq_len, K = cfg.n_tokens, D = N - K;
  constexpr int32_t kNoise = 0, kMarker = 1;
  floyd_subset(rng, D, K, s.seen, s.pick);
  std::sort(s.pick.begin(), s.pick.end());
  std::fill(ids, ids + D, kNoise);
  std::fill(ids + D, ids + N, kMarker);
  for (int64_t i = 0; i < K; ++i) {
    const auto tok = static_cast<int32_t>(2 + rng.randint(V - 2));
    ids[s.pick[size_t(i)]] = tok;
    targets[D + i] = tok;
    mask[D + i] = 1.f;
  }
}

void induction(const RecallTaskConfig& cfg, const std::vector<double>&, core::Rng& rng,
               RecallScratch&, Split, int32_t* ids, int32_t* targets, float* mask) {
  const int64_t V = cfg.vocab, N = cfg.seq_len;
  constexpr int32_t kTrigger = 0;
  for (int64_t t = 0; t < N; ++t) ids[t] = static_cast<int32_t>(1 + rng.randint(V - 1));
  const int64_t p = rng.randint(N - 2);  // trigger at p, answer at p+1 <= N-2
  ids[p] = kTrigger;
  ids[N - 1] = kTrigger;
  targets[N - 1] = ids[p + 1];
  mask[N - 1] = 1.f;
}

void check_mqar(const RecallTaskConfig& cfg) {
  const int64_t V = cfg.vocab, N = cfg.seq_len, P = cfg.n_pairs, keys = V / 2 - 1;
  if (P > keys)
    fail(
        "task.n_pairs: {} pairs need {} distinct keys from [1, vocab/2), but task.vocab = {} "
        "has {} (hint: vocab >= {}, or n_pairs <= {})",
        P, P, V, keys, 2 * P + 2, std::max<int64_t>(keys, 0));
  if (4 * P > N)
    fail(
        "task.seq_len: mqar with task.n_pairs = {} needs seq_len >= 4 n_pairs = {} (2 "
        "tokens a pair, then at least one 2-token query slot a pair), got {} (hint: "
        "seq_len: {}, or n_pairs <= {})",
        P, 4 * P, N, 4 * P, N / 4);
}

void check_selective_copy(const RecallTaskConfig& cfg) {
  const int64_t V = cfg.vocab, N = cfg.seq_len, K = cfg.n_tokens;
  if (V < 4)
    fail(
        "task.vocab: selective_copy reserves 0 (noise) and 1 (copy marker) and needs at "
        "least 2 data tokens, so vocab >= 4, got {} (hint: Mamba uses vocab 16)",
        V);
  if (N <= 2 * K)
    fail(
        "task.seq_len: selective_copy with task.n_tokens = {} needs seq_len > 2 n_tokens = "
        "{} ({} data tokens among noise, then {} copy markers), got {} (hint: seq_len: {} "
        "or more; Mamba copies 16 tokens in 4096)",
        K, 2 * K, K, K, N, 2 * K + 1);
}

// The field constraints (vocab >= 3: trigger and at least two answers; seq_len >= 3:
// trigger, answer, trigger) are all induction needs.
void check_induction(const RecallTaskConfig&) {}

std::vector<double> mqar_gap_weights(const RecallTaskConfig& cfg) {
  const int64_t S = (cfg.seq_len - 2 * cfg.n_pairs) / 2;
  std::vector<double> weight(static_cast<size_t>(S));
  for (int64_t g = 0; g < S; ++g) weight[size_t(g)] = std::pow(double(g + 1), cfg.power_a - 1.0);
  return weight;
}

}  // namespace

const RecallTaskOps kMqarTask{
    check_mqar,
    [](const RecallTaskConfig& c) { return c.n_pairs; },
    [](const RecallTaskConfig& c) { return 1.0 / double(c.vocab - c.vocab / 2); },
    &RecallTaskConfig::n_pairs,
    [](const RecallTaskConfig& c) { return std::max(c.vocab / 2 - 1, c.vocab - c.vocab / 2); },
    mqar_gap_weights,
    mqar,
    false};
const RecallTaskOps kSelectiveCopyTask{
    check_selective_copy,
    [](const RecallTaskConfig& c) { return c.n_tokens; },
    [](const RecallTaskConfig& c) { return 1.0 / double(c.vocab - 2); },
    &RecallTaskConfig::n_tokens,
    [](const RecallTaskConfig& c) { return c.seq_len - c.n_tokens; },
    nullptr,
    selective_copy,
    false};
const RecallTaskOps kInductionTask{
    check_induction,
    [](const RecallTaskConfig&) { return int64_t{1}; },
    [](const RecallTaskConfig& c) { return 1.0 / double(c.vocab - 1); },
    &RecallTaskConfig::n_tokens,
    [](const RecallTaskConfig&) { return int64_t{0}; },
    nullptr,
    induction,
    false};

void check_rules(const RecallTaskConfig& cfg) {
  config::check(cfg, "task");
  find_task(cfg.name, TaskFamily::kRecall).recall->check(cfg);
}

RecallTask::RecallTask(const RecallTaskConfig& cfg) : cfg_(cfg) {
  check_rules(cfg_);
  entry_ = &find_task(cfg_.name, TaskFamily::kRecall);
  if (entry_->recall->table) table_ = entry_->recall->table(cfg_);
}

int64_t RecallTask::scored_per_sequence() const { return entry_->recall->scored(cfg_); }

double RecallTask::chance_accuracy() const { return entry_->recall->chance(cfg_); }

int64_t RecallTask::pairs_column() const { return cfg_.*(entry_->recall->pairs_key); }

bool RecallTask::trains_on_all_tokens() const { return entry_->recall->train_all; }

void RecallTask::generate(core::Rng& rng, int64_t B, RecallBatch& out, Split split) const {
  SB_CHECK(B >= 0, "recall task: batch size {} is negative", B);
  const int64_t N = cfg_.seq_len;
  out.B = B;
  out.N = N;
  const auto size = static_cast<size_t>(B * N);
  out.ids.resize(size);
  out.targets.assign(size, 0);
  out.mask.assign(size, 0.f);

  const RecallTaskOps& task = *entry_->recall;
  RecallScratch s;
  const int64_t range = task.draw_range(cfg_);
  if (range <= kBitmapMax) s.seen.assign(size_t(range), 0);
  for (int64_t b = 0; b < B; ++b)
    task.sequence(cfg_, table_, rng, s, split, out.ids.data() + b * N,
                  out.targets.data() + b * N, out.mask.data() + b * N);
}

}  // namespace seqbench::data
