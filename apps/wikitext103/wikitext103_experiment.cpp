#include "apps/wikitext103/wikitext103_experiment.hpp"

#include <algorithm>
#include <cmath>

#include "apps/wikitext103/demo_config.hpp"
#include "config/yaml_config.hpp"
#include "core/fs.hpp"
#include "nn/loss.hpp"
#include "optim/optimizer.hpp"
#include "train/checkpoint.hpp"
#include "train/trainer.hpp"

namespace seqbench::apps {

namespace {
enum Stream : uint64_t { kInit = 1, kModel = 2 };

void ensure(core::Tensor& t, core::Shape s) {
  if (!(t.shape() == s)) t.resize(s);
}

TokenColumns columns(const std::vector<int32_t>& tokens, int64_t cap, int64_t B) {
  const int64_t n =
      cap > 0 ? std::min<int64_t>(cap, int64_t(tokens.size())) : int64_t(tokens.size());
  return TokenColumns{tokens.data(), B, n / B};
}

// Restores the model's draw index when an evaluation or probe is done with it.
struct DrawsGuard {
  nn::TransformerLM& m;
  uint64_t saved;
  explicit DrawsGuard(nn::TransformerLM& model) : m(model), saved(model.draws()) {}
  ~DrawsGuard() { m.set_draws(saved); }
  DrawsGuard(const DrawsGuard&) = delete;
  DrawsGuard& operator=(const DrawsGuard&) = delete;
};

const char* const kStatePrefix = "wikitext103.model.";
}  // namespace

const char* const kWikitext103DemoYaml = kWikitext103DemoYamlText;

// Defaults: the small routing preset's sizes (configs/wikitext103/routing_small.yaml);
// the paper's settings are in configs/wikitext103/routing.yaml.
Wikitext103Config::Wikitext103Config() {
  model.attention = "local:2,routing:2";
  model.window = 32;
  model.clusters = 4;
  optim.name = "adam";
  optim.lr = 1e-3;
  optim.clip = 1.0;
  train.batch = 8;
  train.steps = 600;
  train.eval_every = 200;
  train.log_every = 20;
}

Wikitext103Experiment::Wikitext103Experiment(const Wikitext103Config& cfg) : cfg_(cfg) {
  const auto& d = cfg.data;
  if (cfg.train.bptt != 0)
    throw core::UsageError(fmt::format(
        "train.bptt: {} has no meaning for a Transformer (hint: leave it 0; lm.seq_len sets "
        "the context)",
        cfg.train.bptt));
  nn::validate(cfg.model);  // config mistakes before the (slow) corpus load
  if (!d.dir.empty() && !core::file_exists(d.dir))
    throw core::UsageError(fmt::format(
        "data.dir: no corpus at '{}' (hint: {}, see docs/data.md; or set data.dir, or for one "
        "file data.dir: \"\" and data.path)",
        d.dir,
        d.format == "wikitext" ? "put wiki.train.tokens, wiki.valid.tokens and wiki.test.tokens "
                                 "there (Wikitext-103, fetched by hand)"
                               : "run tools/fetch_data brown for the stand-in"));
  data::CorpusConfig cc;
  cc.format = d.format;
  cc.dir = d.dir;
  cc.path = d.path;
  cc.level = "word";
  cc.valid_fraction = d.valid_fraction;
  cc.test_fraction = d.test_fraction;
  cc.min_count = d.min_count;
  corpus_ = data::load_corpus(cc);
  V_ = corpus_.vocab.size();
  const int64_t B = cfg.train.batch, L = cfg.lm.seq_len;
  train_ = columns(corpus_.train, d.train_tokens, B);
  valid_ = columns(corpus_.valid, d.eval_tokens, d.eval_batch);
  test_ = columns(corpus_.test, d.eval_tokens, d.eval_batch);
  if (train_.cols < 2)
    throw core::UsageError(fmt::format(
        "train.batch: {} columns of {} training tokens leave fewer than 2 tokens per column "
        "(hint: lower train.batch or raise data.train_tokens)",
        B, std::min<int64_t>(int64_t(corpus_.train.size()),
                             d.train_tokens > 0 ? d.train_tokens : int64_t(corpus_.train.size()))));
  for (const auto* s : {&valid_, &test_})
    if (s->cols < 2)
      throw core::UsageError(fmt::format(
          "data.eval_batch: {} columns leave fewer than 2 tokens per column of the {} stream "
          "(hint: lower data.eval_batch or raise data.eval_tokens)",
          d.eval_batch, s == &valid_ ? "validation" : "test"));
  updates_per_epoch_ = train_.segments(L);
  model_ = std::make_unique<nn::TransformerLM>(cfg.model, ps_, "lm", V_, L,
                                               core::Rng::derive(cfg.train.seed, kModel).next_u64());
  ps_.finalize(optim::make_optimizer<float>(cfg.optim)->n_slots());
}

void Wikitext103Experiment::init() {
  core::Rng rng = core::Rng::derive(cfg_.train.seed, kInit);
  model_->init(rng);
}

int64_t Wikitext103Experiment::load_segment(const TokenColumns& s, int64_t i) {
  const int64_t L = s.segment_len(i, cfg_.lm.seq_len), b = s.B, pos = i * cfg_.lm.seq_len;
  ids_.resize(size_t(b * L));
  targets_.resize(size_t(b * L));
  for (int64_t c = 0; c < b; ++c) {
    const int32_t* col = s.tokens + c * s.cols + pos;
    std::copy_n(col, L, ids_.data() + c * L);
    std::copy_n(col + 1, L, targets_.data() + c * L);
  }
  return L;
}

train::Metrics Wikitext103Experiment::train_step() {
  const int64_t i = cursor_ % updates_per_epoch_, b = train_.B;
  const int64_t L = load_segment(train_, i);
  ensure(logits_, core::Shape{b * L, V_});
  ensure(dlogits_, core::Shape{b * L, V_});
  model_->forward(ids_.data(), b, L, logits_.view(), true);
  const auto ce =
      nn::softmax_cross_entropy<float>(logits_.cview(), targets_.data(), nullptr, dlogits_.view());
  model_->backward(dlogits_.cview());
  ++cursor_;
  return {{"loss", ce.loss}, {"ppl", std::exp(ce.loss)}};
}

double Wikitext103Experiment::eval_stream(const TokenColumns& s) {
  DrawsGuard guard(*model_);
  model_->set_draws(kEvalDraws);
  double loss = 0;
  int64_t n = 0;
  const int64_t segments = s.segments(cfg_.lm.seq_len);
  for (int64_t i = 0; i < segments; ++i) {
    const int64_t L = load_segment(s, i);
    ensure(logits_, core::Shape{s.B * L, V_});
    model_->forward(ids_.data(), s.B, L, logits_.view(), false);
    const auto ce = nn::softmax_cross_entropy<float>(logits_.cview(), targets_.data(), nullptr,
                                                     core::View());
    loss += ce.loss * double(L * s.B);
    n += L * s.B;
  }
  return loss / double(n);
}

int64_t Wikitext103Experiment::forward_segment(const TokenColumns& s, int64_t i) {
  SB_CHECK(i >= 0 && i < s.segments(cfg_.lm.seq_len),
           "wikitext103: segment {} of a stream with {} segments", i, s.segments(cfg_.lm.seq_len));
  DrawsGuard guard(*model_);
  model_->set_draws(kEvalDraws);
  const int64_t L = load_segment(s, i);
  ensure(logits_, core::Shape{s.B * L, V_});
  model_->forward(ids_.data(), s.B, L, logits_.view(), false);
  return L;
}

train::Metrics Wikitext103Experiment::evaluate() {
  const double vloss = eval_stream(valid_);
  const double vppl = std::exp(vloss);
  train::Metrics m{{"loss", vloss}, {"ppl", vppl}};
  // The same rule as the Trainer's best: strictly lower than every earlier validation.
  if (!outcome_.has_best || vppl < outcome_.best_valid_ppl) {
    const double tloss = eval_stream(test_);
    m.push_back({"test_loss", tloss});
    m.push_back({"test_ppl", std::exp(tloss)});
    outcome_ = {true, vppl, cursor_, std::exp(tloss)};
  }
  return m;
}

std::vector<double> Wikitext103Experiment::gradnorm_probe() {
  DrawsGuard guard(*model_);
  model_->set_draws(kEvalDraws);
  const int64_t L = load_segment(valid_, 0), b = valid_.B;
  mask_.assign(size_t(b * L), 0.f);
  for (int64_t c = 0; c < b; ++c) mask_[size_t(c * L + L - 1)] = 1.f;
  ensure(logits_, core::Shape{b * L, V_});
  ensure(dlogits_, core::Shape{b * L, V_});
  model_->forward(ids_.data(), b, L, logits_.view(), false);
  nn::softmax_cross_entropy<float>(logits_.cview(), targets_.data(), mask_.data(), dlogits_.view());
  std::vector<double> norms;
  model_->backward(dlogits_.cview(), &norms);
  return norms;
}

size_t Wikitext103Experiment::held_bytes() {
  return model_->held_bytes() + size_t(logits_.numel() + dlogits_.numel()) * sizeof(float);
}

void Wikitext103Experiment::save_state(train::Checkpoint& ck) const {
  const auto hex = [](double v) { return fmt::format("{:a}", v); };
  ck.set_meta("wikitext103.cursor", std::to_string(cursor_));
  ck.set_meta("wikitext103.has_best", outcome_.has_best ? "1" : "0");
  ck.set_meta("wikitext103.best_valid_ppl", hex(outcome_.best_valid_ppl));
  ck.set_meta("wikitext103.best_update", std::to_string(outcome_.best_update));
  ck.set_meta("wikitext103.test_ppl", hex(outcome_.test_ppl));
  // Dropout RNG, draw count, routing centroids: without them a resumed run would draw
  // other masks and hashes and route by other centroids.
  train::put_state(ck, kStatePrefix, model_->state());
}

void Wikitext103Experiment::load_state(const train::Checkpoint& ck) {
  const auto unhex = [&](const char* k) { return std::strtod(ck.meta_at(k).c_str(), nullptr); };
  cursor_ = std::stoll(ck.meta_at("wikitext103.cursor"));
  outcome_.has_best = ck.meta_at("wikitext103.has_best") == "1";
  outcome_.best_valid_ppl = unhex("wikitext103.best_valid_ppl");
  outcome_.best_update = std::stoll(ck.meta_at("wikitext103.best_update"));
  outcome_.test_ppl = unhex("wikitext103.test_ppl");
  // The model tells which entries it needs; each is looked up by name (meta_at and
  // array() throw naming the checkpoint and the missing key).
  auto st = model_->state();
  train::get_state(ck, kStatePrefix, st);
  model_->set_state(st);
}

std::unique_ptr<Wikitext103Experiment> load_trained_run(const std::string& run_dir,
                                                        const std::string& command,
                                                        Wikitext103Config& cfg) {
  const std::string config_path = run_dir + "/config.yaml", ck_path = run_dir + "/checkpoint.sbck";
  if (!core::file_exists(config_path) || !core::file_exists(ck_path))
    throw core::UsageError(fmt::format(
        "{}: no trained run at '{}' (config.yaml and checkpoint.sbck needed; hint: train one "
        "with `seqbench wikitext103 --config configs/wikitext103/<preset>.yaml`)",
        command, run_dir));
  cfg = Wikitext103Config{};
  config::apply_yaml_file(cfg, config_path);
  auto exp = std::make_unique<Wikitext103Experiment>(cfg);
  const train::Checkpoint ck = train::load_checkpoint(ck_path);
  train::load_parameters(exp->params(), ck);
  exp->load_state(ck);
  return exp;
}

}  // namespace seqbench::apps
