#include "nn/mixers/mlstm.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "backend/gemm.hpp"
#include "core/buffer.hpp"
#include "core/check.hpp"
#include "nn/fast_math.hpp"
#include "nn/mixers/mixer_math.hpp"
#include "nn/parallel.hpp"
#include "nn/simd.hpp"

namespace seqbench::nn {

using backend::gemm;
using backend::Trans;
using mixer_math::heads_width;
using mixer_math::log_sigmoid;

namespace {

// The workspace of one thread, carved from one vector (see workspace_floats) at offsets
// fixed by L = min(C, N); a chunk of len <= L tokens uses len as the stride of D, P, dP.
template <class T>
struct Ws {
  T *bc, *e, *dA, *db, *D, *P, *dP, *dO, *st, *tmp;
  Ws(T* w, int64_t L, int64_t d) {
    bc = w;
    e = bc + L;
    dA = e + L;
    db = dA + L;
    D = db + L;
    P = D + L * L;
    dP = P + L * L;
    dO = dP + L * L;
    st = dO + L * d;           // the running state / its gradient (d² + d + 1)
    tmp = st + d * d + d + 1;  // (d)
  }
};

}  // namespace

template <class T>
MlstmMixer<T>::MlstmMixer(const MixerConfig& cfg, core::ParamStoreT<T>& ps, const std::string& name,
                          int64_t input, int64_t output)
    : h_(cfg.heads),
      d_(heads_width(cfg, output)),
      c_(cfg.chunk),
      qkvo_(ps, name + ".qkvo", input, 4 * output, false),
      gates_(ps, name + ".gates", input, 2 * cfg.heads, true),
      out_(ps, name + ".out", output, output, false) {
  if (c_ < 1)
    throw core::UsageError(
        fmt::format("{}: model.mixer.chunk = {} must be at least 1 (hint: chunk: 64)", name, c_));
  if (cfg.short_conv > 0)
    conv_ = std::make_unique<ShortConv<T>>(ps, name + ".conv", 2 * output, cfg.short_conv);
}

template <class T>
void MlstmMixer<T>::init(core::Rng& rng) {
  const int64_t I = input_size(), O = output_size(), H = h_;
  const double sp = std::sqrt(2.0 / (5.0 * double(I)));
  auto& w = qkvo_.w();
  for (int64_t i = 0; i < w.numel(); ++i) w.value[i] = T(rng.normal() * sp);
  std::fill_n(gates_.w().value, gates_.w().numel(), T(0));
  T* gb = gates_.b()->value;
  for (int64_t h = 0; h < H; ++h) {
    gb[h] = T(0.1 * rng.normal());
    gb[H + h] = T(H == 1 ? 3.0 : 3.0 + 3.0 * double(h) / double(H - 1));
  }
  const double so = 1.0 / std::sqrt(double(O));
  for (int64_t i = 0; i < out_.w().numel(); ++i) out_.w().value[i] = T(rng.normal() * so);
  if (conv_) conv_->init(rng);
}

template <class T>
T* MlstmMixer<T>::kept(int64_t b, int64_t h, int64_t c) const {
  return const_cast<T*>(kept_.data()) + ((b * h_ + h) * chunks(n_) + c) * head_state();
}

template <class T>
size_t MlstmMixer<T>::estimate_bytes(int64_t B, int64_t N) const {
  const int64_t O = output_size(), H = h_, BN = B * N, L = std::min(c_, N);
  int64_t floats = BN * 4 * O + BN * 2 * H + 2 * BN * H + 2 * BN * O      // p, g, m, den, h̃, z
                   + B * H * chunks(N) * head_state() + B * state_size()  // kept, final
                   + BN * 4 * O + BN * 2 * H;                             // dp, dg
  if (conv_) floats += conv_->held_floats(B, N);
  return size_t(floats) * sizeof(T) +
         size_t(omp_get_max_threads()) * workspace_floats(L) * sizeof(T);
}

template <class T>
size_t MlstmMixer<T>::held_bytes() const {
  size_t n = 0;
  for (const auto* t : {&p_, &g_, &m_, &den_, &ht_, &z_, &kept_, &final_, &dp_, &dg_})
    n += core::bytes_of(*t);
  for (const auto& w : ws_) n += core::bytes_of(w);
  n += core::bytes_of(step_buf_);
  if (conv_) n += conv_->held_bytes();
  return n;
}

template <class T>
void MlstmMixer<T>::prepare_chunk(T* wsp, int64_t L, int64_t len, int64_t row0, int64_t h,
                                  T m0) const {
  const int64_t O = output_size(), H = h_, d = d_, ld = 4 * O;
  Ws<T> w(wsp, L, d);
  const T* gt = g_.data() + row0 * 2 * H;
  const T* mt = m_.data() + row0 * H + h;
  T acc = 0;
  for (int64_t t = 0; t < len; ++t) {
    acc += gt[t * 2 * H + H + h];
    w.bc[t] = acc;
    w.e[t] = std::exp(acc + m0 - mt[t * H]);
  }
  const T* q = p_.data() + row0 * ld + h * d;
  const T* k = q + O;
  // P = (Q K^T) ⊙ D with D_ts = exp(b_t - b_s + ĩ_s - m_t) for s <= t: one GEMM, then the
  // decay matrix row by row, contiguous in s. a_s = ĩ_s - b_s goes into dP's first row,
  // which no one reads while a chunk is prepared (backward fills dP after this).
  T* a = w.dP;
  for (int64_t s = 0; s < len; ++s) a[s] = gt[s * 2 * H + h] - w.bc[s];
  gemm<T>(Trans::N, Trans::T, len, len, d, T(1), q, ld, k, ld, T(0), w.P, len);
  for (int64_t t = 0; t < len; ++t) {
    const T base = w.bc[t] - mt[t * H];
    T* Dt = w.D + t * len;
    T* Pt = w.P + t * len;
#pragma omp simd
    for (int64_t s = 0; s <= t; ++s) {
      const T dts = fast_exp(base + a[s]);
      Dt[s] = dts;
      Pt[s] *= dts;
    }
    std::fill(Dt + t + 1, Dt + len, T(0));
    std::fill(Pt + t + 1, Pt + len, T(0));
  }
}

template <class T>
void MlstmMixer<T>::forward(core::ViewT<const T> x, core::ViewT<const T> s0, core::ViewT<T> y) {
  const int64_t B = x.dim(0), N = x.dim(1), I = input_size(), O = output_size(), H = h_;
  const int64_t S = state_size(), d = d_, d2 = d * d, hs = head_state(), ld = 4 * O, BN = B * N;
  core::check_shape(x, core::Shape{B, N, I}, "Mlstm.forward x");
  core::check_shape(y, core::Shape{B, N, O}, "Mlstm.forward y");
  if (s0.data) core::check_shape(s0, core::Shape{B, S}, "Mlstm.forward s0");
  SB_CHECK(N > 0, "Mlstm.forward: no tokens (N = 0)");
  x_ = x;
  b_ = B;
  n_ = N;
  const int64_t nc = chunks(N), L = std::min(c_, N);
  core::ensure_shape(p_, core::Shape{BN, 4 * O});
  core::ensure_shape(g_, core::Shape{BN, 2 * H});
  core::ensure_shape(m_, core::Shape{BN, H});
  core::ensure_shape(den_, core::Shape{BN, H});
  core::ensure_shape(ht_, core::Shape{BN, O});
  core::ensure_shape(z_, core::Shape{BN, O});
  core::ensure_shape(kept_, core::Shape{B * H * nc, hs});
  core::ensure_shape(final_, core::Shape{B, S});
  if (ws_.size() != size_t(omp_get_max_threads())) ws_.resize(size_t(omp_get_max_threads()));
  for (auto& w : ws_) core::grow(w, int64_t(workspace_floats(L)));

  const auto x2 = x.reshape(core::Shape{BN, I});
  qkvo_.forward(x2, p_.view());
  gates_.forward(x2, g_.view());
  T* p = p_.data();
  const int64_t Sh = H * hs;  // the conv buffer follows the heads' states
  if (conv_) conv_->forward(B, N, p, ld, s0.data ? s0.data + Sh : nullptr, S, p, ld);
  const T kscale = T(1.0 / std::sqrt(double(d)));

#pragma omp parallel for schedule(static)
  for (int64_t bh = 0; bh < B * H; ++bh) {
    const int64_t b = bh / H, h = bh % H;
    T* wsp = ws_[size_t(omp_get_thread_num())].data();
    // k scaled by 1/sqrt(d), f̃ turned into log f.
    for (int64_t t = 0; t < N; ++t) {
      const int64_t r = b * N + t;
      T* k = p + r * ld + O + h * d;
      for (int64_t i = 0; i < d; ++i) k[i] *= kscale;
      T& lf = g_.data()[r * 2 * H + H + h];
      lf = log_sigmoid(lf);
    }
    T* st = Ws<T>(wsp, L, d).st;
    if (s0.data)
      std::copy_n(s0.data + b * S + h * hs, hs, st);
    else
      std::fill_n(st, hs, T(0));
    for (int64_t c = 0; c < nc; ++c) {
      const int64_t t0 = c * c_, len = std::min(c_, N - t0), row0 = b * N + t0;
      std::copy_n(st, hs, kept(b, h, c));
      Ws<T> w(wsp, L, d);
      T* Cs = w.st;
      T* ns = Cs + d2;
      const T m0 = Cs[d2 + d];
      // m_t, token by token as step().
      T m = m0;
      for (int64_t t = 0; t < len; ++t) {
        const T* gt = g_.data() + (row0 + t) * 2 * H;
        m = std::max(gt[H + h] + m, gt[h]);
        m_.data()[(row0 + t) * H + h] = m;
      }
      prepare_chunk(wsp, L, len, row0, h, m0);
      const T* q = p + row0 * ld + h * d;
      const T* k = q + O;
      const T* v = q + 2 * O;
      for (int64_t t = 0; t < len; ++t) {
        const T* qt = q + t * ld;
        T* num = ht_.data() + (row0 + t) * O + h * d;
        T den = w.e[t] * dot(d, ns, qt);
        for (int64_t i = 0; i < d; ++i) num[i] = w.e[t] * dot(d, Cs + i * d, qt);
        for (int64_t s = 0; s <= t; ++s) {
          const T pts = w.P[t * len + s];
          den += pts;
          for (int64_t i = 0; i < d; ++i) num[i] += pts * v[s * ld + i];
        }
        den_.data()[(row0 + t) * H + h] = den;
        const T mu = std::max(std::abs(den), std::exp(-m_.data()[(row0 + t) * H + h]));
        const T* ot = qt + 3 * O;
        T* z = z_.data() + (row0 + t) * O + h * d;
        for (int64_t i = 0; i < d; ++i) {
          num[i] /= mu;
          z[i] = sigmoid(ot[i]) * num[i];
        }
      }
      // The state at the chunk's end.
      const T eL = w.e[len - 1];
      const T* Dl = w.D + (len - 1) * len;
      for (int64_t i = 0; i < d2 + d; ++i) Cs[i] *= eL;
      for (int64_t s = 0; s < len; ++s) {
        const T* ks = k + s * ld;
        const T* vs = v + s * ld;
        for (int64_t i = 0; i < d; ++i) {
          const T a = Dl[s] * vs[i];
          for (int64_t j = 0; j < d; ++j) Cs[i * d + j] += a * ks[j];
          ns[i] += Dl[s] * ks[i];
        }
      }
      Cs[d2 + d] = m_.data()[(row0 + len - 1) * H + h];
    }
    std::copy_n(Ws<T>(wsp, L, d).st, hs, final_.data() + b * S + h * hs);
  }
  if (conv_) conv_->final_state(final_.data() + Sh, S);
  out_.forward(z_.cview(), y.reshape(core::Shape{BN, O}));
}

template <class T>
void MlstmMixer<T>::backward(core::ViewT<const T> dy, core::ViewT<T> dx, core::ViewT<T> ds0) {
  const int64_t B = b_, N = n_, I = input_size(), O = output_size(), H = h_, d = d_;
  const int64_t d2 = d * d, hs = head_state(), S = state_size(), nc = chunks(N), ld = 4 * O;
  const int64_t BN = B * N, L = std::min(c_, N);
  core::check_shape(dy, core::Shape{B, N, O}, "Mlstm.backward dy");
  if (dx.data) core::check_shape(dx, core::Shape{B, N, I}, "Mlstm.backward dx");
  if (ds0.data) core::check_shape(ds0, core::Shape{B, S}, "Mlstm.backward ds0");
  core::ensure_shape(dp_, core::Shape{BN, 4 * O});
  core::ensure_shape(dg_, core::Shape{BN, 2 * H});
  const T* p = p_.data();
  T* dp = dp_.data();
  T* dg = dg_.data();
  T* z = z_.data();
  const auto dy2 = dy.reshape(core::Shape{BN, O});

  // z again (a second backward of the same forward finds it overwritten), dWo += dy^T z,
  // then dz = dy Wo into z's buffer.
#pragma omp parallel for schedule(static) if (BN * O >= kRowParallelMin)
  for (int64_t r = 0; r < BN; ++r)
    for (int64_t j = 0; j < O; ++j)
      z[r * O + j] = sigmoid(p[r * ld + 3 * O + j]) * ht_.data()[r * O + j];
  out_.backward(z_.cview(), dy2, core::ViewT<T>());
  gemm<T>(Trans::N, Trans::N, BN, O, O, T(1), dy2.data, O, out_.w().value, O, T(0), z, O);
  const T kscale = T(1.0 / std::sqrt(double(d)));

#pragma omp parallel for schedule(static)
  for (int64_t bh = 0; bh < B * H; ++bh) {
    const int64_t b = bh / H, h = bh % H;
    T* wsp = ws_[size_t(omp_get_thread_num())].data();
    // Output gate: dõ = dz h̃ σ'(õ); dz -> dh̃ = dz σ(õ) in place.
    for (int64_t t = 0; t < N; ++t) {
      const int64_t r = b * N + t;
      const T* ot = p + r * ld + 3 * O + h * d;
      const T* ht = ht_.data() + r * O + h * d;
      T* dz = z + r * O + h * d;
      T* dot_ = dp + r * ld + 3 * O + h * d;
      for (int64_t i = 0; i < d; ++i) {
        const T s = sigmoid(ot[i]);
        dot_[i] = dz[i] * ht[i] * s * (T(1) - s);
        dz[i] *= s;
      }
    }
    T* GC = Ws<T>(wsp, L, d).st;
    T* Gn = GC + d2;
    std::fill_n(GC, d2 + d, T(0));
    for (int64_t c = nc - 1; c >= 0; --c) {
      const int64_t t0 = c * c_, len = std::min(c_, N - t0), row0 = b * N + t0;
      const T* C0 = kept(b, h, c);
      const T* n0 = C0 + d2;
      prepare_chunk(wsp, L, len, row0, h, C0[d2 + d]);
      Ws<T> w(wsp, L, d);
      const T* q = p + row0 * ld + h * d;
      const T* k = q + O;
      const T* v = q + 2 * O;
      T* dq = dp + row0 * ld + h * d;
      T* dk = dq + O;
      T* dv = dq + 2 * O;
      T* dig = dg + row0 * 2 * H + h;  // stride 2 H
      T* dlf = dig + H;
      // dnum, dden per token.
      for (int64_t t = 0; t < len; ++t) {
        const int64_t r = row0 + t;
        const T den = den_.data()[r * H + h], em = std::exp(-m_.data()[r * H + h]);
        const T mu = std::max(std::abs(den), em);
        const T* ht = ht_.data() + r * O + h * d;
        const T* dh = z + r * O + h * d;
        T* dO = w.dO + t * d;
        for (int64_t i = 0; i < d; ++i) dO[i] = dh[i] / mu;
        const T dmu = -dot(d, dh, ht) / mu;
        w.dA[t] = std::abs(den) > em ? (den > 0 ? dmu : -dmu) : T(0);
      }
      // dP_ts = dnum_t · v_s + dden_t (s <= t): one GEMM, then the row's dden.
      gemm<T>(Trans::N, Trans::T, len, len, d, T(1), w.dO, d, v, ld, T(0), w.dP, len);
      for (int64_t t = 0; t < len; ++t) {
        T* dPt = w.dP + t * len;
        for (int64_t s = 0; s <= t; ++s) dPt[s] += w.dA[t];
        std::fill(dPt + t + 1, dPt + len, T(0));
      }
      const T eL = w.e[len - 1];
      const T* Dl = w.D + (len - 1) * len;
      std::fill_n(w.db, len, T(0));
      // Per s, the state parts: dv_s = D_{L-1,s} G_C k_s, dk_s = D_{L-1,s} (G_C^T v_s + G_n),
      // w_s^end = D_{L-1,s} (v_s · G_C k_s + G_n · k_s); the pair parts below. G_C k_s for
      // every s is one GEMM (K G_C^T into dv), as is G_C^T v_s (V G_C into dk).
      gemm<T>(Trans::N, Trans::T, len, d, d, T(1), k, ld, GC, d, T(0), dv, ld);
      gemm<T>(Trans::N, Trans::N, len, d, d, T(1), v, ld, GC, d, T(0), dk, ld);
      for (int64_t s = 0; s < len; ++s) {
        const T* ks = k + s * ld;
        const T* vs = v + s * ld;
        T* dvs = dv + s * ld;
        T* dks = dk + s * ld;
        const T wend = Dl[s] * (dot(d, vs, dvs) + dot(d, Gn, ks));
        for (int64_t i = 0; i < d; ++i) dvs[i] *= Dl[s];
        for (int64_t j = 0; j < d; ++j) dks[j] = Dl[s] * (dks[j] + Gn[j]);
        dig[s * 2 * H] = wend;
        w.db[len - 1] += wend;
        w.db[s] -= wend;
      }
      // ε_end = e_{L-1} (<G_C, C'_0> + <G_n, n'_0>)
      w.db[len - 1] += eL * dot(d2 + d, GC, C0);
      // The state's part of dq_t and ε_t, per token: dq_t = e_t (C'_0^T dnum_t + dden_t n'_0);
      // ε_t = e_t (dnum_t · C'_0 q_t + dden_t n'_0 · q_t).
      for (int64_t t = 0; t < len; ++t) {
        const T* qt = q + t * ld;
        const T* dO = w.dO + t * d;
        T* dqt = dq + t * ld;
        T eps = w.dA[t] * dot(d, n0, qt);
        for (int64_t j = 0; j < d; ++j) dqt[j] = w.dA[t] * n0[j];
        for (int64_t i = 0; i < d; ++i) {
          const T* Ci = C0 + i * d;
          eps += dO[i] * dot(d, Ci, qt);
          for (int64_t j = 0; j < d; ++j) dqt[j] += dO[i] * Ci[j];
        }
        for (int64_t j = 0; j < d; ++j) dqt[j] *= w.e[t];
        w.db[t] += w.e[t] * eps;
      }
      // Pairs s <= t: w_ts = dP_ts P_ts feeds ĩ_s and the decays; then dP becomes
      // A = dP ⊙ D, and dq += A K, dk += A^T Q, dv += P^T dnum, three GEMMs (A and P are
      // zero above the diagonal).
      for (int64_t t = 0; t < len; ++t) {
        T* dPt = w.dP + t * len;
        const T* Pt = w.P + t * len;
        const T* Dt = w.D + t * len;
        for (int64_t s = 0; s <= t; ++s) {
          const T wts = dPt[s] * Pt[s];
          dig[s * 2 * H] += wts;
          w.db[t] += wts;
          w.db[s] -= wts;
          dPt[s] *= Dt[s];
        }
      }
      gemm<T>(Trans::N, Trans::N, len, d, len, T(1), w.dP, len, k, ld, T(1), dq, ld);
      gemm<T>(Trans::T, Trans::N, len, d, len, T(1), w.dP, len, q, ld, T(1), dk, ld);
      gemm<T>(Trans::T, Trans::N, len, d, len, T(1), w.P, len, w.dO, d, T(1), dv, ld);
      // d log f_r = Σ_{t>=r} db_t
      T acc = 0;
      for (int64_t t = len - 1; t >= 0; --t) {
        acc += w.db[t];
        dlf[t * 2 * H] = acc;
      }
      // G_C <- e_{L-1} G_C + Σ_t e_t dnum_t q_t^T,  G_n <- e_{L-1} G_n + Σ_t e_t dden_t q_t
      // (dnum is no longer needed as it is: its rows scaled by e_t, then one GEMM.)
      for (int64_t i = 0; i < d2 + d; ++i) GC[i] *= eL;
      for (int64_t t = 0; t < len; ++t) {
        const T* qt = q + t * ld;
        T* dO = w.dO + t * d;
        for (int64_t i = 0; i < d; ++i) dO[i] *= w.e[t];
        for (int64_t j = 0; j < d; ++j) Gn[j] += w.e[t] * w.dA[t] * qt[j];
      }
      gemm<T>(Trans::T, Trans::N, d, d, len, T(1), w.dO, d, q, ld, T(1), GC, d);
    }
    if (ds0.data) {
      T* out = ds0.data + b * S + h * hs;
      std::copy_n(GC, d2 + d, out);
      out[d2 + d] = dot(d2 + d, GC, kept(b, h, 0));  // dm_0 = <G_C, C'_0> + <G_n, n'_0>
    }
    // dk̃ = dk / sqrt(d); df̃ = d log f (1 - σ(f̃)) = d log f (-expm1(log f)).
    for (int64_t t = 0; t < N; ++t) {
      const int64_t r = b * N + t;
      T* dk = dp + r * ld + O + h * d;
      for (int64_t i = 0; i < d; ++i) dk[i] *= kscale;
      dg[r * 2 * H + H + h] *= -std::expm1(g_.data()[r * 2 * H + H + h]);
    }
  }
  if (conv_) conv_->backward(dp, ld, dp, ld, ds0.data ? ds0.data + H * hs : nullptr, S);
  const auto x2 = x_.reshape(core::Shape{BN, I});
  const core::ViewT<T> dx2 = dx.data ? dx.reshape(core::Shape{BN, I}) : core::ViewT<T>();
  qkvo_.backward(x2, dp_.cview(), dx2);
  gates_.backward(x2, dg_.cview(), core::ViewT<T>());
  if (dx.data)
    gemm<T>(Trans::N, Trans::N, BN, I, 2 * H, T(1), dg, 2 * H, gates_.w().value, I, T(1), dx.data,
            I);
}

template <class T>
void MlstmMixer<T>::step(core::ViewT<const T> x, core::ViewT<T> state, core::ViewT<T> y) {
  const int64_t B = x.dim(0), I = input_size(), O = output_size(), H = h_, d = d_, d2 = d * d;
  const int64_t S = state_size(), hs = head_state(), ld = 4 * O;
  core::check_shape(x, core::Shape{B, I}, "Mlstm.step x");
  core::check_shape(state, core::Shape{B, S}, "Mlstm.step state");
  core::check_shape(y, core::Shape{B, O}, "Mlstm.step y");
  core::grow(step_buf_, B * (4 * O + 2 * H + O));
  core::ViewT<T> proj(step_buf_.data(), core::Shape{B, 4 * O});
  core::ViewT<T> gb(step_buf_.data() + B * 4 * O, core::Shape{B, 2 * H});
  core::ViewT<T> zb(step_buf_.data() + B * (4 * O + 2 * H), core::Shape{B, O});
  qkvo_.forward(x, proj);
  gates_.forward(x, gb);
  if (conv_) conv_->step(B, proj.data, ld, state.data + H * hs, S, proj.data, ld);
  const T kscale = T(1.0 / std::sqrt(double(d)));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const T* q = proj.data + b * ld + h * d;
      T* k = proj.data + b * ld + O + h * d;
      const T* v = q + 2 * O;
      const T* ot = q + 3 * O;
      T* Cs = state.data + b * S + h * hs;
      T* ns = Cs + d2;
      T& m = Cs[d2 + d];
      for (int64_t i = 0; i < d; ++i) k[i] *= kscale;
      const T ig = gb.data[b * 2 * H + h], lf = log_sigmoid(gb.data[b * 2 * H + H + h]);
      const T mnew = std::max(lf + m, ig);
      const T fs = std::exp(lf + m - mnew), is = std::exp(ig - mnew);
      m = mnew;
      for (int64_t i = 0; i < d; ++i) {
        for (int64_t j = 0; j < d; ++j) Cs[i * d + j] = fs * Cs[i * d + j] + is * v[i] * k[j];
        ns[i] = fs * ns[i] + is * k[i];
      }
      const T den = dot(d, ns, q);
      const T mu = std::max(std::abs(den), std::exp(-mnew));
      T* z = zb.data + b * O + h * d;
      for (int64_t i = 0; i < d; ++i) z[i] = sigmoid(ot[i]) * dot(d, Cs + i * d, q) / mu;
    }
  out_.forward(zb, y);
}

template class MlstmMixer<float>;
template class MlstmMixer<double>;

SEQBENCH_MIXER_FACTORY(kMlstmMixer, MlstmMixer);

}  // namespace seqbench::nn
