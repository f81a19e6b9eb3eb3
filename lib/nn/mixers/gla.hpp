// Retention (Sun et al. 2023, RetNet, arXiv 2307.08621: fixed per-head decay) and gated
// linear attention (Yang et al. 2023, GLA, arXiv 2312.06635: data-dependent decay per key
// dimension): one class template, GatedRetention<T, Gated>, two factories (kRetentionMixer,
// kGlaMixer).
//
// Shapes: B batch, N tokens, I input, O output, H = model.mixer.heads, d = O / H,
// C = model.mixer.chunk, R = 16 (GLA's gate rank).
//
//   [q | k̃ | v | g̃] = x W^T    (B N, 4 O)  W = "<name>.qkvg.w" (4 O, I), no bias;
//   k = k̃ / sqrt(d)
//   decay per token, head and key dimension i (α_t, O wide, head h = columns h d .. (h+1) d):
//     retention: α_t[h d + i] = γ_h = 1 - 2^(-5-h)             (fixed, not trained)
//     gla:       a = (x Wa1^T) Wa2^T + ba,  log α = logsigmoid(a) / 16   (τ = 16)
//                Wa1 = "<name>.gate1.w" (R, I), Wa2 = "<name>.gate2.w" (O, R),
//                ba = "<name>.gate2.b" (O)
// With model.mixer.short_conv = W > 0 (the default 4), [q | k̃ | v] <- silu(conv_W([q | k̃ | v]))
// first (nn/mixers/short_conv.hpp, "<name>.conv.w" (3 O, W)): fla's GatedLinearAttention and
// MultiScaleRetention with use_short_conv, whose ShortConvolution carries a SiLU on all three.
// The state row then ends with the convolution's buffer, the last W - 1 projections
// (W - 1, 3 O): S = H d² + (W - 1) 3 O.
// per head h, with q_t, k_t, v_t, α_t its d columns:
//   S_t = diag(α_t) S_{t-1} + k_t v_t^T      (d, d), i key dim, j value dim
//   o_t = S_t^T q_t                          (d)
//   n_t = o_t / r_t,  r_t = sqrt(mean_j(o_t[j]²) + 1e-5)     (per-head RMS norm, no gain)
//   z_t = n_t ⊙ silu(g̃_t)                    (O, all heads)
//   y = z Wo^T                               (B N, O)  Wo = "<name>.out.w" (O, O), no bias
// The state per batch row is S of every head, layout [h][i][j]: S = H d² floats.
//
// Training form, chunked. For a chunk of L <= C tokens (Q, K, V (L, d) of one head, local
// t = 0 .. L-1) entered with state S0 and with α_t its decays, every decay factor is a
// product of α's (each in (0, 1]), so nothing is ever exponentiated upward (a cumulative
// log decay is never negated) and a long run of tiny α underflows to 0 and stays finite:
//   A_t = Π_{r<=t} α_r     (decay from the chunk start through t)       A (L, d)
//   R_s = Π_{s<r<L} α_r    (decay from after s to the chunk end)        R (L, d)
//   Λ   = A_{L-1}          (the chunk's total decay)
//   E_ts = Π_{s<r<=t} α_r  (s <= t; decay from s to t)
//   P[t, s] = Σ_i q_t[i] k_s[i] E_ts[i] for s <= t, else 0            P (L, L)
//   Q̃ = Q ⊙ A,  K̂ = K ⊙ R
//   O = Q̃ S0 + P V
//   S_end = diag(Λ) S0 + K̂^T V
// Retention's P is (Q K^T) ⊙ D with D[t, s] = γ^(t-s), one gemm; GLA's is formed pair by
// pair, E_ts built by multiplying q_t by α_t, α_{t-1}, ... while s walks down.
//
// Backward per chunk in reverse, with G the gradient of the state leaving the chunk (0
// after the last) and dO from the norm and gate (below):
//   dP = (dO V^T) masked to s <= t
//   dV = P^T dO + K̂ G
//   dK = (V G^T) ⊙ R + Σ_{t>=s} dP[t, s] q_t ⊙ E_ts    (retention: (dP ⊙ D)^T Q)
//   dQ = (dO S0^T) ⊙ A + Σ_{s<=t} dP[t, s] k_s ⊙ E_ts  (retention: (dP ⊙ D) K)
//   GLA: with ℓ_t = log A_t (so E_ts = exp(ℓ_t - ℓ_s), R_s = exp(ℓ_{L-1} - ℓ_s)), the
//   gradient of ℓ_t is q_t ⊙ dq_t - k_t ⊙ dk_t, plus at t = L-1
//     dΛ = Λ ⊙ rowsum(S0 ⊙ G) + Σ_s k_s ⊙ (dk_s's state part (V G^T) ⊙ R)
//   and d log α_r = Σ_{t>=r} dℓ_t (a reverse cumulative sum: no exponentials).
//   G <- diag(Λ) G + Q̃^T dO   (the gradient of the state entering the chunk)
// ds0 is G after chunk 0. The sums over pairs run as Horner recurrences in α (only
// multiplications by α <= 1).
// Norm and gate backward per token and head: dz = dy Wo, dn = dz ⊙ silu(g̃),
//   dg̃ = dz ⊙ n ⊙ silu'(g̃),  do = (dn - n mean_j(dn ⊙ n)) / r.
// GLA's gate: d a = d log α ⊙ (1 - sigmoid(a)) / 16, with 1 - sigmoid(a) = -expm1(16 log α).
//
// Held between forward and backward: q k v g̃ (B N, 4 O), n (B N, O), 1/r (B N, H), for GLA
// log α (B N, O) and x Wa1^T (B N, R); the state at every chunk start (B, H, ceil(N / C),
// d, d) and the final state (B, S); z (B N, O) (forward's z, backward's dz and do).
// Backward adds dq dk dv dg̃ (B N, 4 O), for GLA d log α (B N, O) and its rank-R gradient
// (B N, R), and the per-thread chunk workspaces (6 L d + 2 L² + d² + d, L = min(C, N)).
// Parallelism: the (b, h) pairs run in parallel, each with its thread's workspace; the
// weight gradients are gemms after the loop, so results do not depend on the thread count.
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "nn/linear.hpp"
#include "nn/mixers/mixer.hpp"
#include "nn/mixers/short_conv.hpp"

namespace seqbench::nn {

template <class T, bool Gated>
class GatedRetention : public Mixer<T> {
 public:
  GatedRetention(const MixerConfig& cfg, core::ParamStoreT<T>& ps, const std::string& name,
                 int64_t input, int64_t output);

  int64_t input_size() const override { return qkvg_.in(); }
  int64_t output_size() const override { return out_.out(); }
  int64_t state_size() const override {
    return h_ * d_ * d_ + (conv_ ? conv_->state_size() : 0);
  }
  // As the official code: every projection xavier_uniform with gain 2^-2.5; the output
  // projection gain 2^-1 for retention (torchscale's MultiScaleRetention) and 2^-2.5 for
  // GLA (fla's GatedLinearAttention, whose gate bias starts at 0).
  void init(core::Rng& rng) override;
  void forward(core::ViewT<const T> x, core::ViewT<const T> s0, core::ViewT<T> y) override;
  void backward(core::ViewT<const T> dy, core::ViewT<T> dx, core::ViewT<T> ds0) override;
  core::ViewT<const T> final_state() const override { return final_.cview(); }
  void step(core::ViewT<const T> x, core::ViewT<T> state, core::ViewT<T> y) override;
  size_t estimate_bytes(int64_t B, int64_t N) const override;
  size_t held_bytes() const override;

  int64_t heads() const { return h_; }
  // Retention's fixed decay of head h, 1 - 2^(-5-h).
  static double retention_decay(int64_t h) { return 1.0 - std::exp2(-5.0 - double(h)); }
  // log α of the last forward, (B N, O) (GLA only; empty for retention).
  core::ViewT<const T> log_decay() const { return la_.cview(); }

  static constexpr int64_t kRank = 16;      // GLA: rank of the gate projection
  static constexpr double kTau = 16;        // GLA: α = sigmoid(a)^(1/τ)
  static constexpr double kNormEps = 1e-5;  // the per-head RMS norm's ε

 private:
  struct Workspace {
    std::vector<T> al, A, R, qt, kh, tmp;  // (L, d) each: α, A, R, Q̃, K̂, scratch
    std::vector<T> P, dP;                   // (L, L)
    std::vector<T> G, vec;                  // (d, d) the state gradient, (d)
  };
  static size_t workspace_floats(int64_t L, int64_t d) {
    return size_t(6 * L * d + 2 * L * L + d * d + d);
  }
  void reserve(int64_t L);
  int64_t chunks(int64_t n) const { return (n + c_ - 1) / c_; }
  // The state at chunk c's start for pair (b, h).
  T* kept(int64_t b, int64_t h, int64_t c) const;
  // Fills w.al, A, R, qt, kh and P for one chunk of one head (q, k, la rows with stride ld,
  // la null for retention).
  void prepare_chunk(Workspace& w, int64_t h, int64_t len, const T* q, const T* k,
                     const T* la, int64_t ld) const;
  // Per-head RMS norm in place over o (d): returns 1/r.
  T rms_normalize(T* o) const;

  int64_t h_, d_, c_;
  LinearT<T> qkvg_, out_;
  // GLA only (declared for retention too but never registered: see the constructor).
  std::unique_ptr<LinearT<T>> gate1_, gate2_;
  std::unique_ptr<ShortConv<T>> conv_;  // model.mixer.short_conv > 0
  core::ViewT<const T> x_;
  int64_t b_ = 0, n_ = 0;
  core::TensorT<T> qkvg_buf_, n_buf_, rinv_, la_, a1_;  // (BN, 4O), (BN, O), (BN, H), ...
  core::TensorT<T> kept_, final_, z_;                   // states; (B, S); (BN, O)
  core::TensorT<T> dqkvg_, dla_, da1_;                  // (BN, 4O), (BN, O), (BN, R)
  std::vector<Workspace> ws_;
  std::vector<T> step_buf_;  // step(): (B, 4 O + 2 O + R)
};

template <class T>
using Retention = GatedRetention<T, false>;
template <class T>
using GatedLinearAttention = GatedRetention<T, true>;

}  // namespace seqbench::nn
