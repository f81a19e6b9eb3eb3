// Text corpora for language modelling: a vocabulary and three token-id streams.
//
// Formats (CorpusConfig::format):
//   ptb_char  dir/ptb.char.{train,valid,test}.txt (Mikolov et al. 2012): one sentence per
//             line, characters separated by spaces, '_' between words. Every whitespace-
//             separated symbol is a token and every line ends with "<eos>", as in the
//             AWD-LSTM data code (Merity et al. 2018), so the vocabulary is the 49 symbols
//             of train plus "<eos>" = 50.
//   ptb_word  dir/ptb.{train,valid,test}.txt: whitespace-separated words, "<eos>" appended
//             to every line (blank lines too); the files already contain "<unk>", so the
//             vocabulary is 10000.
//   wikitext  dir/wiki.{train,valid,test}.tokens (Merity et al. 2017): as ptb_word.
//   text      any text: dir/{train,valid,test}.txt, or one file `path` cut contiguously
//             into train | valid | test by valid_fraction and test_fraction of its bytes
//             (word level: each cut moved forward to the next line start).
//             level char: every byte is a token (UTF-8 is read as bytes, '\n' is a token);
//             level word: as ptb_word. "<unk>" is always in the vocabulary (ids of unseen
//             valid/test tokens), since a free text has no closed vocabulary.
// The vocabulary is built from train only; ids follow first appearance in train (so they
// match the AWD-LSTM Dictionary for the PTB/wikitext files). Train tokens seen fewer than
// min_count times map to "<unk>", which is added (last) if train has none. A valid/test
// token missing from the vocabulary maps to "<unk>"; with no "<unk>" (ptb_char) it is an
// error naming the file, line and token. Stand-ins and how to fetch them: docs/data.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/field.hpp"
#include "data/checksum.hpp"

namespace seqbench::data {

inline constexpr const char* kEosToken = "<eos>";
inline constexpr const char* kUnkToken = "<unk>";

struct Vocab {
  std::vector<std::string> itos;
  std::unordered_map<std::string, int32_t> stoi;
  int32_t unk = -1;  // id of "<unk>", or -1 when the vocabulary is closed

  // Id of tok; unk if tok is unknown and unk >= 0; otherwise throws naming the token.
  int32_t id(const std::string& tok) const;
  // Id of tok, or -1 (no <unk> fallback).
  int32_t find(const std::string& tok) const;
  // Id of tok, appending it if new (and setting unk when tok is "<unk>").
  int32_t add(const std::string& tok);
  int64_t size() const { return int64_t(itos.size()); }
};

// tok with control bytes, non-ASCII bytes, quotes and backslashes escaped (\n, \x80, ...),
// so that an error message naming a token stays one printable line.
std::string printable_token(std::string_view tok);

struct CorpusConfig {
  std::string format = "text";  // ptb_char | ptb_word | wikitext | text
  std::string dir;              // the split files (names per format, see above)
  std::string path;             // text only: one file split by fraction (used when dir is empty)
  std::string level = "char";   // text: char | word
  double valid_fraction = 0.05, test_fraction = 0.05;  // single-file split
  int64_t min_count = 1;        // rarer train tokens -> <unk>

  template <class V>
  void visit(V& v) {
    v("format", format, "ptb_char | ptb_word | wikitext | text",
      config::one_of({"ptb_char", "ptb_word", "wikitext", "text"}));
    v("dir", dir, "directory with the train/valid/test files (names per format, docs/data.md)");
    v("path", path, "text only: one file cut into train | valid | test (when dir is empty)");
    v("level", level, "text: char (bytes) | word (whitespace-separated)",
      config::one_of({"char", "word"}));
    v("valid_fraction", valid_fraction, "single-file text: share of bytes for valid",
      config::range(0.0, 1.0));
    v("test_fraction", test_fraction, "single-file text: share of bytes for test",
      config::range(0.0, 1.0));
    v("min_count", min_count, "train tokens seen fewer times become <unk>", config::at_least(1));
  }
};

struct Corpus {
  Vocab vocab;
  std::vector<int32_t> train, valid, test;  // token ids, the files' order
  std::string name;  // "<dir or file stem>:<format>[-<level>]", e.g. "brown:text-char"
  DataDigest digest;  // the files read, checked against their SHA256SUMS
};

// Throws core::UsageError for a bad config (unknown format or level, fractions) and
// core::Error for data problems (missing or empty file, unknown token in a closed
// vocabulary), each one line naming the file and with a hint.
Corpus load_corpus(const CorpusConfig& cfg);

}  // namespace seqbench::data
