// Internal to the recall tasks' generators (recall.cpp, mad.cpp): how a task of the recall
// experiment is checked, drawn and scored. Its registry entry (tasks.hpp) points at one
// `const RecallTaskOps`; nothing outside lib/data includes this header.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "core/rng.hpp"
#include "data/recall.hpp"

namespace seqbench::data {

// Per-generate() scratch, so that generate() stays const and thread-compatible.
struct RecallScratch {
  std::vector<uint8_t> seen;                     // Floyd's membership bitmap, kept all 0
  std::vector<int64_t> pick, keys, sorted_keys;  // draws
  std::vector<std::pair<double, int64_t>> gap_key;
  // The MAD tasks (mad.cpp): a sequence before it is cut to seq_len, which of its tokens
  // are scored, and the key -> value map of the sequence (fuzzy recall's keys and values
  // are tuples of tokens).
  std::vector<int32_t> seq;
  std::vector<uint8_t> scored;
  std::map<std::vector<int32_t>, std::vector<int32_t>> value_of;
};

struct RecallTaskOps {
  void (*check)(const RecallTaskConfig& cfg);  // rules across its keys, beyond each field's own
  int64_t (*scored)(const RecallTaskConfig& cfg);  // scored positions per sequence (0: varies)
  double (*chance)(const RecallTaskConfig& cfg);   // accuracy of a uniform guess
  int64_t RecallTaskConfig::*pairs_key;            // runs.csv's "pairs" column
  // The largest [0, n) that Floyd's algorithm draws from (0: none).
  int64_t (*draw_range)(const RecallTaskConfig& cfg);
  // A table computed once per task and read by every sequence (mqar: gap weights), or null.
  std::vector<double> (*table)(const RecallTaskConfig& cfg);
  // One sequence (ids, targets, mask of length seq_len; targets 0 and mask 0 on entry),
  // with the targets of `split`.
  void (*sequence)(const RecallTaskConfig& cfg, const std::vector<double>& table, core::Rng& rng,
                   RecallScratch& s, Split split, int32_t* ids, int32_t* targets, float* mask);
  bool train_all;  // Split::kTrain scores every next token (the MAD recall tasks)
};

}  // namespace seqbench::data
