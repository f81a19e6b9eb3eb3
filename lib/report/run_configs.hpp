// The resolved configs of the runs listed in a runs.csv, for grouping runs whose configs
// agree (report::compare_runs): <dir of runs.csv>/<run_id>/config.yaml, flattened.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "report/compare.hpp"
#include "report/csv.hpp"

namespace seqbench::report {

// A config YAML flattened to "a.b.c" -> scalar (sequences in flow style, "[1, 2]").
// Throws core::Error naming the file if it cannot be parsed.
std::map<std::string, std::string> flat_config(const std::string& yaml_text,
                                               const std::string& source);

// One map per row of runs (read from runs.path); a run whose directory or config.yaml is
// gone gets an empty map, which only matches other empty ones.
RunConfigs read_run_configs(const CsvTable& runs);

// A filter on runs, as a paper report's `where` writes it: each name with the values it
// may hold ({width: 64}, {model: [gla, retention]}). A name is a runs.csv column, else a key
// of the runs' flattened configs ({model.mixer.short_conv: 4}).
using RunWhere = std::vector<std::pair<std::string, std::vector<std::string>>>;

// Which rows of runs pass `where` (all of them when it is empty). Throws core::Error naming
// runs.path and the name when a name is neither a column nor a key of any run's config.
std::vector<bool> runs_matching(const CsvTable& runs, const RunConfigs& configs, const RunWhere& where);

}  // namespace seqbench::report
