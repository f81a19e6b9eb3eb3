// The copy experiment's analyses beside training (`seqbench copy`, docs/experiments/copy.md):
//   --probe-memory T...  memory against T: one training step of the configured model at
//                        each T, appended to <output.dir>/copy/memory.csv (Kerg et al.'s
//                        memory figure)
//   --eval-T T...        transfer: a trained run's checkpoint evaluated on sequences of
//                        other lengths, appended to the run's transfer.csv
// Each prints a Markdown table of what it wrote.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/copy/copy_experiment.hpp"
#include "train/checkpoint.hpp"
#include "train/memory_estimate.hpp"

namespace seqbench::apps {

// One training step of a fresh model of `cfg` at each T, in increasing T in one process,
// so the peak RSS of each row is the high-water mark up to and including that T. `label`
// is the run label (the memory.csv column). A T whose memory estimate is above `limit` is
// refused (core::UsageError) before any step runs or any file is written. Returns the exit
// code.
int copy_memory_probe(const CopyConfig& cfg, std::vector<int64_t> Ts, const std::string& label,
                      const train::MemoryLimit& limit);

// The checkpoint `ck` of the run cfg.output.run_id loaded into `exp` and evaluated at each
// T of `eval_Ts` (cfg.train.eval_batches batches each). Returns the exit code.
int copy_transfer(const CopyConfig& cfg, CopyExperiment& exp, const train::Checkpoint& ck,
                  const std::vector<int64_t>& eval_Ts);

}  // namespace seqbench::apps
