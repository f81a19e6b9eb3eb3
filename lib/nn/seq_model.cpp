#include "nn/seq_model.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/check.hpp"
#include "core/text.hpp"
#include "nn/registry.hpp"

namespace seqbench::nn {

std::unique_ptr<SequenceLayer<float>> make_recurrent(const ModelConfig& cfg, core::ParamStore& ps,
                                                     const std::string& name, int64_t input,
                                                     int64_t bptt) {
  const CellEntry& cell = find_cell(cfg.cell);
  // Keys only some cells read: set for another cell they would do nothing, silently.
  // Their defaults are what every cell starts from.
  const auto refuse = [&](const std::string& key_value, unsigned reads, const char* hint) {
    throw core::UsageError(fmt::format(
        "{} applies only to the {} cells, and model.cell is '{}' (hint: {})", key_value,
        core::join_and(cells_reading(reads)), cfg.cell, hint));
  };
  if (!(cell.reads & kRecurrentInit) && cfg.recurrent_init != "xavier")
    refuse(fmt::format("model.recurrent_init: '{}'", cfg.recurrent_init), kRecurrentInit,
           "remove the key, or use model.init for this cell");
  if (!(cell.reads & kNonlinearity) && cfg.nonlinearity != "tanh")
    refuse(fmt::format("model.nonlinearity: '{}'", cfg.nonlinearity), kNonlinearity,
           "remove the key");
  if (!(cell.reads & kChrono) && cfg.chrono_tmax != 0)
    refuse("model.chrono_tmax", kChrono, "model.chrono_tmax: 0");
  if (!(cell.reads & kMixerKeys) && !(cfg.mixer == MixerConfig{}))
    refuse("model.mixer", kMixerKeys, "remove the model.mixer section");
  if (!(cell.reads & kMomentumInit) && cfg.init != "default")
    refuse(fmt::format("model.init: {}", cfg.init), kMomentumInit, "model.init: default");
  if (std::find(cell.backends.begin(), cell.backends.end(), cfg.backend) == cell.backends.end())
    throw core::UsageError(fmt::format(
        "model.backend: {} does not run '{}' (it runs: {}; hint: model.backend: ours)",
        cfg.backend, cfg.cell, core::join(cell.backends, ", ")));
  return cell.build(cfg, ps, name, input, bptt);
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
