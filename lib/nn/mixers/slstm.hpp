// sLSTM mixer: the scalar-memory LSTM of xLSTM (Beck et al. 2024, "xLSTM: Extended Long
// Short-Term Memory", arXiv 2405.04517, Section 2.2), with exponential input gate, a normaliser
// state, the stabiliser m, and recurrent connections that are block-diagonal per head. It has
// no parallel form (its gates read h_{t-1}): forward is a time loop, backward is
// backpropagation through time, and step() is the same loop for one token.
//
// Why a mixer and not a cell (nn/cells): the Mixer interface carries the state between
// batches, has step(), and makes the model usable both as model.cell (a recurrent layer, through
// MixerLayer) and as model.attention (the token mixer of a Transformer block), as the other
// xLSTM half, mlstm, is. Its whole-sequence forward also lets the input projection be one
// gemm over all tokens.
//
// Sizes: I input, O output (the hidden width), H = model.mixer.heads, d = O / H.
// Parameters ("<name>.<part>"):
//   w.w (4 O, I), w.b (4 O)   [ĩ | f̃ | z̃ | õ] input part = x W^T + b
//   r (4 O, d)                the recurrent weights, block-diagonal: row g O + h d + i, column j
//                             connects h_{t-1}[h d + j] to gate g's unit h d + i (gates
//                             g = 0 .. 3 in the order ĩ, f̃, z̃, õ)
// Per token and unit (head h's units read only head h's part of h_{t-1}):
//   [ĩ | f̃ | z̃ | õ]_t = W x_t + b + R h_{t-1}
//   i_t = exp(ĩ_t), f_t = σ(f̃_t) (log f_t = logsigmoid(f̃_t)), z_t = tanh(z̃_t), o_t = σ(õ_t)
//   c_t = f_t c_{t-1} + i_t z_t,  n_t = f_t n_{t-1} + i_t,  h_t = o_t ⊙ c_t / n_t,  y_t = h_t
// Stabilised (Section 2.2): m_t = max(log f_t + m_{t-1}, ĩ_t),
//   i'_t = exp(ĩ_t - m_t), f'_t = exp(log f_t + m_{t-1} - m_t),
//   c'_t = f'_t c'_{t-1} + i'_t z_t,  n'_t = f'_t n'_{t-1} + i'_t,  h_t = o_t ⊙ c'_t / n'_t
// and m_t = ĩ_t where n'_{t-1} = 0 (the zero state; the official code's rule, which keeps
// i'_t = 1 where exp(ĩ_t - log f_t) could underflow to 0 and leave h = 0 / 0; f'_t may then
// overflow, so a zero c'_{t-1} or n'_{t-1} adds 0 instead of f'_t times 0),
// with c'_t = c_t e^{-m_t}, n'_t = n_t e^{-m_t}: the ratio, hence h_t, is the unstabilised one
// for any values of m, so the backward treats m as a constant (the exact gradient of the
// unstabilised formula on either side of the max); the initial state's m_0 is a real input
// (c_0 = c'_0 e^{m_0}) with gradient dc'_0 c'_0 + dn'_0 n'_0 (elementwise).
//
// State per batch row: [h | c' | n' | m], O each: S = 4 O. A state must keep n' > 0 (any state
// the mixer produced from n'_0 >= 0 does).
//
// Backward, per token in reverse, with dh = dy_t + R^T dpre_{t+1} (block-diagonal) and the
// carried dc', dn':
//   dõ = dh h̃ o (1 - o),  h̃ = c'/n';  dc' += dh o / n';  dn' += -dh o h̃ / n'
//   dz̃ = dc' i' (1 - z²);  dĩ = (dc' z + dn') i';  d log f = (dc' c'_{t-1} + dn' n'_{t-1}) f'
//   df̃ = d log f (1 - f) = d log f (-expm1(log f));  dc' <- dc' f', dn' <- dn' f'
// ds0: h's is R^T dpre_0, c', n' the carried gradients after token 0, m's the d log f of
// token 0 (m_0 enters only through f'_0). dW, db, dx: one gemm each over all tokens; dR per
// head and gate: dpre^T h_prev gemms, so nothing depends on the thread count.
//
// Held between forward and backward: the pre-activations (B N, 4 O), c', n', m and h_{t-1}
// (B N, O) each, the final state (B, 4 O), the pre-activation gradients (B N, 4 O) and the
// carried gradients (B, 3 O). step() keeps (B, 4 O) (counted in held_bytes() once it ran).
//
// init (ours; the official code's sLSTM sits behind its own projections): W, b ~ U(±1/sqrt(I))
// (PyTorch's Linear) then the biases set: ĩ, z̃, õ 0, f̃ linspace(3, 6) over the heads (the
// mLSTM layer's forget bias); R ~ U(±1/sqrt(d)).
#pragma once

#include <string>
#include <vector>

#include "nn/linear.hpp"
#include "nn/mixers/mixer.hpp"

namespace seqbench::nn {

template <class T>
class SlstmMixer final : public Mixer<T> {
 public:
  SlstmMixer(const MixerConfig& cfg, core::ParamStoreT<T>& ps, const std::string& name,
             int64_t input, int64_t output);

  int64_t input_size() const override { return w_.in(); }
  int64_t output_size() const override { return o_; }
  int64_t state_size() const override { return 4 * o_; }
  int64_t heads() const { return h_; }

  void init(core::Rng& rng) override;
  void forward(core::ViewT<const T> x, core::ViewT<const T> s0, core::ViewT<T> y) override;
  void backward(core::ViewT<const T> dy, core::ViewT<T> dx, core::ViewT<T> ds0) override;
  core::ViewT<const T> final_state() const override { return final_.cview(); }
  void step(core::ViewT<const T> x, core::ViewT<T> state, core::ViewT<T> y) override;
  size_t estimate_bytes(int64_t B, int64_t N) const override;
  size_t held_bytes() const override;

  // The stabiliser m_t of the last forward, (B N, O).
  core::ViewT<const T> stabilizer() const { return m_.cview(); }

 private:
  // rt = R's blocks transposed: rt[((g H + h) d + j) d + i] = R[(g O + h d + i) d + j].
  void transpose_r(std::vector<T>& rt) const;
  // One token of one batch row: pre (4 O, the input part in, R h_prev added), the previous
  // [c' | n' | m] (O each, may be null for zeros) -> c', n', m, h (O each). rt from
  // transpose_r; acc: d floats of scratch.
  void cell(const T* rt, T* acc, T* pre, const T* hprev, const T* cprev, const T* nprev,
            const T* mprev, T* c, T* n, T* m, T* h) const;

  int64_t o_, h_, d_;
  LinearT<T> w_;
  core::ParamT<T>* r_;
  core::ViewT<const T> x_;
  const T* s0_ = nullptr;
  int64_t b_ = 0, n_ = 0;
  core::TensorT<T> pre_, c_, nrm_, m_, hp_, final_, dpre_, carry_;
  std::vector<T> step_buf_;
  std::vector<T> rt_;  // transpose_r of the current R (forward and step)
};

}  // namespace seqbench::nn
