// `seqbench report char_ptb`: the character-level language-modelling table from
// results/char_ptb/runs.csv, our test BPC beside the papers' numbers.
//
// One row per group of runs with equal (label, model, hidden, data, training tokens):
// columns label, model, hidden, paper, source, ours, n, data, train_tokens, epochs.
// - paper: the published test BPC on char-PTB for that cell, "(?)" where PAPERS.md
//   marks it as recalled; "—" where the papers have none. PAPERS.md gives no H for
//   these numbers, so they are matched on the cell alone;
// - ours: the mean test BPC at the best validation, "± sd" over n seeds;
// - epochs: mean epochs run.
// A stand-in corpus (the data column says so) is not char-PTB: compare shapes, not values.
#pragma once

#include <string>
#include <vector>

#include "report/csv.hpp"

namespace seqbench::apps {

struct CharPtbPaperNumber {
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
