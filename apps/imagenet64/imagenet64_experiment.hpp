// Pixel-level autoregressive image modelling with a decoder-only Transformer
// (lib/nn/attention/transformer.hpp): the Routing Transformer's ImageNet64 experiment (Roy et al.
// 2021, after the Image Transformer and the Sparse Transformer) and its ablations (full,
// local, routing, random, SMYRF, LSH heads). The metric is bits per dimension,
// bpd = mean next-subpixel cross-entropy in nats / ln 2 over every subpixel of every image.
//
// Sequences: one image is one sequence of N = S*S*C tokens (lib/data/imagenet64.hpp:
// raster order, channels interleaved per pixel), vocabulary 256. The model reads the
// image shifted right by one: input 0 is a fixed start token, the value 0, and input t
// (t >= 1) is subpixel t - 1; output t predicts subpixel t. So every subpixel, the first
// included, is predicted and counted (the learned position embedding tells the start
// apart from a black subpixel).
//
// Data: data.format imagenet64 reads the Downsampled ImageNet npz batches; mnist reads
// IDX files (MNIST, or Fashion-MNIST under the same names) as one-channel images, the
// stand-in here. Validation is the last data.valid_images of the training images read;
// the test set is the test split (MNIST t10k, ImageNet val_data.npz).
//
// Batching: an update takes B training images; the order is a fresh permutation per
// epoch drawn from (train.seed, epoch), so a resumed run continues the same order.
// An epoch is floor(n_train / B) updates. Validation and test score every image once,
// data.eval_batch images at a time.
//
// Model, training, evaluation, randomness and checkpoint state are the shared
// TransformerLmExperiment's (apps/common/transformer_lm_experiment.hpp): evaluations
// start their random draws at kEvalDraws and leave the training draws, dropout stream
// and routing centroids untouched. The image order needs no checkpoint state: it is a
// function of (seed, epoch). The reported number is the test bpd at the best validation.
#pragma once

#include <memory>
#include <string>

#include "apps/common/transformer_lm_experiment.hpp"
#include "data/imagenet64.hpp"
#include "nn/attention/transformer.hpp"
#include "optim/optim_config.hpp"
#include "train/memory_estimate.hpp"
#include "train/train_config.hpp"

namespace seqbench::apps {

struct Imagenet64DataConfig {
  std::string format = "mnist";  // mnist (IDX files) | imagenet64 (npz batches)
  std::string dir = "data/mnist";
  int64_t image_side = 64;      // imagenet64: side of the stored images (64 or 32)
  std::string name = "mnist";   // in tables
  bool stand_in = true;
  int64_t train_images = 0;     // cap on training images (0 = all)
  int64_t valid_images = 5000;  // held out from the end of the training images read
  int64_t test_images = 0;      // cap on test images (0 = all)
  int64_t eval_batch = 8;       // images per validation / test forward

  template <class V>
  void visit(V& v) {
    v("format", format, "mnist (IDX files, one channel) | imagenet64 (npz batches, RGB)",
      config::one_of({"mnist", "imagenet64"}));
    v("dir", dir, "directory with the data files (docs/experiments/imagenet64.md)");
    v("image_side", image_side, "imagenet64: side S of the stored images (64, or 32)",
      config::range(1, 4096));
    v("name", name, "data set name in tables");
    v("stand_in", stand_in, "tables mark the data as a stand-in (else real)");
    v("train_images", train_images, "cap on training images (0 = all)",
      config::range(0, 1'000'000'000));
    v("valid_images", valid_images, "validation images, held out from the end of the training "
      "images read", config::range(1, 1'000'000'000));
    v("test_images", test_images, "cap on test images (0 = all)", config::range(0, 1'000'000'000));
    v("eval_batch", eval_batch, "images per validation / test forward",
      config::range(1, 1'000'000));
  }
};

struct Imagenet64Config : train::TrainingSections {
  Imagenet64DataConfig data;
  nn::TransformerConfig model;  // docs/transformer.md

  Imagenet64Config();

  template <class V>
  void visit(V& v) {
    v("data", data, "images, split and caps");
    v("model", model, "the Transformer (docs/transformer.md); its context is one image");
    visit_training(v, "training loop (an update is train.batch images)");
  }
};

// The embedded default of `seqbench imagenet64 --demo`: configs/imagenet64/routing_small.yaml.
extern const char* const kImagenet64DemoYaml;

// The memory a run of cfg needs (lib/train/memory_estimate.hpp): the Transformer over
// 256 values with one image as its context (N = S S C tokens), at the larger of
// train.batch and data.eval_batch images, and the images held as bytes (from the files'
// sizes: an npz batch is counted at its size on disk, which is the size of its images
// when it is stored uncompressed, as the release is).
train::MemoryEstimate imagenet64_memory(const Imagenet64Config& cfg);

class Imagenet64Experiment : public TransformerLmExperiment {
 public:
  static constexpr int64_t kVocab = 256;
  static constexpr int32_t kStartToken = 0;

  explicit Imagenet64Experiment(const Imagenet64Config& cfg);

  const data::ImageSet& train_set() const { return train_; }
  const data::ImageSet& valid_set() const { return valid_; }
  const data::ImageSet& test_set() const { return test_; }
  int64_t tokens_per_image() const { return N_; }

 private:
  // Update u takes B images of epoch u / updates_per_epoch's permutation.
  Batch load_train_batch(int64_t update) override;
  int64_t eval_batches(Split s) const override;
  Batch load_eval_batch(Split s, int64_t i) override;
  const data::ImageSet& set(Split s) const { return s == Split::kValid ? valid_ : test_; }
  // Fills ids_ and targets_ (b, N) from the images idx[0..b).
  Batch load_images(const data::ImageSet& s, const int64_t* idx, int64_t b);
  void ensure_order(int64_t epoch);

  Imagenet64Config cfg_;
  data::ImageSet train_, valid_, test_;
  int64_t N_ = 0;

  std::vector<int64_t> order_;  // this epoch's permutation of the training images
  int64_t order_epoch_ = -1;
  std::vector<int64_t> idx_;
};

// `seqbench imagenet64 ...` and the seqbench_imagenet64 binary.
int imagenet64_main(int argc, char** argv);

// A finished run read back for the attention analyses, as load_wikitext103_run does:
// config, data, and the model with the parameters and state of run_dir/checkpoint.sbck.
TrainedLmRun load_imagenet64_run(const std::string& run_dir, const std::string& attention = "");

}  // namespace seqbench::apps
