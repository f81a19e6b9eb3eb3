#include "nn/registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/check.hpp"
#include "core/text.hpp"
#include "nn/cells/lstm.hpp"
#include "nn/cells/momentum.hpp"
#include "nn/cells/rnn.hpp"
#include "nn/init.hpp"
#include "nn/mixers/mixer_layer.hpp"
#include "nn/recurrent/attentive.hpp"
#include "nn/recurrent/dnnl_lstm_layer.hpp"
#include "nn/recurrent/recurrent.hpp"
#include "nn/recurrent/sab.hpp"
#include "optim/projection.hpp"

namespace seqbench::nn {

namespace {

// A Recurrent<Cell> whose init() is init_fn if given, else follows model.init.
template <class Cell>
std::unique_ptr<SequenceLayer<float>> driven(Cell cell, const ModelConfig& cfg, int64_t bptt,
                                             typename Recurrent<Cell>::UpdateFn after = {},
                                             typename Recurrent<Cell>::InitFn init_fn = {}) {
  if (!init_fn && cfg.init == "momentum_paper") {
    if constexpr (requires(Cell& c, core::Rng& r) { c.init_momentum_paper(r, 1.0); }) {
      const double fb = cfg.forget_bias;
      init_fn = [fb](Cell& c, core::Rng& rng) { c.init_momentum_paper(rng, fb); };
    }
  }
  return std::make_unique<Recurrent<Cell>>(std::move(cell), bptt, cfg.forget_bias,
                                           std::move(init_fn), std::move(after));
}

// model.chrono_tmax for the cells built on LstmCell: their init, or {} when it is off.
Recurrent<LstmCell<float>>::InitFn lstm_init(const ModelConfig& cfg) {
  if (cfg.chrono_tmax == 0) return {};
  if (cfg.chrono_tmax <= 2)
    throw core::UsageError(fmt::format(
        "model.chrono_tmax = {} must exceed 2: the longest lag, in steps, the forget gates "
        "start for (hint: the sequence length, or 0 for off)",
        cfg.chrono_tmax));
  if (cfg.forget_bias != 0)
    throw core::UsageError(fmt::format(
        "model.chrono_tmax sets the forget-gate biases, so model.forget_bias = {} would be "
        "ignored (hint: model.forget_bias: 0)",
        cfg.forget_bias));
  const double tmax = cfg.chrono_tmax;
  return [tmax](LstmCell<float>& c, core::Rng& rng) {
    c.init(rng, 0.0);
    chrono_lstm_biases(rng, c.b().value, c.hidden(), tmax);
  };
}

MomentumOptions momentum_options(const ModelConfig& cfg) {
  MomentumOptions o;
  o.kind = find_cell(cfg.cell).variant;
  o.mu = cfg.mu;
  o.s = cfg.s;
  o.beta = cfg.beta;
  o.eps = cfg.eps;
  o.restart = cfg.restart;
  return o;
}

std::unique_ptr<SequenceLayer<float>> build_lstm(const ModelConfig& cfg, core::ParamStore& ps,
                                                 const std::string& name, int64_t input,
                                                 int64_t bptt) {
  if (cfg.backend == "onednn") {
    if (bptt > 0)
      throw core::UsageError(fmt::format(
          "model.backend: onednn runs full BPTT only, but train.bptt = {} (hint: set "
          "model.backend: ours for truncated BPTT)",
          bptt));
    return std::make_unique<DnnlLstmLayer>(ps, name, input, cfg.hidden, cfg.forget_bias,
                                           lstm_init(cfg));
  }
  return driven(LstmCell<float>(ps, name, input, cfg.hidden), cfg, bptt, {}, lstm_init(cfg));
}

std::unique_ptr<SequenceLayer<float>> build_rnn(const ModelConfig& cfg, core::ParamStore& ps,
                                                const std::string& name, int64_t input,
                                                int64_t bptt) {
  return driven(RnnCell<float>(ps, name, input, cfg.hidden,
                               RnnOptions{cfg.nonlinearity, cfg.recurrent_init}),
                cfg, bptt);
}

// Miller & Hardt: the projection onto the stable set after every parameter update.
std::unique_ptr<SequenceLayer<float>> build_stable_rnn(const ModelConfig& cfg,
                                                       core::ParamStore& ps,
                                                       const std::string& name, int64_t input,
                                                       int64_t bptt) {
  const double lambda = cfg.stable_lambda;
  const int64_t H = cfg.hidden;
  return driven(RnnCell<float>(ps, name, input, cfg.hidden,
                               RnnOptions{cfg.nonlinearity, cfg.recurrent_init}),
                cfg, bptt,
                [lambda, H](RnnCell<float>& c) { optim::project_rnn(c.w_h().value, H, lambda); });
}

std::unique_ptr<SequenceLayer<float>> build_stable_lstm(const ModelConfig& cfg,
                                                        core::ParamStore& ps,
                                                        const std::string& name, int64_t input,
                                                        int64_t bptt) {
  optim::LstmStability st;
  st.variant = cfg.stable_variant;
  st.lambda = cfg.stable_lambda;
  const int64_t H = cfg.hidden;
  return driven(LstmCell<float>(ps, name, input, cfg.hidden), cfg, bptt,
                [st, input, H](LstmCell<float>& c) mutable {
                  // The bound needs |b_f| (biases are not projected): use the current one.
                  st.forget_bias_bound = 0;
                  for (int64_t j = 0; j < H; ++j)
                    st.forget_bias_bound =
                        std::max(st.forget_bias_bound, double(std::abs(c.b().value[H + j])));
                  optim::project_lstm(c.w_x().value, input, c.w_h().value, H, st);
                },
                lstm_init(cfg));
}

std::unique_ptr<SequenceLayer<float>> build_momentum_rnn(const ModelConfig& cfg,
                                                         core::ParamStore& ps,
                                                         const std::string& name,
                                                         int64_t input, int64_t bptt) {
  return driven(MomentumRnnCell<float>(ps, name, input, cfg.hidden, momentum_options(cfg)), cfg,
                bptt);
}

std::unique_ptr<SequenceLayer<float>> build_momentum_lstm(const ModelConfig& cfg,
                                                          core::ParamStore& ps,
                                                          const std::string& name,
                                                          int64_t input, int64_t bptt) {
  return driven(MomentumLstmCell<float>(ps, name, input, cfg.hidden, momentum_options(cfg)), cfg,
                bptt);
}

std::unique_ptr<SequenceLayer<float>> build_attentive(const ModelConfig& cfg,
                                                      core::ParamStore& ps,
                                                      const std::string& name, int64_t input,
                                                      int64_t bptt) {
  AttentiveOptions o;
  o.kind = cfg.cell;
  o.nonlinearity = cfg.nonlinearity;
  o.nu = cfg.nu;
  o.rho = cfg.rho;
  o.bptt = bptt;
  o.forget_bias = cfg.forget_bias;
  return std::make_unique<AttentiveRecurrent<float>>(ps, name, input, cfg.hidden, o);
}

std::unique_ptr<SequenceLayer<float>> build_sab(const ModelConfig& cfg, core::ParamStore& ps,
                                                const std::string& name, int64_t input,
                                                int64_t bptt) {
  return std::make_unique<SabLayer<float>>(
      ps, name, input, cfg.hidden, SabOptions{bptt, cfg.attk, cfg.ktop, cfg.forget_bias});
}

// The sequence mixers: the registry entry's factory, wrapped as a recurrent layer.
std::unique_ptr<SequenceLayer<float>> build_mixer(const ModelConfig& cfg, core::ParamStore& ps,
                                                  const std::string& name, int64_t input,
                                                  int64_t bptt) {
  if (bptt > 0)
    throw core::UsageError(fmt::format(
        "model.cell: {} is a sequence mixer and trains with full backpropagation only, but "
        "train.bptt = {} (hint: train.bptt: 0)",
        cfg.cell, bptt));
  const CellEntry& e = find_cell(cfg.cell);
  return std::make_unique<MixerLayer<float>>(
      make_mixer<float>(*e.mixer, cfg.mixer, ps, name, input, cfg.hidden));
}

constexpr unsigned kAll = kSequenceModel | kBench;
constexpr unsigned kMixer = kAll | kTransformerMixer;
const std::vector<std::string> kOurs{"ours"};

}  // namespace

const std::vector<CellEntry>& cell_registry() {
  using A = AgentForm;
  // clang-format off
  static const std::vector<CellEntry> r{
    {"lstm", "LSTM (Hochreiter & Schmidhuber 1997), PyTorch's gate layout", kAll | kAgent, {"ours", "onednn"}, kChrono, A::kStepLstm, "", build_lstm, &kLstmFootprint},
    {"rnn", "Elman RNN with tanh, relu or modReLU and a choice of recurrent init", kAll, kOurs, kNonlinearity | kRecurrentInit, A::kNone, "", build_rnn, &kRnnFootprint},
    {"momentum_lstm", "MomentumLSTM: heavy-ball momentum on the input step (Nguyen et al. 2020)", kAll | kAgent, kOurs, kMomentumInit, A::kStepMomentumLstm, "momentum", build_momentum_lstm, &kMomentumLstmFootprint},
    {"adam_lstm", "AdamLSTM: Adam-style scaled momentum (Nguyen et al. 2020)", kAll | kAgent, kOurs, kMomentumInit, A::kStepMomentumLstm, "adam", build_momentum_lstm, &kAdaptiveLstmFootprint},
    {"rmsprop_lstm", "RMSPropLSTM: RMSProp-scaled step, no momentum (Nguyen et al. 2020)", kAll | kAgent, kOurs, kMomentumInit, A::kStepMomentumLstm, "rmsprop", build_momentum_lstm, &kAdaptiveLstmFootprint},
    {"sr_lstm", "SRLSTM: Nesterov momentum with scheduled restarts (Nguyen et al. 2020)", kAll, kOurs, kMomentumInit, A::kNone, "nesterov_restart", build_momentum_lstm, &kMomentumLstmFootprint},
    {"momentum_rnn", "MomentumRNN (Nguyen et al. 2020)", kAll, kOurs, kMomentumInit, A::kNone, "momentum", build_momentum_rnn, &kMomentumRnnFootprint},
    {"stable_rnn", "RNN projected onto ||W_h|| <= lambda after every update (Miller & Hardt 2019)", kAll, kOurs, kNonlinearity | kRecurrentInit, A::kNone, "", build_stable_rnn, &kRnnFootprint},
    {"stable_lstm", "LSTM projected onto a stability bound after every update (Miller & Hardt 2019)", kAll, kOurs, kChrono, A::kNone, "", build_stable_lstm, &kLstmFootprint},
    {"mem_rnn", "RNN attending over all past hidden states (Kerg et al. 2020's MemRNN)", kAll, kOurs, kNonlinearity, A::kNone, "", build_attentive, &kMemRnnFootprint},
    {"rel_rnn", "RNN with relevancy screening: attends over nu recent and rho relevant states (Kerg et al. 2020)", kAll, kOurs, kNonlinearity | kRelevancy, A::kNone, "", build_attentive, &kRelRnnFootprint},
    {"rel_lstm", "LSTM with relevancy screening (Kerg et al. 2020)", kAll | kAgent, kOurs, kNonlinearity | kRelevancy, A::kWindowedAttentive, "", build_attentive, &kRelLstmFootprint},
    {"sab", "Sparse Attentive Backtracking (Ke et al. 2018) over an LSTM", kAll, kOurs, 0, A::kNone, "", build_sab, &kSabFootprint},
    {"linear_attention", "causal linear attention, elu+1 features, chunked (Katharopoulos et al. 2020)", kMixer, kOurs, kMixerKeys, A::kNone, "", build_mixer, &kMixerFootprint, &kLinearAttentionMixer},
    {"retention", "retention: linear attention with a fixed decay per head (RetNet, Sun et al. 2023)", kMixer, kOurs, kMixerKeys, A::kNone, "", build_mixer, &kMixerFootprint, &kRetentionMixer},
    {"gla", "gated linear attention: data-dependent decay per key dimension (Yang et al. 2023)", kMixer, kOurs, kMixerKeys, A::kNone, "", build_mixer, &kMixerFootprint, &kGlaMixer},
    {"lru", "Linear Recurrent Unit: stable complex diagonal recurrence (Orvieto et al. 2023)", kMixer, kOurs, kMixerKeys, A::kNone, "", build_mixer, &kMixerFootprint, &kLruMixer},
    {"mamba", "selective scan: input-dependent delta, B, C after a short causal conv (Mamba, Gu & Dao 2023)", kMixer, kOurs, kMixerKeys, A::kNone, "", build_mixer, &kMixerFootprint, &kMambaMixer},
    {"deltanet", "gated delta rule: S = a S (I - b k k^T) + b v k^T (Gated DeltaNet, Yang et al. 2024)", kMixer, kOurs, kMixerKeys, A::kNone, "", build_mixer, &kMixerFootprint, &kDeltaNetMixer},
    {"mlstm", "mLSTM: matrix memory C = f C + i v k^T, exponential input gate, stabilised (xLSTM, Beck et al. 2024)", kMixer, kOurs, kMixerKeys, A::kNone, "", build_mixer, &kMixerFootprint, &kMlstmMixer},
    {"slstm", "sLSTM: scalar memory, exponential gates, normaliser, block-diagonal recurrence per head (xLSTM, Beck et al. 2024)", kMixer, kOurs, kMixerKeys, A::kNone, "", build_mixer, &kMixerFootprint, &kSlstmMixer},
  };
  // clang-format on
  return r;
}

std::vector<std::string> cell_names(unsigned use) {
  std::vector<std::string> out;
  for (const auto& e : cell_registry())
    if (e.uses & use) out.push_back(e.name);
  return out;
}

const std::vector<std::string>& sequence_cell_names() {
  static const std::vector<std::string> names = cell_names(kSequenceModel);
  return names;
}

const std::string& mixer_key_doc() {
  static const std::string doc = "options of the sequence mixers: " + core::join(mixer_names(), " | ");
  return doc;
}

const std::string& cell_key_doc() {
  static const std::string doc = "recurrent cell: " + core::join(sequence_cell_names(), " | ");
  return doc;
}

std::vector<std::string> cells_reading(unsigned reads) {
  std::vector<std::string> out;
  for (const auto& e : cell_registry())
    if (e.reads & reads) out.push_back(e.name);
  return out;
}

const CellEntry& find_cell(const std::string& name, unsigned use, const std::string& key) {
  for (const auto& e : cell_registry())
    if (name == e.name && (e.uses & use)) return e;
  throw core::UsageError(fmt::format("{}: {}", key, core::unknown_name("cell", name, cell_names(use))));
}

std::vector<std::string> use_names(unsigned uses) {
  std::vector<std::string> out;
  if (uses & kSequenceModel) out.push_back("model.cell");
  if (uses & kAgent) out.push_back("agent.core");
  if (uses & kBench) out.push_back("bench");
  if (uses & kTransformerMixer) out.push_back("model.attention");
  return out;
}

std::string cells_markdown() {
  std::string out = "| cell | used in | backends | what it is |\n|---|---|---|---|\n";
  for (const auto& e : cell_registry()) {
    const std::vector<std::string> uses = use_names(e.uses);
    out += fmt::format("| `{}` | {} | {} | {} |\n", e.name, core::join(uses, ", "),
                       core::join(e.backends, ", "), e.doc);
  }
  return out;
}

const CellEntry* find_mixer(const std::string& name) {
  for (const auto& e : cell_registry())
    if (name == e.name && (e.uses & kTransformerMixer)) return &e;
  return nullptr;
}

std::vector<std::string> mixer_names() { return cell_names(kTransformerMixer); }

}  // namespace seqbench::nn
