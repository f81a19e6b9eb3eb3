// A mixer as a recurrent layer: model.cell: <mixer> in the copy, pMNIST, char-PTB and recall
// experiments. Moves the sequence between SequenceLayer's time-major (T, B, I) and the
// mixer's batch-major (B, T, I) and hands everything else to the mixer: the state is the
// mixer's recurrent state (carried between batches where the experiment carries it).
//
// dh_norms (the gradient-norm probe) receives ||dL/dx_t|| over the batch, the gradient that
// reaches the layer's input at step t: the mixers' training form never forms the state's
// gradient token by token. docs/experiments/recall.md says how to read it.
//
// Held: the mixer's own (Mixer::held_bytes) plus x and y in batch-major order (B, T, I) and
// (B, T, O), and in backward dy and dx likewise (dx always: the probe reads it).
#pragma once

#include <memory>

#include "nn/mixers/mixer.hpp"
#include "nn/sequence_layer.hpp"

namespace seqbench::nn {

template <class T>
class MixerLayer : public SequenceLayer<T> {
 public:
  explicit MixerLayer(std::unique_ptr<Mixer<T>> mixer) : m_(std::move(mixer)) {}

  int64_t input_size() const override { return m_->input_size(); }
  int64_t hidden() const override { return m_->output_size(); }
  int64_t state_size() const override { return m_->state_size(); }
  void init(core::Rng& rng) override { m_->init(rng); }
  void forward(core::ViewT<const T> x, core::ViewT<const T> s0, core::ViewT<T> y) override;
  void backward(core::ViewT<const T> dy, core::ViewT<T> dx, core::ViewT<T> ds0,
                std::vector<double>* dh_norms = nullptr) override;
  core::ViewT<const T> final_state() const override { return m_->final_state(); }
  size_t held_bytes() const override;
  // What held_bytes() reports after a forward and backward of B sequences of T steps.
  static size_t estimate_bytes(const Mixer<T>& m, int64_t steps, int64_t B);

  Mixer<T>& mixer() { return *m_; }

 private:
  std::unique_ptr<Mixer<T>> m_;
  core::TensorT<T> xb_, yb_, dyb_, dxb_;  // batch-major copies
};

}  // namespace seqbench::nn
