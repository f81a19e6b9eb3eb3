// Trainer: the train / validate loop shared by every experiment.
//
// Per update: zero grads -> experiment.train_step() -> NaN check -> global-norm clip
// -> optimizer step at the scheduled lr -> experiment.after_update() (projections). At intervals: a training row in metrics.csv
// (means over the interval), a validation row, a gradient-norm probe (gradnorm.csv),
// a checkpoint. Stops at train.steps, when the validation metric reaches
// train.target, after train.patience validations without improvement, on Ctrl-C
// (checkpoint written, status "interrupted") or when the loss or gradient is not
// finite (status "diverged", no update applied).
//
// Resuming restores parameters, optimizer slots and counters, the schedule, the
// experiment's own state (data RNG) and the interval accumulators, so a resumed run
// ends with exactly the parameters of an uninterrupted one (same thread count).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "core/check.hpp"
#include "optim/optim_config.hpp"
#include "optim/optimizer.hpp"
#include "optim/schedule.hpp"
#include "train/experiment.hpp"
#include "train/progress.hpp"
#include "train/run_files.hpp"
#include "train/train_config.hpp"

namespace seqbench::train {

struct Summary {
  // finished | target_reached | early_stopped | interrupted | diverged (NaN/inf) | failed
  // (an error inside an update, e.g. an infeasible stability projection)
  std::string status = "running";
  std::string message;             // why it stopped, one line
  int64_t updates = 0;
  std::string metric;              // name of the validation metric
  double final_loss = 0, final_metric = 0;  // last validation
  double best_metric = 0;
  int64_t best_step = 0;
  int64_t updates_to_target = -1;  // first validation that reached train.target
  double seconds_to_target = -1;
  double train_seconds = 0;        // time in training updates and validations (across resumes)
  double ms_per_update = 0;        // mean over the updates of this process
  // The training step alone (train_step, clip, optimizer step, after_update: the bench's
  // step), mean over the updates of this process; validations, probes and checkpoints
  // are not in it.
  double step_ms = 0;
  // The LSTM-equivalent work of one update (Experiment::lstm_equivalent_flop), in GFLOP;
  // 0 where the count is not defined (train/efficiency.hpp).
  double update_gflop = 0;
  // This machine's sgemm peak at the run's threads (train/efficiency.hpp); NaN when none
  // is cached (set by the app after training).
  double sgemm_peak_gflops = std::numeric_limits<double>::quiet_NaN();
  double peak_rss_mb = 0;
  size_t held_bytes = 0;
};

class Trainer {
 public:
  Trainer(const TrainConfig& train, const optim::OptimConfig& optim, Experiment& exp,
          RunFiles& files, bool quiet);

  // Restores everything from a checkpoint written by this Trainer. Every counter is
  // checked first (step >= 0, ...): a damaged or edited value is a core::Error naming it,
  // thrown before anything is restored.
  void resume(const Checkpoint& ck);
  // The run's resolved config as YAML, stored in every checkpoint ("config_yaml") so that
  // a resume can tell an edited config.yaml (check_checkpoint_config).
  void set_config_yaml(std::string yaml) { config_yaml_ = std::move(yaml); }
  Summary run();
  // For tests: behave as if Ctrl-C arrived right after this update.
  void interrupt_after(int64_t update) { interrupt_at_ = update; }

 private:
  void save_checkpoint_now(double elapsed_s);
  bool validate(Summary& s);  // returns true when training should stop
  std::string checkpoint_note() const;
  static std::string first_non_finite(const core::ParamStore& ps, std::span<const float> block);
  void fail(Summary& s, const core::Error& e);  // status "failed" with e's message
  void probe();
  void log(const std::string& line);

  TrainConfig cfg_;
  Experiment& exp_;
  RunFiles& files_;
  bool quiet_;
  std::unique_ptr<optim::Optimizer<float>> opt_;
  optim::LrSchedule sched_;
  double clip_;
  std::string config_yaml_;
  int64_t step_ = 0;  // updates done
  int64_t interrupt_at_ = -1;
  // Interval accumulators (training means between metrics rows).
  int64_t acc_n_ = 0;
  double acc_loss_ = 0, acc_metric_ = 0, acc_gnorm_ = 0;
  // Best / stopping state.
  bool has_best_ = false;
  double best_ = 0;
  int64_t best_step_ = 0, bad_evals_ = 0;
  int64_t updates_to_target_ = -1;
  double seconds_to_target_ = -1;
  double elapsed_before_ = 0;  // training seconds of earlier processes (resume)
  double last_loss_ = 0, last_metric_ = 0;
  std::unique_ptr<Progress> progress_;
};

// Copies every parameter of ps from the checkpoint's array of the same name (shapes
// must match; errors name the file and the array).
void load_parameters(core::ParamStore& ps, const Checkpoint& ck);

// Resident-set high-water mark of this process in MiB.
double peak_rss_mb();

}  // namespace seqbench::train
