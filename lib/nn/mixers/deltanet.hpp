// Gated DeltaNet mixer: the gated delta rule (Yang, Kautz & Hatamizadeh 2024, "Gated
// Delta Networks: Improving Mamba2 with Delta Rule", arXiv 2412.06464; the delta rule's
// DeltaNet: Yang et al. 2024, arXiv 2406.06484), with a hand-written backward.
//
// Sizes: I input, O output, H = model.mixer.heads, d = O / H (key and value width of a
// head; O % H == 0), C = model.mixer.chunk. Row-major (B, N, I) in, (B, N, O) out.
// Short convolution: with model.mixer.short_conv = W > 0 (the default 4, as the paper and
// fla), the projections [aq | ak | v] go through silu(conv_W(.)) first
// (nn/mixers/short_conv.hpp, fla's ShortConvolution with activation 'silu' on all three):
//   q = l2n(silu(conv(aq))) / sqrt(d),  k = l2n(silu(conv(ak))),  v = silu(conv(v))
// in place of the lines below (the SiLU is the conv's, so there is no second one). With
// short_conv = 0 the mixer is the bare gated delta rule plus its gates, as below.
//
// Parameters ("<name>.<part>"):
//   w_q, w_k, w_v, w_g (O, I), w_beta, w_a (H, I)   declared in this order, so that they
//       are one contiguous (4O + 2H, I) matrix W_in in the ParamStore and the input
//       projection is one GEMM (the constructor checks the offsets)
//   A_log (H), dt_bias (H), w_o (O, O), and with short_conv = W > 0 conv.w (3O, W)
//   count = (4O + 2H) I + O² + 2H (+ 3 O W)
//
// Forward, per token x_t (I) and head h (the head's slice is columns h d .. h d + d - 1):
//   p_t = x_t W_in^T = [aq | ak | v | ag | ab | aa]          (4O + 2H)
//   q = l2n(silu(aq)) / sqrt(d),  k = l2n(silu(ak)),  l2n(a) = a / sqrt(Σ a² + 1e-6)
//   β = σ(ab),  log α = -exp(A_log) softplus(aa + dt_bias),  α = exp(log α) in (0, 1)
//   u = S_{t-1} k,  w = v - α u                             (d)
//   S_t = α S_{t-1} + β w k^T  ( = α S_{t-1} (I - β k k^T) + β v k^T )   (d x d)
//   o_t = S_t q
//   n_t = o_t / sqrt(mean(o_t²) + 1e-5)   (RMS norm per head, no gain)
//   z_t = n_t ⊙ silu(ag),  y_t = z_t w_o^T
//
// State: S (B, H d²), per batch row [h][i][j], i the value index (row of S), j the key
// index; state_size() = H d² = O² / H, plus with short_conv = W > 0 the convolution's buffer
// (the last W - 1 projections [aq | ak | v], (W - 1, 3O)) after the heads.
//
// Backward. G = dL/dS_t, zero after the last token. Per token t, in reverse:
//   G += do_t q^T;   gk = G k
//   dq    = S_t^T do_t = α S_{t-1}^T do_t + β (w·do_t) k
//   dv    = β gk
//   dβ    = w·gk
//   dα    = <G, S_{t-1}> - β u·gk
//   dk    = β G^T w - α β S_{t-1}^T gk
//   dS_{t-1} = α (G - β gk k^T) = α G (I - β k k^T)        (G for token t - 1)
// and through the gates: dlog α = α dα, d aa = dlog α (-exp(A_log) σ(aa + dt_bias)),
// d dt_bias = Σ d aa, d A_log = Σ dlog α log α; d ab = dβ β (1 - β); l2n:
// da = (g - â (â·g)) / sqrt(Σ a² + 1e-6) for the unit â and its gradient g, then silu'.
// RMS norm: do = (dn - n (n·dn) / d) / rms; dn = dz ⊙ silu(ag), d ag = dz ⊙ n ⊙ silu'(ag).
// ds0 = G after token 0. Parameter gradients of W_in and w_o are GEMMs after the scan;
// A_log and dt_bias are column sums in a fixed order (deterministic).
//
// Held between forward and backward (T-sized entries):
//   P     (B N, 4O + 2H)  the projections p_t; backward overwrites them with dL/dp_t
//   act   (B N, 2O + 2H)  [q | k | β | α]; backward overwrites α's slot with dlog α log α
//   o     (B N, O)        S_t q; backward overwrites it with dL/do_t
//   z     (B N, O)        the input of w_o; backward overwrites it with dL/dz
//   ck    (B, ceil(N / C), H d²)   the heads' state before tokens 0, C, 2C, ..
//   with short_conv: the convolution's input and pre-activation (B N, 3O) each
//   final (B, S)
// Backward recomputes the states inside each chunk from its checkpoint, per (b, h), into
// a per-thread workspace of (min(C, N) + 1) d² + 5d (omp_get_max_threads() of them).
// estimate_bytes(B, N) is all of that. step() keeps its own (B, 8O + 4H) rows, which are
// counted in held_bytes() once step() has run (the estimate covers forward + backward).
// Backward consumes the caches: one backward per forward.
//
// init: the gate parameters as fla's gated_deltanet layer: A_log = log U(1, 16) (Mamba-2's
// A range; fla draws U(0, 16)), dt_bias = softplus^{-1}(dt) with
// dt = max(exp(U(log 0.001, log 0.1)), 1e-4); the projections w_q, w_k, w_v, w_g, w_beta,
// w_a ~ N(0, 1/I) and w_o ~ N(0, 1/O) (variance preserving, our choice: fla's projections
// are plain nn.Linear layers initialised by the surrounding model).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nn/mixers/mixer.hpp"
#include "nn/mixers/short_conv.hpp"

namespace seqbench::nn {

template <class T>
class DeltaNetMixer final : public Mixer<T> {
 public:
  DeltaNetMixer(const MixerConfig& cfg, core::ParamStoreT<T>& ps, const std::string& name,
                int64_t input, int64_t output);

  int64_t input_size() const override { return in_; }
  int64_t output_size() const override { return out_; }
  int64_t state_size() const override { return heads_size() + (conv_ ? conv_->state_size() : 0); }
  int64_t heads() const { return h_; }

  void init(core::Rng& rng) override;
  void forward(core::ViewT<const T> x, core::ViewT<const T> s0, core::ViewT<T> y) override;
  void backward(core::ViewT<const T> dy, core::ViewT<T> dx, core::ViewT<T> ds0) override;
  core::ViewT<const T> final_state() const override;
  void step(core::ViewT<const T> x, core::ViewT<T> state, core::ViewT<T> y) override;
  size_t estimate_bytes(int64_t B, int64_t N) const override;
  size_t held_bytes() const override;

 private:
  int64_t heads_size() const { return h_ * d_ * d_; }          // the matrices S of all heads
  int64_t proj_width() const { return 4 * out_ + 2 * h_; }  // P row
  int64_t act_width() const { return 2 * out_ + 2 * h_; }   // act row
  int64_t workspace_per_thread(int64_t N) const;
  // p (rows, 4O + 2H) -> act (rows, 2O + 2H).
  void activate(int64_t rows, const T* p, T* act) const;
  // o (rows, O), p's ag -> z (rows, O).
  void gate_output(int64_t rows, const T* o, const T* p, T* z) const;

  int64_t in_, out_, h_, d_, chunk_;
  core::ParamT<T>* w_q_;  // first row of W_in
  core::ParamT<T>* w_k_;
  core::ParamT<T>* w_v_;
  core::ParamT<T>* w_g_;
  core::ParamT<T>* w_beta_;
  core::ParamT<T>* w_a_;
  core::ParamT<T>* a_log_;
  core::ParamT<T>* dt_bias_;
  core::ParamT<T>* w_o_;
  std::unique_ptr<ShortConv<T>> conv_;  // model.mixer.short_conv > 0

  // The last forward.
  const T* x_ = nullptr;
  int64_t B_ = 0, N_ = 0;
  std::vector<T> p_, act_, o_, z_, ck_, final_, ws_;
  // step()'s rows.
  std::vector<T> sp_, sact_, so_, sz_;
};

}  // namespace seqbench::nn
