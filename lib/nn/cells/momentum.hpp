// MomentumRNN cells (Nguyen et al., NeurIPS 2020, arXiv 2006.06919): the input term of a
// recurrent cell is read as a gradient step and given momentum (or Adam / RMSProp /
// Nesterov-with-restart). Run by Recurrent<Cell>; the Cell interface is documented in
// nn/cells/lstm.hpp.
//
// LSTM family (MomentumLstmCell), gate order i, f, c~, o and layout as LstmCell:
//   w_x (I, 4H), w_h (H, 4H), b_x (4H), b_h (4H)
//   p_t = x_t w_x + b_x                                  (B, 4H), the driver's xp
//   kind momentum:          v_t = μ v_{t-1} + s p_t;          a_t = v_t + h_{t-1} w_h + b_h
//   kind nesterov_restart:  v_t = c_t v_{t-1} + s p_t;        a_t as momentum (SRLSTM)
//        c_t = (k-1)/(k+2), k = (t mod restart) + 1 for the 0-based step t of this forward
//        call, i.e. k = 1, 2, ..., restart, 1, 2, ... (restart = 0: k = t + 1, never reset).
//        The official code counts k from 1 at the start of every forward call and resets
//        it to 0 after the step with k == restart; so c_t = 0 at t = 0, restart, 2·restart.
//        k restarts with every forward call (as the official PTB code's per-segment
//        forward), not at truncated-BPTT cuts inside one call.
//   kind adam:              v_t = μ v_{t-1} + s p_t
//                           m_t = β m_{t-1} + (1-β) p_t ⊙ p_t
//                           a_t = v_t / sqrt(m_t + ε) + h_{t-1} w_h + b_h   (no bias correction)
//   kind rmsprop:           adam with μ forced to 0 (opt.mu is ignored).
//   then, for every kind:   i = σ(a_i), f = σ(a_f), g = tanh(a_g), o = σ(a_o)
//                           c_t = f ⊙ c_{t-1} + i ⊙ g,  h_t = o ⊙ tanh(c_t)
// Adam's p_t includes b_x, in both v and m, as the official AdamLSTM (mnist-timit and ptb)
// computes grad_val = x2h(x) with x2h's bias. ε = opt.eps (the paper's 1e-16 by default);
// m must stay >= -ε, which it does from a zero (or nonnegative) initial state.
// Note: the official MNIST/TIMIT script's NesterovLSTMCell uses another form,
//   v_t = h_{t-1} U + b_h - s p_t,  a_t = v_t + c_t (v_t - v_{t-1});
// its PTB NesterovLSTM and its orthogonal NesterovRNN use the form implemented here.
// State row: momentum, nesterov_restart [h | c | v] (S = 6H);
//            adam, rmsprop             [h | c | v | m] (S = 10H). v and m are (4H).
// Cache row: momentum, nesterov_restart [a (4H) | tanh c (H)] (C = 5H);
//            adam, rmsprop             [a (4H) | tanh c (H) | p (4H) | sqrt(m+ε) (4H)] (C = 13H).
//   a holds the gates after step_forward and dL/da after step_backward (what the w_h
//   GEMM needs, since dL/dxp = dL/dp differs from dL/da for these cells).
//
// MomentumRnnCell (tanh), w_x (I, H), w_h (H, H), b (H):
//   kind momentum:          v_t = μ v_{t-1} + s x_t w_x,  h_t = tanh(h_{t-1} w_h + v_t + b)
//   kind nesterov_restart:  the coefficient of v_{t-1} is c_t as above (as the official
//                           OrthogonalNesterovRNN does, there with modReLU).
// xp = x w_x (no bias: b sits outside the momentum). State [h | v] (S = 2H); cache [h_t]
// then dL/da (C = H).
//
// Initialisation: init(rng, forget_bias) is PyTorch's default (U(-1/sqrt(H), 1/sqrt(H))
// for every weight and bias) with forget_bias added to b_h's forget slice.
// init_momentum_paper(rng, forget_bias) is the official code's reset_parameters:
//   w_x orthogonal (torch.nn.init.orthogonal_ on the (4H, I) weight = ours transposed);
//   w_h = torch.nn.init.eye_ on the (4H, H) weight: identity in the input gate's block
//     only, the f, c~, o blocks are zero (eye_ of a non-square matrix);
//   b_x = b_h = 0 except both forget slices = forget_bias (the official code fills the
//     forget slice of x2h.bias and of h2h.bias).
// For MomentumRnnCell (not in the official code, which uses orthogonal/modReLU cells):
// w_x orthogonal, w_h identity, b zero; forget_bias is unused.
#pragma once

#include <cstdint>
#include <string>

#include "core/param_store.hpp"
#include "core/rng.hpp"
#include "config/field.hpp"
#include "nn/cells/transposed.hpp"

namespace seqbench::nn {

struct MomentumOptions {
  // momentum | adam | rmsprop | nesterov_restart (config names momentum_lstm, adam_lstm,
  // rmsprop_lstm, sr_lstm). MomentumRnnCell takes momentum | nesterov_restart.
  std::string kind = "momentum";
  double mu = 0.6;      // momentum μ (momentum, adam; rmsprop forces μ = 0)
  double s = 0.6;       // step size s
  double beta = 0.1;    // adam / rmsprop second-moment decay β, in [0, 1)
  double eps = 1e-16;   // adam / rmsprop ε > 0 (paper: 1e-16, no bias correction)
  int64_t restart = 2;  // nesterov_restart: restart period in steps (0 = never restart)

  template <class V>
  void visit(V& v) {
    v("kind", kind, "momentum | adam | rmsprop | nesterov_restart");
    v("mu", mu, "momentum μ", config::finite());
    v("s", s, "step size s", config::finite());
    v("beta", beta, "adam / rmsprop second-moment decay β",
      config::range_below(0.0, 1.0).because("the paper uses 0.1 or 0.01"));
    v("eps", eps, "adam / rmsprop ε", config::positive().because("the paper uses 1e-16"));
    v("restart", restart, "nesterov_restart: restart period (0 = never)",
      config::non_negative().because("the paper uses 2 or 40"));
  }
};

enum class MomentumKind { Momentum, Adam, RmsProp, NesterovRestart };

// "momentum" -> MomentumKind::Momentum, ...; anything else throws core::UsageError naming
// the valid kinds. `where` names the caller in the message (e.g. the parameter prefix).
MomentumKind parse_momentum_kind(const std::string& kind, const std::string& where);

template <class T>
class MomentumLstmCell {
 public:
  using Scalar = T;

  // Declares name.w_x (I, 4H), name.w_h (H, 4H), name.b_x (4H), name.b_h (4H) in ps.
  // Throws core::UsageError on an unknown kind or out-of-range option.
  MomentumLstmCell(core::ParamStoreT<T>& ps, const std::string& name, int64_t input, int64_t hidden,
                   MomentumOptions opt);

  // PyTorch's default; see the header comment. Call after ps.finalize().
  void init(core::Rng& rng, double forget_bias = 0.0);
  // The official MomentumRNN code's initialisation; see the header comment.
  void init_momentum_paper(core::Rng& rng, double forget_bias = 1.0);

  int64_t input_size() const { return in_; }
  int64_t hidden() const { return h_; }
  int64_t state_size() const { return adaptive() ? 10 * h_ : 6 * h_; }
  int64_t proj_size() const { return 4 * h_; }
  int64_t cache_size() const { return adaptive() ? 13 * h_ : 5 * h_; }

  // x (N, I) -> xp (N, 4H) = x w_x + b_x.
  void input_forward(int64_t n, const T* x, T* xp) const;
  // dxp (N, 4H) -> dx (N, I) (overwritten, skipped if null); dw_x += x^T dxp; db_x += Σ rows.
  void input_backward(int64_t n, const T* x, const T* dxp, T* dx);

  // xp (B, 4H), s_prev (B, S) -> s (B, S), cache (B, C).
  void step_forward(int64_t t, int64_t b, const T* xp, const T* s_prev, T* s, T* cache) const;
  // Before the step_backward calls of each backward: w_hᵀ for the per-step GEMM.
  void prepare_backward() { w_h_t_.refresh(w_h_->value, h_, 4 * h_); }
  // ds (B, S) = dL/ds_t (read only) -> dxp (B, 4H) = dL/dp_t, ds_prev (B, S) (overwritten),
  // and the cache's a slot (B rows, stride C) = dL/da_t for recurrent_weight_backward.
  void step_backward(int64_t t, int64_t b, const T* s_prev, T* cache, const T* ds, T* dxp,
                     T* ds_prev) const;
  // s_prev (N rows, stride S), cache (N, C) after step_backward: dw_h += h_prev^T dA,
  // db_h += Σ dA. dxp is not needed here.
  void recurrent_weight_backward(int64_t n, const T* s_prev, const T* dxp, const T* cache);

  // The coefficient of v_{t-1} at 0-based step t (μ, 0 for rmsprop, or c_t).
  double v_coefficient(int64_t t) const;
  MomentumKind kind() const { return kind_; }
  const MomentumOptions& options() const { return opt_; }

  core::ParamT<T>& w_x() { return *w_x_; }
  core::ParamT<T>& w_h() { return *w_h_; }
  core::ParamT<T>& b_x() { return *b_x_; }
  core::ParamT<T>& b_h() { return *b_h_; }

 private:
  bool adaptive() const { return kind_ == MomentumKind::Adam || kind_ == MomentumKind::RmsProp; }

  int64_t in_, h_;
  MomentumOptions opt_;
  MomentumKind kind_;
  core::ParamT<T>* w_x_;
  core::ParamT<T>* w_h_;
  core::ParamT<T>* b_x_;
  core::ParamT<T>* b_h_;
  Transposed<T> w_h_t_;
};

template <class T>
class MomentumRnnCell {
 public:
  using Scalar = T;

  // Declares name.w_x (I, H), name.w_h (H, H), name.b (H). opt.kind: momentum |
  // nesterov_restart (uses mu or restart, and s); others throw core::UsageError.
  MomentumRnnCell(core::ParamStoreT<T>& ps, const std::string& name, int64_t input, int64_t hidden,
                  MomentumOptions opt);

  void init(core::Rng& rng, double forget_bias = 0.0);  // forget_bias unused (no gates)
  void init_momentum_paper(core::Rng& rng, double forget_bias = 1.0);

  int64_t input_size() const { return in_; }
  int64_t hidden() const { return h_; }
  int64_t state_size() const { return 2 * h_; }
  int64_t proj_size() const { return h_; }
  int64_t cache_size() const { return h_; }

  // x (N, I) -> xp (N, H) = x w_x.
  void input_forward(int64_t n, const T* x, T* xp) const;
  // dxp (N, H) -> dx (N, I) (overwritten, skipped if null); dw_x += x^T dxp.
  void input_backward(int64_t n, const T* x, const T* dxp, T* dx);
  // xp (B, H), s_prev (B, 2H) -> s (B, 2H), cache (B, H) = h_t.
  void step_forward(int64_t t, int64_t b, const T* xp, const T* s_prev, T* s, T* cache) const;
  // Before the step_backward calls of each backward: w_hᵀ for the per-step GEMM.
  void prepare_backward() { w_h_t_.refresh(w_h_->value, h_, h_); }
  // ds (B, 2H) -> dxp (B, H) = dL/dxp_t, ds_prev (B, 2H), cache = dL/da_t.
  void step_backward(int64_t t, int64_t b, const T* s_prev, T* cache, const T* ds, T* dxp,
                     T* ds_prev) const;
  // dw_h += h_prev^T dA, db += Σ dA, dA = the cache after step_backward.
  void recurrent_weight_backward(int64_t n, const T* s_prev, const T* dxp, const T* cache);

  double v_coefficient(int64_t t) const;
  const MomentumOptions& options() const { return opt_; }

  core::ParamT<T>& w_x() { return *w_x_; }
  core::ParamT<T>& w_h() { return *w_h_; }
  core::ParamT<T>& b() { return *b_; }

 private:
  int64_t in_, h_;
  MomentumOptions opt_;
  MomentumKind kind_;
  core::ParamT<T>* w_x_;
  core::ParamT<T>* w_h_;
  core::ParamT<T>* b_;
  Transposed<T> w_h_t_;
};

}  // namespace seqbench::nn
