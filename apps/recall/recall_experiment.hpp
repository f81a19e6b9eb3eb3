// The associative-recall experiment: multi-query associative recall (MQAR, Arora et al. 2023),
// selective copying and induction heads (Gu & Dao 2023) (lib/data/recall.hpp), on either
//   family: transformer  Zoology's stack: token embedding, `model.layers` pre-LN blocks whose
//                        token mixer is attention (full, local, routing, smyrf, ...) or a
//                        sequence mixer (linear_attention, retention, gla, lru, mamba,
//                        deltanet, mlstm, slstm), and a tied output (nn::TransformerLM; section `model`)
//   family: recurrent    token embedding (`embedding`), one recurrent cell (section `rnn`:
//                        lstm, rel_lstm, mem_rnn, sab, ... or a mixer as a cell) and a head.
// Loss: cross-entropy on the scored positions only (the queries); metric "acc" = accuracy
// there. The MAD recall tasks train on every next token (data::Split::kTrain) and are
// evaluated on the recalled values. With task.train_examples > 0 the training batches are
// drawn (uniformly, with replacement) from a fixed set of that many sequences, made once
// from train.seed; else every update draws fresh ones. `state_bytes` in runs.csv is the memory the model carries from one token to the
// next at the task's length (recall_state_bytes), the x axis of Zoology's figure.
// docs/experiments/recall.md.
#pragma once

#include <memory>
#include <vector>

#include "data/recall.hpp"
#include "nn/attention/transformer.hpp"
#include "nn/embedding.hpp"
#include "nn/linear.hpp"
#include "nn/model_config.hpp"
#include "nn/sequence_layer.hpp"
#include "optim/optim_config.hpp"
#include "train/efficiency.hpp"
#include "train/experiment.hpp"
#include "train/memory_estimate.hpp"
#include "train/train_config.hpp"

namespace seqbench::apps {

struct RecallConfig : train::TrainingSections {
  data::RecallTaskConfig task;
  std::string family = "transformer";  // transformer | recurrent
  int64_t width = 0;                   // > 0: model.d_model, or rnn.hidden and embedding
  nn::TransformerConfig model;         // family transformer
  int64_t embedding = 64;              // family recurrent: token embedding width
  nn::ModelConfig rnn;                 // family recurrent
  // Length extrapolation as part of the run: after training, evaluate at these multiples
  // of task.seq_len (transfer.csv in the run directory, as --eval-T writes it).
  std::vector<int64_t> extrapolate;

  RecallConfig();

  template <class V>
  void visit(V& v) {
    v("task", task, "the recall task and its sizes");
    v("family", family,
      "transformer: Zoology's stack with attention or a mixer (section model); recurrent: "
      "embedding, one recurrent cell, head (sections embedding, rnn)",
      config::one_of({"transformer", "recurrent"}));
    v("width", width,
      "the model's width for either family (sweeps): model.d_model, or rnn.hidden and "
      "embedding; 0 = as those keys say",
      config::range(0, 65536));
    v("model", model, "family transformer: the stack (model.attention: a kind or a mixer)");
    v("embedding", embedding, "family recurrent: token embedding width",
      config::range(1, 65536));
    v("rnn", rnn, "family recurrent: the recurrent cell");
    v("extrapolate", extrapolate,
      "length extrapolation: after training, evaluate at these multiples of task.seq_len "
      "(e.g. [2, 4, 8, 16]) and write transfer.csv in the run directory; a transformer needs "
      "model.positions none or sinusoidal",
      config::range(2, 1024));
    visit_training(v, "training loop (fresh examples every step)");
  }
};

extern const char* const kRecallDemoYaml;

// Cross-field rules: the task's (data::check_rules), the model's, and a section of the
// family not in use must be left at its defaults.
void check_rules(const RecallConfig& cfg);
// cfg with `width` applied to its family's keys (the config the run uses and records).
RecallConfig resolved(RecallConfig cfg);
// The model's name for tables and figures: model.attention or rnn.cell (with ν+ρ for the
// relevancy cells).
std::string recall_model_name(const RecallConfig& cfg);
// Bytes of state the model carries from one token to the next over a sequence of n tokens
// (float32), summed over layers: a mixer's or cell's recurrent state (with the attended
// memory of mem_rnn, rel_rnn/rel_lstm and sab), or attention's key-value cache (2 n d_model
// per layer; local attention keeps at most 2 window tokens).
double recall_state_bytes(const RecallConfig& cfg, int64_t n);
train::MemoryEstimate recall_memory(const RecallConfig& cfg);

class RecallExperiment : public train::Experiment {
 public:
  explicit RecallExperiment(const RecallConfig& cfg);
  void init();

  core::ParamStore& params() override { return ps_; }
  train::Metrics train_step() override;
  train::Metrics evaluate() override;
  // The task's metric, from its registry entry (data/tasks.hpp).
  std::string metric() const override { return data::metric_name(task_.entry().metric); }
  bool higher_is_better() const override { return data::higher_is_better(task_.entry().metric); }
  std::vector<double> gradnorm_probe() override;
  size_t held_bytes() override;
  // The recurrent model: one layer over the task's N tokens of train.batch embeddings; the
  // Transformer: not defined (0).
  double lstm_equivalent_flop() const override {
    return rnn_ ? train::lstm_equivalent_flop(cfg_.rnn.cell, cfg_.train.batch, task_.length(),
                                              cfg_.embedding, cfg_.rnn.hidden)
                : 0.0;
  }
  void after_update() override {
    if (rnn_) rnn_->after_update();
  }
  void save_state(train::Checkpoint& ck) const override;
  void load_state(const train::Checkpoint& ck) override;

  // Accuracy and loss on sequences of another length (length extrapolation, --eval-T).
  train::Metrics evaluate_at(int64_t n);
  const data::RecallTask& task() const { return task_; }
  // The batch of the last train_step().
  const data::RecallBatch& last_batch() const { return batch_; }

 private:
  // Forward (+ backward) on one batch: loss and accuracy on the scored positions.
  train::Metrics run_batch(const data::RecallBatch& batch, bool backward,
                           std::vector<double>* norms);
  train::Metrics eval_on(const data::RecallTask& task);

  RecallConfig cfg_;
  data::RecallTask task_;
  core::ParamStore ps_;
  core::Rng data_rng_;
  std::unique_ptr<nn::TransformerLM> lm_;           // family transformer
  std::unique_ptr<nn::Embedding> emb_;              // family recurrent
  std::unique_ptr<nn::SequenceLayer<float>> rnn_;
  std::unique_ptr<nn::Linear> head_;
  data::RecallBatch batch_;
  data::RecallBatch pool_;  // task.train_examples > 0: the fixed training set
  core::Tensor logits_, dlogits_, x_, h_, dh_, dx_;
  std::vector<int32_t> ids_tm_, targets_tm_;  // time-major copies (family recurrent)
  std::vector<float> mask_tm_;
};

int recall_main(int argc, char** argv);

}  // namespace seqbench::apps
