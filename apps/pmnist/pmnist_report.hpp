// `seqbench report pmnist`: the papers' sequential / permuted MNIST table from
// results/pmnist/runs.csv, our test accuracy beside the paper's number.
//
// One row per group of runs with equal (label, task, model, hidden, data, train
// examples): columns label, task, model, hidden, paper, ours, n, data, train, epochs.
// - paper: the published test accuracy (%) for that task, cell and H, "(?)" where
//   docs/papers.md marks it as recalled rather than read from the paper, "—" where the
//   papers have none (e.g. another H);
// - ours: the mean test accuracy (%) at the best validation, "± sd" over n seeds;
// - epochs: mean epochs run; train: training examples (small presets use fewer).
#pragma once

#include <string>
#include <vector>

#include "report/csv.hpp"

namespace seqbench::apps {

struct PmnistPaperNumber {
  const char* task;    // pmnist | smnist
  const char* model;   // model.cell
  int64_t hidden;      // H
  const char* value;   // as printed, e.g. "94.72 (?)"
  const char* source;  // short citation
};

// Every number of docs/papers.md for these tasks.
const std::vector<PmnistPaperNumber>& pmnist_paper_numbers();

// Builds the table (columns and rows, path = runs.path) from a runs.csv already read.
// Rows without a test accuracy (no validation happened) are skipped. Throws core::Error naming runs.path for a missing
// column or a cell that is not a number.
report::CsvTable pmnist_table(const report::CsvTable& runs);

}  // namespace seqbench::apps
