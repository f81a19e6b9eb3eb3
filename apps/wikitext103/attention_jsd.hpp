// `seqbench report attention jsd RUN_DIR`: Jensen–Shannon divergence between the attention
// distributions of a trained mixed model's heads (issue 6, analysis 3; Roy et al. 2021
// report that local and routing heads attend to different things, JSD near ln 2).
//
// For a wikitext103 or imagenet64 run with local and routing head groups
// (configs/<experiment>/routing_small.yaml), validation batches (wikitext103: segments of
// the stream; imagenet64: data.eval_batch images) go through the model in eval mode.
// For every layer, head h and query t, we then read back the attention
// distribution p_h(. | t) over the keys <= t, exactly, from the core itself with the
// segment's structure held (attention_matrix.hpp), including routing's averaging over
// clusters. Then, in nats,
//   JSD(p, q) = H((p + q) / 2) - (H(p) + H(q)) / 2,   0 <= JSD <= ln 2
// is averaged over queries (every column, every position) and over the head pairs of
// each type: local-local, routing-routing (the references) and local-routing.
// As a check, Σ_j p_h(j | t) v_j must reproduce the core's output o (else core::Error).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/common/transformer_lm_experiment.hpp"

namespace seqbench::apps {

// JSD in nats of two distributions over n outcomes (each summing to 1).
double jensen_shannon(const double* p, const double* q, int64_t n);

struct JsdCommandOptions {
  std::string run_dir;   // results/<wikitext103|imagenet64>/<run-id>: config.yaml, checkpoint.sbck
  std::string out_dir;   // default: <run_dir>/attention_jsd
  int64_t segments = 4;  // validation segments / batches used (at most the run's)
};

// Loads the run with `load` (the front door's, which knows both experiments), measures the
// mean JSD per layer and pair type and writes attention_jsd.{csv,md} into out_dir; prints
// the table. Throws core::UsageError for a missing run or a model without two head kinds
// in some layer.
int attention_jsd_command(const JsdCommandOptions& opts, const LmRunLoader& load);

}  // namespace seqbench::apps
