// `seqbench report wikitext103`: the word-level language-modelling table from
// results/wikitext103/runs.csv, our test perplexity beside the Routing Transformer
// paper's Wikitext-103 numbers.
//
// One row per group of runs with equal (label, attention, layers, d_model, seq_len, data):
// columns label, attention, layers, d_model, seq_len, paper, source, ours, n, ms/update,
// data, updates, epochs.
// - paper: the published Wikitext-103 test perplexity for that kind of model (docs/papers.md
//   section 5): routing heads (local+routing) 15.8, and for full attention the paper's
//   Transformer-XL baseline 18.3 (a full-attention model with segment memory, which ours
//   lacks; the source column says so); "—" where the paper has none (local, random,
//   smyrf, lsh). "(?)" would mark a number docs/papers.md marks as recalled; none is.
// - ours: the mean test ppl at the best validation, "± sd" over n seeds;
// - ms/update, updates, epochs: means over the group's runs.
// A stand-in corpus (the data column says so) is not Wikitext-103, and the small presets
// are not the paper's model: compare kinds with each other, not with the paper's values.
#pragma once

#include <vector>

#include "report/csv.hpp"

namespace seqbench::apps {

struct Wikitext103PaperNumber {
  const char* kinds;   // the attention kinds of the model, report::attention_kinds() form
  const char* value;   // as printed, e.g. "15.8"
  const char* source;  // short citation (and the model, where it is not ours)
};

const std::vector<Wikitext103PaperNumber>& wikitext103_paper_numbers();

// Builds the table (columns and rows, path = runs.path) from a runs.csv already read.
// Rows without a test ppl are skipped. Throws core::Error naming runs.path for a missing
// column or a cell that is not a number.
report::CsvTable wikitext103_table(const report::CsvTable& runs);

}  // namespace seqbench::apps
