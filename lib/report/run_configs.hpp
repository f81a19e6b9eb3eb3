// The resolved configs of the runs listed in a runs.csv, for grouping runs whose configs
// agree (report::compare_runs): <dir of runs.csv>/<run_id>/config.yaml, flattened.
#pragma once

#include <map>
#include <string>

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

}  // namespace seqbench::report
