// What a sweep will cost, from what finished runs of this build measured: the matching
// rule (which measured run stands for which planned run), the cost model of one run
// (start-up + updates x ms/update + validations x seconds each) and the wall time of the
// runs when N of them run at once. Reading the measurements from run directories is here
// too; the command line (`seqbench sweep --dry-run`, `--calibrate`) is
// apps/seqbench/sweep_estimate.cpp. Everything here is arithmetic on files: nothing is
// timed. docs/sweeps.md, "Estimates".
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace seqbench::sweep {

// A resolved config (config.yaml, or `--dump-config`) flattened to dotted keys:
// {"task.T": "100", "model.cell": "lstm", ...}. Lists keep their YAML flow text.
using FlatConfig = std::map<std::string, std::string>;
FlatConfig flatten_config(const std::string& yaml_text, const std::string& where);

// The matching rule. A key is cost-free when changing it leaves the time of one update
// and of one validation unchanged: the seed and threads (threads are matched apart),
// output.*, optim.* (an optimizer step is one pass over the parameters, small next to a
// forward and backward pass through the sequence), the budget and schedule of the run
// (train.steps, target, patience, log_every, eval_every, checkpoint_every,
// gradnorm_every, nan_check; the cost model counts updates and validations itself), and
// data.permute, data.permute_seed, data.check_epochs and ppo.frames. Every other key
// (model.*, task.*, train.batch, train.bptt, train.gemm, train.eval_batches, the rest of
// data.*, ...) must be equal for a measurement to stand for a run.
bool cost_free_key(const std::string& key);
// The cost-deciding keys and values, one "key=value" per line, sorted: two configs with
// the same cost key cost the same per update.
std::string cost_key(const FlatConfig& cfg);

// The number of validations of a run of `updates` updates: one every eval_every updates
// and one at the end (the Trainer's rule; eval_every 0 validates only at the end).
int64_t validations(int64_t updates, int64_t eval_every);

// What one planned run will do, from its resolved config.
struct Plan {
  std::string cost_key;
  bool training = true;       // has train.steps; else an analysis run (e.g. stability)
  int64_t updates = 0;        // train.steps
  int64_t eval_every = 0;     // train.eval_every
  bool may_stop_early = false;  // train.target set or train.patience > 0
};
Plan plan_of(const FlatConfig& cfg);

// What one finished run measured. Times in seconds unless named _ms.
struct Measurement {
  std::string run_dir;
  std::string source;   // where it was found, as printed: "this sweep", "calibration", a path
  int rank = 2;         // 0: the sweep's own runs, 1: its calibration runs, 2: elsewhere
  std::string cost_key;
  int64_t threads = 1;
  bool training = true;
  int64_t updates = 0;
  double train_ms = 0;  // one update, validations excluded (steady state where the rows allow)
  double valid_s = 0;   // one validation (the last one, at the final update)
  double start_s = 0;   // per run, outside the updates: process start, loading, first-update
                        // warm-up, final save (0 with start_known false)
  bool start_known = false;  // the process's wall time was recorded (<out>/.sweep/logs/<id>.wall)
  double total_s = 0;   // an analysis run: the whole run
  // The process's CPU time / (its wall time x threads): 1 on cores of its own, less on a
  // machine it shared. Recorded with the wall time.
  double cpu_share = 1;
  bool share_known = false;
};

// The keys in which `key` differs from a measurement that differs from it in one cost key
// only (a value changed, or a key present on one side), over every such measurement;
// empty when none does. It names why a config has no estimate when finished runs of
// nearly the same config exist, e.g. runs made before a default (train.gemm) changed.
std::set<std::string> near_miss_keys(const std::string& key, const std::vector<Measurement>& ms);

// The finished runs listed in `runs_csv` (status finished, target_reached or
// early_stopped) whose run directory (beside runs.csv) still has config.yaml and
// metrics.csv; a row whose files are missing or unreadable is left out. Wall and CPU
// times come from <dir of runs.csv>/../.sweep/logs/<run_id>.wall ("<wall> <cpu>"),
// written by `seqbench sweep` for a run that started fresh and exited 0.
std::vector<Measurement> read_measurements(const std::string& runs_csv, const std::string& source,
                                           int rank);
// One run's numbers, from its runs.csv values (updates, train_seconds, threads), its
// metrics.csv text and its process wall time (nullopt: not recorded).
Measurement measure(const std::string& metrics_csv_text, int64_t updates, double train_seconds,
                    std::optional<double> wall_s);

// The estimate of one planned run at `threads` threads. The measurements that stand for it
// have its cost key and at most its threads (a run measured with fewer threads than it
// gets is estimated at that speed, an upper bound); among them, those with the most
// threads, then the best rank, and of those the median of each number.
struct RunEstimate {
  bool ok = false;
  double seconds = 0;
  double train_ms = 0, valid_s = 0, start_s = 0;
  int64_t validations = 0;
  bool start_known = false;
  int64_t measured_threads = 0;
  // The median CPU share of the measurements (share_known: some recorded it); with one
  // thread, seconds x cpu_share is what the run would take on a core of its own.
  double cpu_share = 1;
  bool share_known = false;
  std::vector<const Measurement*> used;
};
RunEstimate estimate_run(const Plan& plan, int64_t threads,
                         const std::vector<Measurement>& measurements);

// The wall time of runs taking `seconds` each, started in this order, `slots` at a time,
// each as soon as one ends (what the local backend does with --jobs, and roughly what a
// Slurm array with that many tasks running does).
double makespan(const std::vector<double>& seconds, int64_t slots);

// "4.5 s", "45 s", "12.5 min", "3.4 h", "2.1 days (50 h)".
std::string format_duration(double seconds);
// A Slurm time limit ("MM", "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS") in
// seconds; nullopt for an empty or unreadable one.
std::optional<double> parse_slurm_time(const std::string& text);

}  // namespace seqbench::sweep
