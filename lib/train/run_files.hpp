// The files of one run, results/<experiment>/<run-id>/ (formats in docs/formats.md):
//   config.yaml    the resolved config (written before training starts)
//   metrics.csv    step,split,loss,<metric>,lr,grad_norm,elapsed_s
//   gradnorm.csv   step,t,distance,norm
//   log.txt        every log line
//   checkpoint.sbck       the latest checkpoint (checksummed, read back after writing)
//   checkpoint.prev.sbck  the one before it (--resume-from previous)
//   summary.json   written when the run stops (for any reason)
// and results/<experiment>/runs.csv, one row per finished run.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/file_lock.hpp"
#include "core/fs.hpp"
#include "report/csv.hpp"

namespace seqbench::train {

// Rewrites a CSV keeping only the rows whose first column (a step) is <= max_step, as a
// resumed run does with the rows written after its checkpoint. A last row that a crash
// cut off (report::without_cut_off_row) is one of those. A path that is a symbolic link
// is refused.
void drop_rows_after(const std::string& path, int64_t max_step);

// Refuses (core::Error naming it) a run whose experiment directory, the experiment's
// runs.csv or runs.csv.lock, the run directory or any of the run's own files
// (RunFiles::own_files) is a symbolic link. Run before a resumed run reads its config
// and checkpoint; RunFiles checks the same before writing.
void check_run_dir(const std::string& root, const std::string& experiment,
                   const std::string& run_id);

// A resumed run continues as it was: its resolved config (YAML) may differ from the
// saved one only in the keys that do not change what is computed (train.steps, to
// extend it, train.threads, train.log_every, train.checkpoint_every, output.*).
// Throws core::UsageError listing every other key that differs, old and new value.
void check_resume_config(const std::string& saved_yaml, const std::string& new_yaml,
                         const std::string& run_dir);
// The same rule against the config a checkpoint was written with (its "config_yaml"):
// a config.yaml edited by hand after the checkpoint is refused, naming each key that
// differs. Checkpoints of earlier builds have no config_yaml and are not checked.
void check_checkpoint_config(const std::string& checkpoint_yaml, const std::string& new_yaml,
                             const std::string& checkpoint);

class RunFiles {
 public:
  // Creates (or, when resuming, reopens) root/experiment/run_id. metric names the
  // metrics.csv column after loss. Resuming changes nothing on disk until
  // continue_after() is called, except the lock's note, log.txt (opened for appending)
  // and the removal of stale temporary files (below).
  // Nothing is written through a symbolic link: the experiment and run directories must
  // be real directories (the root may be a link), and a run whose own files include a
  // link is refused (check_run_dir) before any is written.
  // Once the directory is locked, "<file>.tmp.<pid>" files in it whose process is gone
  // (core::remove_stale_temps) are removed, each noted in log.txt.
  RunFiles(const std::string& root, const std::string& experiment, const std::string& run_id,
           const std::string& metric, bool resume);
  // For a resumed run, once its checkpoint has been restored: drops the rows of
  // metrics.csv and gradnorm.csv with a step after `step` (written after the checkpoint,
  // before a crash) so the resumed run does not repeat them.
  void continue_after(int64_t step);
  // Holds an exclusive lock on the directory (<dir>/.lock, core::FileLock) from
  // construction to destruction: a second process with the same run id fails with a
  // UsageError naming the holder's pid.

  const std::string& dir() const { return dir_; }
  const std::string& experiment_dir() const { return exp_dir_; }
  const std::string& run_id() const { return run_id_; }
  std::string path(const std::string& file) const { return dir_ + "/" + file; }
  std::string checkpoint_path() const { return path("checkpoint.sbck"); }
  // The checkpoint before the latest one: kept until the next one is written and verified,
  // so a damaged latest checkpoint can be replaced by it (--resume-from previous).
  std::string previous_checkpoint_path() const { return path("checkpoint.prev.sbck"); }

  void write_config(const std::string& yaml);
  void metrics_row(int64_t step, const std::string& split, double loss, double metric, double lr,
                   double grad_norm, double elapsed_s);
  void gradnorm_rows(int64_t step, const std::vector<double>& norms);
  void log(const std::string& line);  // appends "line\n" to log.txt

  static const std::vector<std::string>& metrics_columns_prefix();  // step, split, loss
  // The names of the files every run may have in its directory (.lock, config.yaml, ...).
  static const std::vector<std::string>& own_files();
  static const std::vector<std::string>& gradnorm_columns();

 private:
  void lock_directory();
  void open_csv(bool append);

  std::string exp_dir_, dir_, run_id_, metric_;
  // Released with the object, also when the constructor throws after taking it; declared
  // before the files so that it is released after they are closed.
  std::optional<core::FileLock> lock_;
  std::unique_ptr<report::CsvWriter> metrics_, gradnorm_;
  std::unique_ptr<core::AppendFile> log_;
};

}  // namespace seqbench::train
