// `seqbench report wikitext103`: the word-level language-modelling table from
// results/wikitext103/runs.csv, our test perplexity beside the Routing Transformer
// paper's Wikitext-103 numbers.
//
// One row per group of runs with equal (label, attention, layers, d_model, seq_len, data):
// columns label, attention, layers, d_model, seq_len, paper, source, ours, n, ms/update,
// data, updates, epochs.
// - paper, source: the published Wikitext-103 test perplexity for that kind of model
//   (configs/papers/roy2021/numbers.yaml): routing heads (local+routing) 15.8; "—" where
//   the paper has none for a model of ours (its 18.3 baseline is another model, listed
//   by `seqbench report paper roy2021`). "(unchecked)" marks a number not found in the
//   paper's text; source names the table or figure.
// - ours: the mean test ppl at the best validation, "± sd" over n seeds;
// - ms/update, updates, epochs: means over the group's runs.
// A stand-in corpus (the data column says so) is not Wikitext-103, and the small presets
// are not the paper's model: compare kinds with each other, not with the paper's values.
#pragma once

#include <vector>

#include "report/csv.hpp"

namespace seqbench::apps {

// Builds the table (columns and rows, path = runs.path) from a runs.csv already read.
// Rows without a test ppl are skipped. Throws core::Error naming runs.path for a missing
// column or a cell that is not a number.
report::CsvTable wikitext103_table(const report::CsvTable& runs);

}  // namespace seqbench::apps
