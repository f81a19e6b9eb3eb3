// `seqbench char_ptb --run-id ID --probe-input-grad L`: Miller & Hardt's Figure 2 on a
// trained run, ||dl_{t+i}/dx_t|| against the distance i, written as the run's
// inputgrad.csv in gradnorm.csv's layout (step, t, distance, norm), so that
// `seqbench report gradnorm --input` draws it.
#pragma once

#include <cstdint>

#include "apps/char_ptb/char_ptb_experiment.hpp"
#include "train/checkpoint.hpp"

namespace seqbench::apps {

// Loads the checkpoint `ck` into `exp`, probes `windows` windows of L validation tokens
// per column (loss at the last), writes <run dir>/inputgrad.csv (replacing any old one)
// and prints a table of the norms at a few distances. Returns the exit code.
int write_input_gradients(const CharPtbConfig& cfg, CharPtbExperiment& exp,
                          const train::Checkpoint& ck, int64_t L, int64_t windows);

}  // namespace seqbench::apps
