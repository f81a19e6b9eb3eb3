// `seqbench report char_ptb`: the language-modelling table from results/char_ptb/runs.csv,
// our test numbers beside the papers'. Character-level runs (task char_lm) report bits
// per character, word-level runs (word_lm) perplexity = 2^(bits per word).
//
// One row per group of runs with equal (label, task, model, hidden, data, training
// tokens): columns label, task, model, hidden, metric, paper, source, ours, n, data,
// train_tokens, epochs.
// - metric: "BPC" (char_lm) or "ppl" (word_lm);
// - paper: Miller & Hardt's Table 1 number for that cell and task (char-PTB BPC, Wikitext-2
//   perplexity) from configs/papers/miller2019/numbers.yaml, "(unchecked)" where it was not
//   found in the paper's text, "—" where there is none. Matched on cell and task only;
// - ours: the mean test BPC (or perplexity) at the best validation, "± sd" over n seeds;
// - epochs: mean epochs run.
// A stand-in corpus (the data column says so) is not char-PTB: compare shapes, not values.
#pragma once

#include <string>
#include <vector>

#include "report/csv.hpp"

namespace seqbench::apps {

// Builds the table (columns and rows, path = runs.path) from a runs.csv already read.
// Rows without a test BPC are skipped. Throws core::Error naming runs.path for a missing
// column or a cell that is not a number.
report::CsvTable char_ptb_table(const report::CsvTable& runs);

}  // namespace seqbench::apps
