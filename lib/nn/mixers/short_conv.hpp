// The short convolution that linear_attention, retention, gla and deltanet put on q, k and v
// when model.mixer.short_conv = W > 0: a causal, depthwise 1-D convolution of width W
// followed by SiLU, one filter per channel, no bias. This is flash-linear-attention's
// ShortConvolution as its DeltaNet, Gated DeltaNet, GLA and MultiScaleRetention layers
// build it (nn.Conv1d with groups = channels, padding W - 1 cut back to causal,
// bias = False, activation = 'silu'), applied to the outputs of the q, k and v projections
// before the mixer's own feature map.
//
// Sizes: B batch, N tokens, C channels (3 O: the q, k and v columns), W width.
//   u_t[c] = Σ_{j<W} w[c, j] x_{t-W+1+j}[c]        (x_τ for τ < 0 from the state buffer)
//   y_t[c] = silu(u_t[c])
// Parameter "<name>.w" (C, W), entry W - 1 the weight of the current token. init: U(±1/sqrt(W)),
// PyTorch's Conv1d default for a depthwise filter (fan_in = W), as Zoology's ShortConvolution
// and this suite's mamba conv; fla's models redraw it N(0, 0.02).
// State buffer per batch row: the last W - 1 inputs (W - 1, C), oldest first; zeros for the
// zero state. state_size() = (W - 1) C floats, which the mixer adds to its own state.
// Backward: du = dy ⊙ silu'(u), dw[c, j] += Σ_{b,t} du_t[c] x_{t-W+1+j}[c],
// dx_t[c] = Σ_j w[c, j] du_{t+W-1-j}[c] (t + W - 1 - j < N), and the state buffer's
// gradient ds[s][c] = Σ_{j<=s} w[c, j] du_{s-j}[c] (s - j < N).
// Held between forward and backward: the input x and u, (B N, C) each.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/param_store.hpp"
#include "core/rng.hpp"

namespace seqbench::nn {

template <class T>
class ShortConv {
 public:
  // Registers "<name>.w" (channels, width); width >= 1.
  ShortConv(core::ParamStoreT<T>& ps, const std::string& name, int64_t channels, int64_t width);

  int64_t channels() const { return c_; }
  int64_t width() const { return w_; }
  // Floats of state per batch row: the last W - 1 inputs.
  int64_t state_size() const { return (w_ - 1) * c_; }
  void init(core::Rng& rng);

  // x: B N rows of C channels, row r at x + r ldx; s0: row b's buffer at s0 + b lds, or
  // null for zeros; y: silu(u), row r at y + r ldy (may be x itself: x is copied first).
  // The caller keeps s0 alive until backward.
  void forward(int64_t B, int64_t N, const T* x, int64_t ldx, const T* s0, int64_t lds, T* y,
               int64_t ldy);
  // dy (gradient of y) -> dx (may be dy itself, same stride), ds0 (skipped when null; row b
  // at ds0 + b lds); w's gradient accumulates.
  void backward(const T* dy, int64_t ldy, T* dx, int64_t ldx, T* ds0, int64_t lds);
  // The buffer after the last forward's last token, row b at fin + b lds.
  void final_state(T* fin, int64_t lds) const;
  // One token: x (B rows, stride ldx), buf row b at buf + b lds (updated), y (may be x).
  void step(int64_t B, const T* x, int64_t ldx, T* buf, int64_t lds, T* y, int64_t ldy) const;

  // Floats held between forward and backward for B N tokens.
  int64_t held_floats(int64_t B, int64_t N) const { return 2 * B * N * c_; }
  size_t held_bytes() const;

 private:
  // x_{t}[c] for t in [-(W-1), N), row b (the buffer for t < 0).
  T input(int64_t b, int64_t t, int64_t c) const;
  // Row x_t of batch row b, t in [-(W-1), N): the copy of x, the buffer for t < 0, or null
  // for the zero state.
  const T* input_row(int64_t b, int64_t t) const;
  // wt_t_ = wᵀ, (W, C): each tap's weights contiguous over the channels.
  void transpose_weights();

  int64_t c_, w_;
  core::ParamT<T>* wt_;
  int64_t B_ = 0, N_ = 0;
  const T* s0_ = nullptr;
  int64_t lds_ = 0;
  std::vector<T> x_, u_;  // (B N, C) each
  std::vector<T> wt_t_, gw_t_;  // (W, C): wᵀ, and w's gradient for one backward
  std::vector<T> scratch_;     // (threads, C): a row of dx being summed
};

}  // namespace seqbench::nn
