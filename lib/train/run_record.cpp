#include "train/run_record.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "core/file_lock.hpp"
#include "core/fs.hpp"
#include "core/threads.hpp"
#include "report/csv.hpp"
#include "report/json.hpp"
#include "report/markdown.hpp"

namespace seqbench::train {

namespace {
std::string num(double v) { return fmt::format("{:.6g}", v); }

// Whether s is exactly a whole number that fits T.
template <class T>
bool whole(const std::string& s, T& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}
}  // namespace

RunIdentity setup_columns(size_t params, const TrainConfig& train,
                          const optim::OptimConfig& optim) {
  return {
      {"params", std::to_string(params)},
      {"batch", std::to_string(train.batch)},
      {"optimizer", optim.name},
      {"lr", fmt::format("{}", optim.lr)},
      {"bptt", std::to_string(train.bptt)},
      {"seed", std::to_string(train.seed)},
      {"threads", std::to_string(core::num_threads())},
      {"gemm", train.gemm},
  };
}

RunIdentity recurrent_columns(const std::string& label, const std::string& task, int64_t T,
                              const nn::ModelConfig& model, size_t params,
                              const TrainingSections& setup) {
  RunIdentity id{
      {"label", label},
      {"task", task},
      {"T", std::to_string(T)},
      {"model", model.cell},
      {"backend", model.backend},
      {"hidden", std::to_string(model.hidden)},
  };
  append(id, setup_columns(params, setup.train, setup.optim));
  return id;
}

void append(RunIdentity& a, const RunIdentity& b) { a.insert(a.end(), b.begin(), b.end()); }

std::string data_label(const std::string& name, bool stand_in) {
  return fmt::format("{} ({})", name, stand_in ? "stand-in" : "real");
}

RunIdentity data_columns(const std::string& name, bool stand_in, const data::DataDigest& digest) {
  return {{"data", data_label(name, stand_in)},
          {"data_sha256", digest.sha256()},
          {"data_verified", digest.verified ? "true" : "false"}};
}

RunIdentity run_record(const RunFiles& files, const std::string& experiment,
                       const RunIdentity& identity, const Summary& s) {
  RunIdentity r{{"run_id", files.run_id()}, {"experiment", experiment}};
  r.insert(r.end(), identity.begin(), identity.end());
  const RunIdentity tail{
      {"status", s.status},
      {"updates", std::to_string(s.updates)},
      {"metric", s.metric},
      {"final_metric", num(s.final_metric)},
      {"best_metric", num(s.best_metric)},
      {"best_step", std::to_string(s.best_step)},
      {"final_loss", num(s.final_loss)},
      {"updates_to_target", std::to_string(s.updates_to_target)},
      {"seconds_to_target", num(s.seconds_to_target)},
      {"train_seconds", num(s.train_seconds)},
      {"ms_per_update", num(s.ms_per_update)},
      {"peak_rss_mb", num(s.peak_rss_mb)},
      {"held_mb", num(double(s.held_bytes) / (1024.0 * 1024.0))},
  };
  r.insert(r.end(), tail.begin(), tail.end());
  return r;
}

void write_run_outputs(const RunFiles& files, const RunIdentity& record, const Summary& s) {
  report::JsonObject j;
  // Names and labels stay strings even when they look like numbers ("nan", "1e3").
  static const std::set<std::string> kText{"run_id", "experiment", "label", "status", "metric",
                                           "data_sha256"};
  for (const auto& [k, v] : record) {
    int64_t i = 0;
    uint64_t u = 0;
    if (k == "data_verified" && (v == "true" || v == "false"))
      j.set(k, v == "true");  // a JSON boolean: the string "false" would be truthy in Python
    else if (kText.count(k) || !report::is_numeric_cell(v))
      j.set(k, v);
    else if (whole(v, i))  // exact, where a double would round 64-bit seeds
      j.set(k, i);
    else if (whole(v, u))
      j.set(k, u);
    else
      j.set(k, std::strtod(v.c_str(), nullptr));
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  j.set("step_ms", s.step_ms > 0 ? s.step_ms : nan);
  j.set("lstm_gflop_per_update", s.update_gflop > 0 ? s.update_gflop : nan);
  j.set("gflops", achieved_gflops(s));
  j.set("sgemm_peak_gflops", s.sgemm_peak_gflops);
  j.set("pct_sgemm_peak", pct_sgemm_peak(s));
  j.set("message", s.message);
  core::write_file_atomic(files.path("summary.json"), j.pretty());
  if (s.status == "interrupted") return;
  std::vector<std::string> cols, cells;
  for (const auto& [k, v] : record) {
    cols.push_back(k);
    cells.push_back(v);
  }
  // One row per run: a run resumed after it had finished (to extend it) replaces its
  // earlier row. Runs of one experiment write runs.csv one at a time (the lock), so a
  // rewrite never loses another run's row.
  const std::string path = files.experiment_dir() + "/runs.csv";
  const core::FileLock lock(path + ".lock");
  core::refuse_symlink(path);  // never read back, rewritten or appended through a link
  if (core::file_exists(path)) {
    const report::CsvTable old =
        report::parse_csv(core::read_file(path, core::Links::kRefuse), path);
    if (old.has("run_id")) {
      const size_t c = size_t(old.col("run_id"));
      std::string kept = report::csv_line(old.columns);
      bool dropped = false;
      for (const auto& row : old.rows) {
        if (row.size() > c && row[c] == files.run_id())
          dropped = true;
        else
          kept += report::csv_line(row);
      }
      if (dropped) core::write_file_atomic(path, kept);
    }
  }
  report::CsvWriter runs(path, cols, report::CsvWriter::Mode::Append);
  runs.row(cells);
}

double achieved_gflops(const Summary& s) {
  return s.update_gflop > 0 && s.step_ms > 0 ? s.update_gflop / (s.step_ms / 1000.0)
                                             : std::numeric_limits<double>::quiet_NaN();
}

double pct_sgemm_peak(const Summary& s) {
  return s.sgemm_peak_gflops > 0 ? 100.0 * achieved_gflops(s) / s.sgemm_peak_gflops
                                 : std::numeric_limits<double>::quiet_NaN();
}

std::string summary_table(const RunIdentity& record, const Summary& s) {
  static const char* shown[] = {"label",   "task",         "T",           "backend",
                                "status",  "updates",      "metric",      "final_metric",
                                "best_metric", "final_loss", "ms_per_update", "peak_rss_mb"};
  std::vector<std::string> header, row;
  for (const char* c : shown)
    for (const auto& [k, v] : record)
      if (k == c) {
        header.push_back(k);
        row.push_back(v);
      }
  if (const double g = achieved_gflops(s); std::isfinite(g)) {
    header.push_back("GFLOP/s");
    row.push_back(fmt::format("{:.1f}", g));
    if (const double p = pct_sgemm_peak(s); std::isfinite(p)) {
      header.push_back("% sgemm peak");
      row.push_back(fmt::format("{:.0f}%", p));
    }
  }
  return report::markdown_table(header, {row});
}

}  // namespace seqbench::train
