// The imagenet64 experiment: the image sets and their batches (one image a sequence,
// shifted right by a start token) for the shared Transformer LM; reading a trained run
// back for analyses.
#include "apps/imagenet64/imagenet64_experiment.hpp"

#include <algorithm>
#include <numeric>

#include "apps/imagenet64/demo_config.hpp"
#include "core/check.hpp"
#include "data/npz.hpp"
#include "config/yaml_config.hpp"
#include "core/fs.hpp"
#include "core/threads.hpp"
#include "train/checkpoint.hpp"
#include "train/run_record.hpp"
#include "train/trainer.hpp"

namespace seqbench::apps {

namespace {
// After the shared experiment's streams (kInit = 1, kModel = 2).
enum Stream : uint64_t { kShuffle = 3 };
}  // namespace

const char* const kImagenet64DemoYaml = kImagenet64DemoYamlText;

// Defaults: the small routing preset's sizes (configs/imagenet64/routing_small.yaml);
// the paper's settings are in configs/imagenet64/routing.yaml.
train::MemoryEstimate imagenet64_memory(const Imagenet64Config& c) {
  const auto& d = c.data;
  double N = 0, images = 0;  // tokens per image; image bytes held (train, valid copy, test)
  if (d.format == "imagenet64") {
    N = double(d.image_side) * double(d.image_side) * 3;
    // What a file holds once loaded: an .npz's members inflated (a compressed archive
    // counted at its file size let a run reach 5 times its estimate).
    const auto held = [](const std::string& f) -> double {
      if (f.size() > 4 && f.compare(f.size() - 4, 4, ".npz") == 0) {
        try {
          return double(data::npz_inflated_bytes(f));
        } catch (const core::Error&) {  // the loader names what is wrong with it
        }
      }
      return double(train::file_bytes(f));
    };
    double train_bytes = 0;
    for (int k = 1; k <= 10; ++k) {
      const std::string f = data::imagenet_file(d.dir, fmt::format("train_data_batch_{}", k));
      if (f.empty()) break;
      train_bytes += held(f);
    }
    if (d.train_images > 0)
      train_bytes = std::min(train_bytes, double(d.train_images + d.valid_images) * N);
    const std::string val = data::imagenet_file(d.dir, "val_data");
    double test_bytes = val.empty() ? 0.0 : held(val);
    if (d.test_images > 0) test_bytes = std::min(test_bytes, double(d.test_images) * N);
    images = train_bytes + test_bytes + double(d.valid_images) * N;
  } else {
    int64_t train_count = 0, test_count = 0, pixels = 784;
    train::idx_images_header(d.dir + "/" + data::kMnistTrainImages, train_count, pixels);
    train::idx_images_header(d.dir + "/" + data::kMnistTestImages, test_count, pixels);
    N = double(pixels);
    // The images as tokens with int64 labels, and the validation images' copy.
    images = (double(train_count) + double(test_count)) * (N + sizeof(int64_t)) +
             double(d.valid_images) * N;
  }
  const int64_t B = std::max(c.train.batch, d.eval_batch), n = std::max<int64_t>(1, int64_t(N));
  const int threads = c.train.threads > 0 ? c.train.threads : core::available_cores();
  const std::string side = d.format == "imagenet64" ? train::key("data.image_side", d.image_side)
                                                    : train::key("data.dir", d.dir);
  train::MemoryEstimate e;
  train::add_transformer(
      e, c.model, c.optim, Imagenet64Experiment::kVocab, n, B, n, threads,
      {side, train::key("train.batch", c.train.batch), train::key("data.eval_batch", d.eval_batch)},
      {});
  std::vector<std::string> data_keys{train::key("data.dir", d.dir)};
  if (d.format == "imagenet64")
    data_keys.push_back(train::key("data.train_images", d.train_images));
  e.add("images", images, data_keys);
  return e;
}

Imagenet64Config::Imagenet64Config() {
  data.train_images = 10000;
  data.valid_images = 500;
  data.test_images = 500;
  model.layers = 2;
  model.d_model = 64;
  model.heads = 4;
  model.d_ff = 256;
  model.attention = "local:2,routing:2";
  model.window = 56;
  model.clusters = 8;
  model.dropout = 0.0;
  optim.name = "adam";
  optim.lr = 1e-3;
  optim.clip = 1.0;
  train.batch = 8;
  train.steps = 300;
  train.eval_every = 100;
  train.log_every = 20;
}

Imagenet64Experiment::Imagenet64Experiment(const Imagenet64Config& cfg)
    : TransformerLmExperiment("imagenet64", LmMetric::kBitsPerDim, cfg.model, cfg.optim,
                              cfg.train, "the context is one whole image"),
      cfg_(cfg) {
  const auto& d = cfg.data;
  if (!core::file_exists(d.dir))
    throw core::UsageError(fmt::format(
        "data.dir: no images at '{}' (hint: {}, see docs/experiments/imagenet64.md)", d.dir,
        d.format == "imagenet64"
            ? "put train_data_batch_*.npz and val_data.npz of Downsampled ImageNet there"
            : "run tools/fetch_data mnist for the stand-in"));
  data::ImageSet all;
  if (d.format == "imagenet64") {
    all = data::load_imagenet_train(d.dir, d.image_side,
                                    d.train_images > 0 ? d.train_images + d.valid_images : 0);
    test_ = data::load_imagenet_val(d.dir, d.image_side, d.test_images);
    data_digest_ = all.digest;
    data_digest_.merge(test_.digest);
  } else {
    const data::Mnist m = data::load_mnist(d.dir);
    data_digest_ = m.digest;
    all = data::from_idx(m.train);
    test_ = data::from_idx(m.test);
    if (d.test_images > 0 && d.test_images < test_.count) test_ = test_.slice(0, d.test_images);
  }
  if (all.count <= d.valid_images)
    throw core::UsageError(fmt::format(
        "data.valid_images: {} leaves no training images of the {} read (hint: lower "
        "data.valid_images or raise data.train_images)",
        d.valid_images, all.count));
  valid_ = all.slice(all.count - d.valid_images, d.valid_images);
  const int64_t n_train = all.count - d.valid_images;
  // The training images stay where they are: ImageNet64's are 15.7 GB, a copy would double it.
  train_ = std::move(all);
  train_.count = d.train_images > 0 ? std::min(d.train_images, n_train) : n_train;
  train_.tokens.resize(size_t(train_.count * train_.tokens_per_image()));
  train_.labels.resize(size_t(train_.count));
  N_ = train_.tokens_per_image();
  const int64_t B = cfg.train.batch;
  if (train_.count < B)
    throw core::UsageError(fmt::format(
        "train.batch: {} images per update, but only {} training images (hint: lower "
        "train.batch or raise data.train_images)",
        B, train_.count));
  build_model(kVocab, N_, train_.count / B);
}

void Imagenet64Experiment::ensure_order(int64_t epoch) {
  if (epoch == order_epoch_) return;
  order_.resize(size_t(train_.count));
  std::iota(order_.begin(), order_.end(), int64_t(0));
  core::Rng rng = core::Rng::derive(cfg_.train.seed, (kShuffle << 40) + uint64_t(epoch));
  for (int64_t i = train_.count - 1; i > 0; --i)
    std::swap(order_[size_t(i)], order_[size_t(rng.randint(i + 1))]);
  order_epoch_ = epoch;
}

auto Imagenet64Experiment::load_images(const data::ImageSet& s, const int64_t* idx, int64_t b)
    -> Batch {
  ids_.resize(size_t(b * N_));
  targets_.resize(size_t(b * N_));
  for (int64_t c = 0; c < b; ++c) {
    const uint8_t* img = s.image(idx[c]);
    int32_t* in = ids_.data() + c * N_;
    int32_t* out = targets_.data() + c * N_;
    in[0] = kStartToken;
    for (int64_t t = 1; t < N_; ++t) in[t] = img[t - 1];
    for (int64_t t = 0; t < N_; ++t) out[t] = img[t];
  }
  return {b, N_};
}

auto Imagenet64Experiment::load_train_batch(int64_t update) -> Batch {
  const int64_t b = cfg_.train.batch;
  ensure_order(update / updates_per_epoch());
  const int64_t i = update % updates_per_epoch();
  return load_images(train_, order_.data() + i * b, b);
}

int64_t Imagenet64Experiment::eval_batches(Split s) const {
  const int64_t eb = cfg_.data.eval_batch;
  return (set(s).count + eb - 1) / eb;
}

// Batch i: images [i eval_batch, (i + 1) eval_batch), the last may be smaller.
auto Imagenet64Experiment::load_eval_batch(Split s, int64_t i) -> Batch {
  const data::ImageSet& images = set(s);
  const int64_t eb = cfg_.data.eval_batch, from = i * eb;
  const int64_t b = std::min(eb, images.count - from);
  idx_.resize(size_t(b));
  std::iota(idx_.begin(), idx_.end(), from);
  return load_images(images, idx_.data(), b);
}

TrainedLmRun load_imagenet64_run(const std::string& run_dir, const std::string& attention) {
  Imagenet64Config cfg;
  config::apply_yaml_file(cfg, run_dir + "/config.yaml");
  if (!attention.empty()) cfg.model.attention = attention;
  auto exp = std::make_unique<Imagenet64Experiment>(cfg);
  const train::Checkpoint ck = train::load_checkpoint(run_dir + "/checkpoint.sbck");
  train::load_parameters(exp->params(), ck);
  exp->load_state(ck);
  TrainedLmRun run;
  run.experiment = "imagenet64";
  run.attention = cfg.model.attention;
  run.data = train::data_label(cfg.data.name, cfg.data.stand_in);
  run.batch = "batch";
  run.batches = "batches";
  run.batch_shape =
      fmt::format("of {} images of {} subpixels", cfg.data.eval_batch, exp->tokens_per_image());
  run.exp = std::move(exp);
  return run;
}

}  // namespace seqbench::apps
