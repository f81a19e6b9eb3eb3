// Sweeps: one YAML file that names an experiment, base configs, a grid of overrides and
// seeds, expanded into runs with stable, readable ids, all under one sweep directory.
// This file holds what does not depend on how runs are executed: reading the spec, the
// expansion, and the state of each run as its files show it. Execution (local processes
// or a Slurm job array) is apps/seqbench/sweep_*.cpp. Format: docs/sweeps.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace seqbench::core {
class FileLock;
}

namespace seqbench::sweep {

// What a sweep's Slurm job script asks for; each field's character set is checked when it
// is read (sweep/slurm_script.hpp, check_slurm_value).
struct SlurmOptions {
  std::string partition, time, mem, account;  // empty: the cluster's defaults
  int64_t cpus_per_task = 1;
  std::vector<std::string> extra;  // more #SBATCH options, one each, e.g. "--qos=long"
};

struct Spec {
  std::string path;        // the spec file
  std::string name;        // its stem: the default directory name
  std::string experiment;  // copy, pmnist, ...
  std::vector<std::string> configs;  // base configs (paths as written, resolved below)
  std::vector<std::pair<std::string, std::string>> set;                // every run
  std::vector<std::pair<std::string, std::vector<std::string>>> grid;  // cartesian product
  std::vector<uint64_t> seeds{1};
  std::string out;       // the sweep directory; default results/sweeps/<name>
  int64_t threads = 0;   // per run; 0: the backend decides (cores / jobs, or cpus_per_task)
  int64_t jobs = 0;      // local runs at once; 0: one per core
  SlurmOptions slurm;
  // Command-line options that replaced the file's seeds or out (`--seeds`, `--out`): the
  // Slurm array tasks pass them on, so their run indices mean the same runs.
  std::vector<std::string> overrides;
};

// Replaces the spec's seeds (`--seeds 6,7,8`) and/or its directory (`--out DIR`) and records
// them in spec.overrides. Throws core::UsageError for an empty or repeated seed list or an
// empty directory.
void override_spec(Spec& spec, const std::vector<uint64_t>& seeds, const std::string& out, bool out_given);
// The seeds of `--seeds 6,7,8`: whole numbers >= 0 separated by commas. Throws
// core::UsageError naming the item for an empty list, an empty item or one that is not a
// whole number.
std::vector<uint64_t> parse_seed_list(const std::string& list);

// Reads and checks a spec. Throws core::UsageError naming file, line and key (unknown
// keys get "did you mean"), for an experiment not in `experiments`, a missing config file,
// an empty grid axis or seed list. Config paths are taken relative to the current
// directory, else to the spec's directory or the nearest one above it that has them.
Spec load_spec(const std::string& path, const std::vector<std::string>& experiments);

struct Run {
  size_t index = 0;     // position in the expansion: the Slurm array index
  std::string id;       // e.g. "lstm_small-T100-s1"
  std::string config;   // the base config
  std::vector<std::pair<std::string, std::string>> sets;  // spec.set then the grid point
  uint64_t seed = 1;
};

// At most this many runs in one sweep (a Slurm job array is also capped by the cluster's
// MaxArraySize; 100000 keeps every listing and status check quick).
inline constexpr int64_t kMaxRuns = 100000;
// configs x grid points x seeds, without expanding (saturates rather than wraps).
double count_runs(const Spec& spec);

// configs x grid (in the order written, last key fastest) x seeds. More than kMaxRuns
// runs is a UsageError, found before anything is expanded. Ids are
// "<config stem>[-<key><value>...]-s<seed>", key being the last part of the grid key
// ("task.T" -> "T"); characters outside [A-Za-z0-9._+-] become '_'. Two runs with the
// same id are a UsageError naming both.
std::vector<Run> expand(const Spec& spec);

// The arguments of the experiment's command line for a run (after the program name):
// <experiment> --config C --set k=v ... --seed S --out OUT --run-id ID --threads N -q
// [--force-threads] [--resume].
std::vector<std::string> run_arguments(const Spec& spec, const Run& run, int64_t threads,
                                       bool resume, bool force_threads = false);

enum class State { kPending, kRunning, kInterrupted, kDone, kFailed };
const char* state_name(State s);

struct RunStatus {
  State state = State::kPending;
  std::string detail;  // done: status and final metric; failed: the last log line
  bool has_checkpoint = false;
};

// Where a sweep keeps its own files: <out>/.sweep/ (logs/<id>.log, logs/<id>.exit,
// logs/<id>.wall, slurm/ scripts and job ids, calibrate/ for `--calibrate`).
std::string bookkeeping_dir(const Spec& spec);
std::string log_path(const Spec& spec, const Run& run);
std::string exit_path(const Spec& spec, const Run& run);
// "<wall seconds> <CPU seconds>" of the run's process, written when it started fresh (not
// resumed) and exited 0: the estimates' start-up time and the share of the CPU the run
// got (sweep/estimate.hpp).
std::string wall_path(const Spec& spec, const Run& run);
std::string run_dir(const Spec& spec, const Run& run);

// The lock a sweep holds on a run from the moment it reads the run's state until the
// process it started for it has ended and its exit file is written: <out>/.sweep/locks/
// <id>.lock. Two sweeps on one directory (local, or Slurm tasks) thereby never act on
// the same run at once, and never on a state read before the other acted.
std::string claim_path(const Spec& spec, const Run& run);
// The claim if no other process holds it (never waits), else nullopt.
std::optional<core::FileLock> claim_run(const Spec& spec, const Run& run);

// What the files say about a run: summary.json (finished / target_reached /
// early_stopped: done; diverged / failed: failed; interrupted: interrupted), the run
// directory's lock (held: running), the sweep's exit file (non-zero without a summary:
// failed, e.g. a config mistake), a checkpoint without a summary (a killed process:
// interrupted), else pending. A run whose claim another sweep holds is running too,
// unless `claimed` (the caller holds the claim itself, and reads the state under it).
RunStatus run_status(const Spec& spec, const Run& run, bool claimed = false);

}  // namespace seqbench::sweep
