// Linear Recurrent Unit (Orvieto et al., ICML 2023, "Resurrecting Recurrent Neural Networks
// for Long Sequences", arXiv 2303.06349): a diagonal complex linear recurrence with the
// stable exponential parameterisation and the γ normalisation, read out by a complex
// projection plus a skip matrix. No nonlinearity inside the layer (the paper puts the
// MLP / GLU after it, outside the mixer).
//
// Shapes: B batch, N tokens, I input, O output, P = model.mixer.d_state complex units.
// Parameters ("<name>.<part>"):
//   nu_log (P), theta_log (P), gamma_log (P), B_re, B_im (P, I), C_re, C_im (O, P), D (O, I)
// Per unit n (computed in double, then rounded to T):
//   r_n = exp(-exp(nu_log_n)),  θ_n = exp(theta_log_n),  g_n = exp(gamma_log_n)
//   λ_n = r_n e^{iθ_n} = (a_re, a_im) = (r cos θ, r sin θ)     |λ_n| = r_n < 1 for any nu_log
// Forward (complex h_t ∈ C^P, per batch row; Bc = B_re + i B_im, Cc = C_re + i C_im):
//   u_t = Bc x_t                                  u_re = B_re x_t, u_im = B_im x_t
//   h_t = λ ⊙ h_{t-1} + g ⊙ u_t                   (h_{-1} = s0)
//   y_t = Re(Cc h_t) + D x_t = C_re h_re - C_im h_im + D x_t
// Training form: y = x Dᵀ for all B·N rows (one GEMM); then per batch row and chunk of
// L = min(chunk, N) tokens: U_c = x_c [B_re; B_im]ᵀ (GEMM), the diagonal scan from the
// chunk's boundary state, y_c += H_re C_reᵀ - H_im C_imᵀ (GEMM). (u is projected per chunk,
// not for all tokens at once, so that nothing of size B·N·P is held.)
//
// Backward (δz = ∂L/∂z_re + i ∂L/∂z_im for a complex z; chunks in reverse order, the
// chunk's U and H recomputed from its boundary state):
//   dH_c = dy_c [C_re | -C_im]                   (∂L/∂h_t through y_t only; GEMM)
//   dC_re += dy_cᵀ H_re,  dC_im -= dy_cᵀ H_im,  dD += dyᵀ x (all rows, one GEMM)
//   reverse scan:  δh_t = dH_t + conj(λ) ⊙ δh_{t+1}     (δh_N = 0: no loss on the final state)
//                  δλ  += δh_t ⊙ conj(h_{t-1})           δg += Re(δh_t ⊙ conj(u_t))
//                  δu_t = g ⊙ δh_t
//   dx_c += δU_re B_re + δU_im B_im,  dB_re += δU_reᵀ x_c,  dB_im += δU_imᵀ x_c   (GEMMs)
//   ds0 = conj(λ) ⊙ δh_0
// Chain rule to the real parameters (∂L/∂p = Re(δλ · conj(∂λ/∂p))):
//   ∂λ/∂nu_log    = -exp(nu_log) λ  ⇒  dnu_log    = -exp(nu_log) (δλ_re a_re + δλ_im a_im)
//   ∂λ/∂theta_log = i θ λ           ⇒  dtheta_log = θ (δλ_im a_re - δλ_re a_im)
//   ∂g/∂gamma_log = g               ⇒  dgamma_log = g δg
//
// State layout (S = 2P floats per batch row): [re_0 .. re_{P-1}, im_0 .. im_{P-1}]
// (the same layout as a row of U, H and dH, so the GEMMs see [re | im] as 2P columns).
//
// Held between forward and backward: the state before every chunk (B, ceil(N/chunk), S),
// the final state (B, S), the per-unit coefficients (3P); per thread (omp_get_max_threads()
// slots): U, H, dH (3 · L · 2P), the carried δh, δλ, δg (5P) and the thread's dB, dC
// (2PI + 2OP), summed in thread order after the scan (deterministic for a thread count).
// The last forward's x is the caller's (kept alive until backward).
//
// init(): the paper's Appendix A (its JAX listing of the LRU's initialisation):
// |λ| uniform on the ring [r_min, r_max] = [0.9, 0.999] in the sense of the area
// (nu_log = log(-½ log(u1 (r_max² - r_min²) + r_min²))), θ = max_phase · u2 with
// max_phase = 2π, gamma_log = log sqrt(1 - |λ|²), B_re, B_im ~ N(0, 1/(2I)),
// C_re, C_im ~ N(0, 1/P), D ~ N(0, 1/I) (the paper's D is a diagonal N(0, 1) vector for
// I = O; here D is a full (O, I) matrix, so its scale is 1/I as a dense layer's).
#pragma once

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "core/param_store.hpp"
#include "core/rng.hpp"
#include "nn/mixers/mixer.hpp"

namespace seqbench::nn {

template <class T>
class LruMixer : public Mixer<T> {
 public:
  static constexpr double kRMin = 0.9, kRMax = 0.999;
  static constexpr double kMaxPhase = 6.283185307179586;  // 2π

  LruMixer(const MixerConfig& cfg, core::ParamStoreT<T>& ps, const std::string& name, int64_t input,
           int64_t output);

  int64_t input_size() const override { return in_; }
  int64_t output_size() const override { return out_; }
  int64_t state_size() const override { return 2 * p_; }
  int64_t units() const { return p_; }  // P complex units

  void init(core::Rng& rng) override;

  void forward(core::ViewT<const T> x, core::ViewT<const T> s0, core::ViewT<T> y) override;
  void backward(core::ViewT<const T> dy, core::ViewT<T> dx, core::ViewT<T> ds0) override;
  core::ViewT<const T> final_state() const override;

  void step(core::ViewT<const T> x, core::ViewT<T> state, core::ViewT<T> y) override;

  size_t estimate_bytes(int64_t B, int64_t N) const override;
  size_t held_bytes() const override;

  // λ_n from the current parameters, in double (for tests and diagnostics).
  std::complex<double> lambda(int64_t n) const;

 private:
  int64_t chunk_len(int64_t N) const;
  int64_t ws_stride(int64_t L) const;  // T elements of one thread's workspace
  void refresh_coefficients();         // coef_ = [a_re (P) | a_im (P) | g (P)]
  // The chunk's input projection U (len, 2P) = x_c [B_re; B_im]ᵀ and states H (len, 2P)
  // from the boundary state h0 (2P).
  void scan_chunk(int64_t len, const T* xc, const T* h0, T* U, T* H) const;

  MixerConfig cfg_;
  int64_t in_, out_, p_;
  core::ParamT<T>* nu_log_;
  core::ParamT<T>* theta_log_;
  core::ParamT<T>* gamma_log_;
  core::ParamT<T>* b_re_;
  core::ParamT<T>* b_im_;
  core::ParamT<T>* c_re_;
  core::ParamT<T>* c_im_;
  core::ParamT<T>* d_;

  // Last forward.
  core::ViewT<const T> x_;
  int64_t b_ = 0, n_ = 0;
  std::vector<T> coef_;    // 3P
  std::vector<T> bnd_;     // (B, chunks, S): the state before each chunk
  std::vector<T> final_;   // (B, S)
  std::vector<T> ws_;      // threads x ws_stride(L)
  int threads_ = 1;        // workspace slots of the last forward
  std::vector<T> step_u_;  // step(): (B, 2P)
};

}  // namespace seqbench::nn
