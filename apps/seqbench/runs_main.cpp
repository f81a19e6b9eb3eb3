// `seqbench runs [EXPERIMENT] [--out DIR]`: the runs under <out>/<experiment>/, newest
// first, one line each: run id, label, state (done, running, interrupted, failed), updates,
// final metric, age. The state is what a sweep reads (sweep::run_status: the lock, then
// summary.json, then a sweep's exit file, then a checkpoint); a running run's update and
// ETA are those `sweep status` shows (sweep/live.hpp). Nothing is written.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/experiments.hpp"
#include "core/check.hpp"
#include "core/fs.hpp"
#include "core/text.hpp"
#include "report/csv.hpp"
#include "report/markdown.hpp"
#include "report/run_id.hpp"
#include "sweep/estimate.hpp"
#include "sweep/live.hpp"
#include "sweep/sweep.hpp"

namespace seqbench::apps {

namespace {

namespace fs = std::filesystem;

struct RunLine {
  std::string experiment, id, label, state, updates, metric;
  double age_s = 0;
};

// "40 s", "12 min", "3.5 h", "2 days": how long since the run's files last changed.
std::string age_text(double s) {
  if (s < 90) return fmt::format("{:.0f} s", std::max(0.0, s));
  if (s < 90 * 60) return fmt::format("{:.0f} min", s / 60);
  if (s < 48 * 3600) return fmt::format("{:.1f} h", s / 3600);
  return fmt::format("{:.0f} days", s / 86400);
}

// The JSON number or string under key, as text; "" when absent.
std::string field(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

RunLine read_run(const std::string& out, const std::string& experiment, const std::string& id) {
  sweep::Spec spec;  // the run as a sweep would see it: <out>/<experiment>/<id>
  spec.out = out;
  spec.experiment = experiment;
  sweep::Run run;
  run.id = id;
  const std::string dir = sweep::run_dir(spec, run);
  const sweep::RunStatus st = sweep::run_status(spec, run);
  RunLine l{experiment, id, "", "", "", "", 0};
  // A run killed before it wrote a summary or a checkpoint is pending to a sweep; here,
  // a run that stopped.
  l.state = st.state == sweep::State::kPending ? "interrupted" : sweep::state_name(st.state);
  const std::string summary_path = dir + "/summary.json";
  nlohmann::json summary = nlohmann::json::object();
  if (st.state != sweep::State::kRunning && core::file_exists(summary_path)) {
    try {
      summary = nlohmann::json::parse(core::read_file(summary_path), nullptr, false);
    } catch (const core::Error&) {
    }
    if (!summary.is_object()) summary = nlohmann::json::object();
  }
  l.label = field(summary, "label");
  if (l.label.empty()) {
    try {
      const auto cfg = sweep::flatten_config(core::read_file(dir + "/config.yaml"), dir + "/config.yaml");
      const auto it = cfg.find("output.label");
      if (it != cfg.end() && it->second != "null") l.label = it->second;
    } catch (const core::Error&) {
    }
  }
  if (l.label.empty()) l.label = report::run_id_prefix(id);
  if (!summary.empty()) {
    l.updates = field(summary, "updates");
    const std::string final_metric = field(summary, "final_metric");
    if (!final_metric.empty()) l.metric = field(summary, "metric") + " " + final_metric;
  } else {
    const sweep::RunProgress p = sweep::run_progress(dir);
    if (st.state == sweep::State::kRunning)
      l.updates = sweep::progress_text(p);
    else if (p.step > 0)
      l.updates = std::to_string(p.step);
  }
  // The newest of its files.
  auto newest = fs::file_time_type::min();  // (libstdc++'s file clock starts in 2174)
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const auto t = e.last_write_time(ec);
    if (!ec) newest = std::max(newest, t);
  }
  l.age_s = std::chrono::duration<double>(fs::file_time_type::clock::now() - newest).count();
  return l;
}

int fail(const std::string& msg) {
  fmt::print(stderr, "seqbench runs: error: {}\n", msg);
  return core::kExitUsage;
}

}  // namespace

int runs_main(int argc, char** argv) {
  const char* usage =
      "usage: seqbench runs [EXPERIMENT] [--out DIR] [--format md|csv]\n"
      "  the runs under DIR/EXPERIMENT/ (DIR default results; every experiment when none is\n"
      "  named), newest first: run id, label, state (done, running, interrupted, failed),\n"
      "  updates (a running run's update and ETA), final metric, age (since its files last\n"
      "  changed; in CSV age_s, seconds). A sweep's runs: --out <the sweep directory>.\n";
  std::string out = "results", only, format = "md";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      fmt::print("{}", usage);
      return core::kExitOk;
    }
    std::string* value = arg == "--out" ? &out : arg == "--format" ? &format : nullptr;
    if (value && i + 1 < argc) {
      *value = argv[++i];
    } else if (value || (!arg.empty() && arg[0] == '-')) {
      return fail(fmt::format("{}: {} (hint: seqbench runs --help)", arg,
                              value ? "needs a value" : "unknown option"));
    } else if (!only.empty()) {
      return fail(fmt::format("'{}': one experiment at most (hint: seqbench runs --help)", arg));
    } else {
      only = arg;
    }
  }
  if (format != "md" && format != "csv")
    return fail(fmt::format("--format: '{}' is not md or csv", format));
  std::vector<std::string> names;
  for (const auto& e : experiments()) names.push_back(e.name);
  if (!only.empty() && !find_experiment(only))
    return fail(core::unknown_name("experiment", only, names));
  if (!fs::is_directory(out))
    return fail(fmt::format("--out: no directory '{}' (hint: runs go to results/ unless --out or "
                            "output.dir says otherwise)",
                            out));
  std::vector<RunLine> lines;
  try {
    for (const auto& name : names) {
      if (!only.empty() && only != name) continue;
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(out + "/" + name, ec)) {
        const std::string id = e.path().filename().string();
        if (!e.is_directory() || id.empty() || id[0] == '.' || !core::file_exists(e.path().string() + "/config.yaml"))
          continue;
        lines.push_back(read_run(out, name, id));
      }
    }
  } catch (const core::Error& e) {
    fmt::print(stderr, "seqbench runs: error: {}\n", e.what());
    return e.exit_code();
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const RunLine& a, const RunLine& b) { return a.age_s < b.age_s; });
  std::vector<std::string> header{"run_id", "label", "state", "updates", "final metric", "age"};
  if (only.empty()) header.insert(header.begin(), "experiment");
  std::vector<std::vector<std::string>> rows;
  for (const auto& l : lines) {
    std::vector<std::string> row{l.id, l.label, l.state, l.updates, l.metric, age_text(l.age_s)};
    if (only.empty()) row.insert(row.begin(), l.experiment);
    rows.push_back(std::move(row));
  }
  if (format == "csv") {
    // For programs: the age in whole seconds.
    header.back() = "age_s";
    for (size_t i = 0; i < rows.size(); ++i) rows[i].back() = fmt::format("{:.0f}", lines[i].age_s);
    std::string text = report::csv_line(header);
    for (const auto& r : rows) text += report::csv_line(r);
    fmt::print("{}", text);
  } else if (lines.empty()) {
    fmt::print(stderr, "seqbench runs: no runs under {}/{}\n", out, only.empty() ? "*" : only);
  } else {
    fmt::print("{}", report::markdown_table(header, rows));
  }
  return core::kExitOk;
}

}  // namespace seqbench::apps
