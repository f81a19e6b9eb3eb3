// LSTM cell (our own, fused elementwise math with a hand-written backward).
//
// Gate order and weight layout follow oneDNN (i, f, c~, o; ldigo), so the same
// parameters run on oneDNN's LSTM primitive (backend::DnnlLstm) and on this cell:
//   w_x (I, 4H), w_h (H, 4H), b (4H)
//   a_t  = x_t w_x + b + h_{t-1} w_h                    (B, 4H), split as [a_i a_f a_g a_o]
//   i = σ(a_i), f = σ(a_f), g = tanh(a_g), o = σ(a_o)
//   c_t = f ⊙ c_{t-1} + i ⊙ g
//   h_t = o ⊙ tanh(c_t)
// State row s_t = [h_t | c_t] (S = 2H, h first, as every cell's state begins with h).
// Per-step cache row = [i f g o | tanh(c_t)] (5H).
//
// The Recurrent<Cell> driver calls, for a whole sequence:
//   input_forward   xp = x w_x + b for all T*B rows at once (one GEMM)
//   step_forward    per step t: gates from xp_t and h_{t-1}, new state, cache
//   prepare_backward  once per backward, before its steps (caches w_hᵀ, cells/transposed.hpp)
//   step_backward   per step t: dL/ds_t -> dL/dxp_t (written over xp_t) and dL/ds_{t-1};
//                   may overwrite the step's cache with what the weight GEMM needs
//   recurrent_weight_backward   dw_h += H_prev^T dA for all steps at once (one GEMM)
//   input_backward  dx = dA w_x^T, dw_x += X^T dA, db += Σ dA (one GEMM each)
// Cell interface (what Recurrent<Cell> calls; every cell in nn/cells/ has it):
//   using Scalar; input_size(), hidden(), state_size() (h first), proj_size(),
//   cache_size() (per batch row and step), init(rng, forget_bias), and the five
//   functions above with the signatures below. t is the time step (0-based), for
//   cells whose update depends on it.
#pragma once

#include <string>

#include "core/param_store.hpp"
#include "core/rng.hpp"
#include "nn/cells/transposed.hpp"

namespace seqbench::nn {

template <class T>
class LstmCell {
 public:
  using Scalar = T;

  LstmCell(core::ParamStoreT<T>& ps, const std::string& name, int64_t input, int64_t hidden);

  // PyTorch's default U(-1/sqrt(H), 1/sqrt(H)) for all weights and the bias, then
  // forget_bias added to the forget gate's bias. Call after ps.finalize().
  void init(core::Rng& rng, double forget_bias = 0.0);

  int64_t input_size() const { return in_; }
  int64_t hidden() const { return h_; }
  int64_t state_size() const { return 2 * h_; }
  int64_t proj_size() const { return 4 * h_; }
  int64_t cache_size() const { return 5 * h_; }

  // x (N, I) -> xp (N, 4H) = x w_x + b.
  void input_forward(int64_t n, const T* x, T* xp) const;
  // dxp (N, 4H) -> dx (N, I) (overwritten, skipped if null); dw_x += x^T dxp; db += Σ rows.
  void input_backward(int64_t n, const T* x, const T* dxp, T* dx);

  // xp (B, 4H), s_prev (B, S) -> s (B, S), cache (B, 5H).
  void step_forward(int64_t t, int64_t b, const T* xp, const T* s_prev, T* s, T* cache) const;
  // Before the step_backward calls of each backward: w_hᵀ for the per-step GEMM.
  void prepare_backward() { w_h_t_.refresh(w_h_->value, h_, 4 * h_); }
  // ds (B, S): dL/ds_t (total, read only); -> dxp (B, 4H) = dL/da_t, ds_prev (B, S)
  // overwritten with the part of dL/ds_{t-1} that flows through this step. The LSTM
  // leaves its cache as it is (dxp is what the weight GEMM needs).
  void step_backward(int64_t t, int64_t b, const T* s_prev, T* cache, const T* ds, T* dxp,
                     T* ds_prev) const;
  // s_prev (N rows with stride S: the states before each step), dxp (N, 4H), cache
  // (N, 5H) after step_backward: dw_h += h_prev^T dxp.
  void recurrent_weight_backward(int64_t n, const T* s_prev, const T* dxp, const T* cache);

  core::ParamT<T>& w_x() { return *w_x_; }
  core::ParamT<T>& w_h() { return *w_h_; }
  core::ParamT<T>& b() { return *b_; }

 private:
  int64_t in_, h_;
  core::ParamT<T>* w_x_;
  core::ParamT<T>* w_h_;
  core::ParamT<T>* b_;
  Transposed<T> w_h_t_;
};

}  // namespace seqbench::nn
