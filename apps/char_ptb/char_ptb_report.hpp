// `seqbench report char_ptb`: the language-modelling table from results/char_ptb/runs.csv,
// our test numbers beside the papers'. Character-level runs (task char_lm) report bits
// per character, word-level runs (word_lm) perplexity = 2^(bits per word).
//
// One row per group of runs with equal (label, task, model, hidden, data, training
// tokens): columns label, task, model, hidden, metric, paper, source, ours, n, data,
// train_tokens, epochs.
// - metric: "BPC" (char_lm) or "ppl" (word_lm);
// - paper: the published number for that cell and task (char-PTB BPC, Wikitext-2
//   perplexity), "(?)" where docs/papers.md marks it as recalled; "—" where the papers have
//   none. docs/papers.md gives no H for these numbers, so they are matched on cell and task;
// - ours: the mean test BPC (or perplexity) at the best validation, "± sd" over n seeds;
// - epochs: mean epochs run.
// A stand-in corpus (the data column says so) is not char-PTB: compare shapes, not values.
#pragma once

#include <string>
#include <vector>

#include "report/csv.hpp"

namespace seqbench::apps {

struct CharPtbPaperNumber {
  const char* task;    // char_lm | word_lm
  const char* model;   // model.cell
  const char* value;   // as printed, e.g. "1.4 (?)"
  const char* source;  // short citation
};

const std::vector<CharPtbPaperNumber>& char_ptb_paper_numbers();

// Builds the table (columns and rows, path = runs.path) from a runs.csv already read.
// Rows without a test BPC are skipped. Throws core::Error naming runs.path for a missing
// column or a cell that is not a number.
report::CsvTable char_ptb_table(const report::CsvTable& runs);

}  // namespace seqbench::apps
