#include "apps/imagenet64/imagenet64_experiment.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "apps/imagenet64/demo_config.hpp"
#include "core/fs.hpp"
#include "nn/loss.hpp"
#include "optim/optimizer.hpp"

namespace seqbench::apps {

namespace {
enum Stream : uint64_t { kInit = 1, kModel = 2, kShuffle = 3 };

void ensure(core::Tensor& t, core::Shape s) {
  if (!(t.shape() == s)) t.resize(s);
}

struct DrawsGuard {
  nn::TransformerLM& m;
  uint64_t saved;
  explicit DrawsGuard(nn::TransformerLM& model) : m(model), saved(model.draws()) {}
  ~DrawsGuard() { m.set_draws(saved); }
  DrawsGuard(const DrawsGuard&) = delete;
  DrawsGuard& operator=(const DrawsGuard&) = delete;
};

const char* const kStatePrefix = "imagenet64.model.";
}  // namespace

const char* const kImagenet64DemoYaml = kImagenet64DemoYamlText;

// Defaults: the small routing preset's sizes (configs/imagenet64/routing_small.yaml);
// the paper's settings are in configs/imagenet64/routing.yaml.
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

Imagenet64Experiment::Imagenet64Experiment(const Imagenet64Config& cfg) : cfg_(cfg) {
  const auto& d = cfg.data;
  if (cfg.train.bptt != 0)
    throw core::UsageError(fmt::format(
        "train.bptt: {} has no meaning for a Transformer (hint: leave it 0; the context is "
        "one whole image)",
        cfg.train.bptt));
  nn::validate(cfg.model);  // config mistakes before the (slow) data load
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
  } else {
    const data::Mnist m = data::load_mnist(d.dir);
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
  updates_per_epoch_ = train_.count / B;
  model_ = std::make_unique<nn::TransformerLM>(cfg.model, ps_, "lm", kVocab, N_,
                                               core::Rng::derive(cfg.train.seed, kModel).next_u64());
  ps_.finalize(optim::make_optimizer<float>(cfg.optim)->n_slots());
}

void Imagenet64Experiment::init() {
  core::Rng rng = core::Rng::derive(cfg_.train.seed, kInit);
  model_->init(rng);
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

void Imagenet64Experiment::load_images(const data::ImageSet& s, const int64_t* idx, int64_t b) {
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
}

train::Metrics Imagenet64Experiment::train_step() {
  const int64_t b = cfg_.train.batch;
  ensure_order(cursor_ / updates_per_epoch_);
  const int64_t i = cursor_ % updates_per_epoch_;
  load_images(train_, order_.data() + i * b, b);
  ensure(logits_, core::Shape{b * N_, kVocab});
  ensure(dlogits_, core::Shape{b * N_, kVocab});
  model_->forward(ids_.data(), b, N_, logits_.view(), true);
  const auto ce =
      nn::softmax_cross_entropy<float>(logits_.cview(), targets_.data(), nullptr, dlogits_.view());
  model_->backward(dlogits_.cview());
  ++cursor_;
  return {{"loss", ce.loss}, {"bpd", ce.loss / std::log(2.0)}};
}

double Imagenet64Experiment::eval_set(const data::ImageSet& s) {
  DrawsGuard guard(*model_);
  model_->set_draws(kEvalDraws);
  double loss = 0;
  int64_t n = 0;
  const int64_t eb = cfg_.data.eval_batch;
  for (int64_t from = 0; from < s.count; from += eb) {
    const int64_t b = std::min(eb, s.count - from);
    idx_.resize(size_t(b));
    std::iota(idx_.begin(), idx_.end(), from);
    load_images(s, idx_.data(), b);
    ensure(logits_, core::Shape{b * N_, kVocab});
    model_->forward(ids_.data(), b, N_, logits_.view(), false);
    const auto ce = nn::softmax_cross_entropy<float>(logits_.cview(), targets_.data(), nullptr,
                                                     core::View());
    loss += ce.loss * double(b * N_);
    n += b * N_;
  }
  return loss / double(n);
}

train::Metrics Imagenet64Experiment::evaluate() {
  const double vloss = eval_set(valid_);
  const double vbpd = vloss / std::log(2.0);
  train::Metrics m{{"loss", vloss}, {"bpd", vbpd}};
  // The same rule as the Trainer's best: strictly lower than every earlier validation.
  if (!outcome_.has_best || vbpd < outcome_.best_valid_bpd) {
    const double tloss = eval_set(test_);
    m.push_back({"test_loss", tloss});
    m.push_back({"test_bpd", tloss / std::log(2.0)});
    outcome_ = {true, vbpd, cursor_, tloss / std::log(2.0)};
  }
  return m;
}

std::vector<double> Imagenet64Experiment::gradnorm_probe() {
  DrawsGuard guard(*model_);
  model_->set_draws(kEvalDraws);
  const int64_t b = std::min(cfg_.data.eval_batch, valid_.count);
  idx_.resize(size_t(b));
  std::iota(idx_.begin(), idx_.end(), int64_t(0));
  load_images(valid_, idx_.data(), b);
  mask_.assign(size_t(b * N_), 0.f);
  for (int64_t c = 0; c < b; ++c) mask_[size_t(c * N_ + N_ - 1)] = 1.f;
  ensure(logits_, core::Shape{b * N_, kVocab});
  ensure(dlogits_, core::Shape{b * N_, kVocab});
  model_->forward(ids_.data(), b, N_, logits_.view(), false);
  nn::softmax_cross_entropy<float>(logits_.cview(), targets_.data(), mask_.data(), dlogits_.view());
  std::vector<double> norms;
  model_->backward(dlogits_.cview(), &norms);
  return norms;
}

size_t Imagenet64Experiment::held_bytes() {
  return model_->held_bytes() + size_t(logits_.numel() + dlogits_.numel()) * sizeof(float);
}

void Imagenet64Experiment::save_state(train::Checkpoint& ck) const {
  const auto hex = [](double v) { return fmt::format("{:a}", v); };
  ck.set_meta("imagenet64.cursor", std::to_string(cursor_));
  ck.set_meta("imagenet64.has_best", outcome_.has_best ? "1" : "0");
  ck.set_meta("imagenet64.best_valid_bpd", hex(outcome_.best_valid_bpd));
  ck.set_meta("imagenet64.best_update", std::to_string(outcome_.best_update));
  ck.set_meta("imagenet64.test_bpd", hex(outcome_.test_bpd));
  // Dropout RNG, draw count, routing centroids: without them a resumed run would draw
  // other masks and hashes and route by other centroids. The image order needs nothing:
  // it is a function of (seed, epoch).
  train::put_state(ck, kStatePrefix, model_->state());
}

void Imagenet64Experiment::load_state(const train::Checkpoint& ck) {
  const auto unhex = [&](const char* k) { return std::strtod(ck.meta_at(k).c_str(), nullptr); };
  cursor_ = std::stoll(ck.meta_at("imagenet64.cursor"));
  outcome_.has_best = ck.meta_at("imagenet64.has_best") == "1";
  outcome_.best_valid_bpd = unhex("imagenet64.best_valid_bpd");
  outcome_.best_update = std::stoll(ck.meta_at("imagenet64.best_update"));
  outcome_.test_bpd = unhex("imagenet64.test_bpd");
  auto st = model_->state();
  train::get_state(ck, kStatePrefix, st);
  model_->set_state(st);
}

}  // namespace seqbench::apps
