// SeqModel: a recurrent layer and a per-step linear head,
//   x (L, B, I) -> h (L, B, H) -> out (L, B, O) = h w^T + b.
// The recurrent layer is chosen by ModelConfig (cell and backend) through
// make_recurrent(); the experiment decides which outputs carry a loss.
#pragma once

#include <memory>
#include <vector>

#include "nn/linear.hpp"
#include "nn/model_config.hpp"
#include "nn/sequence_layer.hpp"

namespace seqbench::nn {

// The recurrent layer for a config. bptt: truncation window (0 = full BPTT).
// Throws core::UsageError for combinations that cannot run (onednn with bptt > 0).
std::unique_ptr<SequenceLayer<float>> make_recurrent(const ModelConfig& cfg, core::ParamStore& ps,
                                                     const std::string& name, int64_t input,
                                                     int64_t bptt);

class SeqModel {
 public:
  SeqModel(const ModelConfig& cfg, core::ParamStore& ps, int64_t input, int64_t output,
           int64_t bptt);

  void init(core::Rng& rng);  // after ps.finalize()
  // x (L, B, I) -> out (L, B, O). x must stay alive until backward.
  void forward(core::ConstView x, core::View out);
  // dout (L, B, O) -> parameter gradients (accumulated); dh_norms as SequenceLayer.
  void backward(core::ConstView dout, std::vector<double>* dh_norms = nullptr);

  // After every optimizer step: the recurrent layer's projection, if it has one.
  void after_update() { rnn_->after_update(); }
  SequenceLayer<float>& recurrent() { return *rnn_; }
  int64_t output_size() const { return head_.out(); }

 private:
  std::unique_ptr<SequenceLayer<float>> rnn_;
  Linear head_;
  core::Tensor h_, dh_;  // (L, B, H)
};

}  // namespace seqbench::nn
