// Causal linear attention (Katharopoulos et al. 2020, "Transformers are RNNs", arXiv
// 2006.16236), with the elu + 1 feature map and its normaliser.
//
// Shapes: B batch, N tokens, I input, O output, H = model.mixer.heads, d = O / H,
// C = model.mixer.chunk.
//
//   [q̃ | k̃ | v] = x W^T                  (B N, 3 O)  W = "<name>.qkv.w" (3 O, I), no bias
//   q = φ(q̃), k = φ(k̃),   φ(a) = elu(a) + 1 > 0   (so φ'(a) = 1 for a > 0, φ(a) otherwise)
// per head h (columns h d .. (h + 1) d), with v' = [v, 1] (d + 1):
//   P_t = P_{t-1} + k_t v'_t^T            (d, d + 1): the state [Σ k v^T | Σ k] = [S | z]
//   n_t = q_t^T P_t                        (d + 1)
//   o_t = n_t[:d] / (n_t[d] + ε),  ε = 1e-6      (q_t^T S_t / q_t^T z_t)
//   y = o Wo^T                             (B N, O)  Wo = "<name>.out.w" (O, O), no bias
// The state per batch row is P of every head, layout [h][i][j] (i key dim < d, j < d + 1,
// j = d the normaliser z): S = H d (d + 1) floats.
//
// Training form, chunked: for a chunk of C tokens (Q, K (C, d), V' (C, d + 1)) entered with
// state P,
//   A = (Q K^T) ⊙ M   (M: causal, diagonal included)     Num = A V' + Q P
//   P <- P + K^T V'
// Backward per chunk in reverse, with G the gradient of the state leaving the chunk (from
// the later chunks; 0 after the last) and dNum = [do / den | -Σ_j do_j o_j / den],
// den = n[d] + ε:
//   dA = (dNum V'^T) ⊙ M,   dV' = A^T dNum + K G,   dQ = dA K + dNum P^T,
//   dK = dA^T Q + V' G^T,   G <- G + Q^T dNum   (the gradient of the state entering it)
// and dq̃ = dQ ⊙ φ'(q̃), dk̃ = dK ⊙ φ'(k̃), read from φ itself. ds0 is G after chunk 0.
//
// With model.mixer.short_conv = W > 0, [q̃ | k̃ | v] is replaced by silu(conv_W([q̃ | k̃ | v]))
// before φ (nn/mixers/short_conv.hpp; "<name>.conv.w" (3 O, W)): fla has no short
// convolution in its linear attention layer, so this follows the one its other layers use.
// The state row then ends with the convolution's buffer, the last W - 1 projections
// (W - 1, 3 O): S = H d (d + 1) + (W - 1) 3 O.
//
// Held between forward and backward: q, k, v, o (B, N, O) each, den (B, N, H), the state
// at every chunk start and the final state (B, H, ceil(N / C) + 1, d, d + 1); backward
// adds do, dq̃, dk̃, dv (B, N, O) and the per-thread chunk workspaces.
// Parallelism: the (b, h) pairs run in parallel, each with its thread's workspace; the
// weight gradients are gemms after the loop, so results do not depend on the thread count.
#pragma once

#include <memory>
#include <vector>

#include "nn/linear.hpp"
#include "nn/mixers/mixer.hpp"
#include "nn/mixers/short_conv.hpp"

namespace seqbench::nn {

template <class T>
class LinearAttention : public Mixer<T> {
 public:
  LinearAttention(const MixerConfig& cfg, core::ParamStoreT<T>& ps, const std::string& name,
                  int64_t input, int64_t output);

  int64_t input_size() const override { return qkv_.in(); }
  int64_t output_size() const override { return out_.out(); }
  int64_t state_size() const override {
    return h_ * d_ * (d_ + 1) + (conv_ ? conv_->state_size() : 0);
  }
  // PyTorch's Linear default for both projections; the short convolution's own init.
  void init(core::Rng& rng) override;
  void forward(core::ViewT<const T> x, core::ViewT<const T> s0, core::ViewT<T> y) override;
  void backward(core::ViewT<const T> dy, core::ViewT<T> dx, core::ViewT<T> ds0) override;
  core::ViewT<const T> final_state() const override { return final_.cview(); }
  void step(core::ViewT<const T> x, core::ViewT<T> state, core::ViewT<T> y) override;
  size_t estimate_bytes(int64_t B, int64_t N) const override;
  size_t held_bytes() const override;

  static constexpr double kEps = 1e-6;

 private:
  struct Workspace {
    // (C, C), (C, max(C, d + 1)), (C, d + 1) x 3, (d, d + 1)
    std::vector<T> a, da, vp, dnum, num, g;
  };
  void reserve(Workspace& w) const;
  int64_t chunks(int64_t n) const { return (n + c_ - 1) / c_; }
  size_t workspace_floats() const;
  // The state at chunk c's start for pair (b, h).
  T* kept(int64_t b, int64_t h, int64_t c) const;

  int64_t h_, d_, c_;
  LinearT<T> qkv_, out_;
  std::unique_ptr<ShortConv<T>> conv_;  // model.mixer.short_conv > 0
  core::ViewT<const T> x_;
  int64_t b_ = 0, n_ = 0;
  core::TensorT<T> qkv_buf_, o_, den_, kept_, final_;  // (B N, 3O), (B N, O), (B N, H), ...
  core::TensorT<T> do_, dqkv_;                        // (B N, O), (B N, 3 O)
  std::vector<Workspace> ws_;
  std::vector<T> step_buf_;  // step(): (B, 3 O + O)
};

}  // namespace seqbench::nn
