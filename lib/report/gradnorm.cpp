#include "report/gradnorm.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "report/compare.hpp"
#include "report/run_configs.hpp"

namespace seqbench::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double parse_double(const CsvTable& table, size_t row, int col) {
  const std::string& cell = table.rows[row][col];
  char* end = nullptr;
  const double v = cell.empty() ? 0.0 : std::strtod(cell.c_str(), &end);
  if (cell.empty() || end != cell.c_str() + cell.size())
    throw core::Error(fmt::format("{}:{}: column '{}' holds '{}', not a number", table.path,
                                  row + 2, table.columns[col], cell));
  return v;
}

int64_t parse_int(const CsvTable& table, size_t row, int col) {
  const double v = parse_double(table, row, col);
  if (v != std::floor(v) || std::fabs(v) > 9e15)
    throw core::Error(fmt::format("{}:{}: column '{}' holds '{}', not an integer", table.path,
                                  row + 2, table.columns[col], table.rows[row][col]));
  return static_cast<int64_t>(v);
}

std::string steps_summary(const GradnormRun& run) {
  const auto& p = run.probes;
  std::string s;
  if (p.size() <= 8) {
    for (const auto& probe : p) s += (s.empty() ? "" : ", ") + std::to_string(probe.step);
    return s;
  }
  return fmt::format("{}, {}, {}, ..., {}, {} ({} probes)", p[0].step, p[1].step, p[2].step,
                     p[p.size() - 2].step, p.back().step, p.size());
}

// The last path component of a directory given as "a/b" or "a/b/".
std::string dir_name(const std::string& dir) {
  std::string s = dir;
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return std::filesystem::path(s).filename().string();
}

}  // namespace

GradnormRun gradnorm_from_table(const CsvTable& table, const std::string& label) {
  const int c_step = table.col("step"), c_t = table.col("t"), c_dist = table.col("distance"),
            c_norm = table.col("norm");
  if (table.rows.empty())
    throw core::Error(fmt::format(
        "{}: no probes, only a header (hint: the run stopped before its first probe)", table.path));
  // step -> t -> (distance, norm); a repeated (step, t) keeps the later row.
  std::map<int64_t, std::map<int64_t, std::pair<int64_t, double>>> by_step;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const double norm = parse_double(table, r, c_norm);
    if (!(norm >= 0) || std::isinf(norm))
      throw core::Error(fmt::format(
          "{}:{}: norm '{}' is not a finite value >= 0 (hint: the run may have diverged)",
          table.path, r + 2, table.rows[r][c_norm]));
    by_step[parse_int(table, r, c_step)][parse_int(table, r, c_t)] = {parse_int(table, r, c_dist),
                                                                      norm};
  }
  GradnormRun run;
  run.label = label;
  run.source = table.path;
  for (const auto& [step, rows] : by_step) {
    GradnormProbe probe;
    probe.step = step;
    for (const auto& [t, dn] : rows) {
      probe.t.push_back(t);
      probe.distance.push_back(dn.first);
      probe.norm.push_back(dn.second);
    }
    run.probes.push_back(std::move(probe));
  }
  return run;
}

std::string run_label(const std::string& run_dir) {
  const std::string name = dir_name(run_dir);
  try {
    const YAML::Node cfg = YAML::LoadFile(run_dir + "/config.yaml");
    if (cfg["output"] && cfg["output"]["label"]) {
      const std::string label = cfg["output"]["label"].as<std::string>("");
      if (!label.empty()) return label;
    }
  } catch (const YAML::Exception&) {
    // No or unreadable config.yaml: fall through to runs.csv, then the directory name.
  }
  const std::filesystem::path runs_csv =
      std::filesystem::path(run_dir + "/..").lexically_normal() / "runs.csv";
  if (core::file_exists(runs_csv.string())) {
    try {
      const CsvTable runs = read_csv(runs_csv.string());
      if (runs.has("run_id") && runs.has("label")) {
        for (const auto& row : runs.rows)
          if (row[runs.col("run_id")] == name && !row[runs.col("label")].empty())
            return row[runs.col("label")];
      }
    } catch (const core::Error&) {
      // A damaged runs.csv only costs the nicer label.
    }
  }
  return name;
}

GradnormSource GradnormSource::input_gradients() {
  GradnormSource s;
  s.file = "inputgrad.csv";
  s.prefix = "inputgrad";
  s.symbol = "‖∂l_{t+i}/∂x_t‖";
  s.title = "Input-gradient norm against distance";
  s.xlabel = "distance i from the input x_t to the scored prediction";
  s.hint = "`seqbench char_ptb --run-id ID --probe-input-grad L` writes it";
  s.heat_maps = false;
  return s;
}

GradnormRun load_gradnorm_run(const std::string& run_dir, const GradnormSource& source) {
  const std::string path = run_dir + "/" + source.file;
  if (!core::file_exists(path))
    throw core::Error(fmt::format(
        "{}: no {} here (hint: pass run directories such as results/copy/<run-id>; {})",
        run_dir, source.file, source.hint));
  return gradnorm_from_table(read_csv(path), run_label(run_dir));
}

const GradnormProbe& select_probe(const GradnormRun& run, std::optional<int64_t> step) {
  SB_CHECK(!run.probes.empty(), "{}: no probes", run.source);
  if (!step) return run.probes.back();
  for (const auto& probe : run.probes)
    if (probe.step == *step) return probe;
  throw core::Error(fmt::format(
      "{}: no probe at step {} (have steps {}) (hint: pass one of these to --step, or leave "
      "--step out for each run's last probe)",
      run.source, *step, steps_summary(run)));
}

DistanceCurve distance_curve(const GradnormRun& run, std::optional<int64_t> step) {
  const GradnormProbe& probe = select_probe(run, step);
  DistanceCurve curve;
  curve.label = run.label;
  curve.step = probe.step;
  std::vector<size_t> order(probe.t.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return probe.distance[a] < probe.distance[b]; });
  for (size_t i : order) {
    curve.distance.push_back(probe.distance[i]);
    curve.norm.push_back(probe.norm[i]);
    curve.zeros += probe.norm[i] == 0.0;
  }
  return curve;
}

HeatMap heat_map(const GradnormRun& run) {
  HeatMap map;
  map.label = run.label;
  std::set<int64_t> ts;
  for (const auto& probe : run.probes) {
    map.steps.push_back(probe.step);
    ts.insert(probe.t.begin(), probe.t.end());
  }
  map.ts.assign(ts.begin(), ts.end());
  map.log10_norm.assign(map.steps.size() * map.ts.size(), kNaN);
  std::vector<char> seen(map.log10_norm.size(), 0);
  for (size_t r = 0; r < run.probes.size(); ++r) {
    const auto& probe = run.probes[r];
    for (size_t i = 0; i < probe.t.size(); ++i) {
      const size_t c = std::lower_bound(map.ts.begin(), map.ts.end(), probe.t[i]) - map.ts.begin();
      const size_t k = r * map.ts.size() + c;
      seen[k] = 1;
      if (probe.norm[i] > 0)
        map.log10_norm[k] = std::log10(probe.norm[i]);
      else
        ++map.zeros;
    }
  }
  for (char s : seen) map.missing += !s;
  return map;
}

std::vector<std::string> unique_labels(const std::vector<std::string>& labels) {
  std::set<std::string> taken(labels.begin(), labels.end());
  std::set<std::string> used;
  std::map<std::string, int> next_suffix;
  std::vector<std::string> out;
  for (const auto& label : labels) {
    if (used.insert(label).second) {
      out.push_back(label);
      continue;
    }
    int& k = next_suffix.try_emplace(label, 2).first->second;
    std::string candidate = fmt::format("{} #{}", label, k++);
    // "rnn #2" may itself be a label given on the command line.
    while (taken.count(candidate)) candidate = fmt::format("{} #{}", label, k++);
    taken.insert(candidate);
    used.insert(candidate);
    out.push_back(candidate);
  }
  return out;
}

void name_apart(std::vector<GradnormRun>& runs) {
  std::vector<std::map<std::string, std::string>> cfg;
  for (const auto& r : runs) {
    const std::string path = (std::filesystem::path(r.source).parent_path() / "config.yaml").string();
    cfg.push_back(core::file_exists(path) ? flat_config(core::read_file(path), path)
                                          : std::map<std::string, std::string>{});
  }
  std::vector<std::string> names(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    std::set<std::string> keys;
    for (size_t j = 0; j < runs.size(); ++j) {
      if (j == i || runs[j].label != runs[i].label) continue;
      for (const auto& [k, v] : cfg[i])
        if (!ignored_config_key(k) && (!cfg[j].count(k) || cfg[j].at(k) != v)) keys.insert(k);
    }
    names[i] = runs[i].label;
    for (const auto& k : keys) {
      const size_t dot = k.rfind('.');
      names[i] += fmt::format(" {}={}", dot == std::string::npos ? k : k.substr(dot + 1), cfg[i].at(k));
    }
  }
  for (size_t i = 0; i < runs.size(); ++i) runs[i].label = names[i];
}


std::vector<std::string> expand_run_dirs(const std::vector<std::string>& paths,
                                         const std::string& file) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const auto& p : paths) {
    if (core::file_exists(p + "/" + file) || !fs::is_directory(p)) {
      out.push_back(p);  // a run (or a mistake load_gradnorm_run will name)
      continue;
    }
    std::vector<std::string> runs;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(p, ec))
      if (entry.is_directory() && core::file_exists(entry.path().string() + "/" + file))
        runs.push_back(entry.path().string());
    std::sort(runs.begin(), runs.end());
    if (runs.empty()) runs.push_back(p);
    out.insert(out.end(), runs.begin(), runs.end());
  }
  return out;
}

}  // namespace seqbench::report
