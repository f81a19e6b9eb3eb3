#include "train/run_files.hpp"

#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/input_file.hpp"
#include "core/text.hpp"
#include "report/run_configs.hpp"

namespace seqbench::train {

void drop_rows_after(const std::string& path, int64_t max_step) {
  if (!core::file_exists(path)) return;
  // A last row that a crash cut off was the file's last write, after the checkpoint: it
  // goes with the other rows written after it.
  const std::string text = core::read_input(path, core::kMaxTableFile, /*follow_links=*/false);
  report::CsvTable t = report::parse_csv(report::without_cut_off_row(text, path), path);
  std::string out = report::csv_line(t.columns);
  for (const auto& r : t.rows)
    if (!r.empty() && std::stoll(r[0]) <= max_step) out += report::csv_line(r);
  core::write_file_atomic(path, out);
}


namespace {

// "key old -> new" for each key that differs and that a resume may not change.
std::vector<std::string> changed_keys(const std::string& saved_yaml, const std::string& saved_where,
                                      const std::string& new_yaml) {
  static const char* const kMayChange[] = {"train.steps", "train.threads", "train.log_every",
                                           "train.checkpoint_every", "train.nan_check"};
  const auto saved = report::flat_config(saved_yaml, saved_where);
  const auto now = report::flat_config(new_yaml, "the resumed config");
  std::vector<std::string> changed;
  const auto value = [](const std::map<std::string, std::string>& m, const std::string& k) {
    const auto it = m.find(k);
    return it == m.end() ? std::string("(unset)") : it->second;
  };
  std::set<std::string> keys;
  for (const auto& kv : saved) keys.insert(kv.first);
  for (const auto& kv : now) keys.insert(kv.first);
  for (const auto& k : keys) {
    if (k.rfind("output.", 0) == 0 ||
        std::find(std::begin(kMayChange), std::end(kMayChange), k) != std::end(kMayChange))
      continue;
    if (value(saved, k) != value(now, k))
      changed.push_back(fmt::format("{} {} -> {}", k, value(saved, k), value(now, k)));
  }
  return changed;
}

}  // namespace

void check_checkpoint_config(const std::string& checkpoint_yaml, const std::string& new_yaml,
                             const std::string& checkpoint) {
  const auto changed = changed_keys(checkpoint_yaml, checkpoint, new_yaml);
  if (!changed.empty())
    throw core::UsageError(fmt::format(
        "--resume: the run's config differs from the one its checkpoint '{}' was written with "
        "({}); was config.yaml edited? (hint: put the run's config back, or start a new run "
        "with another --run-id)",
        checkpoint, fmt::join(changed, ", ")));
}

void check_resume_config(const std::string& saved_yaml, const std::string& new_yaml,
                         const std::string& run_dir) {
  const auto changed = changed_keys(saved_yaml, run_dir + "/config.yaml", new_yaml);
  if (!changed.empty())
    throw core::UsageError(fmt::format(
        "--resume: the run at '{}' would change ({}); a resumed run continues as it was "
        "(only train.steps, train.threads, train.log_every, train.checkpoint_every, "
        "train.nan_check and output.* may change; hint: start a new run with another --run-id to try other "
        "settings)",
        run_dir, fmt::join(changed, ", ")));
}

const std::vector<std::string>& RunFiles::metrics_columns_prefix() {
  static const std::vector<std::string> c{"step", "split", "loss"};
  return c;
}

const std::vector<std::string>& RunFiles::gradnorm_columns() {
  static const std::vector<std::string> c{"step", "t", "distance", "norm"};
  return c;
}

const std::vector<std::string>& RunFiles::own_files() {
  static const std::vector<std::string> names{
      ".lock",        "config.yaml",  "log.txt",         "metrics.csv",
      "gradnorm.csv", "summary.json", "checkpoint.sbck", "checkpoint.prev.sbck"};
  return names;
}

void check_run_dir(const std::string& root, const std::string& experiment,
                   const std::string& run_id) {
  const std::string exp_dir = root + "/" + experiment, dir = exp_dir + "/" + run_id;
  core::refuse_symlink(exp_dir);
  // The experiment's table and its lock, which every run of it writes when it ends.
  core::refuse_symlink(exp_dir + "/runs.csv");
  core::refuse_symlink(exp_dir + "/runs.csv.lock");
  core::refuse_symlink(dir);
  for (const auto& name : RunFiles::own_files()) core::refuse_symlink(dir + "/" + name);
}

RunFiles::RunFiles(const std::string& root, const std::string& experiment,
                   const std::string& run_id, const std::string& metric, bool resume)
    : exp_dir_(root + "/" + experiment), dir_(exp_dir_ + "/" + run_id), run_id_(run_id),
      metric_(metric) {
  // The results root is the user's to point anywhere; below it, the experiment's and the
  // run's directories must be real directories, not links out of it.
  core::make_dirs(root);
  core::make_real_dir(exp_dir_);
  if (resume) {
    core::refuse_symlink(dir_);
    SB_CHECK(core::file_exists(dir_), "cannot resume: run directory '{}' does not exist", dir_);
  }
  core::make_real_dir(dir_);
  // The lock comes before any look at the directory's contents, so that two processes
  // started with the same run id cannot both pass the checks below.
  lock_directory();
  if (!resume && core::file_exists(dir_ + "/config.yaml")) {
    throw core::UsageError(fmt::format(
        "run directory '{}' already holds a run (hint: choose another --run-id, or add "
        "--resume to continue it)",
        dir_));
  }
  // Every file the run writes is refused if it is a link, before any of them is touched.
  check_run_dir(root, experiment, run_id);
  // Temporary files of writes that a kill cut short (their process is gone; a whole
  // checkpoint each, at worst).
  const std::vector<std::string> stale = core::remove_stale_temps(dir_);
  // A resumed run opens its CSV files in continue_after, once the checkpoint is restored.
  if (!resume) open_csv(false);
  log_ = std::make_unique<core::AppendFile>(path("log.txt"));
  for (const auto& name : stale)
    log(fmt::format("removed {}, left by a process that was killed while writing it", name));
}

void RunFiles::open_csv(bool append) {
  std::vector<std::string> mc = metrics_columns_prefix();
  for (const char* c : {"", "lr", "grad_norm", "elapsed_s"}) mc.push_back(*c ? c : metric_);
  const auto mode = append ? report::CsvWriter::Mode::Append : report::CsvWriter::Mode::Truncate;
  metrics_.reset();
  gradnorm_.reset();
  metrics_ = std::make_unique<report::CsvWriter>(path("metrics.csv"), mc, mode);
  gradnorm_ = std::make_unique<report::CsvWriter>(path("gradnorm.csv"), gradnorm_columns(), mode);
}

void RunFiles::continue_after(int64_t step) {
  drop_rows_after(path("metrics.csv"), step);
  drop_rows_after(path("gradnorm.csv"), step);
  open_csv(true);  // the files were replaced: append to the new ones
}

void RunFiles::lock_directory() {
  const std::string lock = path(".lock");
  lock_ = core::FileLock::try_lock(lock);
  if (!lock_) {
    const std::string holder = core::trim(core::FileLock::read_note(lock));
    throw core::UsageError(fmt::format(
        "run directory '{}' is in use by another seqbench process (pid {}) (hint: wait for "
        "it to finish, or choose another --run-id)",
        dir_, holder.empty() ? "?" : holder));
  }
  lock_->write_note(std::to_string(::getpid()));  // the holder, for the message above
}

void RunFiles::write_config(const std::string& yaml) {
  core::write_file_atomic(path("config.yaml"), yaml);
}

void RunFiles::metrics_row(int64_t step, const std::string& split, double loss, double metric,
                           double lr, double grad_norm, double elapsed_s) {
  using W = report::CsvWriter;
  metrics_->row({W::cell(step), split, W::cell(loss), W::cell(metric), W::cell(lr),
                 W::cell(grad_norm), W::cell(elapsed_s)});
}

void RunFiles::gradnorm_rows(int64_t step, const std::vector<double>& norms) {
  using W = report::CsvWriter;
  const int64_t last = static_cast<int64_t>(norms.size()) - 1;
  std::vector<std::vector<std::string>> block;
  block.reserve(norms.size());
  for (int64_t t = 0; t <= last; ++t)
    block.push_back({W::cell(step), W::cell(t), W::cell(last - t), W::cell(norms[size_t(t)])});
  gradnorm_->rows(block);
}

void RunFiles::log(const std::string& line) {
  log_->write(line);
  log_->write("\n");
  log_->flush_sync();
}

}  // namespace seqbench::train
