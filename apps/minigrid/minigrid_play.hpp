// `seqbench minigrid --play ENV [--actions LIST] [--png DIR]`: one environment stepped by
// hand, with its text render after every step; no training.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rl/minigrid/envs.hpp"

namespace seqbench::apps {

// "forward, left,pickup" -> actions; names as rl::parse_action, plus the one-letter keys
// l r f p d t. Throws core::UsageError naming the --actions item that is empty or unknown.
std::vector<rl::Action> parse_actions(const std::string& list);

// Steps environment `name` (seed `seed`): the scripted `actions` (until the first finished
// episode), or else actions read from stdin ("q" or end of input ends it, "reset" starts
// over). Writes every state as png_dir/step_NNN.png when png_dir is not empty. Returns
// the exit code.
int play(const std::string& name, const std::string& actions, uint64_t seed,
         const std::string& png_dir);

}  // namespace seqbench::apps
