// `seqbench compare`: one row per model (label) from an experiment's runs.csv, so runs
// with several seeds read as one line: means of the numbers with their spread (sd for
// n >= 3, min–max for n = 2), the run count n, sorted best first by the final validation
// metric.
//
// Pure functions: compare_runs() builds a CompareTable from a CsvTable already read;
// compare_markdown() / compare_csv() render it. Nothing here touches the file system.
#pragma once

#include <cmath>
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
  // The runs.csv column whose equal values form one row, or a key of the runs' configs
  // (config.yaml, flattened: "task.T", "model.hidden") when runs.csv has no such column.
  std::string by = "label";
  // Unless set, runs with equal `by` values share a row only if their resolved configs
  // (RunConfigs) agree in everything but the seed and output.*; otherwise each config
  // gets its own row, named "<by value> [key=value, ...]" by the keys that differ.
  // Set (an explicit --by), rows are averaged over any difference.
  bool average_over_configs = false;
};

// Per runs.csv row, that run's resolved config flattened to "a.b.c" -> value (an empty
// map where the run's config.yaml is gone).
using RunConfigs = std::vector<std::map<std::string, std::string>>;
// The config keys that never split a row: the seed, where the run's files went, how soon
// a diverging run stops (train.nan_check) and which library multiplies (train.gemm).
bool ignored_config_key(const std::string& key);
// The config's keys and values but the ignored ones (and `also_ignored`, a key a table
// tunes over, if given), one "key=value" line each: runs with equal signatures are seeds
// of one setting.
std::string config_signature(const std::map<std::string, std::string>& cfg, const std::string& also_ignored = "");
// cfg's value for key, "(unset)" where it has none.
std::string config_value(const std::map<std::string, std::string>& cfg, const std::string& key);
// The keys whose values differ among the configs (a key one config lacks counts as
// "(unset)" there), the keys config_signature ignores aside, sorted.
std::vector<std::string> differing_config_keys(const std::vector<const std::map<std::string, std::string>*>& cfgs);
// For configs that share a name: per config, "key=value, ..." over differing_config_keys,
// in the order given.
std::vector<std::string> differing_config_tags(const std::vector<const std::map<std::string, std::string>*>& cfgs);

// The numeric columns of a row, in table order.
enum CompareColumn {
  kFinal, kBest, kUpdates, kUpdatesToTarget, kSecondsToTarget, kMsPerUpdate, kPeakRss, kCompareColumns
};

// How one column's values spread over a group's runs (those that reached the target, for
// the two target columns): sample sd (NaN for n < 2), min, max, n.
struct Spread {
  double sd = 0, min = 0, max = 0;
  int n = 0;
};

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
  Spread spread[kCompareColumns];
};

struct CompareTable {
  std::string source;                         // runs.csv path, for messages
  std::string by;                             // the grouping column (or config key)
  // The columns that say what a row is, those of model, task, T, width, state_bytes,
  // image_size, data the file has (an experiment's x-axis: T for copy, width and
  // state_bytes for recall, image_size for imagenet64).
  std::vector<std::string> identity_columns;
  // The metric when all rows share one (headers then read "final acc"); empty if mixed,
  // in which case a "metric" column is added and rows are sorted by metric first.
  std::string metric;
  std::vector<CompareRow> rows;  // best first within each metric; NaN metrics last
};

// Groups and averages runs.csv rows. Required columns: opts.by (or, failing that, a key of
// configs: core::UsageError listing both when it is neither), metric, final_metric,
// best_metric, updates, updates_to_target, seconds_to_target, ms_per_update,
// peak_rss_mb; model, task, T and data are shown when present. Throws core::Error
// naming runs.path for a missing column (listing those it has), a cell that is not a
// number, or a file with no rows.
// configs, when given, has one entry per row of runs.
CompareTable compare_runs(const CsvTable& runs, const CompareOptions& opts = {},
                          const RunConfigs& configs = {});

// Header and body cells, for reading (exact false: Markdown) or for programs (exact
// true: CSV). For reading, numbers are rounded (4 significant digits) and each mean
// carries its spread: "0.91 ± 0.02" (n >= 3), "0.91 (0.89–0.93)" (n = 2), none where
// all the runs agree (updates of runs without a target); a target never
// reached is "—", one reached by only some runs of a group "1200 (2/3)". For programs,
// every cell below a numeric header is a number in shortest round-trip form, "nan" or
// empty (a target never reached): each mean column X is followed by "X sd", "X min" and
// "X max", and "n_target" follows "n".
std::vector<std::string> compare_header(const CompareTable& table, bool exact = false);
std::vector<std::vector<std::string>> compare_cells(const CompareTable& table, bool exact);

// The table as Markdown (report::markdown_table) and as RFC 4180 CSV text.
std::string compare_markdown(const CompareTable& table);
std::string compare_csv(const CompareTable& table);

}  // namespace seqbench::report
