// The one table of experiments. Everything that lists experiments reads it: the front
// door's usage and dispatch (`seqbench <name>`), the experiments a sweep file may name
// (`seqbench sweep`), the results tables of `seqbench report <table>`, and which runs the
// attention analyses read (load_trained_run). Adding an experiment is one entry in
// experiments.cpp (docs/architecture.md, "Adding an experiment").
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "apps/common/transformer_lm_experiment.hpp"
#include "report/csv.hpp"

namespace seqbench::apps {

// A results table of `seqbench report <name> [RUNS_CSV]`, built from the experiment's
// runs.csv (results/<experiment>/runs.csv by default).
struct ReportTable {
  const char* name;   // the subcommand
  const char* what;   // one line for --help
  const char* title;  // printed above the Markdown table
  report::CsvTable (*build)(const report::CsvTable& runs);
};

struct ExperimentEntry {
  const char* name;  // `seqbench <name>`, results/<name>/, configs/<name>/
  int (*main)(int argc, char** argv);
  const char* help;  // its line in `seqbench --help`
  bool sweepable;    // a sweep file may say `experiment: <name>`
  std::span<const ReportTable> tables;
  // Set where a run is a trained Transformer LM that the attention analyses (`seqbench
  // report attention`) read: the run back from run_dir, whose config.yaml and
  // checkpoint.sbck exist; `attention`, when not empty, replaces model.attention (the
  // parameters must fit the new heads: kinds without parameters of their own, such as full,
  // local, smyrf and lsh, can stand in for each other).
  TrainedLmRun (*load_lm_run)(const std::string& run_dir, const std::string& attention);
};

std::span<const ExperimentEntry> experiments();
// The entry called `name`, or nullptr.
const ExperimentEntry* find_experiment(std::string_view name);
// The names of the experiments a sweep may run, in the table's order.
std::vector<std::string> sweepable_experiments();

// The trained Transformer-LM run in run_dir (results/<experiment>/<run-id>) for the
// analysis `command` (named in errors). The experiment is the directory's parent; a run
// kept elsewhere is an imagenet64 run when its config has data.image_side, else a
// wikitext103 run. Throws core::UsageError, one line, for a missing run and for a run of
// an experiment without a load_lm_run (naming that experiment, instead of failing on
// its first foreign config key).
TrainedLmRun load_trained_run(const std::string& run_dir, const std::string& command,
                              const std::string& attention = "");

}  // namespace seqbench::apps
