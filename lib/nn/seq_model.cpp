#include "nn/seq_model.hpp"

#include "nn/cells/lstm.hpp"
#include "nn/dnnl_lstm_layer.hpp"
#include "nn/recurrent.hpp"

namespace seqbench::nn {

std::unique_ptr<SequenceLayer<float>> make_recurrent(const ModelConfig& cfg, core::ParamStore& ps,
                                                     const std::string& name, int64_t input,
                                                     int64_t bptt) {
  if (cfg.cell == "lstm") {
    if (cfg.backend == "onednn") {
      if (bptt > 0)
        throw core::UsageError(fmt::format(
            "model.backend: onednn runs full BPTT only, but train.bptt = {} (hint: set "
            "model.backend: ours for truncated BPTT)",
            bptt));
      return std::make_unique<DnnlLstmLayer>(ps, name, input, cfg.hidden, cfg.forget_bias);
    }
    return std::make_unique<Recurrent<LstmCell<float>>>(
        LstmCell<float>(ps, name, input, cfg.hidden), bptt, cfg.forget_bias);
  }
  throw core::UsageError(fmt::format("model.cell: unknown cell '{}' (have: lstm)", cfg.cell));
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
