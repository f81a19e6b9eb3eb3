#include "nn/mixers/linear_attention.hpp"
#include "nn/mixers/mixer_math.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <cmath>

#include "backend/gemm.hpp"
#include "core/buffer.hpp"
#include "core/check.hpp"
#include "nn/fast_math.hpp"
#include "nn/parallel.hpp"

namespace seqbench::nn {

using backend::gemm;
using backend::Trans;
using mixer_math::heads_width;

namespace {

template <class T>
T phi(T a) {
  return a > T(0) ? a + T(1) : fast_exp(a);
}
// φ'(a) read from φ(a): 1 where a > 0 (φ > 1), else φ(a) = exp(a).
template <class T>
T dphi_from_phi(T f) {
  return f > T(1) ? T(1) : f;
}

}  // namespace

template <class T>
LinearAttention<T>::LinearAttention(const MixerConfig& cfg, core::ParamStoreT<T>& ps,
                                    const std::string& name, int64_t input, int64_t output)
    : h_(cfg.heads),
      d_(heads_width(cfg, output)),
      c_(cfg.chunk),
      qkv_(ps, name + ".qkv", input, 3 * output, false),
      out_(ps, name + ".out", output, output, false) {
  if (cfg.short_conv > 0)
    conv_ = std::make_unique<ShortConv<T>>(ps, name + ".conv", 3 * output, cfg.short_conv);
}

template <class T>
void LinearAttention<T>::init(core::Rng& rng) {
  qkv_.init(rng);
  out_.init(rng);
  if (conv_) conv_->init(rng);
}

template <class T>
size_t LinearAttention<T>::workspace_floats() const {
  const int64_t D = d_ + 1;
  return size_t(c_ * c_ + c_ * std::max(c_, D) + 3 * c_ * D + d_ * D);
}

template <class T>
void LinearAttention<T>::reserve(Workspace& w) const {
  const int64_t D = d_ + 1;
  core::grow(w.a, c_ * c_);
  core::grow(w.da, c_ * std::max(c_, D));  // also dV' (C, d + 1) in backward
  core::grow(w.vp, c_ * D);
  core::grow(w.dnum, c_ * D);
  core::grow(w.num, c_ * D);
  core::grow(w.g, d_ * D);
}

template <class T>
T* LinearAttention<T>::kept(int64_t b, int64_t h, int64_t c) const {
  const int64_t nc = chunks(n_);
  return const_cast<T*>(kept_.data()) + ((b * h_ + h) * nc + c) * d_ * (d_ + 1);
}

template <class T>
size_t LinearAttention<T>::estimate_bytes(int64_t B, int64_t N) const {
  const int64_t O = h_ * d_, BN = B * N;
  const size_t floats = size_t(BN * 3 * O + BN * O + BN * h_ +
                               B * h_ * ((N + c_ - 1) / c_) * d_ * (d_ + 1) + B * state_size() +
                               BN * O + BN * 3 * O) +
                        size_t(omp_get_max_threads()) * workspace_floats() +
                        size_t(conv_ ? conv_->held_floats(B, N) : 0);
  return floats * sizeof(T);
}

template <class T>
size_t LinearAttention<T>::held_bytes() const {
  size_t n = core::bytes_of(qkv_buf_) + core::bytes_of(o_) + core::bytes_of(den_) +
             core::bytes_of(kept_) + core::bytes_of(final_) + core::bytes_of(do_) +
             core::bytes_of(dqkv_) + core::bytes_of(step_buf_);
  if (conv_) n += conv_->held_bytes();
  for (const auto& w : ws_)
    n += core::bytes_of(w.a) + core::bytes_of(w.da) + core::bytes_of(w.vp) +
         core::bytes_of(w.dnum) + core::bytes_of(w.num) + core::bytes_of(w.g);
  return n;
}

template <class T>
void LinearAttention<T>::forward(core::ViewT<const T> x, core::ViewT<const T> s0,
                                 core::ViewT<T> y) {
  const int64_t B = x.dim(0), N = x.dim(1), I = input_size(), O = output_size();
  const int64_t D = d_ + 1, S = state_size();
  core::check_shape(x, core::Shape{B, N, I}, "LinearAttention.forward x");
  core::check_shape(y, core::Shape{B, N, O}, "LinearAttention.forward y");
  if (s0.data) core::check_shape(s0, core::Shape{B, S}, "LinearAttention.forward s0");
  x_ = x;
  b_ = B;
  n_ = N;
  const int64_t nc = chunks(N);
  core::ensure_shape(qkv_buf_, core::Shape{B * N, 3 * O});
  core::ensure_shape(o_, core::Shape{B * N, O});
  core::ensure_shape(den_, core::Shape{B * N, h_});
  core::ensure_shape(kept_, core::Shape{B * h_ * nc, d_ * D});
  core::ensure_shape(final_, core::Shape{B, S});
  if (ws_.size() != size_t(omp_get_max_threads())) ws_.resize(size_t(omp_get_max_threads()));
  for (auto& w : ws_) reserve(w);

  qkv_.forward(x.reshape(core::Shape{B * N, I}), qkv_buf_.view());
  T* qkv = qkv_buf_.data();
  const int64_t core_S = h_ * d_ * D;  // the conv buffer follows the heads' states
  if (conv_)
    conv_->forward(B, N, qkv, 3 * O, s0.data ? s0.data + core_S : nullptr, S, qkv, 3 * O);
#pragma omp parallel for schedule(static) if (B * N * 2 * O >= kRowParallelMin)
  for (int64_t r = 0; r < B * N; ++r) {
    T* row = qkv + r * 3 * O;
#pragma omp simd
    for (int64_t j = 0; j < 2 * O; ++j) row[j] = phi(row[j]);
  }

  const int64_t ld = 3 * O;
#pragma omp parallel for schedule(static)
  for (int64_t bh = 0; bh < B * h_; ++bh) {
    const int64_t b = bh / h_, h = bh % h_;
    Workspace& w = ws_[size_t(omp_get_thread_num())];
    T* P = w.g.data();  // the running state
    if (s0.data)
      std::copy_n(s0.data + b * S + h * d_ * D, d_ * D, P);
    else
      std::fill_n(P, d_ * D, T(0));
    for (int64_t c = 0; c < nc; ++c) {
      const int64_t t0 = c * c_, len = std::min(c_, N - t0);
      std::copy_n(P, d_ * D, kept(b, h, c));
      const T* q = qkv + (b * N + t0) * ld + h * d_;
      const T* k = q + O;
      const T* v = q + 2 * O;
      for (int64_t t = 0; t < len; ++t) {
        std::copy_n(v + t * ld, d_, w.vp.data() + t * D);
        w.vp[size_t(t * D + d_)] = T(1);
      }
      // A = (Q K^T) ⊙ M
      gemm<T>(Trans::N, Trans::T, len, len, d_, T(1), q, ld, k, ld, T(0), w.a.data(), len);
      for (int64_t t = 0; t < len; ++t)
        for (int64_t s = t + 1; s < len; ++s) w.a[size_t(t * len + s)] = T(0);
      // Num = A V' + Q P
      gemm<T>(Trans::N, Trans::N, len, D, d_, T(1), q, ld, P, D, T(0), w.num.data(), D);
      gemm<T>(Trans::N, Trans::N, len, D, len, T(1), w.a.data(), len, w.vp.data(), D, T(1),
              w.num.data(), D);
      for (int64_t t = 0; t < len; ++t) {
        const T den = w.num[size_t(t * D + d_)] + T(kEps);
        den_.data()[(b * N + t0 + t) * h_ + h] = den;
        T* o = o_.data() + (b * N + t0 + t) * O + h * d_;
        for (int64_t j = 0; j < d_; ++j) o[j] = w.num[size_t(t * D + j)] / den;
      }
      // P += K^T V'
      gemm<T>(Trans::T, Trans::N, d_, D, len, T(1), k, ld, w.vp.data(), D, T(1), P, D);
    }
    std::copy_n(P, d_ * D, final_.data() + b * S + h * d_ * D);
  }
  if (conv_) conv_->final_state(final_.data() + core_S, S);
  out_.forward(o_.cview(), y.reshape(core::Shape{B * N, O}));
}

template <class T>
void LinearAttention<T>::backward(core::ViewT<const T> dy, core::ViewT<T> dx,
                                  core::ViewT<T> ds0) {
  const int64_t B = b_, N = n_, I = input_size(), O = output_size(), D = d_ + 1;
  const int64_t S = state_size(), nc = chunks(N), ld = 3 * O;
  core::check_shape(dy, core::Shape{B, N, O}, "LinearAttention.backward dy");
  if (ds0.data) core::check_shape(ds0, core::Shape{B, S}, "LinearAttention.backward ds0");
  core::ensure_shape(do_, core::Shape{B * N, O});
  core::ensure_shape(dqkv_, core::Shape{B * N, 3 * O});
  out_.backward(o_.cview(), dy.reshape(core::Shape{B * N, O}), do_.view());
  const T* qkv = qkv_buf_.data();
  T* dqkv = dqkv_.data();

#pragma omp parallel for schedule(static)
  for (int64_t bh = 0; bh < B * h_; ++bh) {
    const int64_t b = bh / h_, h = bh % h_;
    Workspace& w = ws_[size_t(omp_get_thread_num())];
    T* G = w.g.data();
    std::fill_n(G, d_ * D, T(0));
    for (int64_t c = nc - 1; c >= 0; --c) {
      const int64_t t0 = c * c_, len = std::min(c_, N - t0);
      const T* P = kept(b, h, c);
      const T* q = qkv + (b * N + t0) * ld + h * d_;
      const T* k = q + O;
      const T* v = q + 2 * O;
      T* dq = dqkv + (b * N + t0) * ld + h * d_;
      T* dk = dq + O;
      T* dv = dq + 2 * O;
      for (int64_t t = 0; t < len; ++t) {
        std::copy_n(v + t * ld, d_, w.vp.data() + t * D);
        w.vp[size_t(t * D + d_)] = T(1);
        const T den = den_.data()[(b * N + t0 + t) * h_ + h];
        const T* o = o_.data() + (b * N + t0 + t) * O + h * d_;
        const T* dO = do_.data() + (b * N + t0 + t) * O + h * d_;
        T dden = 0;
        for (int64_t j = 0; j < d_; ++j) {
          w.dnum[size_t(t * D + j)] = dO[j] / den;
          dden -= dO[j] * o[j];
        }
        w.dnum[size_t(t * D + d_)] = dden / den;
      }
      gemm<T>(Trans::N, Trans::T, len, len, d_, T(1), q, ld, k, ld, T(0), w.a.data(), len);
      // dA = (dNum V'^T) ⊙ M;  A ⊙ M
      gemm<T>(Trans::N, Trans::T, len, len, D, T(1), w.dnum.data(), D, w.vp.data(), D, T(0),
              w.da.data(), len);
      for (int64_t t = 0; t < len; ++t)
        for (int64_t s = t + 1; s < len; ++s) {
          w.a[size_t(t * len + s)] = T(0);
          w.da[size_t(t * len + s)] = T(0);
        }
      // dQ = dA K + dNum P^T (written as dq̃ after the φ' factor below)
      gemm<T>(Trans::N, Trans::N, len, d_, len, T(1), w.da.data(), len, k, ld, T(0), dq, ld);
      gemm<T>(Trans::N, Trans::T, len, d_, D, T(1), w.dnum.data(), D, P, D, T(1), dq, ld);
      // dK = dA^T Q + V' G^T
      gemm<T>(Trans::T, Trans::N, len, d_, len, T(1), w.da.data(), len, q, ld, T(0), dk, ld);
      gemm<T>(Trans::N, Trans::T, len, d_, D, T(1), w.vp.data(), D, G, D, T(1), dk, ld);
      // dV' = A^T dNum + K G; only its first d columns reach v. dA is no longer needed, so
      // its buffer holds dV'.
      T* dvp = w.da.data();
      gemm<T>(Trans::T, Trans::N, len, D, len, T(1), w.a.data(), len, w.dnum.data(), D, T(0),
              dvp, D);
      gemm<T>(Trans::N, Trans::N, len, D, d_, T(1), k, ld, G, D, T(1), dvp, D);
      for (int64_t t = 0; t < len; ++t) std::copy_n(dvp + t * D, d_, dv + t * ld);
      // G <- G + Q^T dNum
      gemm<T>(Trans::T, Trans::N, d_, D, len, T(1), q, ld, w.dnum.data(), D, T(1), G, D);
      for (int64_t t = 0; t < len; ++t)
        for (int64_t j = 0; j < d_; ++j) {
          dq[t * ld + j] *= dphi_from_phi(q[t * ld + j]);
          dk[t * ld + j] *= dphi_from_phi(k[t * ld + j]);
        }
    }
    if (ds0.data) std::copy_n(G, d_ * D, ds0.data + b * S + h * d_ * D);
  }
  if (conv_)
    conv_->backward(dqkv, ld, dqkv, ld, ds0.data ? ds0.data + h_ * d_ * D : nullptr, S);
  qkv_.backward(x_.reshape(core::Shape{B * N, I}), dqkv_.cview(),
                dx.data ? dx.reshape(core::Shape{B * N, I}) : core::ViewT<T>());
}

template <class T>
void LinearAttention<T>::step(core::ViewT<const T> x, core::ViewT<T> state, core::ViewT<T> y) {
  const int64_t B = x.dim(0), I = input_size(), O = output_size(), D = d_ + 1;
  const int64_t S = state_size();
  core::check_shape(x, core::Shape{B, I}, "LinearAttention.step x");
  core::check_shape(state, core::Shape{B, S}, "LinearAttention.step state");
  core::check_shape(y, core::Shape{B, O}, "LinearAttention.step y");
  core::grow(step_buf_, B * 4 * O);
  core::ViewT<T> qkv(step_buf_.data(), core::Shape{B, 3 * O});
  core::ViewT<T> o(step_buf_.data() + B * 3 * O, core::Shape{B, O});
  qkv_.forward(x, qkv);
  if (conv_) conv_->step(B, qkv.data, 3 * O, state.data + h_ * d_ * D, S, qkv.data, 3 * O);
  for (int64_t b = 0; b < B; ++b) {
    T* r = qkv.data + b * 3 * O;
    for (int64_t j = 0; j < 2 * O; ++j) r[j] = phi(r[j]);
    for (int64_t h = 0; h < h_; ++h) {
      const T* q = r + h * d_;
      const T* k = q + O;
      const T* v = q + 2 * O;
      T* P = state.data + b * S + h * d_ * D;
      for (int64_t i = 0; i < d_; ++i) {
        for (int64_t j = 0; j < d_; ++j) P[i * D + j] += k[i] * v[j];
        P[i * D + d_] += k[i];
      }
      T den = T(kEps);
      for (int64_t i = 0; i < d_; ++i) den += q[i] * P[i * D + d_];
      for (int64_t j = 0; j < d_; ++j) {
        T n = 0;
        for (int64_t i = 0; i < d_; ++i) n += q[i] * P[i * D + j];
        o.data[b * O + h * d_ + j] = n / den;
      }
    }
  }
  out_.forward(o, y);
}

template class LinearAttention<float>;
template class LinearAttention<double>;

SEQBENCH_MIXER_FACTORY(kLinearAttentionMixer, LinearAttention);

}  // namespace seqbench::nn
