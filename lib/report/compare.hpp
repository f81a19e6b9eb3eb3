// `seqbench compare`: one row per model (label) from an experiment's runs.csv, so runs
// with several seeds read as one line: means of the numbers, the run count n, sorted
// best first by the final validation metric.
//
// Pure functions: compare_runs() builds a CompareTable from a CsvTable already read;
// compare_markdown() / compare_csv() render it. Nothing here touches the file system.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/csv.hpp"

namespace seqbench::report {

// Whether a larger value of `metric` is better: accuracies and rewards ("acc",
// "accuracy", "reward", "return", "f1", "auc"), case-insensitive. Everything else
// (mse, loss, bpc, bpd, ppl, nll, error rates) is taken as lower-is-better.
bool higher_is_better(std::string_view metric);

struct CompareOptions {
  std::string by = "label";  // the runs.csv column whose equal values form one row
  // Unless set, runs with equal `by` values share a row only if their resolved configs
  // (RunConfigs) agree in everything but the seed and output.*; otherwise each config
  // gets its own row, named "<by value> [key=value, ...]" by the keys that differ.
  // Set (an explicit --by), rows are averaged over any difference.
  bool average_over_configs = false;
};

// Per runs.csv row, that run's resolved config flattened to "a.b.c" -> value (an empty
// map where the run's config.yaml is gone).
using RunConfigs = std::vector<std::map<std::string, std::string>>;
// The config keys that never split a row: the seed, and where the run's files went.
bool ignored_config_key(const std::string& key);

// One group of runs: same `by` value and same metric.
struct CompareRow {
  std::string key;     // the `by` value
  std::string metric;  // "acc", "mse", ...
  std::vector<std::string>
      identity;  // CompareTable::identity_columns, distinct values joined by "/"
  int n = 0;     // runs in the group
  double final_metric = 0, best_metric = 0, updates = 0, ms_per_update = 0, peak_rss_mb = 0;
  // Means over the runs that reached the target (a runs.csv value >= 0); n_target of n did.
  std::optional<double> updates_to_target, seconds_to_target;
  int n_target = 0;
};

struct CompareTable {
  std::string source;                         // runs.csv path, for messages
  std::string by;                             // the grouping column
  std::vector<std::string> identity_columns;  // those of model, task, T, data the file has
  // The metric when all rows share one (headers then read "final acc"); empty if mixed,
  // in which case a "metric" column is added and rows are sorted by metric first.
  std::string metric;
  std::vector<CompareRow> rows;  // best first within each metric; NaN metrics last
};

// Groups and averages runs.csv rows. Required columns: opts.by, metric, final_metric,
// best_metric, updates, updates_to_target, seconds_to_target, ms_per_update,
// peak_rss_mb; model, task, T and data are shown when present. Throws core::Error
// naming runs.path for a missing column (listing those it has), a cell that is not a
// number, or a file with no rows.
// configs, when given, has one entry per row of runs.
CompareTable compare_runs(const CsvTable& runs, const CompareOptions& opts = {},
                          const RunConfigs& configs = {});

// Header and body cells. `exact` writes numbers in shortest round-trip form (for CSV);
// otherwise they are rounded for reading (4 significant digits). A target never reached
// is "—"; one reached by only some runs of a group reads "1200 (2/3)".
std::vector<std::string> compare_header(const CompareTable& table);
std::vector<std::vector<std::string>> compare_cells(const CompareTable& table, bool exact);

// The table as Markdown (report::markdown_table) and as RFC 4180 CSV text.
std::string compare_markdown(const CompareTable& table);
std::string compare_csv(const CompareTable& table);

}  // namespace seqbench::report
