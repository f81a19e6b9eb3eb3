// `seqbench report imagenet64`: the image-modelling table from results/imagenet64/runs.csv,
// our test bits/dim beside the Routing Transformer paper's ImageNet64 numbers.
//
// One row per group of runs with equal (label, attention, data, image size, training
// images): columns label, attention, data, image, paper, source, ours, n, train, updates.
// - paper, source: the published ImageNet64 test bits/dim for that kind of model
//   (configs/papers/roy2021/numbers.yaml): routing heads 3.43, local heads only 3.48
//   (unchecked); "—" where the paper has none (full, random, smyrf, lsh);
// - ours: the mean test bits/dim at the best validation, "± sd" over n seeds;
// - updates: mean updates run.
// A stand-in data set (the data column says so) is not ImageNet64: compare kinds with
// each other, not with the paper's values.
#pragma once

#include <string>
#include <vector>

#include "report/csv.hpp"

namespace seqbench::apps {

// Builds the table (columns and rows, path = runs.path) from a runs.csv already read.
// Rows without a test bpd are skipped. Throws core::Error naming runs.path for a missing
// column or a cell that is not a number.
report::CsvTable imagenet64_table(const report::CsvTable& runs);

}  // namespace seqbench::apps
