// How long and how to train, and where results go. Shared by every experiment.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "config/field.hpp"
#include "optim/optim_config.hpp"

namespace seqbench::train {

struct TrainConfig {
  uint64_t seed = 1;              // data, initialisation and probes derive from it
  int threads = 0;                // 0 = OpenMP default (all cores)
  std::string gemm = "auto";      // float GEMM: auto | onednn | openblas | xsmm (backend/gemm.hpp)
  int64_t batch = 10;             // B
  int64_t steps = 1000;           // optimizer updates
  int64_t bptt = 0;               // truncated BPTT window k (0 = full BPTT)
  int64_t log_every = 50;         // updates per training row in metrics.csv (and log line)
  int64_t eval_every = 500;       // updates between validations (0 = only at the end)
  int64_t eval_batches = 10;      // validation batches (a fixed set, the same every time)
  std::optional<double> target;   // stop once the validation metric reaches this
  int64_t patience = 0;           // stop after this many validations without improvement (0 = off)
  int64_t gradnorm_every = 0;     // updates between gradient-norm probes (0 = off)
  int64_t checkpoint_every = 0;   // updates between checkpoints (0 = at the end and on Ctrl-C only)
  int64_t nan_check = 1;          // updates between scans of the parameters for NaN/inf (0 = off)

  template <class V>
  void visit(V& v) {
    v("seed", seed, "random seed");
    v("threads", threads, "threads (0 = all cores)", config::non_negative());
    v("gemm", gemm, "float GEMM: auto (libxsmm for small products, else onednn) | onednn | "
      "openblas | xsmm", config::one_of({"auto", "onednn", "openblas", "xsmm"}));
    v("batch", batch, "batch size B", config::range(1, 1'000'000));
    v("steps", steps, "optimizer updates", config::at_least(1));
    v("bptt", bptt, "truncated BPTT window k (0 = full BPTT)", config::non_negative());
    v("log_every", log_every, "updates per metrics.csv training row", config::at_least(1));
    v("eval_every", eval_every, "updates between validations (0 = at the end only)",
      config::non_negative());
    v("eval_batches", eval_batches, "validation batches", config::range(1, 1'000'000));
    v("target", target, "stop when the validation metric reaches this (null = never)");
    v("patience", patience, "validations without improvement before stopping (0 = off)",
      config::non_negative());
    v("gradnorm_every", gradnorm_every, "updates between gradient-norm probes (0 = off)",
      config::non_negative());
    v("checkpoint_every", checkpoint_every, "updates between checkpoints (0 = end/Ctrl-C only)",
      config::non_negative());
    v("nan_check", nan_check,
      "updates between scans of every parameter for NaN/inf (0 = off; loss and gradients are "
      "checked every update)",
      config::non_negative());
  }
};

struct OutputConfig {
  std::string dir = "results";  // results root: runs go to <dir>/<experiment>/<run_id>/
  std::string run_id;           // empty = <label>-<date>-<time>-s<seed>
  std::string label;            // the run's name in runs.csv and tables (empty = model name)

  template <class V>
  void visit(V& v) {
    v("dir", dir, "results root directory");
    v("run_id", run_id, "run directory name (empty = generated)");
    v("label", label, "run label in runs.csv (empty = the model's name)");
  }
};

// The sections every training experiment's config ends with, in this order: optim, train,
// output. An experiment's config derives from it, declares its own sections (data, task,
// model, ...) and ends its visit with visit_training, so that the keys keep this order.
struct TrainingSections {
  optim::OptimConfig optim;
  TrainConfig train;
  OutputConfig output;

  // train_help says what one update is; optim_help replaces the usual line where the
  // experiment uses the optimizer differently.
  template <class V>
  void visit_training(V& v, const char* train_help,
                      const char* optim_help = "optimizer, clipping, schedule") {
    v("optim", optim, optim_help);
    v("train", train, train_help);
    v("output", output, "where results go");
  }
};

}  // namespace seqbench::train
