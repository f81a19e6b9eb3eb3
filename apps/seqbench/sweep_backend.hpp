// The pieces of `seqbench sweep` (sweep_main.cpp is its command line): the two ways of
// executing a sweep's runs behind one interface, the foreground run of one array task,
// and the status view. What a run is, and what its files say, is lib/sweep.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sweep/sweep.hpp"

namespace seqbench::apps {

// How the runs of a sweep are started. Every run is this binary's ordinary experiment
// command (sweep::run_arguments), so both backends leave the same files behind.
struct LaunchOptions {
  int64_t jobs = 1;      // local: runs at once
  int64_t threads = 0;   // per run; slurm: 0 takes the task's CPUs
  bool force_threads = false;
  bool retry_failed = false;
  bool quiet = false;    // local: no progress lines
  bool wait = false;     // slurm: wait until the job array has left the queue
  int64_t timeout_s = 3600;  // slurm --wait: give up after this many seconds
  // A progress line ([k/N done, ...], sweep/live.hpp) at least this often while runs go on
  // (local: also after each run ends; slurm: with --wait); 0: only after each run ends.
  double progress_every_s = 15;
};

class SweepBackend {
 public:
  explicit SweepBackend(const LaunchOptions& opts) : opts_(opts) {}
  virtual ~SweepBackend() = default;
  // Starts (or submits) every run that is not done, running or (without retry_failed)
  // failed. Returns the exit code of `seqbench sweep`.
  virtual int launch(const sweep::Spec& spec, const std::vector<sweep::Run>& runs) = 0;

 protected:
  LaunchOptions opts_;
};

// Child processes of this binary on this machine (sweep_local.cpp).
std::unique_ptr<SweepBackend> local_backend(const LaunchOptions& opts);
// One Slurm job array whose tasks call back `seqbench sweep SPEC --run-index I`
// (sweep_slurm.cpp).
std::unique_ptr<SweepBackend> slurm_backend(const LaunchOptions& opts);

// Run `index` in the foreground (what each Slurm array task does): its exit code is ours.
int run_one(const sweep::Spec& spec, const std::vector<sweep::Run>& runs, int64_t index,
            int64_t threads, bool force_threads);

// This program's path, which every run executes.
std::string self_exe();

// Moves the run's directory, if there is one, to <out>/.sweep/stale/<id>-<time>: a run
// killed before its first checkpoint, or one started over, never deleted.
void move_aside(const sweep::Spec& spec, const sweep::Run& run);

// One run started as a child process (sweep_local.cpp).
struct StartedRun {
  pid_t pid = -1;
  bool resumed = false;  // continued from its checkpoint (its wall time is not a whole run's)
  std::chrono::steady_clock::time_point at;
};
// Starts the run in its own process group (so that a Ctrl-C reaches it once, through
// us), its output to the sweep's log of the run; an interrupted run with a checkpoint
// continues, anything else starts over (a stale directory is moved aside first).
StartedRun start_run(const sweep::Spec& spec, const sweep::Run& run, int64_t threads,
                     bool force_threads, const sweep::RunStatus& st);
// After the run's process ended with `code`: its exit file, and its wall time and CPU
// time, cpu_s (sweep::wall_path), when it started fresh and exited 0.
void record_end(const sweep::Spec& spec, const sweep::Run& run, const StartedRun& started,
                int code, double cpu_s);
// User + system seconds of a waited-for process (wait4's rusage).
double cpu_seconds(const struct rusage& ru);
int exit_code_of(int wait_status);
// SIGINT/SIGTERM are noted (caught_signal) instead of ending this process, so that the
// runs can be told once and checkpoint.
void install_signals();
int caught_signal();

// The estimate after `--dry-run` and `--calibrate` (sweep_estimate.cpp).
struct EstimateOptions {
  std::string backend = "local";
  int64_t jobs = 1;            // local: runs at once
  int64_t threads = 1;         // local: threads per run
  int64_t cores = 1;           // local: cores of this machine (for the printout)
  int64_t slurm_cores = 64;    // slurm: cores the array may hold at once
  bool retry_failed = false;   // failed runs count as runs to go
  std::vector<std::string> search;  // more places to look for finished runs (default results)
};
// Prints what the runs not done yet will cost (docs/sweeps.md, "Estimates"). Returns the
// exit code: 0, also when some runs have no estimate (it says which and why).
int print_estimate(const sweep::Spec& spec, const std::vector<sweep::Run>& runs,
                   const EstimateOptions& opts);
// Before any run starts: the first run of each config (its config file, the sweep's
// `set` and the first grid point) resolves, as `--dump-config` of its own command line.
// A misspelt key, a config that is not a file or a bad value is then one line naming
// the sweep file and the run (core::UsageError, or core::Error where the run's error
// was not a usage error), instead of every run of the config failing.
void check_configs(const sweep::Spec& spec, const std::vector<sweep::Run>& runs);
// What one run of each of `runs` (one per config, as `seqbench sweep` would start it with
// `threads` threads) takes, from the finished runs this build measured under `search`:
// seconds, or nullopt with why not ("no finished run of this config under results/", or
// the config's own error). `seqbench list presets --estimate`.
struct ConfigEstimate {
  std::optional<double> seconds;
  bool may_stop_early = false;  // train.target or patience: the time is an upper bound
  int measured_runs = 0;
  bool resolves = true;  // false: the config itself failed (why_not is its error)
  std::string why_not;
  std::set<std::string> near_miss;  // not measured: the one cost key finished runs differ in
};
std::vector<ConfigEstimate> estimate_configs(const sweep::Spec& spec, const std::vector<sweep::Run>& runs,
                                             int64_t threads, const std::vector<std::string>& search);
// `--calibrate`: one short run (`updates` updates) of every distinct config of the runs
// to go that has no measurement at opts.threads yet, one at a time, under
// <out>/.sweep/calibrate/; a config whose updates took less than min_seconds is run
// again with enough updates for that (at most its planned ones). Then the estimate.
// Returns the exit code.
int calibrate(const sweep::Spec& spec, const std::vector<sweep::Run>& runs,
              const EstimateOptions& opts, int64_t updates, double min_seconds,
              bool force_threads);

// `seqbench sweep status SPEC`: one line per run (a running run's update and ETA), the
// counts, and the sweep's ETA with `slots` runs at once (sweep_status.cpp).
int print_status(const sweep::Spec& spec, const std::vector<sweep::Run>& runs, int64_t slots);

}  // namespace seqbench::apps
