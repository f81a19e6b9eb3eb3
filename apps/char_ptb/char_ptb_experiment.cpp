#include "apps/char_ptb/char_ptb_experiment.hpp"

#include <algorithm>
#include <cmath>

#include "apps/char_ptb/demo_config.hpp"
#include "core/fs.hpp"
#include "nn/loss.hpp"
#include "nn/seq_model.hpp"
#include "optim/optimizer.hpp"

namespace seqbench::apps {

namespace {
enum Stream : uint64_t { kInit = 1 };

void ensure(core::Tensor& t, core::Shape s) {
  if (!(t.shape() == s)) t.resize(s);
}
}  // namespace

const char* const kCharPtbDemoYaml = kCharPtbDemoYamlText;

// Kerg et al.'s char-PTB settings (docs/papers.md section 1; their PTBtask.py): embedding
// 200, H = 1024, segments of 150, B = 128, lr 1e-4; the code's optimizer is RMSprop
// (alpha 0.9) without clipping, halving the lr after every validation that is not an
// improvement.
train::MemoryEstimate char_ptb_memory(const CharPtbConfig& c) {
  const train::CorpusSize corpus = train::corpus_size(c.data.corpus);
  const double V = corpus.vocab, E = double(c.lm.embedding), H = double(c.model.hidden);
  const int64_t B = std::max(c.train.batch, c.data.eval_batch), L = c.lm.seq_len;
  const std::vector<std::string> size_keys{train::key("lm.seq_len", L),
                                           train::key("train.batch", c.train.batch),
                                           train::key("data.eval_batch", c.data.eval_batch)};
  train::MemoryEstimate e;
  const int64_t Vi = int64_t(V);
  train::add_recurrent(e, c.model, c.optim, c.lm.embedding, L, B, c.train.gradnorm_every > 0,
                       Vi * c.lm.embedding + c.model.hidden * Vi + Vi, size_keys);
  std::vector<std::string> keys = size_keys;
  keys.insert(keys.begin(), {train::key("model.hidden", c.model.hidden),
                             train::key("lm.embedding", c.lm.embedding)});
  const double LB = double(L) * double(B);
  e.add(fmt::format("embeddings, hidden states, logits (vocabulary ~{:.0f}) and gradients", V),
        sizeof(float) * (2 * LB * E + 2 * LB * H + 2 * LB * V + LB) + 2 * sizeof(int32_t) * LB,
        keys);
  if (c.model.backend == "onednn")
    e.add("onednn: other segment shapes (last segment, evaluation)",
          train::onednn_extra_shapes_bytes(c.model, L, B), keys);
  e.add(fmt::format("corpus token ids (~{:.3g} tokens)", corpus.tokens),
        sizeof(int32_t) * corpus.tokens + 64 * V, {train::key("data.dir", c.data.corpus.dir)});
  return e;
}

CharPtbConfig::CharPtbConfig() {
  data.check_epochs = false;
  model.hidden = 1024;
  optim.name = "rmsprop";
  optim.lr = 1e-4;
  optim.alpha = 0.9;
  optim.clip = 0.0;
  optim.schedule.kind = "plateau";
  optim.schedule.patience = 0;
  optim.schedule.factor = 0.5;
  train.batch = 128;
  train.log_every = 50;
}

CharPtbExperiment::CharPtbExperiment(const CharPtbConfig& cfg) : cfg_(cfg) {
  const auto& d = cfg.data;
  const auto& dir = d.corpus.dir;
  if (!dir.empty() && !core::file_exists(dir))
    throw core::UsageError(fmt::format(
        "data.dir: no corpus at '{}' (hint: run tools/fetch_data, see docs/data.md, or set "
        "data.dir; for one file set data.dir: \"\" and data.path)",
        dir));
  corpus_ = data::load_corpus(d.corpus);
  V_ = corpus_.vocab.size();
  const int64_t B = cfg.train.batch, L = cfg.lm.seq_len;
  const LmStreams streams = lm_streams(corpus_, d, B, L);
  train_ = streams.train;
  valid_ = streams.valid;
  test_ = streams.test;
  updates_per_epoch_ = train_.segments(L);
  if (d.check_epochs && cfg.train.eval_every % updates_per_epoch_ != 0)
    throw core::UsageError(fmt::format(
        "train.eval_every: {} is not a whole number of epochs ({} tokens in {} columns, segments "
        "of {}: {} updates per epoch; hint: set train.eval_every: {} or data.check_epochs: false)",
        cfg.train.eval_every, train_.B * train_.cols, B, L, updates_per_epoch_, updates_per_epoch_,
        updates_per_epoch_));

  emb_ = std::make_unique<nn::Embedding>(ps_, "emb", V_, cfg.lm.embedding);
  rnn_ = nn::make_recurrent(cfg.model, ps_, "rnn", cfg.lm.embedding, cfg.train.bptt);
  head_ = std::make_unique<nn::Linear>(ps_, "head", cfg.model.hidden, V_);
  ps_.finalize(optim::make_optimizer<float>(cfg.optim)->n_slots());
}

void CharPtbExperiment::init() {
  core::Rng rng = core::Rng::derive(cfg_.train.seed, kInit);
  emb_->init(rng);
  rnn_->init(rng);
  head_->init(rng);
}

int64_t CharPtbExperiment::load_segment(const TokenColumns& s, int64_t i) {
  const int64_t L = s.segment_len(i, cfg_.lm.seq_len);
  load_tokens(s, i * cfg_.lm.seq_len, L);
  return L;
}

void CharPtbExperiment::load_tokens(const TokenColumns& s, int64_t pos, int64_t L) {
  const int64_t b = s.B;
  ids_.resize(size_t(L * b));
  targets_.resize(size_t(L * b));
  for (int64_t t = 0; t < L; ++t)
    for (int64_t c = 0; c < b; ++c) {
      const int32_t* col = s.tokens + c * s.cols + pos + t;
      ids_[size_t(t * b + c)] = col[0];
      targets_[size_t(t * b + c)] = col[1];
    }
}

double CharPtbExperiment::run_segment(int64_t L, int64_t b, bool train, const float* mask,
                                      std::vector<double>* dh_norms) {
  const int64_t E = cfg_.lm.embedding, H = rnn_->hidden(), S = rnn_->state_size();
  ensure(x_, core::Shape{L, b, E});
  ensure(h_, core::Shape{L, b, H});
  ensure(logits_, core::Shape{L * b, V_});
  emb_->forward(ids_.data(), L * b, x_.view().reshape(core::Shape{L * b, E}));
  const bool from_state = cfg_.lm.carry_state && state_valid_;
  if (from_state) core::check_shape(state_.cview(), core::Shape{b, S}, "char_ptb carried state");
  rnn_->forward(x_.cview(), from_state ? state_.cview() : core::ConstView(), h_.view());
  if (cfg_.lm.carry_state) {
    // Copied now: a layer's final_state() is only guaranteed until its next call.
    ensure(next_state_, core::Shape{b, S});
    const core::ConstView fin = rnn_->final_state();
    std::copy_n(fin.data, b * S, next_state_.data());
  }
  head_->forward(h_.cview().reshape(core::Shape{L * b, H}), logits_.view());
  if (train) ensure(dlogits_, core::Shape{L * b, V_});
  const auto ce = nn::softmax_cross_entropy<float>(logits_.cview(), targets_.data(), mask,
                                                   train ? dlogits_.view() : core::View());
  if (train) {
    ensure(dh_, core::Shape{L, b, H});
    ensure(dx_, core::Shape{L, b, E});
    head_->backward(h_.cview().reshape(core::Shape{L * b, H}), dlogits_.cview(),
                    dh_.view().reshape(core::Shape{L * b, H}));
    rnn_->backward(dh_.cview(), dx_.view(), core::View(), dh_norms);
    emb_->backward(ids_.data(), L * b, dx_.cview().reshape(core::Shape{L * b, E}));
  }
  if (cfg_.lm.carry_state) {
    std::swap(state_, next_state_);
    state_valid_ = true;
  }
  return ce.loss;
}

train::Metrics CharPtbExperiment::train_step() {
  const int64_t i = cursor_ % updates_per_epoch_;
  if (i == 0) state_valid_ = false;  // every epoch starts from a zero state
  const int64_t L = load_segment(train_, i);
  const double loss = run_segment(L, train_.B, true, nullptr, nullptr);
  ++cursor_;
  return {{"loss", loss}, {"bpc", loss / std::log(2.0)}};
}

CharPtbExperiment::StateSetAside::StateSetAside(CharPtbExperiment& exp)
    : e(exp), state(exp.state_), valid(exp.state_valid_) {
  e.state_valid_ = false;
}

CharPtbExperiment::StateSetAside::~StateSetAside() {
  e.state_ = std::move(state);
  e.state_valid_ = valid;
}

void CharPtbExperiment::mask_last_step(int64_t L, int64_t b) {
  mask_.assign(size_t(L * b), 0.f);
  std::fill(mask_.begin() + (L - 1) * b, mask_.end(), 1.f);
}

double CharPtbExperiment::eval_stream(const TokenColumns& s) {
  // Evaluation starts from zero and must not disturb the training state.
  const StateSetAside aside(*this);
  double loss = 0;
  int64_t n = 0;
  const int64_t segments = s.segments(cfg_.lm.seq_len);
  for (int64_t i = 0; i < segments; ++i) {
    const int64_t L = load_segment(s, i);
    loss += run_segment(L, s.B, false, nullptr, nullptr) * double(L * s.B);
    n += L * s.B;
  }
  return loss / double(n);
}

train::Metrics CharPtbExperiment::evaluate() {
  const double ln2 = std::log(2.0);
  const double vloss = eval_stream(valid_);
  train::Metrics m{{"loss", vloss}, {"bpc", vloss / ln2}};
  // The same rule as the Trainer's best: strictly lower than every earlier validation.
  if (!outcome_.has_best || vloss / ln2 < outcome_.best_valid_bpc) {
    const double tloss = eval_stream(test_);
    m.push_back({"test_loss", tloss});
    m.push_back({"test_bpc", tloss / ln2});
    outcome_ = {true, vloss / ln2, cursor_, tloss / ln2};
  }
  return m;
}

std::vector<double> CharPtbExperiment::gradnorm_probe() {
  const StateSetAside aside(*this);
  const int64_t L = load_segment(valid_, 0), b = valid_.B;
  mask_last_step(L, b);
  std::vector<double> norms;
  run_segment(L, b, true, mask_.data(), &norms);
  return norms;
}

CharPtbExperiment::InputGradProbe CharPtbExperiment::input_grad_probe(int64_t L,
                                                                      int64_t windows) {
  const TokenColumns& s = valid_;
  const int64_t fit = (s.cols - 1) / L;  // whole windows per column (targets need one more)
  if (fit < 1)
    throw core::UsageError(fmt::format(
        "input-gradient probe: windows of {} tokens do not fit the validation columns of {} "
        "tokens (hint: a shorter window, or a larger data.eval_tokens / smaller "
        "data.eval_batch)",
        L, s.cols));
  const StateSetAside aside(*this);
  const int64_t b = s.B, E = cfg_.lm.embedding;
  InputGradProbe probe;
  probe.norm.assign(size_t(L), 0.0);
  probe.columns = b;
  mask_last_step(L, b);
  for (int64_t w = 0; w < std::min(windows, fit); ++w) {
    state_valid_ = false;
    load_tokens(s, w * L, L);
    run_segment(L, b, true, mask_.data(), nullptr);
    // The loss is the mean over the b scored rows: b dx is each column's own gradient.
    for (int64_t t = 0; t < L; ++t)
      for (int64_t c = 0; c < b; ++c) {
        const float* g = dx_.data() + (t * b + c) * E;
        double ss = 0;
        for (int64_t e = 0; e < E; ++e) ss += double(g[e]) * double(g[e]);
        probe.norm[size_t(L - 1 - t)] += double(b) * std::sqrt(ss);
      }
    ++probe.windows;
  }
  for (double& v : probe.norm) v /= double(probe.windows * b);
  ps_.zero_grad();
  return probe;
}

void CharPtbExperiment::save_state(train::Checkpoint& ck) const {
  const core::Scope s = ck.scope("char_ptb");
  s.put_int("cursor", cursor_);
  s.put_bool("has_best", outcome_.has_best);
  s.put_double("best_valid_bpc", outcome_.best_valid_bpc);
  s.put_int("best_update", outcome_.best_update);
  s.put_double("test_bpc", outcome_.test_bpc);
  s.put_bool("state_valid", state_valid_);
  if (state_valid_)
    s.put_array("state", state_.shape(),
                std::vector<float>(state_.data(), state_.data() + state_.numel()));
}

void CharPtbExperiment::load_state(const train::Checkpoint& ck) {
  const core::ConstScope s = ck.scope("char_ptb");
  cursor_ = s.get_int("cursor");
  outcome_.has_best = s.get_bool("has_best");
  outcome_.best_valid_bpc = s.get_double("best_valid_bpc");
  outcome_.best_update = s.get_int("best_update");
  outcome_.test_bpc = s.get_double("test_bpc");
  state_valid_ = s.get_bool("state_valid");
  if (state_valid_) {
    // The carried LSTM state, (batch, state size).
    const core::Shape want{train_.B, rnn_->state_size()};
    const std::vector<float>& saved = s.get_array("state", want);
    state_.resize(want);
    std::copy(saved.begin(), saved.end(), state_.data());
  }
}

}  // namespace seqbench::apps
