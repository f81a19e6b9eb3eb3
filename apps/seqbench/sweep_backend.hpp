// The pieces of `seqbench sweep` (sweep_main.cpp is its command line): the two ways of
// executing a sweep's runs behind one interface, the foreground run of one array task,
// and the status view. What a run is, and what its files say, is lib/sweep.
#pragma once

#include <cstdint>
#include <memory>
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
};

class SweepBackend {
 public:
  virtual ~SweepBackend() = default;
  // Starts (or submits) every run that is not done, running or (without retry_failed)
  // failed. Returns the exit code of `seqbench sweep`.
  virtual int launch(const sweep::Spec& spec, const std::vector<sweep::Run>& runs) = 0;
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

// `seqbench sweep status SPEC`: one line per run and the counts (sweep_status.cpp).
int print_status(const sweep::Spec& spec, const std::vector<sweep::Run>& runs);

}  // namespace seqbench::apps
