#include "nn/seq_model.hpp"

#include <algorithm>
#include <cmath>

#include "nn/attentive.hpp"
#include "nn/cells/lstm.hpp"
#include "nn/cells/momentum.hpp"
#include "nn/cells/rnn.hpp"
#include "nn/dnnl_lstm_layer.hpp"
#include "nn/init.hpp"
#include "nn/recurrent.hpp"
#include "nn/sab.hpp"
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
    } else {
      throw core::UsageError(fmt::format(
          "model.init: momentum_paper applies to the momentum cells, not '{}' (hint: model.init: "
          "default)",
          cfg.cell));
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
  o.kind = cfg.cell == "adam_lstm"      ? "adam"
           : cfg.cell == "rmsprop_lstm" ? "rmsprop"
           : cfg.cell == "sr_lstm"      ? "nesterov_restart"
                                        : "momentum";
  o.mu = cfg.mu;
  o.s = cfg.s;
  o.beta = cfg.beta;
  o.eps = cfg.eps;
  o.restart = cfg.restart;
  return o;
}

}  // namespace

std::unique_ptr<SequenceLayer<float>> make_recurrent(const ModelConfig& cfg, core::ParamStore& ps,
                                                     const std::string& name, int64_t input,
                                                     int64_t bptt) {
  // Keys that only the plain RNN cells read: set for another cell they would do nothing,
  // silently. Their defaults (xavier, tanh) are what every cell starts from.
  const bool plain_rnn = cfg.cell == "rnn" || cfg.cell == "stable_rnn";
  const bool attentive = cfg.cell == "mem_rnn" || cfg.cell == "rel_rnn" || cfg.cell == "rel_lstm";
  if (!plain_rnn && cfg.recurrent_init != "xavier")
    throw core::UsageError(fmt::format(
        "model.recurrent_init: '{}' applies only to the rnn and stable_rnn cells, and "
        "model.cell is '{}' (hint: remove the key, or use model.init for this cell)",
        cfg.recurrent_init, cfg.cell));
  if (!plain_rnn && !attentive && cfg.nonlinearity != "tanh")
    throw core::UsageError(fmt::format(
        "model.nonlinearity: '{}' applies only to the rnn, stable_rnn, mem_rnn, rel_rnn and "
        "rel_lstm cells, and model.cell is '{}' (hint: remove the key)",
        cfg.nonlinearity, cfg.cell));
  if (cfg.backend == "onednn" && cfg.cell != "lstm")
    throw core::UsageError(fmt::format(
        "model.backend: onednn runs the plain lstm only, not '{}' (hint: model.backend: ours)",
        cfg.cell));
  if (cfg.chrono_tmax != 0 && cfg.cell != "lstm" && cfg.cell != "stable_lstm")
    throw core::UsageError(fmt::format(
        "model.chrono_tmax applies to lstm and stable_lstm, not '{}' (hint: model.chrono_tmax: 0)",
        cfg.cell));
  if (cfg.cell == "mem_rnn" || cfg.cell == "rel_rnn" || cfg.cell == "rel_lstm") {
    AttentiveOptions o;
    o.kind = cfg.cell;
    o.nonlinearity = cfg.nonlinearity;
    o.nu = cfg.nu;
    o.rho = cfg.rho;
    o.bptt = bptt;
    o.forget_bias = cfg.forget_bias;
    if (cfg.init != "default")
      throw core::UsageError(fmt::format(
          "model.init: momentum_paper applies to the momentum cells, not '{}' (hint: model.init: "
          "default)",
          cfg.cell));
    return std::make_unique<AttentiveRecurrent<float>>(ps, name, input, cfg.hidden, o);
  }
  if (cfg.cell == "sab") {
    if (cfg.init != "default")
      throw core::UsageError("model.init: momentum_paper applies to the momentum cells, not "
                             "'sab' (hint: model.init: default)");
    return std::make_unique<SabLayer<float>>(
        ps, name, input, cfg.hidden, SabOptions{bptt, cfg.attk, cfg.ktop, cfg.forget_bias});
  }
  if (cfg.cell == "rnn" || cfg.cell == "stable_rnn") {
    Recurrent<RnnCell<float>>::UpdateFn project;
    if (cfg.cell == "stable_rnn") {
      const double lambda = cfg.stable_lambda;
      const int64_t H = cfg.hidden;
      project = [lambda, H](RnnCell<float>& c) { optim::project_rnn(c.w_h().value, H, lambda); };
    }
    return driven(RnnCell<float>(ps, name, input, cfg.hidden,
                                 RnnOptions{cfg.nonlinearity, cfg.recurrent_init}),
                  cfg, bptt, std::move(project));
  }
  if (cfg.cell == "stable_lstm") {
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
  if (cfg.cell == "momentum_rnn")
    return driven(MomentumRnnCell<float>(ps, name, input, cfg.hidden, momentum_options(cfg)), cfg,
                  bptt);
  if (cfg.cell == "momentum_lstm" || cfg.cell == "adam_lstm" || cfg.cell == "rmsprop_lstm" ||
      cfg.cell == "sr_lstm")
    return driven(MomentumLstmCell<float>(ps, name, input, cfg.hidden, momentum_options(cfg)),
                  cfg, bptt);
  if (cfg.cell == "lstm") {
    if (cfg.init != "default")
      throw core::UsageError("model.init: momentum_paper applies to the momentum cells, not "
                             "'lstm' (hint: model.init: default)");
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
  throw core::UsageError(fmt::format(
      "model.cell: unknown cell '{}' (have: lstm, rnn, momentum_lstm, adam_lstm, rmsprop_lstm, "
      "sr_lstm, momentum_rnn, stable_rnn, stable_lstm, mem_rnn, rel_rnn, rel_lstm, sab)",
      cfg.cell));
}

SeqModel::SeqModel(const ModelConfig& cfg, core::ParamStore& ps, int64_t input, int64_t output,
                   int64_t bptt)
    : rnn_(make_recurrent(cfg, ps, "rnn", input, bptt)), head_(ps, "head", cfg.hidden, output) {}

void SeqModel::init(core::Rng& rng) {
  rnn_->init(rng);
  head_.init(rng);
}

void SeqModel::forward(core::ConstView x, core::View out) {
  const int64_t L = x.dim(0), B = x.dim(1), H = rnn_->hidden();
  core::check_shape(out, core::Shape{L, B, head_.out()}, "SeqModel.forward out");
  if (!(h_.shape() == core::Shape{L, B, H})) {
    h_.resize(core::Shape{L, B, H});
    dh_.resize(core::Shape{L, B, H});
  }
  rnn_->forward(x, core::ConstView(), h_.view());
  head_.forward(h_.view().reshape(core::Shape{L * B, H}),
                out.reshape(core::Shape{L * B, head_.out()}));
}

void SeqModel::backward(core::ConstView dout, std::vector<double>* dh_norms) {
  const int64_t L = h_.dim(0), B = h_.dim(1), H = h_.dim(2);
  core::check_shape(dout, core::Shape{L, B, head_.out()}, "SeqModel.backward dout");
  head_.backward(h_.view().reshape(core::Shape{L * B, H}),
                 dout.reshape(core::Shape{L * B, head_.out()}),
                 dh_.view().reshape(core::Shape{L * B, H}));
  rnn_->backward(dh_.view(), core::View(), core::View(), dh_norms);
}

}  // namespace seqbench::nn
