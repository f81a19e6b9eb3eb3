// Sequential and permuted MNIST (Le et al. 2015; Kerg et al. 2020; Nguyen et al. 2020):
// an image is read one pixel per time step (T = rows * cols = 784, input size 1, pixels
// scaled to [0, 1]); a linear head on the last hidden state classifies the digit (10
// classes, cross-entropy). permute: true reorders the pixels by one fixed permutation
// drawn from data.permute_seed, the same for every run, seed and model.
//
// Split (Kerg et al.'s code): train = the first 50k images of the training file, valid =
// its last 10k, test = the 10k test file. The reported number is the test accuracy at
// the validation that was best so far (strictly better), measured when that validation
// happened; data.test_every_eval also tests at every validation and records the best
// test accuracy over validations, which is what the MomentumRNN code reported.
//
// Epochs: one update is one minibatch of train.batch examples; an epoch is
// floor(n_train / B) updates over a fresh shuffle (the last n_train mod B examples of
// each shuffle are skipped). The Trainer counts updates, so the presets set train.steps
// = epochs * updates_per_epoch and train.eval_every = updates_per_epoch;
// data.check_epochs makes a mismatch an error.
#pragma once

#include <memory>

#include "data/mnist.hpp"
#include "nn/linear.hpp"
#include "nn/model_config.hpp"
#include "nn/sequence_layer.hpp"
#include "optim/optim_config.hpp"
#include "train/efficiency.hpp"
#include "train/experiment.hpp"
#include "train/memory_estimate.hpp"
#include "train/train_config.hpp"

namespace seqbench::apps {

struct PmnistDataConfig {
  std::string dir = "data/mnist";  // holds train-images-idx3-ubyte, ... (data/README)
  std::string name = "mnist";      // the data set's name in tables
  bool stand_in = false;           // tables say "<name> (stand-in)" instead of "(real)"
  bool permute = true;             // permuted (pMNIST) or pixel order (sequential MNIST)
  uint64_t permute_seed = 1234;    // the fixed pixel permutation
  int64_t valid_examples = 10000;  // taken from the end of the training file
  int64_t train_examples = 0;      // cap on training examples (0 = all the others)
  int64_t eval_examples = 0;       // cap on validation and on test examples (0 = all)
  bool test_every_eval = false;    // also test at every validation (MomentumRNN protocol)
  bool check_epochs = true;        // train.eval_every must be a whole number of epochs

  template <class V>
  void visit(V& v) {
    v("dir", dir, "directory with the four MNIST IDX files (uncompressed)");
    v("name", name, "data set name in tables");
    v("stand_in", stand_in, "tables mark the data as a stand-in (else real)");
    v("permute", permute, "permuted MNIST (true) or sequential MNIST (false)");
    v("permute_seed", permute_seed, "seed of the fixed pixel permutation");
    v("valid_examples", valid_examples, "validation examples, from the end of the training file",
      config::range(1, 1'000'000'000));
    v("train_examples", train_examples, "cap on training examples (0 = all the others)",
      config::range(0, 1'000'000'000));
    v("eval_examples", eval_examples, "cap on validation and test examples each (0 = all)",
      config::range(0, 1'000'000'000));
    v("test_every_eval", test_every_eval,
      "test at every validation too and record the best test accuracy (MomentumRNN's number)");
    v("check_epochs", check_epochs,
      "require train.eval_every to be a multiple of the updates per epoch");
  }
};

struct PmnistConfig : train::TrainingSections {
  PmnistDataConfig data;
  nn::ModelConfig model;

  PmnistConfig();

  template <class V>
  void visit(V& v) {
    v("data", data, "MNIST files, permutation and split");
    v("model", model, "the recurrent model");
    visit_training(v, "training loop (an update is one minibatch)");
  }
};

// The embedded default of `seqbench pmnist --demo`: configs/pmnist/lstm_small.yaml.
extern const char* const kPmnistDemoYaml;

// The memory a run of cfg needs (lib/train/memory_estimate.hpp): the model's parts, the
// hidden states (T, B, H) with their gradient, and the four MNIST files as loaded; T is
// the pixels per image of the training file's header (784 when it cannot be read).
train::MemoryEstimate pmnist_memory(const PmnistConfig& cfg);

// The permutation of `pixels` positions drawn from seed (Fisher-Yates on core::Rng), or
// the identity when permute is false: input step t reads pixel perm[t].
std::vector<int32_t> pixel_order(int64_t pixels, bool permute, uint64_t seed);

class PmnistExperiment : public train::Experiment {
 public:
  // Loads the data; config mistakes (missing files, a split that does not fit) throw
  // core::UsageError naming the key.
  explicit PmnistExperiment(const PmnistConfig& cfg);

  void init();

  core::ParamStore& params() override { return ps_; }
  train::Metrics train_step() override;
  // Validation loss and acc; when the validation is the best so far (or with
  // data.test_every_eval) also test_loss and test_acc.
  train::Metrics evaluate() override;
  std::string metric() const override { return "acc"; }
  bool higher_is_better() const override { return true; }
  std::vector<double> gradnorm_probe() override;
  size_t held_bytes() override { return rnn_->held_bytes(); }
  // One layer over the image's T steps of one pixel, train.batch images.
  double lstm_equivalent_flop() const override {
    return train::lstm_equivalent_flop(cfg_.model.cell, cfg_.train.batch, T_, 1, cfg_.model.hidden);
  }
  void after_update() override { rnn_->after_update(); }
  void save_state(train::Checkpoint& ck) const override;
  void load_state(const train::Checkpoint& ck) override;

  // What the paper tables need, valid after training (and restored on resume).
  struct Outcome {
    bool has_best = false;
    double best_valid_acc = 0;
    int64_t best_update = 0;     // updates done at the best validation
    double test_acc = 0, test_loss = 0;  // at the best validation
    double best_test_acc = -1;   // max over validations (-1: not measured)
  };
  const Outcome& outcome() const { return outcome_; }
  const data::Mnist& mnist() const { return mnist_; }
  int64_t updates_per_epoch() const { return updates_per_epoch_; }
  double epochs_done() const { return double(cursor_) / double(updates_per_epoch_); }
  int64_t n_train() const { return n_train_; }
  int64_t n_valid() const { return n_valid_; }
  int64_t n_test() const { return n_test_; }
  int64_t steps_per_image() const { return T_; }
  const std::vector<int32_t>& order() const { return order_; }

 private:
  // A slice of examples: image i is pixels[i * T ..], label labels[i].
  struct Split {
    const uint8_t* pixels = nullptr;
    const uint8_t* labels = nullptr;
    int64_t n = 0;
  };
  // Fills x_ (T, b, 1) and labels_ (b) with examples idx[0..b) of split.
  void make_batch(const Split& split, const int64_t* idx, int64_t b);
  // Forward (and backward) on the batch in x_/labels_; returns loss and correct count.
  std::pair<double, int64_t> run_batch(bool backward, std::vector<double>* dh_norms);
  // Mean loss and accuracy over the first n examples of split, in batches of train.batch.
  std::pair<double, double> eval_split(const Split& split, int64_t n);
  void shuffle_for_epoch(int64_t epoch);

  PmnistConfig cfg_;
  data::Mnist mnist_;
  Split train_, valid_, test_;
  int64_t n_train_ = 0, n_valid_ = 0, n_test_ = 0, T_ = 0, updates_per_epoch_ = 1;
  std::vector<int32_t> order_;  // (T) pixel read at each step

  core::ParamStore ps_;
  std::unique_ptr<nn::SequenceLayer<float>> rnn_;
  std::unique_ptr<nn::Linear> head_;

  int64_t cursor_ = 0;           // training batches drawn so far
  int64_t shuffled_epoch_ = -1;  // the epoch perm_ belongs to
  std::vector<int64_t> perm_;    // (n_train) example order of that epoch
  std::vector<int64_t> idx_;     // (B) scratch
  Outcome outcome_;

  core::Tensor x_, h_, dh_, logits_, dlogits_;  // (T,B,1) (T,B,H) (T,B,H) (B,10) (B,10)
  std::vector<int32_t> labels_;                 // (B)
};

// `seqbench pmnist ...` and the seqbench_pmnist binary.
int pmnist_main(int argc, char** argv);

}  // namespace seqbench::apps
