// Vanilla (Elman) RNN cell with a choice of nonlinearity and recurrent initialisation.
//
//   w_x (I, H), w_h (H, H), b (H), and for modReLU b_mod (H)
//   a_t = x_t w_x + b + h_{t-1} w_h                      (B, H)
//   h_t = φ(a_t), elementwise, φ one of
//     tanh
//     relu      max(a, 0)
//     modrelu   sign(a) · relu(|a| + b_mod)   (the real-valued modReLU of the expRNN /
//               nnRNN code; b_mod < 0 gives a dead zone |a| < -b_mod, b_mod > 0 a jump
//               of 2 b_mod at a = 0)
// State row s_t = h_t (S = H). Projection P = H (xp_t = x_t w_x + b).
// Per-step cache row (H):
//   tanh, relu  φ'(a_t)                       (1 - h_t², or [a_t > 0])
//   modrelu     m_t = sign(a_t) · [|a_t| + b_mod > 0] ∈ {-1, 0, 1}, so that
//               dL/da_t = dL/dh_t ⊙ |m_t| and dL/db_mod = Σ dL/dh_t ⊙ m_t;
//               step_backward overwrites it with dL/dh_t ⊙ m_t, which
//               recurrent_weight_backward sums into b_mod's gradient (so a second
//               backward needs a fresh forward, as the Cell interface allows).
// Kinks: relu at a = 0 and modrelu at a = 0 and at |a| = -b_mod are not differentiable;
// the derivative there is taken as 0 (relu: [a > 0]; modrelu: sign(0) = 0, and
// |a| + b_mod = 0 counts as inactive). Finite-difference tests keep every
// pre-activation away from these points.
//
// Cell interface and call order: see nn/cells/lstm.hpp.
#pragma once

#include <cstdint>
#include <string>

#include "core/param_store.hpp"
#include "core/rng.hpp"
#include "nn/cells/transposed.hpp"

namespace seqbench::nn {

struct RnnOptions {
  std::string nonlinearity = "tanh";  // tanh | relu | modrelu
  std::string init = "xavier";        // recurrent init: xavier | orthogonal | identity | henaff
};

template <class T>
class RnnCell {
 public:
  using Scalar = T;

  // Declares name.w_x (I, H), name.w_h (H, H), name.b (H) and, for modrelu, name.b_mod
  // (H). Throws core::UsageError for an unknown nonlinearity or init.
  RnnCell(core::ParamStoreT<T>& ps, const std::string& name, int64_t input, int64_t hidden,
          RnnOptions opt = {});

  // Draws, in this order: w_x ~ U(-1/sqrt(H), 1/sqrt(H)) (PyTorch's nn.RNN default);
  // w_h by RnnOptions::init (xavier: U(±sqrt(6/2H)); orthogonal: torch-style QR;
  // identity: I, no draws; henaff: expm of block skew-symmetric, see nn/init.hpp);
  // b = 0; b_mod ~ U(-0.01, 0.01). forget_bias is ignored (there is no forget gate); it
  // is accepted because Recurrent<Cell> passes it to every cell. Call after
  // ps.finalize().
  void init(core::Rng& rng, double forget_bias = 0.0);

  int64_t input_size() const { return in_; }
  int64_t hidden() const { return h_; }
  int64_t state_size() const { return h_; }
  int64_t proj_size() const { return h_; }
  int64_t cache_size() const { return h_; }

  // x (N, I) -> xp (N, H) = x w_x + b.
  void input_forward(int64_t n, const T* x, T* xp) const;
  // dxp (N, H) -> dx (N, I) (overwritten, skipped if null); dw_x += x^T dxp; db += Σ rows.
  void input_backward(int64_t n, const T* x, const T* dxp, T* dx);

  // xp (B, H), s_prev (B, H) -> s (B, H) = φ(xp + s_prev w_h), cache (B, H).
  void step_forward(int64_t t, int64_t b, const T* xp, const T* s_prev, T* s, T* cache) const;
  // Before the step_backward calls of each backward: w_hᵀ for the per-step GEMM.
  void prepare_backward() { w_h_t_.refresh(w_h_->value, h_, h_); }
  // ds (B, H): dL/dh_t (total, read only); -> dxp (B, H) = dL/da_t, ds_prev (B, H)
  // overwritten with dL/da_t w_h^T. modrelu overwrites cache with dL/dh_t ⊙ m_t.
  void step_backward(int64_t t, int64_t b, const T* s_prev, T* cache, const T* ds, T* dxp,
                     T* ds_prev) const;
  // s_prev (N, H): the states before each step, dxp (N, H), cache (N, H) after
  // step_backward: dw_h += h_prev^T dxp (one GEMM); modrelu: db_mod += Σ rows of cache.
  void recurrent_weight_backward(int64_t n, const T* s_prev, const T* dxp, const T* cache);

  core::ParamT<T>& w_x() { return *w_x_; }
  core::ParamT<T>& w_h() { return *w_h_; }
  core::ParamT<T>& b() { return *b_; }
  // Null unless the nonlinearity is modrelu.
  core::ParamT<T>* b_mod() { return b_mod_; }

 private:
  enum class Phi { Tanh, Relu, ModRelu };
  enum class Init { Xavier, Orthogonal, Identity, Henaff };
  static Phi parse_phi(const std::string& name, const std::string& s);
  static Init parse_init(const std::string& name, const std::string& s);

  int64_t in_, h_;
  Phi phi_;
  Init init_;
  core::ParamT<T>* w_x_;
  core::ParamT<T>* w_h_;
  core::ParamT<T>* b_;
  core::ParamT<T>* b_mod_ = nullptr;
  Transposed<T> w_h_t_;
};

}  // namespace seqbench::nn
