#include "apps/copy/copy_experiment.hpp"

#include "apps/copy/demo_config.hpp"
#include "nn/loss.hpp"
#include "optim/optimizer.hpp"

namespace seqbench::apps {

namespace {
// Independent random streams derived from train.seed.
enum Stream : uint64_t { kInit = 1, kData = 2, kValid = 3, kProbe = 4 };

void ensure(core::Tensor& t, core::Shape s) {
  if (!(t.shape() == s)) t.resize(s);
}
}  // namespace

CopyConfig copy_paper_defaults() { return CopyConfig{}; }

train::MemoryEstimate copy_memory(const CopyConfig& c) {
  const data::SyntheticTask task(c.task);
  const double L = double(task.length()), B = double(c.train.batch), I = double(task.input_size());
  const double O = double(task.output_size()), H = double(c.model.hidden);
  const bool probe = c.train.gradnorm_every > 0;
  std::vector<std::string> size_keys{train::key("task.T", c.task.T)};
  if (task.classification()) size_keys.push_back(train::key("task.copy_len", c.task.copy_len));
  size_keys.push_back(train::key("train.batch", c.train.batch));
  train::MemoryEstimate e;
  train::add_recurrent(e, c.model, c.optim, task.input_size(), task.length(), c.train.batch, probe,
                       c.model.hidden * task.output_size() + task.output_size(), size_keys);
  std::vector<std::string> keys = size_keys;
  keys.insert(keys.begin(), train::key("model.hidden", c.model.hidden));
  e.add("hidden states, outputs and their gradients",
        sizeof(float) * (2 * L * B * H + 2 * L * B * O + (probe ? L * B : 0.0)), keys);
  keys = size_keys;
  if (task.classification()) keys.push_back(train::key("task.n_symbols", c.task.n_symbols));
  e.add("batches (training, and validation or probe)",
        2 * (sizeof(float) * (L * B * I + L * B + B * O) + sizeof(int32_t) * L * B), keys);
  return e;
}

const char* const kCopyDemoYaml = kCopyDemoYamlText;

CopyExperiment::CopyExperiment(const CopyConfig& cfg)
    : cfg_(cfg), task_(cfg.task), data_rng_(core::Rng::derive(cfg.train.seed, kData)) {
  model_ = std::make_unique<nn::SeqModel>(cfg.model, ps_, task_.input_size(), task_.output_size(),
                                          cfg.train.bptt);
  ps_.finalize(optim::make_optimizer<float>(cfg.optim)->n_slots());
}

void CopyExperiment::init() {
  core::Rng rng = core::Rng::derive(cfg_.train.seed, kInit);
  model_->init(rng);
}

train::Metrics CopyExperiment::run_batch(const data::SyntheticTask& task,
                                         const data::SeqBatch& batch, bool backward,
                                         bool scored_only, std::vector<double>* dh_norms) {
  const int64_t L = batch.L, B = batch.B, O = task.output_size();
  ensure(out_, core::Shape{L, B, O});
  ensure(dout_, core::Shape{L, B, O});
  model_->forward(batch.x.cview(), out_.view());
  const int64_t K = task.scored_steps();
  train::Metrics m;
  if (task.classification()) {
    const float* mask = batch.mask.data();
    if (scored_only) {  // loss on the last K steps only (the probe's L_last)
      scored_mask_.assign(size_t(L * B), 0.f);
      std::fill(scored_mask_.begin() + (L - K) * B, scored_mask_.end(), 1.f);
      mask = scored_mask_.data();
    }
    const auto all = nn::softmax_cross_entropy<float>(
        out_.view().reshape(core::Shape{L * B, O}), batch.labels.data(), mask,
        backward ? dout_.view().reshape(core::Shape{L * B, O}) : core::View());
    // Accuracy on the last K steps.
    const auto last = nn::softmax_cross_entropy<float>(
        core::ConstView(out_.data() + (L - K) * B * O, core::Shape{K * B, O}),
        batch.labels.data() + (L - K) * B, nullptr, core::View());
    m = {{"loss", all.loss}, {"acc", double(last.correct) / double(K * B)}};
  } else {
    core::ConstView last(out_.data() + (L - 1) * B * O, core::Shape{B, O});
    core::View dlast(dout_.data() + (L - 1) * B * O, core::Shape{B, O});
    if (backward) std::fill_n(dout_.data(), (L - 1) * B * O, 0.f);
    const double loss = nn::mse<float>(last, batch.target.cview(), backward ? dlast : core::View());
    m = {{"loss", loss}, {"mse", loss}};
  }
  if (backward) model_->backward(dout_.cview(), dh_norms);
  return m;
}

train::Metrics CopyExperiment::train_step() {
  task_.generate(data_rng_, cfg_.train.batch, batch_);
  return run_batch(task_, batch_, true, false, nullptr);
}

train::Metrics CopyExperiment::eval_on(const data::SyntheticTask& task) {
  core::Rng rng = core::Rng::derive(cfg_.train.seed, kValid);  // the same set every time
  data::SeqBatch batch;
  double loss = 0, value = 0;
  const int64_t n = cfg_.train.eval_batches;
  for (int64_t i = 0; i < n; ++i) {
    task.generate(rng, cfg_.train.batch, batch);
    const train::Metrics m = run_batch(task, batch, false, false, nullptr);
    loss += m[0].second / double(n);
    value += m[1].second / double(n);
  }
  return {{"loss", loss}, {metric(), value}};
}

train::Metrics CopyExperiment::evaluate() { return eval_on(task_); }

train::Metrics CopyExperiment::evaluate_at(int64_t T) {
  data::TaskConfig tc = cfg_.task;
  tc.T = T;
  return eval_on(data::SyntheticTask(tc));
}

std::vector<double> CopyExperiment::gradnorm_probe() {
  core::Rng rng = core::Rng::derive(cfg_.train.seed, kProbe);  // a fixed probe batch
  data::SeqBatch batch;
  task_.generate(rng, cfg_.train.batch, batch);
  std::vector<double> norms;
  run_batch(task_, batch, true, true, &norms);
  return norms;
}

void CopyExperiment::save_state(train::Checkpoint& ck) const { ck.put_rng("data_rng", data_rng_); }

void CopyExperiment::load_state(const train::Checkpoint& ck) {
  if (ck.has("data_rng")) {
    data_rng_ = ck.get_rng("data_rng");
    return;
  }
  // Checkpoints written before the state container kept the four words under four keys.
  core::Rng::State s;
  for (size_t i = 0; i < s.size(); ++i) s[i] = ck.get_u64(fmt::format("data_rng{}", i));
  data_rng_.set_state(s);
}

}  // namespace seqbench::apps
