#include "apps/pmnist/pmnist_experiment.hpp"

#include <algorithm>
#include <cmath>

#include "apps/pmnist/demo_config.hpp"
#include "core/fs.hpp"
#include "nn/loss.hpp"
#include "nn/seq_model.hpp"
#include "optim/optimizer.hpp"

namespace seqbench::apps {

namespace {
// Independent random streams derived from train.seed.
enum Stream : uint64_t { kInit = 1, kShuffle = 2 };
constexpr int64_t kClasses = 10;

void ensure(core::Tensor& t, core::Shape s) {
  if (!(t.shape() == s)) t.resize(s);
}
}  // namespace

const char* const kPmnistDemoYaml = kPmnistDemoYamlText;

// Kerg et al.'s pMNIST protocol: H = 100, B = 100, RMSprop 1e-3 (alpha 0.99), clip 1,
// 200 epochs of 500 updates, a validation every epoch.
PmnistConfig::PmnistConfig() {
  model.hidden = 100;
  optim.name = "rmsprop";
  optim.lr = 1e-3;
  optim.clip = 1.0;
  train.batch = 100;
  train.steps = 200 * 500;
  train.eval_every = 500;
  train.log_every = 50;
}

std::vector<int32_t> pixel_order(int64_t pixels, bool permute, uint64_t seed) {
  std::vector<int32_t> order(static_cast<size_t>(pixels));
  for (int64_t i = 0; i < pixels; ++i) order[size_t(i)] = int32_t(i);
  if (!permute) return order;
  core::Rng rng(seed);
  for (int64_t i = pixels - 1; i > 0; --i) std::swap(order[size_t(i)], order[size_t(rng.randint(i + 1))]);
  return order;
}

train::MemoryEstimate pmnist_memory(const PmnistConfig& c) {
  const std::string& dir = c.data.dir;
  int64_t count = 60000, T = 784;
  train::idx_images_header(dir + "/" + data::kMnistTrainImages, count, T);
  const double B = double(c.train.batch), H = double(c.model.hidden), Td = double(T);
  const std::vector<std::string> size_keys{train::key("train.batch", c.train.batch)};
  train::MemoryEstimate e;
  train::add_recurrent(e, c.model, c.optim, 1, T, c.train.batch, c.train.gradnorm_every > 0,
                       c.model.hidden * kClasses + kClasses, size_keys);
  e.add("hidden states, inputs and their gradients",
        sizeof(float) * (2 * Td * B * H + Td * B + 2 * B * kClasses),
        {train::key("model.hidden", c.model.hidden), size_keys[0]});
  // Validation and test run in batches of B; a last smaller batch is another shape.
  int64_t test_count = 10000, test_pixels = T;
  train::idx_images_header(dir + "/" + data::kMnistTestImages, test_count, test_pixels);
  const auto capped = [&](int64_t n) {
    return c.data.eval_examples > 0 ? std::min(c.data.eval_examples, n) : n;
  };
  if (c.model.backend == "onednn" && (capped(c.data.valid_examples) % c.train.batch != 0 ||
                                      capped(test_count) % c.train.batch != 0))
    e.add("onednn: other batch shapes (an evaluation's last batch)",
          train::onednn_extra_shapes_bytes(c.model, T, c.train.batch),
          {train::key("model.hidden", c.model.hidden), size_keys[0]});
  double files = 0;
  for (const char* f : {data::kMnistTrainImages, data::kMnistTrainLabels, data::kMnistTestImages,
                        data::kMnistTestLabels})
    files += double(train::file_bytes(dir + "/" + f));
  e.add(fmt::format("data set ({} files)", c.data.name),
        files + sizeof(int64_t) * double(count) + sizeof(int32_t) * Td,
        {train::key("data.dir", dir)});
  return e;
}

PmnistExperiment::PmnistExperiment(const PmnistConfig& cfg) : cfg_(cfg) {
  const auto& d = cfg.data;
  if (!core::file_exists(d.dir + "/" + data::kMnistTrainImages))
    throw core::UsageError(fmt::format(
        "data.dir: no MNIST at '{}' ({} missing; hint: run tools/fetch_data mnist, see "
        "docs/data.md, or set data.dir)",
        d.dir, data::kMnistTrainImages));
  mnist_ = data::load_mnist(d.dir);
  const auto& tr = mnist_.train.images;
  const auto& te = mnist_.test.images;
  T_ = tr.rows * tr.cols;
  if (d.valid_examples >= tr.count)
    throw core::UsageError(fmt::format(
        "data.valid_examples: {} leaves no training examples in {} (it has {} training images)",
        d.valid_examples, d.dir, tr.count));
  const int64_t rest = tr.count - d.valid_examples;
  n_train_ = d.train_examples > 0 ? std::min(d.train_examples, rest) : rest;
  n_valid_ = d.eval_examples > 0 ? std::min(d.eval_examples, d.valid_examples) : d.valid_examples;
  n_test_ = d.eval_examples > 0 ? std::min(d.eval_examples, te.count) : te.count;
  if (n_train_ < cfg.train.batch)
    throw core::UsageError(fmt::format(
        "train.batch: {} is more than the {} training examples (hint: lower train.batch or raise "
        "data.train_examples)",
        cfg.train.batch, n_train_));
  SB_CHECK(n_test_ > 0, "{}: the test file has no images", d.dir);
  updates_per_epoch_ = n_train_ / cfg.train.batch;
  if (d.check_epochs && cfg.train.eval_every % updates_per_epoch_ != 0)
    throw core::UsageError(fmt::format(
        "train.eval_every: {} is not a whole number of epochs ({} training examples / batch {} = "
        "{} updates per epoch; hint: set train.eval_every: {} or data.check_epochs: false)",
        cfg.train.eval_every, n_train_, cfg.train.batch, updates_per_epoch_, updates_per_epoch_));
  // Valid is the end of the training file, so it never overlaps a capped training set.
  train_ = {tr.pixels.data(), mnist_.train.labels.data(), n_train_};
  valid_ = {tr.pixels.data() + rest * T_, mnist_.train.labels.data() + rest, n_valid_};
  test_ = {te.pixels.data(), mnist_.test.labels.data(), n_test_};
  order_ = pixel_order(T_, d.permute, d.permute_seed);

  rnn_ = nn::make_recurrent(cfg.model, ps_, "rnn", 1, cfg.train.bptt);
  head_ = std::make_unique<nn::Linear>(ps_, "head", cfg.model.hidden, kClasses);
  ps_.finalize(optim::make_optimizer<float>(cfg.optim)->n_slots());
}

void PmnistExperiment::init() {
  core::Rng rng = core::Rng::derive(cfg_.train.seed, kInit);
  rnn_->init(rng);
  head_->init(rng);
}

void PmnistExperiment::shuffle_for_epoch(int64_t epoch) {
  // Each epoch's order depends only on (seed, epoch), so a resumed run needs only cursor_.
  core::Rng rng = core::Rng::derive(core::Rng::derive(cfg_.train.seed, kShuffle).next_u64(),
                                    uint64_t(epoch));
  perm_.resize(size_t(n_train_));
  for (int64_t i = 0; i < n_train_; ++i) perm_[size_t(i)] = i;
  for (int64_t i = n_train_ - 1; i > 0; --i)
    std::swap(perm_[size_t(i)], perm_[size_t(rng.randint(i + 1))]);
  shuffled_epoch_ = epoch;
}

void PmnistExperiment::make_batch(const Split& split, const int64_t* idx, int64_t b) {
  ensure(x_, core::Shape{T_, b, 1});
  labels_.resize(size_t(b));
  float* x = x_.data();
  constexpr float kScale = 1.0f / 255.0f;
  for (int64_t r = 0; r < b; ++r) {
    const uint8_t* img = split.pixels + idx[r] * T_;
    for (int64_t t = 0; t < T_; ++t) x[t * b + r] = float(img[order_[size_t(t)]]) * kScale;
    labels_[size_t(r)] = int32_t(split.labels[idx[r]]);
  }
}

std::pair<double, int64_t> PmnistExperiment::run_batch(bool backward,
                                                       std::vector<double>* dh_norms) {
  const int64_t b = x_.dim(1), H = rnn_->hidden();
  if (!(h_.shape() == core::Shape{T_, b, H})) {
    h_.resize(core::Shape{T_, b, H});
    dh_.resize(core::Shape{T_, b, H});  // zero: only the last step's slice is ever written
  }
  ensure(logits_, core::Shape{b, kClasses});
  ensure(dlogits_, core::Shape{b, kClasses});
  rnn_->forward(x_.cview(), core::ConstView(), h_.view());
  const core::ConstView last = h_.cview().sub(T_ - 1);  // (b, H)
  head_->forward(last, logits_.view());
  const auto ce = nn::softmax_cross_entropy<float>(logits_.cview(), labels_.data(), nullptr,
                                                   backward ? dlogits_.view() : core::View());
  if (backward) {
    head_->backward(last, dlogits_.cview(), dh_.view().sub(T_ - 1));
    rnn_->backward(dh_.cview(), core::View(), core::View(), dh_norms);
  }
  return {ce.loss, ce.correct};
}

train::Metrics PmnistExperiment::train_step() {
  const int64_t B = cfg_.train.batch;
  const int64_t epoch = cursor_ / updates_per_epoch_, i = cursor_ % updates_per_epoch_;
  if (shuffled_epoch_ != epoch) shuffle_for_epoch(epoch);
  make_batch(train_, perm_.data() + i * B, B);
  const auto [loss, correct] = run_batch(true, nullptr);
  ++cursor_;
  return {{"loss", loss}, {"acc", double(correct) / double(B)}};
}

std::pair<double, double> PmnistExperiment::eval_split(const Split& split, int64_t n) {
  const int64_t B = cfg_.train.batch;
  double loss = 0;
  int64_t correct = 0;
  idx_.resize(size_t(B));
  for (int64_t start = 0; start < n; start += B) {
    const int64_t b = std::min(B, n - start);
    for (int64_t r = 0; r < b; ++r) idx_[size_t(r)] = start + r;
    make_batch(split, idx_.data(), b);
    const auto [l, c] = run_batch(false, nullptr);
    loss += l * double(b);
    correct += c;
  }
  return {loss / double(n), double(correct) / double(n)};
}

train::Metrics PmnistExperiment::evaluate() {
  const auto [vloss, vacc] = eval_split(valid_, n_valid_);
  train::Metrics m{{"loss", vloss}, {"acc", vacc}};
  // The same rule as the Trainer's best: strictly better than every earlier validation.
  const bool best = !outcome_.has_best || vacc > outcome_.best_valid_acc;
  if (best || cfg_.data.test_every_eval) {
    const auto [tloss, tacc] = eval_split(test_, n_test_);
    m.push_back({"test_loss", tloss});
    m.push_back({"test_acc", tacc});
    if (best) {
      outcome_.has_best = true;
      outcome_.best_valid_acc = vacc;
      outcome_.best_update = cursor_;
      outcome_.test_acc = tacc;
      outcome_.test_loss = tloss;
    }
    if (cfg_.data.test_every_eval) outcome_.best_test_acc = std::max(outcome_.best_test_acc, tacc);
  }
  return m;
}

std::vector<double> PmnistExperiment::gradnorm_probe() {
  // A fixed probe batch: the first B validation images.
  const int64_t b = std::min(cfg_.train.batch, n_valid_);
  idx_.resize(size_t(b));
  for (int64_t r = 0; r < b; ++r) idx_[size_t(r)] = r;
  make_batch(valid_, idx_.data(), b);
  std::vector<double> norms;
  run_batch(true, &norms);
  return norms;
}

void PmnistExperiment::save_state(train::Checkpoint& ck) const {
  const core::Scope s = ck.scope("pmnist");
  s.put_int("cursor", cursor_);
  s.put_bool("has_best", outcome_.has_best);
  s.put_double("best_valid_acc", outcome_.best_valid_acc);
  s.put_int("best_update", outcome_.best_update);
  s.put_double("test_acc", outcome_.test_acc);
  s.put_double("test_loss", outcome_.test_loss);
  s.put_double("best_test_acc", outcome_.best_test_acc);
}

void PmnistExperiment::load_state(const train::Checkpoint& ck) {
  const core::ConstScope s = ck.scope("pmnist");
  cursor_ = s.get_int("cursor");
  shuffled_epoch_ = -1;
  outcome_.has_best = s.get_bool("has_best");
  outcome_.best_valid_acc = s.get_double("best_valid_acc");
  outcome_.best_update = s.get_int("best_update");
  outcome_.test_acc = s.get_double("test_acc");
  outcome_.test_loss = s.get_double("test_loss");
  outcome_.best_test_acc = s.get_double("best_test_acc");
}

}  // namespace seqbench::apps
