// SequenceLayer: a recurrent layer seen from the outside — a whole sequence in, the
// hidden states out. Implemented by Recurrent<Cell> (our cells, any scalar type) and
// DnnlLstmLayer (oneDNN's LSTM primitive, float). Models hold one of these and do
// not know which one runs.
//
// Shapes: T time, B batch, I input, H hidden, S state (S >= H, h first in a state row).
#pragma once

#include <vector>

#include "core/rng.hpp"
#include "core/tensor.hpp"

namespace seqbench::nn {

template <class T>
class SequenceLayer {
 public:
  virtual ~SequenceLayer() = default;
  virtual int64_t input_size() const = 0;
  virtual int64_t hidden() const = 0;
  virtual int64_t state_size() const = 0;

  // Initialise this layer's parameters (after the ParamStore is finalized).
  virtual void init(core::Rng& rng) = 0;

  // x (T, B, I), s0 (B, S) or s0.data == nullptr for a zero state -> y (T, B, H).
  virtual void forward(core::ViewT<const T> x, core::ViewT<const T> s0, core::ViewT<T> y) = 0;
  // Backward of the last forward. dy (T, B, H) -> dx (T, B, I), ds0 (B, S) (each skipped
  // when its data is null); parameter gradients accumulate. When dh_norms is given it
  // receives, for every t, ||dL/dh_t|| (Frobenius norm over the batch of the total
  // derivative, through the output at t and through all later steps).
  virtual void backward(core::ViewT<const T> dy, core::ViewT<T> dx, core::ViewT<T> ds0,
                        std::vector<double>* dh_norms = nullptr) = 0;
  // After every optimizer step (and after init): e.g. project the recurrent weights
  // back into a stable set. Default: nothing.
  virtual void after_update() {}
  // The state after the last step of the last forward, (B, S).
  virtual core::ViewT<const T> final_state() const = 0;
  // Bytes held between forward and backward (states, caches, workspaces).
  virtual size_t held_bytes() const = 0;
};

}  // namespace seqbench::nn
