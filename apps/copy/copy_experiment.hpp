// The copy experiment: copy and adding tasks (lib/data/synthetic.hpp) on a recurrent
// model with a per-step linear head (lib/nn/seq_model.hpp).
//   copy:   cross-entropy at every step; metric "acc" = accuracy on the last copy_len steps
//   adding: MSE of the last step's output against the sum; metric "mse"
// The gradient probe uses a fixed batch and the loss on the scored steps only (the last
// copy_len outputs for copy, the last output for adding).
#pragma once

#include <memory>

#include "data/synthetic.hpp"
#include "nn/model_config.hpp"
#include "nn/seq_model.hpp"
#include "optim/optim_config.hpp"
#include "train/efficiency.hpp"
#include "train/experiment.hpp"
#include "train/memory_estimate.hpp"
#include "train/train_config.hpp"

namespace seqbench::apps {

struct CopyConfig : train::TrainingSections {
  data::TaskConfig task;
  nn::ModelConfig model;

  template <class V>
  void visit(V& v) {
    v("task", task, "the task and its sizes");
    v("model", model, "the recurrent model");
    visit_training(v, "training loop");
  }
};

// Paper settings (Kerg et al. 2020, copy): T=100, H=128, B=10, RMSprop lr 1e-3
// (alpha 0.99), clip 1.0, fresh data every update, 200k updates.
CopyConfig copy_paper_defaults();
// The embedded default of `seqbench copy --demo` / `make demo`: configs/copy/lstm_small.yaml,
// embedded at build time.
extern const char* const kCopyDemoYaml;

// The memory a run of cfg needs (lib/train/memory_estimate.hpp): the model's parts, the
// hidden states and outputs of a batch (L, B, H) and (L, B, O), and two batches at once
// (the training batch and a validation or probe batch: one-hot inputs, labels, mask).
train::MemoryEstimate copy_memory(const CopyConfig& cfg);

class CopyExperiment : public train::Experiment {
 public:
  explicit CopyExperiment(const CopyConfig& cfg);

  // Fresh initial parameters from the seed (skipped when resuming from a checkpoint).
  void init();

  core::ParamStore& params() override { return ps_; }
  train::Metrics train_step() override;
  train::Metrics evaluate() override;
  // The task's metric, from its registry entry (data/tasks.hpp).
  std::string metric() const override { return data::metric_name(task_.entry().metric); }
  bool higher_is_better() const override { return data::higher_is_better(task_.entry().metric); }
  std::vector<double> gradnorm_probe() override;
  size_t held_bytes() override { return model_->recurrent().held_bytes(); }
  // One layer over the task's L steps of train.batch one-hot inputs.
  double lstm_equivalent_flop() const override {
    return train::lstm_equivalent_flop(cfg_.model.cell, cfg_.train.batch, task_.length(),
                                       task_.input_size(), cfg_.model.hidden);
  }
  void after_update() override { model_->after_update(); }
  void save_state(train::Checkpoint& ck) const override;
  void load_state(const train::Checkpoint& ck) override;

  const data::SyntheticTask& task() const { return task_; }
  // Evaluates on batches of another length (transfer): same model, task.T replaced.
  train::Metrics evaluate_at(int64_t T);

 private:
  // Forward + loss (+ backward when train) on one batch; fills loss/metric.
  train::Metrics run_batch(const data::SyntheticTask& task, const data::SeqBatch& batch,
                           bool backward, bool scored_only, std::vector<double>* dh_norms);
  train::Metrics eval_on(const data::SyntheticTask& task);

  CopyConfig cfg_;
  data::SyntheticTask task_;
  core::ParamStore ps_;
  std::unique_ptr<nn::SeqModel> model_;
  core::Rng data_rng_;
  data::SeqBatch batch_;
  core::Tensor out_, dout_;
  std::vector<float> scored_mask_;
};

// `seqbench copy ...` and the seqbench_copy binary.
int copy_main(int argc, char** argv);

}  // namespace seqbench::apps
