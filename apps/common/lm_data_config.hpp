// The data section of the language-model experiments (char_ptb, wikitext103). Its corpus
// keys (format, dir, path, level, valid_fraction, test_fraction, min_count) are read
// straight into a data::CorpusConfig, which goes to data::load_corpus and
// train::corpus_size as it is; the other keys name the data in tables and cap the streams.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/field.hpp"
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

}  // namespace seqbench::apps
