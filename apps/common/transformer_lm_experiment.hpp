// The part the two Transformer-LM experiments (wikitext103, imagenet64) share: a
// decoder-only nn::TransformerLM trained on next-token cross-entropy, its evaluation and
// gradient probe, the test score at the best validation, its checkpoint state, and the
// runs.csv identity columns. Each app keeps its data and how batches are cut from it.
//
// Randomness: random / SMYRF / LSH heads draw fresh projections per forward. An
// evaluation pass always starts from the same draw index (kEvalDraws), so every
// validation of the same parameters gives the same number, and it leaves the training
// draws, the dropout stream and the routing centroids untouched.
//
// The reported number is the test metric at the best validation, measured when that
// validation happened.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/threads.hpp"
#include "nn/attention/transformer.hpp"
#include "optim/optim_config.hpp"
#include "train/experiment.hpp"
#include "train/run_record.hpp"
#include "train/train_config.hpp"

namespace seqbench::apps {

// The metric from the mean next-token cross-entropy in nats.
enum class LmMetric {
  kPerplexity,  // ppl = exp(loss)
  kBitsPerDim,  // bpd = loss / ln 2
};

class TransformerLmExperiment : public train::Experiment {
 public:
  void init();

  core::ParamStore& params() override { return ps_; }
  train::Metrics train_step() override;
  // Validation loss and metric; when the validation is the best so far also test_loss
  // and test_<metric>.
  train::Metrics evaluate() override;
  std::string metric() const override;
  bool higher_is_better() const override { return false; }
  // ||dL/dx_t|| (x: the input of the first block, embeddings + positions) on the first
  // validation batch, L = the loss at the last position of every row; eval mode, state
  // untouched.
  std::vector<double> gradnorm_probe() override;
  size_t held_bytes() override;
  void save_state(train::Checkpoint& ck) const override;
  void load_state(const train::Checkpoint& ck) override;

  struct Outcome {
    bool has_best = false;
    double best_valid = 0;  // the metric at the best validation
    int64_t best_update = 0;
    double test = 0;  // the test metric at the best validation
  };
  const Outcome& outcome() const { return outcome_; }
  const nn::TransformerLM& model() const { return *model_; }
  nn::TransformerLM& model() { return *model_; }
  int64_t vocab() const { return vocab_; }
  int64_t context() const { return context_; }  // the model's longest sequence (T)
  int64_t updates_per_epoch() const { return updates_per_epoch_; }
  double epochs_done() const { return double(cursor_) / double(updates_per_epoch_); }
  // The data files the app read (set by the app when it loads them).
  const data::DataDigest& data_digest() const { return data_digest_; }

  // For analyses that read the model's activations after a forward (seqbench report
  // attention): the validation batches (wikitext103: segments of the validation stream;
  // imagenet64: data.eval_batch images each), and an eval-mode forward of batch i (at
  // kEvalDraws, leaving the training draws untouched). Returns the batch's rows and
  // sequence length.
  struct Rows {
    int64_t b = 0, L = 0;
  };
  int64_t valid_batches() const { return eval_batches(Split::kValid); }
  Rows forward_valid(int64_t i);

  // Every evaluation pass starts its random draws here (far from any training count).
  static constexpr uint64_t kEvalDraws = uint64_t(1) << 48;

 protected:
  // Checks the config before the app loads its data: train.bptt must be 0
  // (bptt_hint says why) and the model config valid. app names the checkpoint entries
  // (<app>.cursor, <app>.best_valid_<metric>, <app>.model.*).
  TransformerLmExperiment(std::string app, LmMetric metric,
                          const nn::TransformerConfig& model_cfg,
                          const optim::OptimConfig& optim_cfg,
                          const train::TrainConfig& train_cfg, const char* bptt_hint);
  // Builds the model and the parameter store once the app knows its data.
  void build_model(int64_t vocab, int64_t context, int64_t updates_per_epoch);

  struct Batch {
    int64_t b = 0, L = 0;  // rows and positions in ids_ and targets_
  };
  enum class Split { kValid, kTest };
  // The batch of training update `update` (0, 1, ... over all epochs) into ids_, targets_.
  virtual Batch load_train_batch(int64_t update) = 0;
  // An evaluation scores every batch of a split once; the gradient probe takes
  // validation batch 0.
  virtual int64_t eval_batches(Split s) const = 0;
  virtual Batch load_eval_batch(Split s, int64_t i) = 0;

  // Sets the model's draw index to kEvalDraws and restores it when done.
  class EvalDraws {
   public:
    explicit EvalDraws(nn::TransformerLM& m);
    ~EvalDraws();
    EvalDraws(const EvalDraws&) = delete;
    EvalDraws& operator=(const EvalDraws&) = delete;

   private:
    nn::TransformerLM& m_;
    uint64_t saved_;
  };
  // Forward of ids_ (x.b, x.L) into logits_ (sized here, and dlogits_ with it when
  // with_grad).
  void forward(Batch x, bool training, bool with_grad = false);

  std::vector<int32_t> ids_, targets_;  // (b, L) row-major
  data::DataDigest data_digest_;

 private:
  double eval_loss(Split s);  // mean loss (nats) per token
  double from_nats(double loss) const;

  std::string app_;
  LmMetric metric_;
  nn::TransformerConfig model_cfg_;
  optim::OptimConfig optim_cfg_;
  uint64_t seed_;
  int64_t vocab_ = 0, context_ = 0, updates_per_epoch_ = 1;

  core::ParamStore ps_;
  std::unique_ptr<nn::TransformerLM> model_;
  int64_t cursor_ = 0;  // training updates done
  Outcome outcome_;

  std::vector<float> mask_;        // (b L)
  core::Tensor logits_, dlogits_;  // (b L, vocab)
};

// A finished Transformer-LM run read back for an analysis (seqbench report attention):
// the experiment with the parameters and state of the run's checkpoint, and what the
// analyses print about it.
struct TrainedLmRun {
  std::string experiment;  // wikitext103 | imagenet64
  std::unique_ptr<TransformerLmExperiment> exp;
  std::string attention;  // the config's model.attention
  std::string data;       // the data label, e.g. "brown (stand-in)"
  // What a validation batch is: "segment" / "segments" and "of 256 tokens" (wikitext103),
  // "batch" / "batches" and "of 8 images of 784 subpixels" (imagenet64).
  std::string batch, batches, batch_shape;

  // "2 validation segments of 256 tokens"
  std::string describe(int64_t n) const {
    return fmt::format("{} validation {} {}", n, n == 1 ? batch : batches, batch_shape);
  }
};

// Reads the run in run_dir for `command` (named in error messages); throws
// core::UsageError for a missing run or one the analyses cannot read.
// `attention`, when not empty, replaces the run's model.attention before the model is built
// (a model evaluated with other heads than it was trained with: `report attention swap`).
using LmRunLoader = std::function<TrainedLmRun(const std::string& run_dir, const std::string& command,
                                               const std::string& attention)>;

// The attention heads, canonical: "local:2,routing:2".
std::string lm_attention(const nn::TransformerConfig& m);
// Run ids after the head groups, shell-friendly: "local:2,routing:2" -> "local2-routing2".
std::string lm_run_label(const nn::TransformerConfig& m);

// The runs.csv identity columns of a Transformer-LM run, the app's own ones in their
// places: after_data after the data column, after_vocab after the vocabulary. `label` is
// the run's label (train::app_label).
template <class Cfg>
train::RunIdentity lm_run_identity(const Cfg& c, TransformerLmExperiment& e,
                                   const std::string& label, const std::string& task,
                                   train::RunIdentity after_data,
                                   train::RunIdentity after_vocab) {
  const std::string attention = lm_attention(c.model);
  const auto& o = e.outcome();
  const auto num = [](double v) { return fmt::format("{:.6g}", v); };
  train::RunIdentity id{
      {"label", label},
      {"task", task},
      {"T", std::to_string(e.context())},
      {"model", "transformer"},
      {"backend", "ours"},
      {"hidden", std::to_string(c.model.d_model)},
  };
  train::append(id, train::setup_columns(e.params().size(), c.train, c.optim));
  train::append(id, train::data_columns(c.data.name, c.data.stand_in, e.data_digest()));
  train::append(id, after_data);
  const train::RunIdentity arch{
      {"attention", attention},
      {"layers_attention", e.model().describe()},
      {"layers", std::to_string(c.model.layers)},
      {"heads", std::to_string(c.model.heads)},
      {"window", std::to_string(c.model.window)},
      {"clusters", std::to_string(c.model.clusters)},
      {"rounds", std::to_string(c.model.rounds)},
      {"routing_layers", std::to_string(c.model.routing_layers)},
      {"vocab", std::to_string(e.vocab())},
  };
  train::append(id, arch);
  train::append(id, after_vocab);
  const train::RunIdentity tail{
      {"updates_per_epoch", std::to_string(e.updates_per_epoch())},
      {"epochs", num(e.epochs_done())},
      {"best_epoch",
       o.has_best ? num(double(o.best_update) / double(e.updates_per_epoch())) : ""},
      {"valid_" + e.metric(), o.has_best ? num(o.best_valid) : ""},
      {"test_" + e.metric(), o.has_best ? num(o.test) : ""},
  };
  train::append(id, tail);
  return id;
}

}  // namespace seqbench::apps
