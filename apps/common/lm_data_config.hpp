// The data section of the language-model experiments (char_ptb, wikitext103). Its corpus
// keys (format, dir, path, level, valid_fraction, test_fraction, min_count) are read
// straight into a data::CorpusConfig, which goes to data::load_corpus and
// train::corpus_size as it is; the other keys name the data in tables and cap the streams.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "config/field.hpp"
#include "core/check.hpp"
#include "core/text.hpp"
#include "data/text_corpus.hpp"

namespace seqbench::apps {

struct LmDataConfig {
  data::CorpusConfig corpus;
  std::string name = "brown";  // in tables
  bool stand_in = true;        // tables mark the data as a stand-in (else real)
  int64_t train_tokens = 0;    // cap on the training stream (0 = all)
  int64_t eval_tokens = 0;     // cap on the validation and on the test stream (0 = all)
  int64_t eval_batch = 10;     // columns of the validation and test streams

  // What the experiment reads, fixed by its config's constructor (these are not keys):
  // data.format's values, in the order its error message lists them, and whether
  // data.level is a key (wikitext103 reads words only: corpus.level stays "word" and
  // there is no such key).
  std::vector<std::string> formats{"text", "ptb_char", "ptb_word", "wikitext"};
  bool level_key = true;

  LmDataConfig() { corpus.dir = "data/brown"; }

  template <class V>
  void visit(V& v) {
    v("format", corpus.format, "corpus format: " + core::join(formats, " | "),
      config::one_of(formats));
    v("dir", corpus.dir, "directory with the split files (train/valid/test, docs/data.md)");
    v("path", corpus.path, "text only: one file cut into train | valid | test (when dir is empty)");
    if (level_key) v("level", corpus.level, "tokens: char | word", config::one_of({"char", "word"}));
    v("valid_fraction", corpus.valid_fraction, "path: fraction of the file for validation",
      config::range(0.0, 1.0));
    v("test_fraction", corpus.test_fraction, "path: fraction of the file for test",
      config::range(0.0, 1.0));
    v("min_count", corpus.min_count, "tokens seen fewer times in train become <unk>",
      config::at_least(1));
    v("name", name, "data set name in tables");
    v("stand_in", stand_in, "tables mark the data as a stand-in (else real)");
    v("train_tokens", train_tokens, "cap on training tokens (0 = all)", config::range(0, 1e12));
    v("eval_tokens", eval_tokens, "cap on validation and test tokens each (0 = all)",
      config::range(0, 1e12));
    v("eval_batch", eval_batch, "columns of the validation and test streams",
      config::range(1, 1'000'000));
  }
};

// A token stream cut into B columns: column b is tokens [b * cols, (b + 1) * cols); the
// remainder n mod B is dropped (as batchify does).
struct TokenColumns {
  const int32_t* tokens = nullptr;
  int64_t B = 0, cols = 0;
  // Segments of at most L inputs: the targets need one token more.
  int64_t segments(int64_t L) const { return cols > 1 ? (cols - 1 + L - 1) / L : 0; }
  int64_t segment_len(int64_t i, int64_t L) const { return std::min(L, cols - 1 - i * L); }
  int64_t tokens_used() const { return B * cols; }
};

// The first cap tokens (all when cap is 0) in B columns.
inline TokenColumns token_columns(const std::vector<int32_t>& tokens, int64_t cap, int64_t B) {
  const int64_t n = cap > 0 ? std::min<int64_t>(cap, int64_t(tokens.size())) : int64_t(tokens.size());
  return TokenColumns{tokens.data(), B, n / B};
}

// A corpus's three streams in columns: training in train_batch columns (capped at
// data.train_tokens), validation and test in data.eval_batch columns (capped at
// data.eval_tokens). A stream with fewer than 2 tokens per column, and a segment length
// (lm.seq_len) longer than a training column holds inputs, are usage errors naming the
// key to change.
struct LmStreams {
  TokenColumns train, valid, test;
};
inline LmStreams lm_streams(const data::Corpus& corpus, const LmDataConfig& d, int64_t train_batch,
                            int64_t seq_len) {
  LmStreams s{token_columns(corpus.train, d.train_tokens, train_batch),
              token_columns(corpus.valid, d.eval_tokens, d.eval_batch),
              token_columns(corpus.test, d.eval_tokens, d.eval_batch)};
  if (s.train.cols < 2)
    throw core::UsageError(fmt::format(
        "train.batch: {} columns of {} training tokens leave fewer than 2 tokens per column "
        "(hint: lower train.batch or raise data.train_tokens)",
        train_batch,
        std::min<int64_t>(int64_t(corpus.train.size()),
                          d.train_tokens > 0 ? d.train_tokens : int64_t(corpus.train.size()))));
  for (const auto* c : {&s.valid, &s.test})
    if (c->cols < 2)
      throw core::UsageError(fmt::format(
          "data.eval_batch: {} columns leave fewer than 2 tokens per column of the {} stream "
          "(hint: lower data.eval_batch or raise data.eval_tokens)",
          d.eval_batch, c == &s.valid ? "validation" : "test"));
  // The targets need one token more than the inputs: a column of n tokens holds segments
  // of at most n - 1.
  if (seq_len > s.train.cols - 1)
    throw core::UsageError(fmt::format(
        "lm.seq_len: {} is longer than a training segment can be: {} columns (train.batch) of "
        "{} training tokens hold at most {} inputs each (hint: set lm.seq_len: {} or less, or "
        "lower train.batch)",
        seq_len, train_batch, s.train.tokens_used(), s.train.cols - 1, s.train.cols - 1));
  return s;
}

}  // namespace seqbench::apps
