// mLSTM mixer: the matrix-memory LSTM of xLSTM (Beck et al. 2024, "xLSTM: Extended Long
// Short-Term Memory", arXiv 2405.04517, Section 2.3 and its appendix), with a chunkwise
// training form, the recurrent step and a hand-written backward.
//
// Sizes: I input, O output, H = model.mixer.heads, d = O / H (key and value width of a head),
// C = model.mixer.chunk. Row-major (B, N, I) in, (B, N, O) out.
//
// Parameters ("<name>.<part>"):
//   qkvo.w (4 O, I)            [q | k | v | õ] = x W^T, no bias
//   gates.w (2 H, I), gates.b (2 H)   [ĩ | f̃] = x Wg^T + bg: one input and one forget gate
//                              pre-activation per head (scalars, as in the paper)
//   out.w (O, O)               y = z Wo^T, no bias
//   with model.mixer.short_conv = W > 0 (the default 4): conv.w (2 O, W), a causal depthwise
//   convolution + SiLU on q and k (nn/mixers/short_conv.hpp), as the xLSTM mLSTM block puts
//   its width-4 causal convolution (and swish) before the q and k projections; v and õ are
//   not convolved. The gates read x directly (the official block reads the convolved q, k, v;
//   ours keeps the gates a function of the token alone, like deltanet's β and α).
//
// The cell, per head (q_t, k_t, v_t its d columns, k_t scaled by 1/sqrt(d) as the paper):
//   i_t = exp(ĩ_t),  f_t = σ(f̃_t)  (log f_t = logsigmoid(f̃_t); the sigmoid forget gate of the
//        official code),  o_t = σ(õ_t)
//   C_t = f_t C_{t-1} + i_t v_t k_t^T      (d x d, row = value index, column = key index)
//   n_t = f_t n_{t-1} + i_t k_t            (d)
//   h̃_t = C_t q_t / max(|n_t^T q_t|, 1),   z_t = o_t ⊙ h̃_t,   y_t = z_t Wo^T
// Stabilisation (Section 2.2's, which the paper's appendix carries over to the mLSTM): the state
// holds C'_t = C_t e^{-m_t}, n'_t = n_t e^{-m_t} and the stabiliser m_t, with
//   m_t = max(log f_t + m_{t-1}, ĩ_t),  i'_t = exp(ĩ_t - m_t),  f'_t = exp(log f_t + m_{t-1} - m_t)
//   C'_t = f'_t C'_{t-1} + i'_t v_t k_t^T,  n'_t = f'_t n'_{t-1} + i'_t k_t
//   h̃_t = C'_t q_t / max(|n'_t^T q_t|, e^{-m_t})
// which is the unstabilised h̃_t exactly (numerator and denominator both carry e^{-m_t}), while
// every factor exp(·) is at most 1. For ANY sequence of m values, not just the max, the
// outputs and the unstabilised state C_t = C'_t e^{m_t} are the same, so the outputs do not
// depend on m at all: the backward treats every m_t as a constant (no gradient through the
// max) and that is the exact gradient of the unstabilised formula, on either side of the
// max. The one m that is a real input is the initial state's m_0 (C_0 = C'_0 e^{m_0}): its
// gradient is <dC'_0, C'_0> + <dn'_0, n'_0>.
//
// State per batch row: per head [C' (d x d) | n' (d) | m (1)], then with short_conv = W > 0
// the convolution's buffer (the last W - 1 [q | k] projections, (W - 1, 2 O)):
// S = H (d² + d + 1) + (W - 1) 2 O.
//
// Training form, chunked. A chunk of L <= C tokens (local t = 0 .. L-1) of one head, entered
// with (C'_0, n'_0, m_0), with g_t = log f_t and b_t = Σ_{r<=t} g_r:
//   m_t   the recurrence above (computed token by token, as step())
//   D_ts  = exp(b_t - b_s + ĩ_s - m_t)  (s <= t, else 0)     e_t = exp(b_t + m_0 - m_t)
//   P_ts  = D_ts (q_t · k_s)
//   num_t = e_t C'_0 q_t + Σ_s P_ts v_s,   den_t = e_t n'_0 · q_t + Σ_s P_ts
//   h̃_t   = num_t / μ_t,  μ_t = max(|den_t|, e^{-m_t})
//   C'_end = e_{L-1} C'_0 + Σ_s D_{L-1,s} v_s k_s^T,  n'_end = e_{L-1} n'_0 + Σ_s D_{L-1,s} k_s,
//   m_end = m_{L-1}
// Every D and e is at most 1 (m_t is at least each exponent), so nothing overflows.
//
// Backward per chunk in reverse, with (G_C, G_n) the gradient of the state leaving the chunk
// (0 after the last), the m's constants:
//   dnum_t = dh̃_t / μ_t,  dden_t = -sign(den_t) (dh̃_t · h̃_t) / μ_t where |den_t| > e^{-m_t}, else 0
//   dP_ts = dnum_t · v_s + dden_t                          (s <= t)
//   dv_s  = Σ_{t>=s} P_ts dnum_t + D_{L-1,s} G_C k_s
//   dk_s  = Σ_{t>=s} dP_ts D_ts q_t + D_{L-1,s} (G_C^T v_s + G_n)
//   dq_t  = e_t (C'_0^T dnum_t + dden_t n'_0) + Σ_{s<=t} dP_ts D_ts k_s
//   the log-weights: w_ts = dP_ts P_ts, w_s^end = D_{L-1,s} (v_s · G_C k_s + G_n · k_s),
//   ε_t = e_t (dnum_t · C'_0 q_t + dden_t n'_0 · q_t), ε_end = e_{L-1} (<G_C, C'_0> + <G_n, n'_0>):
//     dĩ_s = Σ_{t>=s} w_ts + w_s^end
//     db_t = Σ_{s<=t} w_ts - Σ_{t'>=t} w_t't + ε_t  (+ Σ_s w_s^end - w_t^end + ε_end at t = L-1,
//            and -w_t^end for every t),   d log f_r = Σ_{t>=r} db_t
//   G_C <- e_{L-1} G_C + Σ_t e_t dnum_t q_t^T,   G_n <- e_{L-1} G_n + Σ_t e_t dden_t q_t
//   ds0: (G_C, G_n) after chunk 0, and dm_0 = <G_C, C'_0> + <G_n, n'_0>.
//   df̃ = d log f σ(-f̃) = d log f (-expm1(log f));  dõ = dz h̃ σ'(õ),  dh̃ = dz σ(õ).
//
// Held between forward and backward: [q | k | v | õ] (B N, 4 O) (q, k after the convolution,
// k scaled), [ĩ | log f] (B N, 2 H), m and den (B N, H) each, h̃ and z (B N, O) each, the state
// at every chunk start (B, H, ceil(N / C), d² + d + 1), the final state (B, S), and in backward
// their gradients (B N, 4 O) and (B N, 2 H); the convolution's (B N, 2 O) twice; per thread a
// workspace of 3 L² + L d + 4 L + d² + 2 d + 1 (L = min(C, N)). step() keeps its own rows
// (counted in held_bytes() once it has run). Parallelism: the (b, h) pairs run in parallel,
// each with its thread's workspace; weight gradients are gemms after the loop.
//
// init, as the official mLSTM layer: q, k, v, õ ~ N(0, 2 / (5 I)) (small_init); gate weights
// 0, input-gate bias ~ N(0, 0.1²), forget-gate bias linspace(3, 6) over the heads (f ≈ 0.95 ..
// 0.998 at the start); out ~ N(0, 1 / O) (variance preserving, our choice).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nn/linear.hpp"
#include "nn/mixers/mixer.hpp"
#include "nn/mixers/short_conv.hpp"

namespace seqbench::nn {

template <class T>
class MlstmMixer final : public Mixer<T> {
 public:
  MlstmMixer(const MixerConfig& cfg, core::ParamStoreT<T>& ps, const std::string& name,
             int64_t input, int64_t output);

  int64_t input_size() const override { return qkvo_.in(); }
  int64_t output_size() const override { return out_.out(); }
  int64_t state_size() const override {
    return h_ * head_state() + (conv_ ? conv_->state_size() : 0);
  }
  int64_t heads() const { return h_; }
  // Floats of one head's state: C' (d²), n' (d), m (1).
  int64_t head_state() const { return d_ * d_ + d_ + 1; }

  void init(core::Rng& rng) override;
  void forward(core::ViewT<const T> x, core::ViewT<const T> s0, core::ViewT<T> y) override;
  void backward(core::ViewT<const T> dy, core::ViewT<T> dx, core::ViewT<T> ds0) override;
  core::ViewT<const T> final_state() const override { return final_.cview(); }
  void step(core::ViewT<const T> x, core::ViewT<T> state, core::ViewT<T> y) override;
  size_t estimate_bytes(int64_t B, int64_t N) const override;
  size_t held_bytes() const override;

  // The stabiliser m_t of the last forward, (B N, H).
  core::ViewT<const T> stabilizer() const { return m_.cview(); }

 private:
  int64_t chunks(int64_t n) const { return (n + c_ - 1) / c_; }
  size_t workspace_floats(int64_t L) const {
    return size_t(3 * L * L + L * d_ + 4 * L + d_ * d_ + 2 * d_ + 1);
  }
  T* kept(int64_t b, int64_t h, int64_t c) const;
  // Fills b (cumulative log f), e, D and P of one chunk of head h (rows row0 .. row0+len-1,
  // entered with stabiliser m0) in a workspace laid out for L tokens; m_t read from m_.
  void prepare_chunk(T* ws, int64_t L, int64_t len, int64_t row0, int64_t h, T m0) const;

  int64_t h_, d_, c_;
  LinearT<T> qkvo_, gates_, out_;
  std::unique_ptr<ShortConv<T>> conv_;  // model.mixer.short_conv > 0
  core::ViewT<const T> x_;
  int64_t b_ = 0, n_ = 0;
  core::TensorT<T> p_, g_, m_, den_, ht_, z_;  // (BN,4O) (BN,2H) (BN,H) (BN,H) (BN,O) (BN,O)
  core::TensorT<T> kept_, final_, dp_, dg_;
  std::vector<std::vector<T>> ws_;  // per thread
  std::vector<T> step_buf_;         // step(): (B, 4 O + 2 H + O)
};

}  // namespace seqbench::nn
