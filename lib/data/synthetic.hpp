// Synthetic long-memory tasks (no data files) of the copy experiment: copy, denoise and
// adding, each an entry of the task registry (tasks.hpp).
//
// copy (Kerg et al. 2020, after Hochreiter & Schmidhuber 1997; Arjovsky et al. 2016):
//   L = T + 2K steps with K = copy_len symbols drawn uniformly from {1..n}:
//   input   s_1 .. s_K, then T-1 blanks (0), the delimiter n+1, then K blanks;
//   target  T+K blanks (0), then s_1 .. s_K.
//   Inputs are one-hot over n+2 values, outputs are n+1 classes; the loss is cross-
//   entropy at every step; accuracy is measured on the last K steps. A memoryless
//   model that predicts blanks then uniform symbols reaches loss K ln(n) / L.
// denoise (Kerg et al. 2020, after Jing et al. 2019):
//   L = T + 2K steps: K symbols from {1..n} at K distinct random positions (in time
//   order) among the first T+K-1 steps, blanks elsewhere; the marker n+2 at step
//   T+K-1; then K blanks. Target: blanks, then the K symbols in order in the last K
//   steps. Inputs are one-hot over n+3 values (the official code's marker is 10 for
//   n = 8, so the value n+1 never occurs); loss and metric as for copy.
// adding (Hochreiter & Schmidhuber 1997; Arjovsky et al. 2016):
//   L = T steps, two input channels: a value ~ U(0, 1) and a marker that is 1 at one
//   step chosen uniformly in [0, T/2) and one in [T/2, T), else 0. The target is the
//   sum of the two marked values, read from the output at the last step (MSE).
//   Predicting 1 always gives MSE 1/6 ≈ 0.167, the baseline to beat.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/field.hpp"
#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "data/tasks.hpp"

namespace seqbench::data {

struct TaskConfig {
  std::string name = "copy";  // copy | denoise | adding
  int64_t T = 100;            // copy: delay (sequence length T + 2 copy_len); adding: length
  int64_t n_symbols = 8;      // copy: symbols are 1..n_symbols
  int64_t copy_len = 10;      // copy, denoise: how many symbols to remember

  template <class V>
  void visit(V& v) {
    v("name", name, task_name_doc(TaskFamily::kCopy),
      config::one_of(task_names(TaskFamily::kCopy)));
    v("T", T, "copy: delay between the symbols and the delimiter; adding: sequence length",
      config::range(2, 10'000'000));
    v("n_symbols", n_symbols, "copy: alphabet size (symbols 1..n)", config::range(1, 65536));
    v("copy_len", copy_len, "copy, denoise: number of symbols to remember",
      config::range(1, 10'000'000));
  }
};

// One batch, time-major. Classification tasks fill labels/mask (L*B, row t*B + b);
// regression tasks fill target (B, D) and are read at the last step.
struct SeqBatch {
  int64_t L = 0, B = 0;
  core::Tensor x;                // (L, B, I)
  std::vector<int32_t> labels;   // (L*B)
  std::vector<float> mask;       // (L*B) loss weight per step
  core::Tensor target;           // (B, D)
};

class SyntheticTask {
 public:
  // Throws core::UsageError naming the copy experiment's tasks when cfg.name is not one.
  explicit SyntheticTask(const TaskConfig& cfg);

  const TaskEntry& entry() const { return *entry_; }
  // Classes at every step, scored by accuracy (copy, denoise), or one regression target
  // read at the last step, scored by squared error (adding).
  bool classification() const { return entry_->metric == TaskMetric::kAccuracy; }
  int64_t length() const;        // L
  int64_t input_size() const;    // I
  int64_t output_size() const;   // classes (copy) or D = 1 (adding)
  // Steps at the end of the sequence that the accuracy and the gradient probe look at.
  int64_t scored_steps() const { return classification() ? cfg_.copy_len : 1; }
  // Loss of the best memoryless predictor (copy: cross-entropy; adding: MSE).
  double baseline_loss() const;
  const TaskConfig& config() const { return cfg_; }

  // Fills batch with B fresh examples drawn from rng (buffers reused when shapes match).
  void generate(core::Rng& rng, int64_t B, SeqBatch& batch) const;

 private:
  TaskConfig cfg_;
  const TaskEntry* entry_;
  mutable std::vector<int64_t> positions_;  // denoise: scratch for drawing positions
};


}  // namespace seqbench::data
