// A one-layer, unidirectional (left to right), f32 vanilla LSTM on oneDNN's RNN
// primitive, for training: forward over a whole sequence, then backward (BPTT)
// of that forward. It shares its parameters with nn's own LSTM cell, so the
// layout below is a contract, not a detail.
//
// Shapes: T time, B batch, I input size, H hidden size; everything row-major.
// Gate order i, f, c~ (candidate), o, gate-major inside the 4H axis:
//   w_x (I, 4H)   = oneDNN ldigo with L = D = 1, column g*H + j is gate g unit j
//   w_h (H, 4H)   = ldigo
//   b   (4H)      = ldgo, b[g*H + j]
// Equations, per step t with h_{-1} = h0, c_{-1} = c0:
//   pre = x_t w_x + h_{t-1} w_h + b                 (B, 4H)
//   i = σ(pre_i), f = σ(pre_f), c~ = tanh(pre_c), o = σ(pre_o)
//   c_t = f ⊙ c_{t-1} + i ⊙ c~,   h_t = o ⊙ tanh(c_t),   y_t = h_t
//
// Lifecycle (after oneDNN's examples/primitives/lstm.cpp): per (T, B) the
// forward and backward primitives, their weight reorders, workspace, scratchpad
// and data buffers are created once and cached (a few shapes, least recently
// used evicted); calls of a cached shape allocate nothing. forward() copies its
// inputs and weights so backward() does not depend on the caller keeping them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace seqbench::backend {

class DnnlLstm {
 public:
  DnnlLstm(int64_t input_size, int64_t hidden_size);
  ~DnnlLstm();
  DnnlLstm(DnnlLstm&&) noexcept;
  DnnlLstm& operator=(DnnlLstm&&) noexcept;
  DnnlLstm(const DnnlLstm&) = delete;
  DnnlLstm& operator=(const DnnlLstm&) = delete;

  int64_t input_size() const;

  // Training forward over a whole sequence; keeps the workspace for backward.
  // x (T, B, I); h0, c0 (B, H) or nullptr = zeros; w_x (I, 4H); w_h (H, 4H); b (4H).
  // Writes y (T, B, H); hT, cT (B, H) unless nullptr.
  void forward(int64_t T, int64_t B, const float* x, const float* h0, const float* c0,
               const float* w_x, const float* w_h, const float* b, float* y, float* hT, float* cT);

  // Backward of the last forward. dy (T, B, H); dhT, dcT (B, H) or nullptr = zeros.
  // Writes (overwrites) dx (T, B, I), dh0 and dc0 (B, H), each unless nullptr.
  // ACCUMULATES (+=) into dw_x (I, 4H), dw_h (H, 4H), db (4H), each unless nullptr;
  // callers zero them once per optimiser step. May be called more than once per
  // forward (each call adds the same gradients again).
  void backward(const float* dy, const float* dhT, const float* dcT, float* dx, float* dh0,
                float* dc0, float* dw_x, float* dw_h, float* db);
  // Same, after checking that (T, B) are those of the last forward (core::Error otherwise).
  void backward(int64_t T, int64_t B, const float* dy, const float* dhT, const float* dcT,
                float* dx, float* dh0, float* dc0, float* dw_x, float* dw_h, float* db);

  // Bytes held by the cached workspaces, scratchpads and buffers of all cached
  // shapes plus the weight copies (for memory probes).
  size_t workspace_bytes() const;
  // Number of (T, B) shapes currently cached.
  size_t cached_shapes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace seqbench::backend
