// Character-level language modelling (Kerg et al. 2020's char-PTB; Miller & Hardt 2019):
// embedding (V, E) -> recurrent layer (model.*) -> linear head (H, V), cross-entropy on
// the next character at every step; the metric is bits per character, bpc = CE / ln 2.
//
// Batching (as the PyTorch word-LM example and Kerg et al.'s PTBtask.py): each split is
// cut into B contiguous columns; an update is one segment of lm.seq_len steps (the
// papers' "bptt 150") of all columns, with full BPTT inside the segment (train.bptt may
// truncate further). With lm.carry_state the recurrent state after a segment is the
// initial state of the next one (detached: no gradient crosses segments), reset to zero
// at the start of each epoch and of each evaluation pass; without it every segment
// starts from zero. The attentive models (rel_lstm, rel_rnn, mem_rnn) start every
// segment with an empty attention memory (Kerg et al.'s code resets it at each segment
// and carries only the hidden state).
//
// An epoch is ceil((n/B - 1) / seq_len) updates (the last segment may be shorter).
// The reported number is the test BPC at the best validation, measured when that
// validation happened.
#pragma once

#include <algorithm>
#include <memory>

#include "apps/common/lm_data_config.hpp"
#include "data/text_corpus.hpp"
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

// The shared language-model data section, and one check of its own.
struct CharPtbDataConfig : LmDataConfig {
  bool check_epochs = true;  // train.eval_every must be a whole number of epochs

  template <class V>
  void visit(V& v) {
    LmDataConfig::visit(v);
    v("check_epochs", check_epochs,
      "require train.eval_every to be a multiple of the updates per epoch");
  }
};

struct LmConfig {
  int64_t embedding = 200;  // E
  int64_t seq_len = 150;    // tokens per segment (one update); the papers' "bptt"
  bool carry_state = true;  // the state after a segment starts the next one

  template <class V>
  void visit(V& v) {
    v("embedding", embedding, "embedding size E", config::range(1, 65536));
    v("seq_len", seq_len, "tokens per segment, one update each (the papers' bptt)",
      config::range(1, 10'000'000));
    v("carry_state", carry_state,
      "carry the recurrent state across segments (detached); false = zero state every segment");
  }
};

struct CharPtbConfig : train::TrainingSections {
  CharPtbDataConfig data;
  LmConfig lm;
  nn::ModelConfig model;

  CharPtbConfig();

  template <class V>
  void visit(V& v) {
    v("data", data, "corpus, split and caps");
    v("lm", lm, "embedding, segment length, state carrying");
    v("model", model, "the recurrent model");
    visit_training(v, "training loop (an update is one segment)");
  }
};

// The embedded default of `seqbench char_ptb --demo`: configs/char_ptb/lstm_small.yaml.
extern const char* const kCharPtbDemoYaml;

// The memory a run of cfg needs (lib/train/memory_estimate.hpp): embedding, recurrent
// layer and head over a vocabulary estimated from the corpus files' sizes
// (train::corpus_size), a segment's embeddings, hidden states and logits with their
// gradients at the larger of train.batch and data.eval_batch columns, the token ids.
train::MemoryEstimate char_ptb_memory(const CharPtbConfig& cfg);


class CharPtbExperiment : public train::Experiment {
 public:
  explicit CharPtbExperiment(const CharPtbConfig& cfg);

  void init();

  core::ParamStore& params() override { return ps_; }
  train::Metrics train_step() override;
  // Validation loss and bpc; when the validation is the best so far also test_loss and
  // test_bpc.
  train::Metrics evaluate() override;
  std::string metric() const override { return "bpc"; }
  bool higher_is_better() const override { return false; }
  // ||dL/dh_t|| on the first validation segment from a zero state, L = the loss at the
  // segment's last step.
  std::vector<double> gradnorm_probe() override;
  // Miller & Hardt's Figure 2: how far back a trained model's predictions reach. Over
  // `windows` held-out windows of L tokens in each validation column, from a zero state,
  // with the loss l = -log p(y_L) at the window's last position only: element i is the
  // mean over windows and columns of ||dl/dx_{L-1-i}||, x the embedding fed to the
  // recurrent layer (i = 0..L-1, the distance to the scored prediction). Stops early at
  // the end of the stream; throws core::UsageError when not one window fits. Leaves the
  // training state and the parameter gradients as they were (gradients zeroed).
  struct InputGradProbe {
    std::vector<double> norm;  // by distance
    int64_t windows = 0, columns = 0;
  };
  InputGradProbe input_grad_probe(int64_t L, int64_t windows);
  size_t held_bytes() override { return rnn_->held_bytes(); }
  // One layer over a segment of lm.seq_len embeddings in train.batch columns (an epoch's
  // shorter last segment counts as a full one).
  double lstm_equivalent_flop() const override {
    return train::lstm_equivalent_flop(cfg_.model.cell, cfg_.train.batch, cfg_.lm.seq_len,
                                       cfg_.lm.embedding, cfg_.model.hidden);
  }
  void after_update() override { rnn_->after_update(); }
  void save_state(train::Checkpoint& ck) const override;
  void load_state(const train::Checkpoint& ck) override;

  struct Outcome {
    bool has_best = false;
    double best_valid_bpc = 0;
    int64_t best_update = 0;
    double test_bpc = 0;  // at the best validation
  };
  const Outcome& outcome() const { return outcome_; }
  const data::Corpus& corpus() const { return corpus_; }
  int64_t updates_per_epoch() const { return updates_per_epoch_; }
  double epochs_done() const { return double(cursor_) / double(updates_per_epoch_); }
  const TokenColumns& train_stream() const { return train_; }
  const TokenColumns& valid_stream() const { return valid_; }
  const TokenColumns& test_stream() const { return test_; }

 private:
  // Loads x_ (L, b, E) and targets for segment i of s; returns its length L.
  int64_t load_segment(const TokenColumns& s, int64_t i);
  // Loads ids and targets for the L tokens from column offset pos of every column.
  void load_tokens(const TokenColumns& s, int64_t pos, int64_t L);
  // Forward (s0 = state_ or zero) and, when train, backward; final state -> state_
  // (if lm.carry_state). mask (L*b) or null. Returns the mean loss over masked rows.
  double run_segment(int64_t L, int64_t b, bool train, const float* mask,
                     std::vector<double>* dh_norms);
  double eval_stream(const TokenColumns& s);  // mean loss (nats) from a zero state
  // mask_ (L*b): the loss on the last step only (the probes).
  void mask_last_step(int64_t L, int64_t b);
  // Sets the carried training state aside for an evaluation or a probe (which start from
  // a zero state) and puts it back when it goes out of scope.
  struct StateSetAside {
    explicit StateSetAside(CharPtbExperiment& e);
    ~StateSetAside();
    StateSetAside(const StateSetAside&) = delete;
    StateSetAside& operator=(const StateSetAside&) = delete;
    CharPtbExperiment& e;
    core::Tensor state;
    bool valid;
  };

  CharPtbConfig cfg_;
  data::Corpus corpus_;
  TokenColumns train_, valid_, test_;
  int64_t V_ = 0, updates_per_epoch_ = 1;

  core::ParamStore ps_;
  std::unique_ptr<nn::Embedding> emb_;
  std::unique_ptr<nn::SequenceLayer<float>> rnn_;
  std::unique_ptr<nn::Linear> head_;

  int64_t cursor_ = 0;  // training segments done
  Outcome outcome_;

  std::vector<int32_t> ids_, targets_;  // (L*b) time-major, row t*b + c
  std::vector<float> mask_;             // (L*b)
  // x (L,b,E) dx (L,b,E) h (L,b,H) dh (L,b,H) logits (L*b,V) dlogits (L*b,V)
  core::Tensor x_, dx_, h_, dh_, logits_, dlogits_;
  core::Tensor state_, next_state_;  // (b, S) carried state (zero rows = zero state)
  bool state_valid_ = false;         // false: the next segment starts from zero
};

// `seqbench char_ptb ...` and the seqbench_char_ptb binary.
int char_ptb_main(int argc, char** argv);

}  // namespace seqbench::apps
