// The shared Transformer-LM experiment: model, train step, evaluation, probe, state.
#include "apps/common/transformer_lm_experiment.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <utility>

#include "core/check.hpp"
#include "nn/loss.hpp"
#include "optim/optimizer.hpp"
#include "train/checkpoint.hpp"

namespace seqbench::apps {

namespace {
enum Stream : uint64_t { kInit = 1, kModel = 2 };

void ensure(core::Tensor& t, core::Shape s) {
  if (!(t.shape() == s)) t.resize(s);
}
}  // namespace

TransformerLmExperiment::EvalDraws::EvalDraws(nn::TransformerLM& m)
    : m_(m), saved_(m.draws()) {
  m_.set_draws(kEvalDraws);
}

TransformerLmExperiment::EvalDraws::~EvalDraws() { m_.set_draws(saved_); }

TransformerLmExperiment::TransformerLmExperiment(std::string app, LmMetric metric,
                                                 const nn::TransformerConfig& model_cfg,
                                                 const optim::OptimConfig& optim_cfg,
                                                 const train::TrainConfig& train_cfg,
                                                 const char* bptt_hint)
    : app_(std::move(app)), metric_(metric), model_cfg_(model_cfg), optim_cfg_(optim_cfg),
      seed_(train_cfg.seed) {
  if (train_cfg.bptt != 0)
    throw core::UsageError(fmt::format(
        "train.bptt: {} has no meaning for a Transformer (hint: leave it 0; {})", train_cfg.bptt,
        bptt_hint));
  nn::check_rules(model_cfg);  // config mistakes before the (slow) data load
}

void TransformerLmExperiment::build_model(int64_t vocab, int64_t context,
                                          int64_t updates_per_epoch) {
  vocab_ = vocab;
  context_ = context;
  updates_per_epoch_ = updates_per_epoch;
  model_ = std::make_unique<nn::TransformerLM>(model_cfg_, ps_, "lm", vocab, context,
                                               core::Rng::derive(seed_, kModel).next_u64());
  ps_.finalize(optim::make_optimizer<float>(optim_cfg_)->n_slots());
}

auto TransformerLmExperiment::forward_valid(int64_t i) -> Rows {
  SB_CHECK(i >= 0 && i < valid_batches(), "{}: validation batch {} of {}", app_, i,
           valid_batches());
  EvalDraws draws(*model_);
  const Batch x = load_eval_batch(Split::kValid, i);
  forward(x, false);
  return {x.b, x.L};
}

void TransformerLmExperiment::init() {
  core::Rng rng = core::Rng::derive(seed_, kInit);
  model_->init(rng);
}

std::string TransformerLmExperiment::metric() const {
  return metric_ == LmMetric::kPerplexity ? "ppl" : "bpd";
}

double TransformerLmExperiment::from_nats(double loss) const {
  return metric_ == LmMetric::kPerplexity ? std::exp(loss) : loss / std::log(2.0);
}

void TransformerLmExperiment::forward(Batch x, bool training, bool with_grad) {
  ensure(logits_, core::Shape{x.b * x.L, vocab_});
  if (with_grad) ensure(dlogits_, core::Shape{x.b * x.L, vocab_});
  model_->forward(ids_.data(), x.b, x.L, logits_.view(), training);
}

train::Metrics TransformerLmExperiment::train_step() {
  const Batch x = load_train_batch(cursor_);
  forward(x, true, true);
  const auto ce =
      nn::softmax_cross_entropy<float>(logits_.cview(), targets_.data(), nullptr, dlogits_.view());
  model_->backward(dlogits_.cview());
  ++cursor_;
  return {{"loss", ce.loss}, {metric(), from_nats(ce.loss)}};
}

double TransformerLmExperiment::eval_loss(Split s) {
  EvalDraws draws(*model_);
  double loss = 0;
  int64_t n = 0;
  const int64_t batches = eval_batches(s);
  for (int64_t i = 0; i < batches; ++i) {
    const Batch x = load_eval_batch(s, i);
    forward(x, false);
    const auto ce = nn::softmax_cross_entropy<float>(logits_.cview(), targets_.data(), nullptr,
                                                     core::View());
    loss += ce.loss * double(x.b * x.L);
    n += x.b * x.L;
  }
  return loss / double(n);
}

train::Metrics TransformerLmExperiment::evaluate() {
  const double vloss = eval_loss(Split::kValid);
  const double v = from_nats(vloss);
  train::Metrics m{{"loss", vloss}, {metric(), v}};
  // The same rule as the Trainer's best: strictly lower than every earlier validation.
  if (!outcome_.has_best || v < outcome_.best_valid) {
    const double tloss = eval_loss(Split::kTest);
    m.push_back({"test_loss", tloss});
    m.push_back({"test_" + metric(), from_nats(tloss)});
    outcome_ = {true, v, cursor_, from_nats(tloss)};
  }
  return m;
}

std::vector<double> TransformerLmExperiment::gradnorm_probe() {
  EvalDraws draws(*model_);
  const Batch x = load_eval_batch(Split::kValid, 0);
  mask_.assign(size_t(x.b * x.L), 0.f);
  for (int64_t c = 0; c < x.b; ++c) mask_[size_t(c * x.L + x.L - 1)] = 1.f;
  forward(x, false, true);
  nn::softmax_cross_entropy<float>(logits_.cview(), targets_.data(), mask_.data(), dlogits_.view());
  std::vector<double> norms;
  model_->backward(dlogits_.cview(), &norms);
  return norms;
}

size_t TransformerLmExperiment::held_bytes() {
  return model_->held_bytes() + size_t(logits_.numel() + dlogits_.numel()) * sizeof(float);
}

void TransformerLmExperiment::save_state(train::Checkpoint& ck) const {
  const core::Scope s = ck.scope(app_);
  s.put_int("cursor", cursor_);
  s.put_bool("has_best", outcome_.has_best);
  s.put_double("best_valid_" + metric(), outcome_.best_valid);
  s.put_int("best_update", outcome_.best_update);
  s.put_double("test_" + metric(), outcome_.test);
  // Dropout RNG, draw count, routing centroids: without them a resumed run would draw
  // other masks and hashes and route by other centroids.
  model_->save_state(s.scope("model"));
}

void TransformerLmExperiment::load_state(const train::Checkpoint& ck) {
  const core::ConstScope s = ck.scope(app_);
  cursor_ = s.get_int("cursor");
  outcome_.has_best = s.get_bool("has_best");
  outcome_.best_valid = s.get_double("best_valid_" + metric());
  outcome_.best_update = s.get_int("best_update");
  outcome_.test = s.get_double("test_" + metric());
  model_->load_state(s.scope("model"));
}

std::string lm_attention(const nn::TransformerConfig& m) {
  if (nn::transformer_mixer(m)) return m.attention;
  return nn::head_groups_str(nn::parse_head_groups(m.attention, m.heads));
}

std::string lm_run_label(const nn::TransformerConfig& m) {
  std::string id;
  for (char ch : lm_attention(m))
    if (ch == ',') id += '-';
    else if (ch != ':') id += ch;
  return id;
}

}  // namespace seqbench::apps
