// `seqbench report attention swap RUN_DIR`: a trained Transformer LM evaluated on its
// validation data with other attention kinds in place of its full heads, no retraining
// (SMYRF's drop-in claim: docs/experiments/wikitext103.md, "Attention analyses").
#pragma once

#include <string>
#include <vector>

#include "apps/common/transformer_lm_experiment.hpp"

namespace seqbench::apps {

struct SwapCommandOptions {
  std::string run_dir;  // results/<wikitext103|imagenet64>/<run-id>: config.yaml, checkpoint.sbck
  std::string out_dir;  // default: <run_dir>/attention_swap
  std::vector<std::string> kinds{"smyrf", "lsh", "local"};  // each stands in for every full head
};

// "full:2,local:2" with full -> smyrf: "smyrf:2,local:2". Throws core::UsageError when the
// spec has no full heads.
std::string swap_full_heads(const std::string& attention, const std::string& kind);

int attention_swap_command(const SwapCommandOptions& opts, const LmRunLoader& load);

}  // namespace seqbench::apps
