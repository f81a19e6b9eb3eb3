// `seqbench report pmnist`: the papers' sequential / permuted MNIST table from
// results/pmnist/runs.csv, our test accuracy beside the paper's number.
//
// One row per group of runs with equal (label, task, model, hidden, data, train
// examples): columns label, task, model, hidden, paper, ours, n, data, train, epochs.
// - paper: Nguyen et al.'s test accuracy (%) for that task, cell and H, from
//   configs/papers/nguyen2020/numbers.yaml, "(unchecked)" where it was not found in the
//   paper's text, "—" where the paper has none (e.g. another H); source: where it is;
// - ours: the mean test accuracy (%) at the best validation, "± sd" over n seeds;
// - epochs: mean epochs run; train: training examples (small presets use fewer).
#pragma once

#include <string>
#include <vector>

#include "report/csv.hpp"

namespace seqbench::apps {

// Builds the table (columns and rows, path = runs.path) from a runs.csv already read.
// Rows without a test accuracy (no validation happened) are skipped. Throws core::Error naming runs.path for a missing
// column or a cell that is not a number.
report::CsvTable pmnist_table(const report::CsvTable& runs);

}  // namespace seqbench::apps
