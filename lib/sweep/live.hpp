// How far the runs of a sweep have got while it runs: the update a running run has reached
// (the last row of its metrics.csv), its rate and ETA, and an ETA for the whole sweep from
// the rates measured so far. What `seqbench sweep` prints as it goes, `--wait` on Slurm
// prints as it polls, and `sweep status` shows. Cheap by design: a run costs a look at its
// files (the last few KiB of metrics.csv, config.yaml, summary.json), nothing is timed
// here. docs/sweeps.md, "Watching a sweep".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sweep/sweep.hpp"

namespace seqbench::sweep {

// Where one run stands by its files.
struct RunProgress {
  int64_t step = 0;        // the last update metrics.csv has a row for (0: none yet)
  int64_t total = 0;       // train.steps of its config.yaml (0: unknown, e.g. an analysis run)
  double elapsed_s = 0;    // training seconds at that row (the elapsed_s column)
  bool may_stop_early = false;  // train.target or train.patience set: total is a bound
  // Updates per second so far; 0 when unknown.
  double rate() const { return elapsed_s > 0 && step > 0 ? double(step) / elapsed_s : 0; }
  // Seconds to `total` at rate(); nullopt when either is unknown.
  std::optional<double> eta_s() const;
};
// Reads <run_dir>/metrics.csv (its header and last complete row only) and
// <run_dir>/config.yaml. Missing or unreadable files leave the fields at 0.
RunProgress run_progress(const std::string& run_dir);
// "1200/3000 updates, 40.1/s, ETA 45 s" ("to target or 3000" where the run may stop
// early); "starting" before its first row.
std::string progress_text(const RunProgress& p);

// The state of a sweep's runs at one moment.
struct SweepProgress {
  int total = 0, done = 0, running = 0, failed = 0, to_go = 0;  // to_go: pending or interrupted
  struct Running {
    std::string id;
    RunProgress progress;
  };
  std::vector<Running> running_runs;
  std::optional<double> eta_s;  // the whole sweep; nullopt until some rate is known
};
// Looks at every run. The sweep's ETA: each running run's ETA, plus for each run to go (and
// each running run without a rate yet) the mean training time of the done runs
// (summary.json train_seconds; before any is done, the running runs' projected totals),
// spread over `slots` runs at once (local: --jobs;
// 0: the runs running now, at least one, as for a Slurm array); never less than the
// longest running ETA.
SweepProgress sweep_progress(const Spec& spec, const std::vector<Run>& runs, int64_t slots);
// "[3/8 done, 2 running, 0 failed] lstm_small-s2 1200/3000 updates, ... ; sweep ETA 4.5 min"
std::string progress_line(const SweepProgress& p);

}  // namespace seqbench::sweep
