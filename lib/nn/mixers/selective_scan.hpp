// The selective scan: the token mixer of the Mamba block (Gu & Dao 2023, arXiv 2312.00752;
// the official mamba_simple.py), with a hand-written backward. model.cell / model.attention:
// mamba (factory kMambaMixer).
//
// Sizes: I input, O output, E = expand * O inner width, N = d_state, K = conv (width of the
// causal depthwise convolution), R = ceil(I / 16) (the dt rank, the paper's "auto"),
// P = R + 2N. Per token t (one batch row; rows never interact):
//   [u_in | z] = x_t W_in^T                                   W_in (2E, I), no bias
//   c_t[e] = b_c[e] + Σ_{j<K} w_c[e, j] u_in_{t-K+1+j}[e]        (causal, depthwise)
//   u_t = silu(c_t)                                             silu(v) = v σ(v)
//   [δ_t | B_t | C_t] = u_t W_x^T                               W_x (P, E) = [W_dtlow; W_B; W_C]
//   Δ_t = softplus(δ_t W_dt^T + b_dt)                           W_dt (E, R), b_dt (E); Δ > 0
//   A = -exp(A_log)                                             (E, N); A < 0
//   h_t[e, n] = exp(Δ_t[e] A[e, n]) h_{t-1}[e, n] + Δ_t[e] u_t[e] B_t[n]
//   y_t[e] = Σ_n C_t[n] h_t[e, n] + D[e] u_t[e]
//   g_t = y_t ⊙ silu(z_t);  out_t = g_t W_out^T                 W_out (O, E), no bias
// u_in_τ for τ < 0 is the conv history carried in the state (zeros for the zero state).
//
// State per batch row (S = E N + (K - 1) E floats), in this order:
//   h (E, N) row-major (h[e, n] at e N + n), then the conv history: the last K - 1
//   pre-conv inputs u_in (K - 1, E), oldest first (entry K - 2 is the latest token's).
//
// Parameters (named "<name>.<part>", declared in this order; count
// E (2I + O + K + 2R + 3N + 3)):
//   in_proj.w (2E, I), conv.w (E, K), conv.b (E), x_proj.w (P, E), dt_proj.w (E, R),
//   dt_proj.b (E), A_log (E, N), D (E), out_proj.w (O, E).
//
// Training form (forward): the projections are GEMMs over all B·L tokens; the conv, and
// the scan, run per batch row (OpenMP slices of rows, nn/parallel.hpp). The scan is the
// recurrence itself (token by token, E N per token) and keeps h at the start of every
// chunk of cfg.chunk tokens (checkpoints), never at every token.
//
// Held between forward and backward (T = scalar; per token rows of B·L):
//   xz [u_in | z] (2E), c (E), u (E), xdbl [δ | B | C] (P), Δ (E), y (E), g (E, a
//   workspace: the gated output, then dy, then dδ'), checkpoints (B, ceil(L / chunk), E, N),
//   the final state (B, S), A (E, N).
// Backward workspaces: du (E per token), dxz (2E per token), dxdbl (P per token), and per
//   OpenMP thread (omp_get_max_threads() slots): the chunk's recomputed states
//   (min(chunk, L), E, N), dh (E, N) (h in forward), and the thread's parameter-gradient
//   sums dA (E, N), dD (E), dw_c (E, K), db_c (E), added in thread order at the end, and two
//   rows of N for one channel's terms.
//
// Backward (dout (B, L, O) given; all sums over tokens and rows):
//   dg = dout W_out, dW_out += dout^T g
//   dy = dg ⊙ silu(z), dz = dg ⊙ y ⊙ silu'(z),  silu'(v) = σ(v) (1 + v (1 - σ(v)))
//   reverse scan, per row, chunk by chunk from the last; each chunk first recomputes its
//   states h_t from its checkpoint, then for t from its last token down, with
//   a = exp(Δ_t A) and ĝ = dh_t + C_t dy_t^T (dL/dh_t in full; dh = 0 after token L-1):
//     dC_t[n] = Σ_e dy_t[e] h_t[e, n]
//     dΔ_t[e] = Σ_n ĝ (A a h_{t-1} + u_t B_t[n])
//     dA[e, n] += ĝ a h_{t-1} Δ_t[e]            (dA_log = dA ⊙ A)
//     dB_t[n] = Σ_e ĝ Δ_t[e] u_t[e]
//     du_t[e] = D[e] dy_t[e] + Δ_t[e] Σ_n ĝ B_t[n],   dD[e] += dy_t[e] u_t[e]
//     dh_{t-1} = a ⊙ ĝ                          (after token 0: the h part of ds0)
//   dδ' = dΔ ⊙ σ(δ W_dt^T + b_dt) = dΔ ⊙ (1 - exp(-Δ));  dδ = dδ' W_dt,
//   dW_dt += dδ'^T δ, db_dt += Σ dδ'
//   du += [dδ | dB | dC] W_x,  dW_x += [dδ | dB | dC]^T u;  dc = du ⊙ silu'(c)
//   du_in_τ[e] = Σ_j w_c[e, j] dc_{τ+K-1-j}[e] (τ < 0: the history part of ds0),
//   dw_c[e, j] += dc_t[e] u_in_{t-K+1+j}[e], db_c += Σ dc
//   dx = [du_in | dz] W_in,  dW_in += [du_in | dz]^T x
//
// init() follows the official mamba_simple.py (Mamba.__init__), drawing in this order:
//   in_proj.w ~ U(±1/sqrt(I)) (PyTorch Linear default); conv.w, conv.b ~ U(±1/sqrt(K))
//   (PyTorch Conv1d default, fan_in = K for a depthwise conv); x_proj.w ~ U(±1/sqrt(E));
//   dt_proj.w ~ U(±R^-0.5) (dt_init "random", dt_scale 1); dt_proj.b = softplus^-1(Δ0),
//   Δ0 = max(exp(U(log 0.001, log 0.1)), 1e-4) per unit; A_log[e, n] = log(n + 1);
//   D = 1; out_proj.w ~ U(±1/sqrt(E)). (The LM-level rescaling of out_proj by
//   1/sqrt(n_layer) in mamba_ssm's _init_weights is the model's business, not the mixer's.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/linear.hpp"
#include "nn/mixers/mixer.hpp"

namespace seqbench::nn {

template <class T>
class SelectiveScan final : public Mixer<T> {
 public:
  // Throws core::UsageError naming the key for a non-positive size.
  SelectiveScan(const MixerConfig& cfg, core::ParamStoreT<T>& ps, const std::string& name,
                int64_t input, int64_t output);

  int64_t input_size() const override { return in_; }
  int64_t output_size() const override { return out_; }
  int64_t state_size() const override { return e_ * n_ + (k_ - 1) * e_; }
  int64_t inner() const { return e_; }    // E
  int64_t d_state() const { return n_; }  // N
  int64_t dt_rank() const { return r_; }  // R
  // E (2I + O + K + 2R + 3N + 3): the number of parameters this mixer declares.
  static int64_t param_count(const MixerConfig& cfg, int64_t input, int64_t output);

  void init(core::Rng& rng) override;
  void forward(core::ViewT<const T> x, core::ViewT<const T> s0, core::ViewT<T> y) override;
  void backward(core::ViewT<const T> dy, core::ViewT<T> dx, core::ViewT<T> ds0) override;
  core::ViewT<const T> final_state() const override;
  void step(core::ViewT<const T> x, core::ViewT<T> state, core::ViewT<T> y) override;
  size_t estimate_bytes(int64_t B, int64_t N) const override;
  size_t held_bytes() const override;

 private:
  // Scalars held for a forward and backward of (B, L): held (forward) and workspace
  // (backward) buffers, and the per-thread slot.
  struct Sizes {
    int64_t forward = 0, backward = 0, slot = 0, slots = 0, lc = 0, chunks = 0;
  };
  Sizes sizes(int64_t B, int64_t L) const;
  void refresh_a();
  // u_in of row b at token tau (tau < 0: the history in s0), or null for zeros.
  const T* conv_input(int64_t b, int64_t tau) const;
  void conv_forward_row(int64_t b);
  void scan_forward_row(int64_t b, T* h);
  void scan_backward_row(int64_t b, T* slot, T* ds0);
  void conv_backward_row(int64_t b, T* slot, T* ds0);

  int64_t in_, out_, e_, n_, k_, r_, p_, chunk_;
  LinearT<T> in_proj_;
  core::ParamT<T>* conv_w_;
  core::ParamT<T>* conv_b_;
  LinearT<T> x_proj_;
  core::ParamT<T>* dt_w_;
  core::ParamT<T>* dt_b_;
  core::ParamT<T>* a_log_;
  core::ParamT<T>* d_;
  LinearT<T> out_proj_;

  // The last forward: its shape and the caller's x and s0 (kept alive by the caller).
  int64_t b_ = 0, l_ = 0;
  const T* x_ = nullptr;
  const T* s0_ = nullptr;
  // Held from forward (see the top comment).
  std::vector<T> xz_, c_, u_, xdbl_, delta_, y_, g_, ck_, final_, a_;
  // Backward workspaces and the per-thread slots.
  std::vector<T> du_, dxz_, dxdbl_, ws_;
  // step()'s workspace: [xz (2E) | u (E) | xdbl (P) | Δ (E) | g (E)] per row.
  std::vector<T> step_ws_;
};

}  // namespace seqbench::nn
