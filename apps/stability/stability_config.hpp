// The config of `seqbench stability` (Miller & Hardt's analyses), read with the same
// machinery as every experiment's (lib/config/: YAML files, --set, --dump-config, unknown
// keys and bad values are one-line usage errors naming the key).
//
//   analysis: truncation | weights
//   lambda: 0.8          # the contraction λ, shared by both analyses (a sweep's λ grid
//                        # covers both with one key)
//   seed: 1
//   threads: 0
//   truncation: {T, hidden, input, k_max, instances, input_scale}   (lib/analysis/truncation.hpp)
//   weights: {T, hidden, input, n, input_scale, alpha, steps, ks, record_every}
//                                                                   (lib/analysis/weight_gap.hpp)
//   output: {dir, run_id, label}
//
// The defaults are the library's (analysis::TruncationGapConfig, analysis::WeightGapConfig), and
// the bounds those of the old command-line options. Presets: configs/stability/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/field.hpp"
#include "train/train_config.hpp"
#include "analysis/truncation.hpp"
#include "analysis/weight_gap.hpp"

namespace seqbench::apps {

// The bounds every λ-contractive analysis shares (as the old --lambda option had them).
inline constexpr double kStabilityLambdaMin = 1e-6, kStabilityLambdaMax = 1.0 - 1e-9;

// analysis::TruncationGapConfig without lambda and seed (those are top-level keys).
struct StabilityTruncationConfig {
  int64_t T = analysis::TruncationGapConfig{}.T;
  int64_t hidden = analysis::TruncationGapConfig{}.hidden;
  int64_t input = analysis::TruncationGapConfig{}.input;
  int64_t k_max = analysis::TruncationGapConfig{}.k_max;
  int64_t instances = analysis::TruncationGapConfig{}.instances;
  double input_scale = analysis::TruncationGapConfig{}.input_scale;

  template <class V>
  void visit(V& v) {
    v("T", T, "sequence length", config::range(2, 100000));
    v("hidden", hidden, "hidden units H", config::range(1, 4096));
    v("input", input, "input size I", config::range(1, 4096));
    v("k_max", k_max, "gaps for k = 1 .. k_max (k_max < T)", config::range(1, 100000));
    v("instances", instances, "random instances averaged", config::range(1, 100000));
    v("input_scale", input_scale,
      "standard deviation of the inputs (small: near-linear, the bound is tight)",
      config::positive());
  }
};

// analysis::WeightGapConfig without lambda and seed.
struct StabilityWeightsConfig {
  int64_t T = analysis::WeightGapConfig{}.T;
  int64_t hidden = analysis::WeightGapConfig{}.hidden;
  int64_t input = analysis::WeightGapConfig{}.input;
  int64_t n = analysis::WeightGapConfig{}.n;
  double input_scale = analysis::WeightGapConfig{}.input_scale;
  double alpha = analysis::WeightGapConfig{}.alpha;
  int64_t steps = analysis::WeightGapConfig{}.steps;
  std::vector<int64_t> ks = analysis::WeightGapConfig{}.ks;
  int64_t record_every = analysis::WeightGapConfig{}.record_every;

  template <class V>
  void visit(V& v) {
    v("T", T, "sequence length", config::range(2, 100000));
    v("hidden", hidden, "hidden units H", config::range(1, 4096));
    v("input", input, "input size I", config::range(1, 4096));
    v("n", n, "sequences in the full-batch data set", config::range(1, 1000000));
    v("input_scale", input_scale, "standard deviation of the inputs", config::non_negative());
    v("alpha", alpha, "step size alpha (step t uses alpha / t)", config::positive());
    v("steps", steps, "gradient steps N", config::range(0, 10000000));
    v("ks", ks, "truncation windows k (k >= T: no truncation, gap 0)", config::range(1, 100000));
    v("record_every", record_every, "steps between rows of weight_gap.csv (and always N)",
      config::range(1, 10000000));
  }
};

struct StabilityConfig {
  std::string analysis = "truncation";
  double lambda = 0.8;
  uint64_t seed = 1;
  int threads = 0;
  StabilityTruncationConfig truncation;
  StabilityWeightsConfig weights;
  train::OutputConfig output;

  template <class V>
  void visit(V& v) {
    v("analysis", analysis,
      "truncation (gradient gap vs k, Lemma 2) | weights (weight gap under training, "
      "Proposition 2)",
      config::one_of({"truncation", "weights"}));
    v("lambda", lambda, "contraction: spectral norm of W_h (and the projection radius)",
      config::range(kStabilityLambdaMin, kStabilityLambdaMax));
    v("seed", seed, "random seed of the instances");
    v("threads", threads, "threads (0 = all cores)", config::non_negative());
    v("truncation", truncation, "analysis: truncation (lib/analysis/truncation.hpp)");
    v("weights", weights, "analysis: weights (lib/analysis/weight_gap.hpp)");
    v("output", output, "where results go");
  }

  analysis::TruncationGapConfig truncation_gap() const {
    analysis::TruncationGapConfig c;
    c.lambda = lambda;
    c.T = truncation.T;
    c.hidden = truncation.hidden;
    c.input = truncation.input;
    c.k_max = truncation.k_max;
    c.instances = truncation.instances;
    c.input_scale = truncation.input_scale;
    c.seed = seed;
    return c;
  }

  analysis::WeightGapConfig weight_gap() const {
    analysis::WeightGapConfig c;
    c.lambda = lambda;
    c.T = weights.T;
    c.hidden = weights.hidden;
    c.input = weights.input;
    c.n = weights.n;
    c.input_scale = weights.input_scale;
    c.alpha = weights.alpha;
    c.steps = weights.steps;
    c.ks = weights.ks;
    c.record_every = weights.record_every;
    c.seed = seed;
    return c;
  }
};

}  // namespace seqbench::apps
