// Word-level language modelling with a decoder-only Transformer (lib/nn/attention/transformer.hpp):
// the Routing Transformer's Wikitext-103 experiment (Roy et al. 2021) and its ablations
// (full, local, random, SMYRF, LSH heads at the same window). The metric is perplexity,
// ppl = exp(mean next-token cross-entropy in nats).
//
// Batching: each split is one token stream; the training stream is cut into B
// contiguous columns and an update takes the next segment of lm.seq_len inputs (plus one
// target token) from every column, so an update sees B sequences of n tokens, in order.
// There is no memory across segments (no Transformer-XL recurrence): every segment
// starts from an empty context. Validation and test cut their streams into
// data.eval_batch columns and score every segment once (the last may be shorter).
// An epoch is ceil((n_tokens/B - 1) / seq_len) updates.
//
// Model, training, evaluation, randomness and checkpoint state are the shared
// TransformerLmExperiment's (apps/common/transformer_lm_experiment.hpp); the reported
// number is the test perplexity at the best validation.
#pragma once

#include <algorithm>
#include <memory>
#include <string>

#include "apps/common/lm_data_config.hpp"
#include "apps/common/transformer_lm_experiment.hpp"
#include "data/text_corpus.hpp"
#include "nn/attention/transformer.hpp"
#include "optim/optim_config.hpp"
#include "train/memory_estimate.hpp"
#include "train/train_config.hpp"

namespace seqbench::apps {

struct Wikitext103LmConfig {
  int64_t seq_len = 256;  // n: tokens per sequence (the model's context)

  template <class V>
  void visit(V& v) {
    v("seq_len", seq_len, "tokens per sequence n (context length)", config::range(1, 10'000'000));
  }
};

struct Wikitext103Config : train::TrainingSections {
  LmDataConfig data;  // words only: no data.level key (the constructor sets it up)
  Wikitext103LmConfig lm;
  nn::TransformerConfig model;  // docs/transformer.md

  Wikitext103Config();

  template <class V>
  void visit(V& v) {
    v("data", data, "corpus, split and caps");
    v("lm", lm, "sequence length");
    v("model", model, "the Transformer (docs/transformer.md)");
    visit_training(v, "training loop (an update is one segment of every column)");
  }
};

// The embedded default of `seqbench wikitext103 --demo`: configs/wikitext103/routing_small.yaml.
extern const char* const kWikitext103DemoYaml;

// The memory a run of cfg needs (lib/train/memory_estimate.hpp): the Transformer over a
// vocabulary estimated from the corpus files' sizes (train::corpus_size), at the larger of
// train.batch and data.eval_batch sequences of lm.seq_len tokens, and the token ids.
train::MemoryEstimate wikitext103_memory(const Wikitext103Config& cfg);


class Wikitext103Experiment : public TransformerLmExperiment {
 public:
  explicit Wikitext103Experiment(const Wikitext103Config& cfg);

  const data::Corpus& corpus() const { return corpus_; }
  // An eval-mode forward of segment i of s (at kEvalDraws, leaving the training draws
  // untouched), for analyses that then read the model's activations, e.g. each layer's
  // attention inputs (seqbench report attention); returns the segment's length L (its
  // batch is s.B).
  int64_t forward_segment(const TokenColumns& s, int64_t i);
  const TokenColumns& train_stream() const { return train_; }
  const TokenColumns& valid_stream() const { return valid_; }
  const TokenColumns& test_stream() const { return test_; }

 private:
  // Update u takes segment u mod updates_per_epoch of every training column.
  Batch load_train_batch(int64_t update) override;
  int64_t eval_batches(Split s) const override;
  Batch load_eval_batch(Split s, int64_t i) override;
  const TokenColumns& stream(Split s) const { return s == Split::kValid ? valid_ : test_; }
  // Loads ids_ and targets_ (s.B, L) for segment i of s.
  Batch load_segment(const TokenColumns& s, int64_t i);

  Wikitext103Config cfg_;
  data::Corpus corpus_;
  TokenColumns train_, valid_, test_;
};

// A finished run read back for the attention analyses: its saved config, the corpus, and
// the model with the parameters and state of run_dir/checkpoint.sbck (both files exist:
// load_trained_run, apps/experiments.hpp, checks that and which experiment the run is).
TrainedLmRun load_wikitext103_run(const std::string& run_dir, const std::string& attention = "");

// `seqbench wikitext103 ...` and the seqbench_wikitext103 binary.
int wikitext103_main(int argc, char** argv);

}  // namespace seqbench::apps
