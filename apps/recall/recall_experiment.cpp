#include "apps/recall/recall_experiment.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "apps/recall/demo_config.hpp"
#include "config/yaml_config.hpp"
#include "core/buffer.hpp"
#include "core/check.hpp"
#include "nn/loss.hpp"
#include "nn/registry.hpp"
#include "nn/seq_model.hpp"
#include "optim/optimizer.hpp"

namespace seqbench::apps {

namespace {
// Independent random streams derived from train.seed.
enum Stream : uint64_t { kInit = 1, kData = 2, kValid = 3, kProbe = 4, kModel = 5, kPool = 6 };
constexpr double kF = sizeof(float);

bool transformer(const RecallConfig& c) { return c.family == "transformer"; }

// The positions a Transformer can take: the task's length with a learned position table;
// without one, longer sequences too (length extrapolation, --eval-T), up to kMaxEvalLen.
constexpr int64_t kMaxEvalLen = 16384;
int64_t max_len(const RecallConfig& c) {
  const int64_t n = data::RecallTask(c.task).length();
  return c.model.positions == "learned" ? n : std::max(n, kMaxEvalLen);
}
}  // namespace

const char* const kRecallDemoYaml = kRecallDemoYamlText;

RecallConfig::RecallConfig() {
  // Zoology's defaults for its MQAR sweeps, scaled to a CPU: two layers, no dropout,
  // AdamW-like optimisation with a short warmup is left to the presets.
  model.layers = 2;
  model.d_model = 64;
  model.heads = 1;
  model.d_ff = 128;
  model.dropout = 0.0;
  model.attention = "full";
  rnn.hidden = 64;
}

RecallConfig resolved(RecallConfig c) {
  if (c.width == 0) return c;
  if (c.family == "transformer") {
    c.model.d_model = c.width;
  } else {
    c.rnn.hidden = c.width;
    c.embedding = c.width;
  }
  c.width = 0;
  return c;
}

void check_rules(const RecallConfig& cfg) {
  const RecallConfig c = resolved(cfg);
  data::check_rules(c.task);
  const auto unused = [&](const std::string& section, const std::string& now,
                          const std::string& defaults) {
    if (now != defaults)
      throw core::UsageError(fmt::format(
          "{} is set, but family is '{}', which does not read it (hint: family: {} or remove "
          "the {} section)",
          section, c.family, c.family == "transformer" ? "recurrent" : "transformer", section));
  };
  const RecallConfig d;
  if (transformer(c)) {
    nn::check_rules(c.model);
    unused("rnn", config::to_yaml(c.rnn), config::to_yaml(d.rnn));
    if (c.embedding != d.embedding) unused("embedding", "set", "");
  } else {
    unused("model", config::to_yaml(c.model), config::to_yaml(d.model));
  }
  for (const int64_t m : c.extrapolate) {
    const int64_t n = m * c.task.seq_len;
    if (n > max_len(c))
      throw core::UsageError(fmt::format(
          "extrapolate: {} x task.seq_len = {} is beyond the {} positions the model takes ({}) (hint: "
          "model.positions: none or sinusoidal, up to {})",
          m, n, max_len(c),
          c.model.positions == "learned" ? "a learned table of task.seq_len" : "its limit", kMaxEvalLen));
  }
}

std::string recall_model_name(const RecallConfig& cfg) {
  const RecallConfig c = resolved(cfg);
  if (transformer(c)) return c.model.attention;
  const unsigned reads = nn::find_cell(c.rnn.cell).reads;
  if (reads & nn::kRelevancy) return fmt::format("{}(nu={},rho={})", c.rnn.cell, c.rnn.nu, c.rnn.rho);
  return c.rnn.cell;
}

double recall_state_bytes(const RecallConfig& cfg, int64_t n) {
  const RecallConfig c = resolved(cfg);
  if (!transformer(c))
    return kF * nn::carried_floats(*nn::find_cell(c.rnn.cell).footprint, c.rnn, double(n));
  const nn::TransformerConfig& m = c.model;
  if (const nn::CellEntry* mixer = nn::transformer_mixer(m)) {
    core::ParamStoreT<float> ps;
    return kF * double(m.layers) *
           double(nn::make_mixer<float>(*mixer->mixer, m.mixer, ps, "probe", m.d_model, m.d_model)
                      ->state_size());
  }
  // Attention's key-value cache: every head group keeps the keys and values it can still
  // attend to; only local heads forget (a block attends to itself and the block before).
  double bytes = 0;
  const double hd = double(m.d_model / m.heads);
  for (int64_t l = 0; l < m.layers; ++l)
    for (const nn::HeadGroup& g : nn::layer_head_groups(m, l)) {
      const double w = double(m.local_window > 0 ? m.local_window : m.window);
      const double kept = g.kind == "local" ? std::min(double(n), 2 * w) : double(n);
      bytes += kF * 2 * kept * hd * double(g.heads);
    }
  return bytes;
}

train::MemoryEstimate recall_memory(const RecallConfig& cfg) {
  const RecallConfig c = resolved(cfg);
  const data::RecallTask task(c.task);
  const int64_t N = task.length(), B = c.train.batch, V = task.vocab();
  const bool probe = c.train.gradnorm_every > 0;
  std::vector<std::string> size_keys{train::key("task.seq_len", c.task.seq_len),
                                     train::key("train.batch", c.train.batch)};
  std::vector<std::string> vocab_keys{train::key("task.vocab", c.task.vocab)};
  train::MemoryEstimate e;
  if (transformer(c)) {
    train::add_transformer(e, c.model, c.optim, V, max_len(c), B, N, 1, size_keys, vocab_keys);
  } else {
    const double E = double(c.embedding), H = double(c.rnn.hidden), BN = double(B * N);
    train::add_recurrent(e, c.rnn, c.optim, c.embedding, N, B, probe,
                         V * c.embedding + c.rnn.hidden * V + V, size_keys);
    e.add("embeddings, hidden states, logits and their gradients",
          kF * (2 * BN * E + 2 * BN * H + 2 * BN * double(V)), size_keys);
  }
  e.add("batches (ids, targets, masks; training and validation)",
        2 * double(B * N) * (2 * sizeof(int32_t) + sizeof(float)) * 2, size_keys);
  if (c.task.train_examples > 0)
    e.add("the fixed training set (task.train_examples sequences)",
          double(c.task.train_examples * N) * (2 * sizeof(int32_t) + sizeof(float)),
          {train::key("task.train_examples", c.task.train_examples),
           train::key("task.seq_len", c.task.seq_len)});
  return e;
}

RecallExperiment::RecallExperiment(const RecallConfig& cfg)
    : cfg_(resolved(cfg)), task_(cfg.task), data_rng_(core::Rng::derive(cfg.train.seed, kData)) {
  check_rules(cfg_);
  const int64_t V = task_.vocab();
  if (transformer(cfg_)) {
    lm_ = std::make_unique<nn::TransformerLM>(cfg_.model, ps_, "lm", V, max_len(cfg_),
                                              core::Rng::derive(cfg_.train.seed, kModel).next_u64());
  } else {
    if (cfg_.train.bptt > 0)
      throw core::UsageError(fmt::format(
          "train.bptt = {}: the recall tasks score the last positions of a sequence, which "
          "truncated BPTT would cut off from the keys (hint: train.bptt: 0)",
          cfg_.train.bptt));
    emb_ = std::make_unique<nn::Embedding>(ps_, "emb", V, cfg_.embedding);
    rnn_ = nn::make_recurrent(cfg_.rnn, ps_, "rnn", cfg_.embedding, 0);
    head_ = std::make_unique<nn::Linear>(ps_, "head", cfg_.rnn.hidden, V);
  }
  ps_.finalize(optim::make_optimizer<float>(cfg_.optim)->n_slots());
  if (cfg_.task.train_examples > 0) {
    core::Rng rng = core::Rng::derive(cfg_.train.seed, kPool);
    task_.generate(rng, cfg_.task.train_examples, pool_, data::Split::kTrain);
  }
}

void RecallExperiment::init() {
  core::Rng rng = core::Rng::derive(cfg_.train.seed, kInit);
  if (lm_) {
    lm_->init(rng);
    return;
  }
  emb_->init(rng);
  rnn_->init(rng);
  head_->init(rng);
}

train::Metrics RecallExperiment::run_batch(const data::RecallBatch& b, bool backward,
                                           std::vector<double>* norms) {
  const int64_t B = b.B, N = b.N, V = task_.vocab(), BN = B * N;
  core::ensure_shape(logits_, core::Shape{BN, V});
  core::ensure_shape(dlogits_, core::Shape{BN, V});
  const int32_t* targets = b.targets.data();
  const float* mask = b.mask.data();
  if (lm_) {
    lm_->forward(b.ids.data(), B, N, logits_.view(), backward);
  } else {
    // Time-major for the recurrent layer: row t B + b.
    const int64_t E = cfg_.embedding, H = cfg_.rnn.hidden;
    ids_tm_.resize(size_t(BN));
    targets_tm_.resize(size_t(BN));
    mask_tm_.resize(size_t(BN));
    for (int64_t i = 0; i < B; ++i)
      for (int64_t t = 0; t < N; ++t) {
        ids_tm_[size_t(t * B + i)] = b.ids[size_t(i * N + t)];
        targets_tm_[size_t(t * B + i)] = b.targets[size_t(i * N + t)];
        mask_tm_[size_t(t * B + i)] = b.mask[size_t(i * N + t)];
      }
    targets = targets_tm_.data();
    mask = mask_tm_.data();
    core::ensure_shape(x_, core::Shape{N, B, E});
    core::ensure_shape(h_, core::Shape{N, B, H});
    emb_->forward(ids_tm_.data(), BN, x_.view().reshape(core::Shape{BN, E}));
    rnn_->forward(x_.cview(), core::ConstView(), h_.view());
    head_->forward(h_.cview().reshape(core::Shape{BN, H}), logits_.view());
  }
  const auto r = nn::softmax_cross_entropy<float>(logits_.cview(), targets, mask,
                                                  backward ? dlogits_.view() : core::View());
  const train::Metrics m{{"loss", r.loss}, {"acc", r.count > 0 ? double(r.correct) / r.count : 0.0}};
  if (!backward) return m;
  if (lm_) {
    lm_->backward(dlogits_.cview(), norms);
    return m;
  }
  const int64_t E = cfg_.embedding, H = cfg_.rnn.hidden;
  core::ensure_shape(dh_, core::Shape{N, B, H});
  core::ensure_shape(dx_, core::Shape{N, B, E});
  head_->backward(h_.cview().reshape(core::Shape{BN, H}), dlogits_.cview(),
                  dh_.view().reshape(core::Shape{BN, H}));
  rnn_->backward(dh_.cview(), dx_.view(), core::View(), norms);
  emb_->backward(ids_tm_.data(), BN, dx_.cview().reshape(core::Shape{BN, E}));
  return m;
}

train::Metrics RecallExperiment::train_step() {
  const int64_t B = cfg_.train.batch;
  if (pool_.B == 0) {
    task_.generate(data_rng_, B, batch_, data::Split::kTrain);
    return run_batch(batch_, true, nullptr);
  }
  // B sequences of the fixed training set, uniformly with replacement.
  const int64_t N = pool_.N;
  batch_.B = B;
  batch_.N = N;
  batch_.ids.resize(size_t(B * N));
  batch_.targets.resize(size_t(B * N));
  batch_.mask.resize(size_t(B * N));
  for (int64_t b = 0; b < B; ++b) {
    const size_t from = size_t(data_rng_.randint(pool_.B) * N), to = size_t(b * N);
    std::copy_n(pool_.ids.begin() + from, N, batch_.ids.begin() + to);
    std::copy_n(pool_.targets.begin() + from, N, batch_.targets.begin() + to);
    std::copy_n(pool_.mask.begin() + from, N, batch_.mask.begin() + to);
  }
  return run_batch(batch_, true, nullptr);
}

train::Metrics RecallExperiment::eval_on(const data::RecallTask& task) {
  core::Rng rng = core::Rng::derive(cfg_.train.seed, kValid);  // the same set every time
  data::RecallBatch batch;
  double loss = 0, acc = 0;
  const int64_t n = cfg_.train.eval_batches;
  for (int64_t i = 0; i < n; ++i) {
    task.generate(rng, cfg_.train.batch, batch);
    const train::Metrics m = run_batch(batch, false, nullptr);
    loss += m[0].second / double(n);
    acc += m[1].second / double(n);
  }
  return {{"loss", loss}, {"acc", acc}};
}

train::Metrics RecallExperiment::evaluate() { return eval_on(task_); }

train::Metrics RecallExperiment::evaluate_at(int64_t n) {
  if (lm_ && n > max_len(cfg_))
    throw core::UsageError(fmt::format(
        "--eval-T {}: the model takes at most {} positions ({}) (hint: train with "
        "model.positions: none or sinusoidal to evaluate sequences up to {})",
        n, max_len(cfg_),
        cfg_.model.positions == "learned" ? "a learned table of task.seq_len" : "its limit",
        kMaxEvalLen));
  data::RecallTaskConfig tc = cfg_.task;
  tc.seq_len = n;
  return eval_on(data::RecallTask(tc));
}

std::vector<double> RecallExperiment::gradnorm_probe() {
  core::Rng rng = core::Rng::derive(cfg_.train.seed, kProbe);  // a fixed probe batch
  data::RecallBatch batch;
  task_.generate(rng, cfg_.train.batch, batch, data::Split::kTrain);
  std::vector<double> norms;
  run_batch(batch, true, &norms);
  return norms;
}

size_t RecallExperiment::held_bytes() {
  if (lm_) return lm_->held_bytes();
  return rnn_->held_bytes();
}

void RecallExperiment::save_state(train::Checkpoint& ck) const {
  core::Scope s = ck.scope("recall");
  s.put_rng("data_rng", data_rng_);
  if (lm_) lm_->save_state(s.scope("model"));
}

void RecallExperiment::load_state(const train::Checkpoint& ck) {
  const core::ConstScope s = ck.scope("recall");
  data_rng_ = s.get_rng("data_rng");
  if (lm_) lm_->load_state(s.scope("model"));
}

}  // namespace seqbench::apps
