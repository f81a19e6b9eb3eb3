// `seqbench report minigrid`: one row per run of results/minigrid/runs.csv, read with the
// run's ppo.csv: environment, core, seed, frames run, frames at which the mean return
// of the last episodes first reached the target (train.target, 0.9 by default),
// final and best mean return, the paper's number for that core and environment with its
// source (Kerg et al., configs/papers/kerg2020/numbers.yaml; "—" where none is recorded),
// status.
#pragma once

#include <string>

#include "report/csv.hpp"

namespace seqbench::apps {

// runs: results/minigrid/runs.csv as read; each run's ppo.csv is looked up beside it
// (<dir of runs.csv>/<run_id>/ppo.csv). A run whose ppo.csv is missing gets "-" cells.
// Throws core::Error naming the file for a missing column or a cell that is not a number.
report::CsvTable minigrid_table(const report::CsvTable& runs, double target = 0.9);

}  // namespace seqbench::apps
