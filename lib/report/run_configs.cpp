#include "report/run_configs.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/fs.hpp"

namespace seqbench::report {

namespace {

void flatten(const YAML::Node& node, const std::string& prefix,
             std::map<std::string, std::string>& out) {
  if (node.IsMap()) {
    for (const auto& kv : node)
      flatten(kv.second, prefix.empty() ? kv.first.Scalar() : prefix + "." + kv.first.Scalar(), out);
  } else if (node.IsSequence()) {
    YAML::Emitter e;
    e << YAML::Flow << node;
    out[prefix] = e.c_str();
  } else if (node.IsScalar()) {
    out[prefix] = node.Scalar();
  } else {
    out[prefix] = "";
  }
}

}  // namespace

std::map<std::string, std::string> flat_config(const std::string& yaml_text,
                                               const std::string& source) {
  std::map<std::string, std::string> out;
  try {
    flatten(YAML::Load(yaml_text), "", out);
  } catch (const YAML::Exception& e) {
    throw core::Error(fmt::format("{}: not a readable config: {}", source, e.msg));
  }
  return out;
}

RunConfigs read_run_configs(const CsvTable& runs) {
  RunConfigs configs(runs.rows.size());
  if (!runs.has("run_id")) return configs;
  const std::filesystem::path dir = std::filesystem::path(runs.path).parent_path();
  const int col = runs.col("run_id");
  for (size_t r = 0; r < runs.rows.size(); ++r) {
    const std::string path = (dir / runs.rows[r][size_t(col)] / "config.yaml").string();
    if (core::file_exists(path)) configs[r] = flat_config(core::read_file(path), path);
  }
  return configs;
}

std::vector<bool> runs_matching(const CsvTable& runs, const RunConfigs& configs, const RunWhere& where) {
  std::vector<bool> keep(runs.rows.size(), true);
  for (const auto& filter : where) {
    // Named, not a structured binding: clang 14 does not let a lambda capture one.
    const std::string& name = filter.first;
    const std::vector<std::string>& values = filter.second;
    const bool column = runs.has(name);
    if (!column && std::none_of(configs.begin(), configs.end(), [&](const auto& c) { return c.count(name) > 0; }))
      throw core::Error(fmt::format("{}: where: '{}' is neither a column of runs.csv nor a key of any run's config.yaml",
                                    runs.path, name));
    const int c = column ? runs.col(name) : -1;
    for (size_t r = 0; r < runs.rows.size(); ++r) {
      if (!keep[r]) continue;
      std::string value;
      if (column) {
        value = runs.rows[r][size_t(c)];
      } else if (r < configs.size()) {
        const auto it = configs[r].find(name);
        if (it == configs[r].end()) {
          keep[r] = false;
          continue;
        }
        value = it->second;
      }
      keep[r] = std::find(values.begin(), values.end(), value) != values.end();
    }
  }
  return keep;
}

}  // namespace seqbench::report
