// The vanilla LSTM on oneDNN's primitive (backend::DnnlLstm), as a SequenceLayer.
// It declares the same parameters as our LstmCell (same names, same ldigo layout),
// so a model can switch implementation by config and checkpoints are interchangeable.
// Gradient probes (per-step ||dL/dh_t||) need the per-step state gradients that the
// primitive does not expose: a probe backward re-runs the sequence on our own cell,
// which is tested equal to the primitive.
#pragma once

#include "backend/dnnl_lstm.hpp"
#include "nn/cells/lstm.hpp"
#include "nn/recurrent/recurrent.hpp"

namespace seqbench::nn {

class DnnlLstmLayer : public SequenceLayer<float> {
 public:
  // init_fn: as Recurrent's (replaces cell.init(rng, forget_bias) when given).
  DnnlLstmLayer(core::ParamStore& ps, const std::string& name, int64_t input, int64_t hidden,
                double forget_bias, Recurrent<LstmCell<float>>::InitFn init_fn = {});

  int64_t input_size() const override { return reference_.input_size(); }
  int64_t hidden() const override { return reference_.hidden(); }
  int64_t state_size() const override { return 2 * reference_.hidden(); }
  void init(core::Rng& rng) override { reference_.init(rng); }

  void forward(core::ConstView x, core::ConstView s0, core::View y) override;
  void backward(core::ConstView dy, core::View dx, core::View ds0,
                std::vector<double>* dh_norms = nullptr) override;
  core::ConstView final_state() const override { return final_.view(); }
  size_t held_bytes() const override;

 private:
  Recurrent<LstmCell<float>> reference_;  // declares the parameters; runs probes
  backend::DnnlLstm dnnl_;
  core::ConstView x_;
  int64_t T_ = 0, B_ = 0;
  bool has_s0_ = false;
  core::Tensor s0_, h0_, c0_, hT_, cT_, dh0_, dc0_, final_, probe_y_;
};

}  // namespace seqbench::nn
