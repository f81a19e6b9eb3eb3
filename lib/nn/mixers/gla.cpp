#include "nn/mixers/gla.hpp"
#include "nn/mixers/mixer_math.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "backend/gemm.hpp"
#include "core/buffer.hpp"
#include "core/check.hpp"
#include "nn/fast_math.hpp"
#include "nn/parallel.hpp"
#include "nn/simd.hpp"

namespace seqbench::nn {

using backend::gemm;
using backend::Trans;
using mixer_math::heads_width;
using mixer_math::log_sigmoid;

namespace {

// w (rows, cols) ~ U(-b, b), b = gain sqrt(6 / (fan_in + fan_out)) (torch's
// xavier_uniform_ with a gain), drawn row-major.
template <class T>
void xavier(core::Rng& rng, core::ParamT<T>& w, int64_t fan_in, int64_t fan_out, double gain) {
  const double b = gain * std::sqrt(6.0 / double(fan_in + fan_out));
  for (int64_t i = 0; i < w.numel(); ++i) w.value[i] = static_cast<T>(rng.uniform(-b, b));
}

}  // namespace

template <class T, bool Gated>
GatedRetention<T, Gated>::GatedRetention(const MixerConfig& cfg, core::ParamStoreT<T>& ps,
                                         const std::string& name, int64_t input,
                                         int64_t output)
    : h_(cfg.heads),
      d_(heads_width(cfg, output)),
      c_(cfg.chunk),
      qkvg_(ps, name + ".qkvg", input, 4 * output, false),
      out_(ps, name + ".out", output, output, false) {
  if constexpr (Gated) {
    gate1_ = std::make_unique<LinearT<T>>(ps, name + ".gate1", input, kRank, false);
    gate2_ = std::make_unique<LinearT<T>>(ps, name + ".gate2", kRank, output, true);
  }
  if (cfg.short_conv > 0)
    conv_ = std::make_unique<ShortConv<T>>(ps, name + ".conv", 3 * output, cfg.short_conv);
}

template <class T, bool Gated>
void GatedRetention<T, Gated>::init(core::Rng& rng) {
  const int64_t I = input_size(), O = output_size();
  const double small = std::exp2(-2.5);
  // The four projections are four (O, I) Linears in the reference code: fans (I, O) each.
  xavier(rng, qkvg_.w(), I, O, small);
  xavier(rng, out_.w(), O, O, Gated ? small : 0.5);
  if constexpr (Gated) {
    xavier(rng, gate1_->w(), I, kRank, small);
    xavier(rng, gate2_->w(), kRank, O, small);
    std::fill_n(gate2_->b()->value, O, T(0));
  }
  if (conv_) conv_->init(rng);
}

template <class T, bool Gated>
void GatedRetention<T, Gated>::reserve(int64_t L) {
  if (ws_.size() != size_t(omp_get_max_threads())) ws_.resize(size_t(omp_get_max_threads()));
  for (auto& w : ws_) {
    for (auto* v : {&w.al, &w.A, &w.R, &w.qt, &w.kh, &w.tmp}) core::grow(*v, L * d_);
    core::grow(w.P, L * L);
    core::grow(w.dP, L * L);
    core::grow(w.G, d_ * d_);
    core::grow(w.vec, d_);
  }
}

template <class T, bool Gated>
T* GatedRetention<T, Gated>::kept(int64_t b, int64_t h, int64_t c) const {
  const int64_t nc = chunks(n_);
  return const_cast<T*>(kept_.data()) + ((b * h_ + h) * nc + c) * d_ * d_;
}

template <class T, bool Gated>
size_t GatedRetention<T, Gated>::estimate_bytes(int64_t B, int64_t N) const {
  const int64_t O = output_size(), BN = B * N, L = std::min(c_, N);
  int64_t floats = BN * 4 * O + BN * O + BN * h_          // q k v g̃, n, 1/r
                   + B * h_ * chunks(N) * d_ * d_ + B * state_size()  // kept, final
                   + BN * O + BN * 4 * O;                  // z, dq dk dv dg̃
  if constexpr (Gated) floats += 2 * (BN * O + BN * kRank);  // log α, x Wa1^T, their grads
  if (conv_) floats += conv_->held_floats(B, N);
  return size_t(floats) * sizeof(T) +
         size_t(omp_get_max_threads()) * workspace_floats(L, d_) * sizeof(T);
}

template <class T, bool Gated>
size_t GatedRetention<T, Gated>::held_bytes() const {
  size_t n = core::bytes_of(qkvg_buf_) + core::bytes_of(n_buf_) + core::bytes_of(rinv_) +
             core::bytes_of(kept_) + core::bytes_of(final_) + core::bytes_of(z_) +
             core::bytes_of(dqkvg_) + core::bytes_of(step_buf_);
  if (conv_) n += conv_->held_bytes();
  if constexpr (Gated)
    n += core::bytes_of(la_) + core::bytes_of(a1_) + core::bytes_of(dla_) +
         core::bytes_of(da1_);
  for (const auto& w : ws_)
    for (const auto* v : {&w.al, &w.A, &w.R, &w.qt, &w.kh, &w.tmp, &w.P, &w.dP, &w.G, &w.vec})
      n += core::bytes_of(*v);
  return n;
}

template <class T, bool Gated>
T GatedRetention<T, Gated>::rms_normalize(T* o) const {
  T ms = 0;
  for (int64_t j = 0; j < d_; ++j) ms += o[j] * o[j];
  const T rinv = T(1) / std::sqrt(ms / T(d_) + T(kNormEps));
  for (int64_t j = 0; j < d_; ++j) o[j] *= rinv;
  return rinv;
}

template <class T, bool Gated>
void GatedRetention<T, Gated>::prepare_chunk(Workspace& w, int64_t h, int64_t len, const T* q,
                                             const T* k, const T* la, int64_t ld) const {
  const int64_t d = d_, O = output_size();
  T* al = w.al.data();
  T* A = w.A.data();
  T* R = w.R.data();
  T* P = w.P.data();
  if constexpr (Gated) {
    for (int64_t t = 0; t < len; ++t)
      for (int64_t i = 0; i < d; ++i) al[t * d + i] = std::exp(la[t * O + i]);
  } else {
    std::fill_n(al, len * d, T(retention_decay(h)));
  }
  // A_t = Π_{r<=t} α_r, R_s = Π_{s<r<len} α_r: running products, never an inverse.
  std::copy_n(al, d, A);
  for (int64_t t = 1; t < len; ++t)
    for (int64_t i = 0; i < d; ++i) A[t * d + i] = A[(t - 1) * d + i] * al[t * d + i];
  std::fill_n(R + (len - 1) * d, d, T(1));
  for (int64_t s = len - 1; s > 0; --s)
    for (int64_t i = 0; i < d; ++i) R[(s - 1) * d + i] = R[s * d + i] * al[s * d + i];
  for (int64_t t = 0; t < len; ++t)
    for (int64_t i = 0; i < d; ++i) {
      w.qt[size_t(t * d + i)] = q[t * ld + i] * A[t * d + i];
      w.kh[size_t(t * d + i)] = k[t * ld + i] * R[t * d + i];
    }
  if constexpr (Gated) {
    // P[t, s] = (q_t ⊙ α_t ⊙ ... ⊙ α_{s+1}) · k_s, the product built as s walks down.
    T* e = w.vec.data();
    for (int64_t t = 0; t < len; ++t) {
      std::copy_n(q + t * ld, d, e);
      for (int64_t s = t; s >= 0; --s) {
        P[t * len + s] = dot(d, e, k + s * ld);
        for (int64_t i = 0; i < d; ++i) e[i] *= al[s * d + i];
      }
      std::fill(P + t * len + t + 1, P + (t + 1) * len, T(0));
    }
  } else {
    // P = (Q K^T) ⊙ D, D[t, s] = γ^(t-s) = A_{t-s-1} (A_m = γ^(m+1)) for s < t, 1 for s = t.
    gemm<T>(Trans::N, Trans::T, len, len, d, T(1), q, ld, k, ld, T(0), P, len);
    for (int64_t t = 0; t < len; ++t) {
      for (int64_t s = 0; s < t; ++s) P[t * len + s] *= A[(t - s - 1) * d];
      std::fill(P + t * len + t + 1, P + (t + 1) * len, T(0));
    }
  }
}

template <class T, bool Gated>
void GatedRetention<T, Gated>::forward(core::ViewT<const T> x, core::ViewT<const T> s0,
                                       core::ViewT<T> y) {
  const int64_t B = x.dim(0), N = x.dim(1), I = input_size(), O = output_size();
  const int64_t S = state_size(), d = d_, ld = 4 * O, BN = B * N;
  core::check_shape(x, core::Shape{B, N, I}, "GatedRetention.forward x");
  core::check_shape(y, core::Shape{B, N, O}, "GatedRetention.forward y");
  if (s0.data) core::check_shape(s0, core::Shape{B, S}, "GatedRetention.forward s0");
  SB_CHECK(N > 0, "GatedRetention.forward: no tokens (N = 0)");
  x_ = x;
  b_ = B;
  n_ = N;
  const int64_t nc = chunks(N);
  core::ensure_shape(qkvg_buf_, core::Shape{BN, 4 * O});
  core::ensure_shape(n_buf_, core::Shape{BN, O});
  core::ensure_shape(rinv_, core::Shape{BN, h_});
  core::ensure_shape(kept_, core::Shape{B * h_ * nc, d * d});
  core::ensure_shape(final_, core::Shape{B, S});
  core::ensure_shape(z_, core::Shape{BN, O});
  reserve(std::min(c_, N));

  const auto x2 = x.reshape(core::Shape{BN, I});
  qkvg_.forward(x2, qkvg_buf_.view());
  if constexpr (Gated) {
    core::ensure_shape(a1_, core::Shape{BN, kRank});
    core::ensure_shape(la_, core::Shape{BN, O});
    gate1_->forward(x2, a1_.view());
    gate2_->forward(a1_.cview(), la_.view());  // the gate's pre-activation a; log α below
  }
  T* qkvg = qkvg_buf_.data();
  const T kscale = T(1.0 / std::sqrt(double(d)));
  const int64_t Sh = h_ * d * d;  // the conv buffer follows the heads' states
  if (conv_) conv_->forward(B, N, qkvg, ld, s0.data ? s0.data + Sh : nullptr, S, qkvg, ld);

#pragma omp parallel for schedule(static)
  for (int64_t bh = 0; bh < B * h_; ++bh) {
    const int64_t b = bh / h_, h = bh % h_;
    Workspace& w = ws_[size_t(omp_get_thread_num())];
    // This pair's k columns scaled by 1/sqrt(d), its a columns turned into log α.
    for (int64_t t = 0; t < N; ++t) {
      T* k = qkvg + (b * N + t) * ld + O + h * d;
      for (int64_t i = 0; i < d; ++i) k[i] *= kscale;
      if constexpr (Gated) {
        T* la = la_.data() + (b * N + t) * O + h * d;
        for (int64_t i = 0; i < d; ++i) la[i] = log_sigmoid(la[i]) / T(kTau);
      }
    }
    T* Sr = w.G.data();  // the running state
    if (s0.data)
      std::copy_n(s0.data + b * S + h * d * d, d * d, Sr);
    else
      std::fill_n(Sr, d * d, T(0));
    for (int64_t c = 0; c < nc; ++c) {
      const int64_t t0 = c * c_, len = std::min(c_, N - t0), row0 = b * N + t0;
      std::copy_n(Sr, d * d, kept(b, h, c));
      const T* q = qkvg + row0 * ld + h * d;
      const T* k = q + O;
      const T* v = q + 2 * O;
      const T* la = Gated ? la_.data() + row0 * O + h * d : nullptr;
      prepare_chunk(w, h, len, q, k, la, ld);
      // O = Q̃ S0 + P V, straight into n's columns of this head.
      T* o = n_buf_.data() + row0 * O + h * d;
      gemm<T>(Trans::N, Trans::N, len, d, d, T(1), w.qt.data(), d, Sr, d, T(0), o, O);
      gemm<T>(Trans::N, Trans::N, len, d, len, T(1), w.P.data(), len, v, ld, T(1), o, O);
      // S <- diag(Λ) S + K̂^T V
      const T* lam = w.A.data() + (len - 1) * d;
      for (int64_t i = 0; i < d; ++i)
        for (int64_t j = 0; j < d; ++j) Sr[i * d + j] *= lam[i];
      gemm<T>(Trans::T, Trans::N, d, d, len, T(1), w.kh.data(), d, v, ld, T(1), Sr, d);
      // n = o / r, z = n ⊙ silu(g̃)
      for (int64_t t = 0; t < len; ++t) {
        T* nt = o + t * O;
        rinv_.data()[(row0 + t) * h_ + h] = rms_normalize(nt);
        const T* g = qkvg + (row0 + t) * ld + 3 * O + h * d;
        T* z = z_.data() + (row0 + t) * O + h * d;
        for (int64_t j = 0; j < d; ++j) z[j] = nt[j] * g[j] * sigmoid(g[j]);
      }
    }
    std::copy_n(Sr, d * d, final_.data() + b * S + h * d * d);
  }
  if (conv_) conv_->final_state(final_.data() + Sh, S);
  out_.forward(z_.cview(), y.reshape(core::Shape{BN, O}));
}

template <class T, bool Gated>
void GatedRetention<T, Gated>::backward(core::ViewT<const T> dy, core::ViewT<T> dx,
                                        core::ViewT<T> ds0) {
  const int64_t B = b_, N = n_, I = input_size(), O = output_size(), d = d_;
  const int64_t S = state_size(), nc = chunks(N), ld = 4 * O, BN = B * N;
  core::check_shape(dy, core::Shape{B, N, O}, "GatedRetention.backward dy");
  if (dx.data) core::check_shape(dx, core::Shape{B, N, I}, "GatedRetention.backward dx");
  if (ds0.data) core::check_shape(ds0, core::Shape{B, S}, "GatedRetention.backward ds0");
  core::ensure_shape(dqkvg_, core::Shape{BN, 4 * O});
  if constexpr (Gated) {
    core::ensure_shape(dla_, core::Shape{BN, O});
    core::ensure_shape(da1_, core::Shape{BN, kRank});
  }
  const T* qkvg = qkvg_buf_.data();
  const T* nb = n_buf_.data();
  T* z = z_.data();
  T* dqkvg = dqkvg_.data();
  const auto dy2 = dy.reshape(core::Shape{BN, O});

  // z again (a second backward of the same forward finds it overwritten by do), then
  // dWo += dy^T z and dz = dy Wo into z's buffer.
#pragma omp parallel for schedule(static) if (BN * O >= kRowParallelMin)
  for (int64_t r = 0; r < BN; ++r)
    for (int64_t j = 0; j < O; ++j) {
      const T g = qkvg[r * ld + 3 * O + j];
      z[r * O + j] = nb[r * O + j] * g * sigmoid(g);
    }
  out_.backward(z_.cview(), dy2, core::ViewT<T>());
  gemm<T>(Trans::N, Trans::N, BN, O, O, T(1), dy2.data, O, out_.w().value, O, T(0), z, O);
  const T kscale = T(1.0 / std::sqrt(double(d)));

#pragma omp parallel for schedule(static)
  for (int64_t bh = 0; bh < B * h_; ++bh) {
    const int64_t b = bh / h_, h = bh % h_;
    Workspace& w = ws_[size_t(omp_get_thread_num())];
    // Norm and gate: dz -> do (in place), dg̃.
    for (int64_t t = 0; t < N; ++t) {
      const int64_t r = b * N + t;
      const T* n = nb + r * O + h * d;
      const T* g = qkvg + r * ld + 3 * O + h * d;
      T* dz = z + r * O + h * d;
      T* dg = dqkvg + r * ld + 3 * O + h * d;
      T m = 0;
      for (int64_t j = 0; j < d; ++j) {
        const T s = sigmoid(g[j]);
        const T dn = dz[j] * g[j] * s;
        dg[j] = dz[j] * n[j] * s * (T(1) + g[j] * (T(1) - s));
        m += dn * n[j];
        dz[j] = dn;
      }
      m /= T(d);
      const T rinv = rinv_.data()[r * h_ + h];
      for (int64_t j = 0; j < d; ++j) dz[j] = (dz[j] - n[j] * m) * rinv;
    }
    T* G = w.G.data();
    std::fill_n(G, d * d, T(0));
    for (int64_t c = nc - 1; c >= 0; --c) {
      const int64_t t0 = c * c_, len = std::min(c_, N - t0), row0 = b * N + t0;
      const T* S0 = kept(b, h, c);
      const T* q = qkvg + row0 * ld + h * d;
      const T* k = q + O;
      const T* v = q + 2 * O;
      const T* la = Gated ? la_.data() + row0 * O + h * d : nullptr;
      const T* dO = z + row0 * O + h * d;
      T* dq = dqkvg + row0 * ld + h * d;
      T* dk = dq + O;
      T* dv = dq + 2 * O;
      prepare_chunk(w, h, len, q, k, la, ld);
      const T* al = w.al.data();
      const T* A = w.A.data();
      const T* R = w.R.data();
      const T* lam = A + (len - 1) * d;
      T* P = w.P.data();
      T* dP = w.dP.data();
      T* tmp = w.tmp.data();
      // dP = (dO V^T) masked to s <= t
      gemm<T>(Trans::N, Trans::T, len, len, d, T(1), dO, O, v, ld, T(0), dP, len);
      for (int64_t t = 0; t < len; ++t) std::fill(dP + t * len + t + 1, dP + (t + 1) * len, T(0));
      // dV = P^T dO + K̂ G
      gemm<T>(Trans::T, Trans::N, len, d, len, T(1), P, len, dO, O, T(0), dv, ld);
      gemm<T>(Trans::N, Trans::N, len, d, d, T(1), w.kh.data(), d, G, d, T(1), dv, ld);
      // dK (state part) = (V G^T) ⊙ R
      gemm<T>(Trans::N, Trans::T, len, d, d, T(1), v, ld, G, d, T(0), tmp, d);
      for (int64_t s = 0; s < len; ++s)
        for (int64_t i = 0; i < d; ++i) dk[s * ld + i] = tmp[s * d + i] * R[s * d + i];
      T* dlam = w.vec.data();
      if constexpr (Gated) {
        // dΛ = Λ ⊙ rowsum(S0 ⊙ G) + Σ_s k_s ⊙ dk_s (state part)
        for (int64_t i = 0; i < d; ++i) dlam[i] = lam[i] * dot(d, S0 + i * d, G + i * d);
        for (int64_t s = 0; s < len; ++s)
          for (int64_t i = 0; i < d; ++i) dlam[i] += k[s * ld + i] * dk[s * ld + i];
      }
      // dQ (state part) = (dO S0^T) ⊙ A
      gemm<T>(Trans::N, Trans::T, len, d, d, T(1), dO, O, S0, d, T(0), tmp, d);
      for (int64_t t = 0; t < len; ++t)
        for (int64_t i = 0; i < d; ++i) dq[t * ld + i] = tmp[t * d + i] * A[t * d + i];
      // The intra-chunk part.
      if constexpr (Gated) {
        // dq_t += Σ_{s<=t} dP[t, s] k_s ⊙ E_ts   (Horner in s upward)
        for (int64_t t = 0; t < len; ++t) {
          std::fill_n(tmp, d, T(0));
          for (int64_t s = 0; s <= t; ++s) {
            const T p = dP[t * len + s];
            for (int64_t i = 0; i < d; ++i) tmp[i] = tmp[i] * al[s * d + i] + p * k[s * ld + i];
          }
          for (int64_t i = 0; i < d; ++i) dq[t * ld + i] += tmp[i];
        }
        // dk_s += Σ_{t>=s} dP[t, s] q_t ⊙ E_ts   (Horner in t downward)
        for (int64_t s = 0; s < len; ++s) {
          std::fill_n(tmp, d, T(0));
          for (int64_t t = len - 1; t >= s; --t) {
            const T p = dP[t * len + s];
            if (t + 1 < len)
              for (int64_t i = 0; i < d; ++i) tmp[i] *= al[(t + 1) * d + i];
            for (int64_t i = 0; i < d; ++i) tmp[i] += p * q[t * ld + i];
          }
          for (int64_t i = 0; i < d; ++i) dk[s * ld + i] += tmp[i];
        }
        // d log α_r = Σ_{t>=r} (q_t ⊙ dq_t - k_t ⊙ dk_t), plus dΛ (from t = len - 1)
        T* dla = dla_.data() + row0 * O + h * d;
        for (int64_t t = len - 1; t >= 0; --t)
          for (int64_t i = 0; i < d; ++i) {
            dlam[i] += q[t * ld + i] * dq[t * ld + i] - k[t * ld + i] * dk[t * ld + i];
            dla[t * O + i] = dlam[i];
          }
      } else {
        // dP ⊙ D, then dQ += (dP ⊙ D) K, dK += (dP ⊙ D)^T Q
        for (int64_t t = 0; t < len; ++t)
          for (int64_t s = 0; s < t; ++s) dP[t * len + s] *= A[(t - s - 1) * d];
        gemm<T>(Trans::N, Trans::N, len, d, len, T(1), dP, len, k, ld, T(1), dq, ld);
        gemm<T>(Trans::T, Trans::N, len, d, len, T(1), dP, len, q, ld, T(1), dk, ld);
      }
      // G <- diag(Λ) G + Q̃^T dO
      for (int64_t i = 0; i < d; ++i)
        for (int64_t j = 0; j < d; ++j) G[i * d + j] *= lam[i];
      gemm<T>(Trans::T, Trans::N, d, d, len, T(1), w.qt.data(), d, dO, O, T(1), G, d);
    }
    if (ds0.data) std::copy_n(G, d * d, ds0.data + b * S + h * d * d);
    // dk̃ = dk / sqrt(d); GLA: d a = d log α ⊙ (1 - sigmoid(a)) / τ, 1 - sigmoid(a) =
    // -expm1(τ log α) (accurate where sigmoid(a) is near 1).
    for (int64_t t = 0; t < N; ++t) {
      const int64_t r = b * N + t;
      T* dk = dqkvg + r * ld + O + h * d;
      for (int64_t i = 0; i < d; ++i) dk[i] *= kscale;
      if constexpr (Gated) {
        const T* la = la_.data() + r * O + h * d;
        T* dla = dla_.data() + r * O + h * d;
        for (int64_t i = 0; i < d; ++i) dla[i] *= -std::expm1(T(kTau) * la[i]) / T(kTau);
      }
    }
  }
  if (conv_) conv_->backward(dqkvg, ld, dqkvg, ld, ds0.data ? ds0.data + h_ * d * d : nullptr, S);
  const auto x2 = x_.reshape(core::Shape{BN, I});
  const core::ViewT<T> dx2 = dx.data ? dx.reshape(core::Shape{BN, I}) : core::ViewT<T>();
  qkvg_.backward(x2, dqkvg_.cview(), dx2);
  if constexpr (Gated) {
    gate2_->backward(a1_.cview(), dla_.cview(), da1_.view());
    gate1_->backward(x2, da1_.cview(), core::ViewT<T>());
    if (dx.data)
      gemm<T>(Trans::N, Trans::N, BN, I, kRank, T(1), da1_.data(), kRank, gate1_->w().value, I,
              T(1), dx.data, I);
  }
}

template <class T, bool Gated>
void GatedRetention<T, Gated>::step(core::ViewT<const T> x, core::ViewT<T> state,
                                    core::ViewT<T> y) {
  const int64_t B = x.dim(0), I = input_size(), O = output_size(), d = d_;
  const int64_t S = state_size(), ld = 4 * O;
  core::check_shape(x, core::Shape{B, I}, "GatedRetention.step x");
  core::check_shape(state, core::Shape{B, S}, "GatedRetention.step state");
  core::check_shape(y, core::Shape{B, O}, "GatedRetention.step y");
  core::grow(step_buf_, B * (6 * O + kRank));
  core::ViewT<T> proj(step_buf_.data(), core::Shape{B, 4 * O});
  core::ViewT<T> zb(step_buf_.data() + B * 4 * O, core::Shape{B, O});
  core::ViewT<T> lab(step_buf_.data() + B * 5 * O, core::Shape{B, O});
  core::ViewT<T> a1(step_buf_.data() + B * 6 * O, core::Shape{B, kRank});
  qkvg_.forward(x, proj);
  if (conv_) conv_->step(B, proj.data, ld, state.data + h_ * d * d, S, proj.data, ld);
  if constexpr (Gated) {
    gate1_->forward(x, a1);
    gate2_->forward(a1, lab);
  }
  const T kscale = T(1.0 / std::sqrt(double(d)));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < h_; ++h) {
      T* q = proj.data + b * ld + h * d;
      T* k = q + O;
      const T* v = q + 2 * O;
      const T* g = q + 3 * O;
      T* la = lab.data + b * O + h * d;
      T* st = state.data + b * S + h * d * d;
      for (int64_t i = 0; i < d; ++i) {
        k[i] *= kscale;
        T a = T(retention_decay(h));
        if constexpr (Gated) {
          la[i] = log_sigmoid(la[i]) / T(kTau);
          a = std::exp(la[i]);
        }
        for (int64_t j = 0; j < d; ++j) st[i * d + j] = a * st[i * d + j] + k[i] * v[j];
      }
      T* o = zb.data + b * O + h * d;
      std::fill_n(o, d, T(0));
      for (int64_t i = 0; i < d; ++i)
        for (int64_t j = 0; j < d; ++j) o[j] += q[i] * st[i * d + j];
      rms_normalize(o);
      for (int64_t j = 0; j < d; ++j) o[j] *= g[j] * sigmoid(g[j]);
    }
  out_.forward(zb, y);
}

template class GatedRetention<float, false>;
template class GatedRetention<double, false>;
template class GatedRetention<float, true>;
template class GatedRetention<double, true>;

SEQBENCH_MIXER_FACTORY(kRetentionMixer, Retention);
SEQBENCH_MIXER_FACTORY(kGlaMixer, GatedLinearAttention);

}  // namespace seqbench::nn
