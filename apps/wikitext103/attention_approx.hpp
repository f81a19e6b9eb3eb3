// `seqbench report attention approx RUN_DIR`: how well each sparse attention kind
// approximates full attention on the attention inputs of a trained model (issue 6,
// analysis 1; the comparison at equal memory that SMYRF's reviewers asked for).
//
// For a wikitext103 or imagenet64 run trained with full heads
// (configs/<experiment>/full_small.yaml), validation batches (wikitext103: segments of the
// stream; imagenet64: data.eval_batch images) go through the model in eval mode. After
// each batch, every
// layer's full head group yields its core inputs q, k, v and output o_full,
// (B, H_g, N, Dh) each. Each sparse kind then attends over the same q, k, v, causally
// and at window w, and its error is accumulated:
//   rel_error(layer, kind, w) = sqrt(Σ ||o_kind - o_full||²) / sqrt(Σ ||o_full||²)
// with the sums over segments, batch columns, heads and tokens. The "all" layer pools
// every layer's sums.
// Budget: each query sees at most 2w keys in every kind (local: own and previous block of
// w; routing, smyrf, lsh: own and previous chunk of w in its cluster or bucket; random:
// clusters of 2w). Routing and lsh get k = nb = N / (2w) clusters or buckets (at least 1;
// lsh rounded down to even), so a cluster holds about 2w tokens, the size of a local
// query's window. SMYRF derives ⌈N/w⌉ buckets itself. There is one hash round.
// Routing's centroids are fitted to each segment's own q and k by `kmeans_iters` steps
// of spherical k-means (update_centroids with ema_decay 0, i.e. Lloyd steps). This is
// optimistic: a trained routing model's online EMA centroids only approach this.
// mean_keys: how many keys a query actually attends to (P > 0), mean over queries, read
// back from the core's attention matrix (attention_matrix.hpp): the budget as spent.
// docs/experiments/wikitext103.md ("Attention analyses") has the measured table.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "apps/common/transformer_lm_experiment.hpp"
#include "core/tensor.hpp"
#include "nn/attention/attention.hpp"

namespace seqbench::apps {

struct ApproxOptions {
  std::vector<std::string> kinds{"local", "routing", "random", "smyrf", "lsh"};
  std::vector<int64_t> windows{8, 16, 32, 64};  // w; each query sees at most 2w keys
  int kmeans_iters = 10;                        // routing: Lloyd steps per segment
  uint64_t seed = 1;                            // random projections and assignments
};

// The core's config for `kind` at window w on sequences of n tokens (the budget rule
// above). Throws core::UsageError for an unknown kind.
nn::AttentionConfig approx_config(const std::string& kind, int64_t w, int64_t n,
                                  const ApproxOptions& opts);

// Sums of squared errors and of squared reference norms, per (layer, kind, window).
class ApproxAccumulator {
 public:
  explicit ApproxAccumulator(ApproxOptions opts) : opts_(std::move(opts)) {}

  // One layer's full-attention inputs and output of one segment: q, k, v, o_full
  // (B, H, N, D) each, and the relative-position bias (H, nb) o_full was computed with, if
  // any. Runs every kind at every window on them, with that bias, and adds to the sums.
  void add(int64_t layer, core::ConstView q, core::ConstView k, core::ConstView v,
           core::ConstView o_full, core::ConstView bias = {});

  struct Row {
    std::string layer;  // "0", "1", ... or "all"
    std::string kind;
    int64_t window = 0;
    double rel_error = 0;
    double mean_keys = 0;  // keys with nonzero weight per query
  };
  // Per layer, then "all", in the order of opts.kinds and opts.windows.
  std::vector<Row> rows() const;
  const ApproxOptions& options() const { return opts_; }

 private:
  struct Sums {
    double err2 = 0, ref2 = 0, keys = 0, queries = 0;
  };
  ApproxOptions opts_;
  std::map<std::tuple<int64_t, std::string, int64_t>, Sums> sums_;
  int64_t layers_ = 0;
};

// attention_approx.csv: layer,kind,window,max_keys,mean_keys,rel_error.
std::string approx_csv(const std::vector<ApproxAccumulator::Row>& rows);
// Markdown tables of the "all" rows, one row per kind and one column per window: the
// relative errors, then the mean keys per query.
std::string approx_markdown(const std::vector<ApproxAccumulator::Row>& rows,
                            const ApproxOptions& opts);

struct ApproxCommandOptions {
  std::string run_dir;   // results/<wikitext103|imagenet64>/<run-id>: config.yaml, checkpoint.sbck
  std::string out_dir;   // default: <run_dir>/attention_approx
  int64_t segments = 8;  // validation segments / batches used (at most the run's)
  ApproxOptions approx;
};

// Loads the run with `load` (the front door's, which knows both experiments), feeds the
// validation batches through it and writes attention_approx.{csv,md,dat,gp} and .png
// (when gnuplot is there) into out_dir; prints the table and the files. Throws
// core::UsageError for a missing run or a model without full heads.
int attention_approx_command(const ApproxCommandOptions& opts, const LmRunLoader& load);

}  // namespace seqbench::apps
