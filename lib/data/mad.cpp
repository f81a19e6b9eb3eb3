#include "data/mad.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "core/check.hpp"
#include "data/recall_ops.hpp"

namespace seqbench::data {

namespace {

template <class... Args>
[[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw core::UsageError(fmt::format(f, std::forward<Args>(args)...));
}

int32_t tok(int64_t x) { return static_cast<int32_t>(x); }

// size distinct tokens from [lo, lo + n) in a uniformly random order (a uniform
// size-permutation, as mad-lab's choice among all permutations); size <= n.
void draw_tuple(core::Rng& rng, int64_t lo, int64_t n, int64_t size, std::vector<int32_t>& out) {
  out.clear();
  while (static_cast<int64_t>(out.size()) < size) {
    const int32_t t = tok(lo + rng.randint(n));
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  }
}

// Writes a MAD token list `seq` (with its scored flags) as one sequence of N inputs: ids
// are its first N tokens and the target at t is token t + 1 (every one when training,
// the scored ones when evaluating). seq has N or N + 1 tokens; with N the last input has
// no target.
void emit_next_token(const RecallScratch& s, int64_t N, Split split, int32_t* ids,
                     int32_t* targets, float* mask) {
  const int64_t L = static_cast<int64_t>(s.seq.size());
  SB_CHECK(L == N || L == N + 1, "mad: sequence of {} tokens for seq_len {}", L, N);
  for (int64_t t = 0; t < N; ++t) {
    ids[t] = s.seq[size_t(t)];
    if (t + 1 >= L) continue;
    if (split == Split::kTrain || s.scored[size_t(t + 1)]) {
      targets[t] = s.seq[size_t(t + 1)];
      mask[t] = 1.f;
    }
  }
}

// --- in-context recall and noisy in-context recall ----------------------------------------

void recall(const RecallTaskConfig& cfg, const std::vector<double>&, core::Rng& rng,
            RecallScratch& s, Split split, int32_t* ids, int32_t* targets, float* mask) {
  const int64_t V = cfg.vocab, N = cfg.seq_len, n = cfg.noise_vocab, S = V - n;
  const int64_t nk = S / 2, nv = S - nk, P = N / 2;
  const double f = cfg.frac_noise;
  std::vector<int64_t>& value = s.pick;  // value[k] of this sequence, -1: not seen
  std::vector<int64_t>& seen = s.keys;   // distinct keys in order of appearance
  do {
    s.seq.clear();
    s.scored.clear();
    value.assign(size_t(nk), -1);
    seen.clear();
    const int64_t z = rng.randint(P);  // never noise
    for (int64_t i = 0; i + 1 < P; ++i) {
      if (f > 0 && i != z && rng.uniform() < f) {
        for (int j = 0; j < 2; ++j) {
          s.seq.push_back(tok(S + rng.randint(n)));
          s.scored.push_back(0);
        }
        continue;
      }
      const int64_t k = rng.randint(nk);
      const bool known = value[size_t(k)] >= 0;
      if (!known) {
        value[size_t(k)] = nk + rng.randint(nv);
        seen.push_back(k);
      }
      s.seq.push_back(tok(k));
      s.scored.push_back(0);
      s.seq.push_back(tok(value[size_t(k)]));
      s.scored.push_back(known ? 1 : 0);
    }
  } while (seen.empty());
  const int64_t k = seen[size_t(rng.randint(int64_t(seen.size())))];
  s.seq.push_back(tok(k));
  s.scored.push_back(0);
  s.seq.push_back(tok(value[size_t(k)]));
  s.scored.push_back(1);
  emit_next_token(s, N, split, ids, targets, mask);
}

void check_even(const RecallTaskConfig& cfg, int64_t min_len, const char* why) {
  if (cfg.seq_len % 2 != 0 || cfg.seq_len < min_len)
    fail("task.seq_len: {} needs an even seq_len >= {} ({}), got {} (hint: seq_len: {})",
         cfg.name, min_len, why, cfg.seq_len, std::max(min_len, cfg.seq_len + 1));
}

void check_keys_values(const RecallTaskConfig& cfg, int64_t S, int64_t key_size,
                       int64_t value_size, const char* reserved) {
  if (S / 2 < key_size || S - S / 2 < value_size)
    fail(
        "task.vocab: {} with vocab {} and noise_vocab {} leaves {} ids for keys and values "
        "({}), too few for keys of {} and values of {} distinct tokens (hint: vocab >= {})",
        cfg.name, cfg.vocab, cfg.noise_vocab, std::max<int64_t>(S, 0), reserved, key_size,
        value_size, cfg.vocab - S + 2 * std::max(key_size, value_size));
}

void check_noise(const RecallTaskConfig& cfg) {
  if (cfg.frac_noise > 0 && cfg.noise_vocab < 1)
    fail("task.noise_vocab: {} with frac_noise {} needs noise ids, got noise_vocab 0 (hint: "
         "noise_vocab: 16, as MAD)",
         cfg.name, cfg.frac_noise);
}

void check_recall(const RecallTaskConfig& cfg) {
  check_even(cfg, 4, "two tokens a pair, at least two pairs");
  if (cfg.frac_noise > 0)
    fail("task.frac_noise: mad_recall has no noise, got {} (hint: task.name: mad_noisy_recall)",
         cfg.frac_noise);
  check_keys_values(cfg, cfg.vocab - cfg.noise_vocab, 1, 1, "noise ids excluded");
}

void check_noisy_recall(const RecallTaskConfig& cfg) {
  check_even(cfg, 4, "two tokens a pair, at least two pairs");
  if (cfg.noise_vocab < 1 || cfg.frac_noise <= 0)
    fail("task.frac_noise: mad_noisy_recall needs frac_noise > 0 and noise_vocab >= 1, got {} "
         "and {} (hint: MAD's baseline: frac_noise 0.2, noise_vocab 16, vocab 32)",
         cfg.frac_noise, cfg.noise_vocab);
  check_keys_values(cfg, cfg.vocab - cfg.noise_vocab, 1, 1, "noise ids excluded");
}

// --- fuzzy in-context recall ---------------------------------------------------------------

void append(RecallScratch& s, const std::vector<int32_t>& toks, bool scored) {
  for (const int32_t t : toks) {
    s.seq.push_back(t);
    s.scored.push_back(scored ? 1 : 0);
  }
}

void fuzzy_recall(const RecallTaskConfig& cfg, const std::vector<double>&, core::Rng& rng,
                  RecallScratch& s, Split split, int32_t* ids, int32_t* targets, float* mask) {
  const int64_t V = cfg.vocab, N = cfg.seq_len, n = cfg.noise_vocab, S = V - 1 - n;
  const int64_t nk = S / 2, nv = S - nk, A = cfg.k_motif, B = cfg.v_motif;
  const int32_t pad = tok(V - 1);
  const bool train = split == Split::kTrain;
  const double f = cfg.frac_noise;
  const auto key_size = [&] { return train ? 1 + rng.randint(A) : A; };

  std::vector<int32_t> k_probe, v_probe, k, v;
  draw_tuple(rng, 0, nk, key_size(), k_probe);
  draw_tuple(rng, nk, nv, 1 + rng.randint(B), v_probe);
  const int64_t m = int64_t(k_probe.size() + v_probe.size());
  const int64_t p = rng.randint(N - 2 * m);
  s.seq.clear();
  s.scored.clear();
  s.value_of.clear();
  bool probe_in = false;
  while (int64_t(s.seq.size()) < N - m - (A + B)) {
    const int64_t ks = key_size(), vs = 1 + rng.randint(B);
    if (int64_t(s.seq.size()) >= p && !probe_in) {
      append(s, k_probe, false);
      append(s, v_probe, false);
      s.value_of[k_probe] = v_probe;
      probe_in = true;
      continue;
    }
    if (f > 0 && rng.uniform() < f) {
      for (int64_t j = 0; j < ks + vs; ++j) {
        s.seq.push_back(tok(S + rng.randint(n)));
        s.scored.push_back(0);
      }
      continue;
    }
    draw_tuple(rng, 0, nk, ks, k);
    const auto it = s.value_of.find(k);
    const bool known = it != s.value_of.end();
    if (k == k_probe) {
      v = v_probe;
      probe_in = true;
    } else if (known) {
      v = it->second;
    } else {
      draw_tuple(rng, nk, nv, vs, v);
    }
    append(s, k, false);
    append(s, v, known);
    s.value_of[k] = v;
  }
  append(s, k_probe, false);
  append(s, v_probe, true);
  const size_t pads = size_t(N + 1) - s.seq.size();
  s.seq.insert(s.seq.begin(), pads, pad);
  s.scored.insert(s.scored.begin(), pads, 0);
  emit_next_token(s, N, split, ids, targets, mask);
}

void check_fuzzy_recall(const RecallTaskConfig& cfg) {
  const int64_t A = cfg.k_motif, B = cfg.v_motif;
  check_noise(cfg);
  check_keys_values(cfg, cfg.vocab - 1 - cfg.noise_vocab, A, B, "padding and noise ids excluded");
  if (cfg.seq_len <= 2 * (A + B))
    fail(
        "task.seq_len: mad_fuzzy_recall with k_motif {} and v_motif {} needs seq_len > 2 "
        "(k_motif + v_motif) = {}, got {} (hint: seq_len: {}; MAD uses 128)",
        A, B, 2 * (A + B), cfg.seq_len, 2 * (A + B) + 1);
}

// --- selective copying ---------------------------------------------------------------------

void selective_copy(const RecallTaskConfig& cfg, const std::vector<double>&, core::Rng& rng,
                    RecallScratch& s, Split, int32_t* ids, int32_t* targets, float* mask) {
  const int64_t V = cfg.vocab, N = cfg.seq_len, K = cfg.n_tokens, blanks = N - 2 * K - 1;
  const int32_t copy = tok(V - 1), blank = tok(V - 2);
  std::vector<int64_t>& before = s.pick;  // blanks just before data token j
  before.assign(size_t(K), 0);
  for (int64_t i = 0; i < blanks; ++i) ++before[size_t(rng.randint(K))];
  int64_t t = 0;
  for (int64_t j = 0; j < K; ++j) {
    for (int64_t i = 0; i < before[size_t(j)]; ++i) ids[t++] = blank;
    const int32_t d = tok(rng.randint(V - 2));
    ids[t++] = d;
    targets[N - K + j] = d;
    mask[N - K + j] = 1.f;
  }
  ids[t++] = copy;
  while (t < N) ids[t++] = blank;
}

void check_selective_copy(const RecallTaskConfig& cfg) {
  const int64_t V = cfg.vocab, N = cfg.seq_len, K = cfg.n_tokens;
  if (V < 4)
    fail(
        "task.vocab: mad_selective_copy reserves vocab-1 (copy marker) and vocab-2 (blank) "
        "and needs at least 2 data tokens, so vocab >= 4, got {} (hint: MAD uses vocab 16)",
        V);
  if (N <= 2 * K + 1)
    fail(
        "task.seq_len: mad_selective_copy with task.n_tokens = {} needs seq_len > 2 n_tokens "
        "+ 1 = {} (the tokens, at least one blank, the marker, one blank per token), got {} "
        "(hint: seq_len: {}; MAD copies 16 tokens in 256)",
        K, 2 * K + 1, N, 2 * K + 2);
}

// --- compression ---------------------------------------------------------------------------

void compression(const RecallTaskConfig& cfg, const std::vector<double>&, core::Rng& rng,
                 RecallScratch&, Split, int32_t* ids, int32_t* targets, float* mask) {
  const int64_t V = cfg.vocab, N = cfg.seq_len, L = N / 2;
  const int32_t comp = tok(V - 1);
  for (int64_t i = 0; i + 1 < L; ++i) {
    ids[i] = tok(rng.randint(V - 1));
    targets[L + i] = ids[i];
    mask[L + i] = 1.f;
  }
  for (int64_t t = L - 1; t < N; ++t) ids[t] = comp;
}

void check_compression(const RecallTaskConfig& cfg) {
  check_even(cfg, 4, "the tokens and compression token, then as many decoding positions");
}

// --- memorization --------------------------------------------------------------------------

std::vector<double> memorization_table(const RecallTaskConfig& cfg) {
  const std::vector<int32_t> map = mad_memorization_map(cfg);
  return std::vector<double>(map.begin(), map.end());
}

void memorization(const RecallTaskConfig& cfg, const std::vector<double>& map, core::Rng& rng,
                  RecallScratch&, Split, int32_t* ids, int32_t* targets, float* mask) {
  const int64_t N = cfg.seq_len, nk = static_cast<int64_t>(map.size());
  const int32_t insert = tok(cfg.vocab - 1);
  for (int64_t i = 0; i < N / 2; ++i) {
    const int64_t k = rng.randint(nk);
    ids[2 * i] = tok(k);
    ids[2 * i + 1] = insert;
    targets[2 * i + 1] = tok(static_cast<int64_t>(map[size_t(k)]));
    mask[2 * i + 1] = 1.f;
  }
}

void check_memorization(const RecallTaskConfig& cfg) {
  check_even(cfg, 2, "a key and the insert token a pair");
  if (cfg.vocab < 4)
    fail("task.vocab: mad_memorization needs vocab >= 4 (the insert token, a key, values), "
         "got {} (hint: MAD uses 256)",
         cfg.vocab);
}

int64_t varies(const RecallTaskConfig&) { return 0; }

}  // namespace

std::vector<int32_t> mad_memorization_map(const RecallTaskConfig& cfg) {
  const int64_t S = cfg.vocab - 1, nk = S / 2, nv = S - nk;
  core::Rng rng(static_cast<uint64_t>(cfg.map_seed));
  std::vector<int32_t> values(static_cast<size_t>(nv));
  for (int64_t i = 0; i < nv; ++i) values[size_t(i)] = tok(nk + i);
  for (size_t i = values.size(); i > 1; --i)
    std::swap(values[i - 1], values[size_t(rng.randint(int64_t(i)))]);
  values.resize(size_t(nk));
  return values;
}

const RecallTaskOps kMadRecallTask{
    check_recall,
    varies,
    [](const RecallTaskConfig& c) {
      const int64_t S = c.vocab - c.noise_vocab;
      return 1.0 / double(S - S / 2);
    },
    &RecallTaskConfig::n_tokens,
    [](const RecallTaskConfig&) { return int64_t{0}; },
    nullptr,
    recall,
    true};
const RecallTaskOps kMadNoisyRecallTask{
    check_noisy_recall,
    varies,
    [](const RecallTaskConfig& c) {
      const int64_t S = c.vocab - c.noise_vocab;
      return 1.0 / double(S - S / 2);
    },
    &RecallTaskConfig::n_tokens,
    [](const RecallTaskConfig&) { return int64_t{0}; },
    nullptr,
    recall,
    true};
const RecallTaskOps kMadFuzzyRecallTask{
    check_fuzzy_recall,
    varies,
    [](const RecallTaskConfig& c) {
      const int64_t S = c.vocab - 1 - c.noise_vocab;
      return 1.0 / double(S - S / 2);
    },
    &RecallTaskConfig::n_tokens,
    [](const RecallTaskConfig&) { return int64_t{0}; },
    nullptr,
    fuzzy_recall,
    true};
const RecallTaskOps kMadSelectiveCopyTask{
    check_selective_copy,
    [](const RecallTaskConfig& c) { return c.n_tokens; },
    [](const RecallTaskConfig& c) { return 1.0 / double(c.vocab - 2); },
    &RecallTaskConfig::n_tokens,
    [](const RecallTaskConfig&) { return int64_t{0}; },
    nullptr,
    selective_copy,
    false};
const RecallTaskOps kMadCompressionTask{
    check_compression,
    [](const RecallTaskConfig& c) { return c.seq_len / 2 - 1; },
    [](const RecallTaskConfig& c) { return 1.0 / double(c.vocab - 1); },
    &RecallTaskConfig::n_tokens,
    [](const RecallTaskConfig&) { return int64_t{0}; },
    nullptr,
    compression,
    false};
const RecallTaskOps kMadMemorizationTask{
    check_memorization,
    [](const RecallTaskConfig& c) { return c.seq_len / 2; },
    [](const RecallTaskConfig& c) { return 1.0 / double((c.vocab - 1) / 2); },
    &RecallTaskConfig::n_tokens,
    [](const RecallTaskConfig&) { return int64_t{0}; },
    memorization_table,
    memorization,
    false};

}  // namespace seqbench::data
