#include "nn/mixers/short_conv.hpp"

#include <algorithm>
#include <cmath>

#include "core/buffer.hpp"
#include "core/check.hpp"
#include "nn/mixers/mixer_math.hpp"
#include "nn/parallel.hpp"

namespace seqbench::nn {

using mixer_math::silu;
using mixer_math::silu_grad;

template <class T>
ShortConv<T>::ShortConv(core::ParamStoreT<T>& ps, const std::string& name, int64_t channels,
                        int64_t width)
    : c_(channels), w_(width) {
  SB_CHECK(channels > 0 && width > 0,
           "{}: short convolution needs channels and width > 0, got {} and {}", name, channels,
           width);
  wt_ = &ps.add(name + ".w", core::Shape{channels, width});
}

template <class T>
void ShortConv<T>::init(core::Rng& rng) {
  const double a = 1.0 / std::sqrt(double(w_));
  for (int64_t i = 0; i < wt_->numel(); ++i) wt_->value[i] = T(rng.uniform(-a, a));
}

template <class T>
T ShortConv<T>::input(int64_t b, int64_t t, int64_t c) const {
  const T* row = input_row(b, t);
  return row ? row[c] : T(0);
}

template <class T>
const T* ShortConv<T>::input_row(int64_t b, int64_t t) const {
  if (t >= 0) return x_.data() + (b * N_ + t) * c_;
  if (!s0_) return nullptr;
  return s0_ + b * lds_ + (t + w_ - 1) * c_;
}

template <class T>
void ShortConv<T>::transpose_weights() {
  const int64_t C = c_, W = w_;
  core::grow(wt_t_, W * C);
  for (int64_t c = 0; c < C; ++c)
    for (int64_t j = 0; j < W; ++j) wt_t_[size_t(j * C + c)] = wt_->value[c * W + j];
}

// The loops run over channels innermost, contiguous in every row, so they vectorise; the
// sums over j and over (b, t) are taken in the same order as the formulas above.
template <class T>
void ShortConv<T>::forward(int64_t B, int64_t N, const T* x, int64_t ldx, const T* s0,
                           int64_t lds, T* y, int64_t ldy) {
  const int64_t C = c_, W = w_, rows = B * N;
  B_ = B;
  N_ = N;
  s0_ = s0;
  lds_ = lds;
  core::grow(x_, rows * C);
  core::grow(u_, rows * C);
  for (int64_t r = 0; r < rows; ++r) std::copy_n(x + r * ldx, C, x_.data() + r * C);
  transpose_weights();
  const T* wt = wt_t_.data();  // (W, C)
#pragma omp parallel for schedule(static) if (rows * C * W >= kRowParallelMin)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t b = r / N, t = r % N;
    T* u = u_.data() + r * C;
    std::fill_n(u, C, T(0));
    for (int64_t j = 0; j < W; ++j) {
      const T* in = input_row(b, t - W + 1 + j);
      if (!in) continue;  // the zero state
      const T* wj = wt + j * C;
#pragma omp simd
      for (int64_t c = 0; c < C; ++c) u[c] += wj[c] * in[c];
    }
    T* yr = y + r * ldy;
#pragma omp simd
    for (int64_t c = 0; c < C; ++c) yr[c] = silu(u[c]);
  }
}

template <class T>
void ShortConv<T>::backward(const T* dy, int64_t ldy, T* dx, int64_t ldx, T* ds0, int64_t lds) {
  const int64_t B = B_, N = N_, C = c_, W = w_, rows = B * N;
  SB_CHECK(ldx == ldy || dx != dy, "ShortConv.backward: dx aliases dy with another stride");
  // du = dy ⊙ silu'(u), into dx's rows.
#pragma omp parallel for schedule(static) if (rows * C >= kRowParallelMin)
  for (int64_t r = 0; r < rows; ++r) {
    const T* u = u_.data() + r * C;
    T* d = dx + r * ldx;
    const T* g = dy + r * ldy;
#pragma omp simd
    for (int64_t c = 0; c < C; ++c) d[c] = g[c] * silu_grad(u[c]);
  }
  // dw[c, j] += Σ_{b,t} du_t[c] x_{t-W+1+j}[c], each channel summed over (b, t) in order:
  // a thread takes a block of channels through every row, so the sums do not depend on
  // the thread count.
  core::grow(gw_t_, W * C);
  std::fill_n(gw_t_.begin(), W * C, T(0));
  const int64_t threads = rows * C * W >= kRowParallelMin ? int64_t(omp_get_max_threads()) : 1;
  const int64_t block = std::max<int64_t>(16, (C + threads - 1) / threads);
#pragma omp parallel for schedule(static) if (threads > 1)
  for (int64_t c0 = 0; c0 < C; c0 += block) {
    const int64_t c1 = std::min(C, c0 + block);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t b = r / N, t = r % N;
      const T* du = dx + r * ldx;
      for (int64_t j = 0; j < W; ++j) {
        const T* in = input_row(b, t - W + 1 + j);
        if (!in) continue;
        T* g = gw_t_.data() + j * C;
#pragma omp simd
        for (int64_t c = c0; c < c1; ++c) g[c] += du[c] * in[c];
      }
    }
  }
  T* gw = wt_->grad;
  for (int64_t c = 0; c < C; ++c)
    for (int64_t j = 0; j < W; ++j) gw[c * W + j] += gw_t_[size_t(j * C + c)];
  const T* wt = wt_t_.data();
  // The buffer: ds[s][c] = Σ_{j<=s, s-j<N} w[c, j] du_{s-j}[c].
  if (ds0)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < W - 1; ++s) {
        T* d = ds0 + b * lds + s * C;
        std::fill_n(d, C, T(0));
        for (int64_t j = 0; j <= s; ++j) {
          if (s - j >= N) continue;
          const T* du = dx + (b * N + s - j) * ldx;
          const T* wj = wt + j * C;
#pragma omp simd
          for (int64_t c = 0; c < C; ++c) d[c] += wj[c] * du[c];
        }
      }
  // dx_t = Σ_j w[j] du_{t+W-1-j}: reads tokens >= t only, so ascending t works in place
  // (through one row of scratch per thread, as du_t itself is read).
  const int64_t team = B >= 2 && rows * C * W >= kRowParallelMin ? int64_t(omp_get_max_threads()) : 1;
  core::grow(scratch_, team * C);
#pragma omp parallel for schedule(static) if (team > 1)
  for (int64_t b = 0; b < B; ++b) {
    T* acc = scratch_.data() + int64_t(omp_get_thread_num()) * C;
    for (int64_t t = 0; t < N; ++t) {
      std::fill_n(acc, C, T(0));
      for (int64_t j = 0; j < W; ++j) {
        const int64_t tau = t + W - 1 - j;
        if (tau >= N) continue;
        const T* du = dx + (b * N + tau) * ldx;
        const T* wj = wt + j * C;
#pragma omp simd
        for (int64_t c = 0; c < C; ++c) acc[c] += wj[c] * du[c];
      }
      std::copy_n(acc, C, dx + (b * N + t) * ldx);
    }
  }
}

template <class T>
void ShortConv<T>::final_state(T* fin, int64_t lds) const {
  for (int64_t b = 0; b < B_; ++b)
    for (int64_t s = 0; s < w_ - 1; ++s)
      for (int64_t c = 0; c < c_; ++c) fin[b * lds + s * c_ + c] = input(b, N_ - (w_ - 1) + s, c);
}

template <class T>
void ShortConv<T>::step(int64_t B, const T* x, int64_t ldx, T* buf, int64_t lds, T* y,
                        int64_t ldy) const {
  const int64_t C = c_, W = w_;
  const T* w = wt_->value;
  for (int64_t b = 0; b < B; ++b) {
    T* s = buf + b * lds;
    for (int64_t c = 0; c < C; ++c) {
      const T xc = x[b * ldx + c];
      T acc = w[c * W + W - 1] * xc;
      for (int64_t j = 0; j < W - 1; ++j) acc += w[c * W + j] * s[j * C + c];
      for (int64_t j = 0; j + 1 < W - 1; ++j) s[j * C + c] = s[(j + 1) * C + c];
      if (W > 1) s[(W - 2) * C + c] = xc;
      y[b * ldy + c] = silu(acc);
    }
  }
}

template <class T>
size_t ShortConv<T>::held_bytes() const {
  // The weights' scratch (wᵀ, w's gradient, a row per thread) does not grow with the
  // tokens and is left out, as held_floats leaves it out.
  return core::bytes_of(x_) + core::bytes_of(u_);
}

template class ShortConv<float>;
template class ShortConv<double>;

}  // namespace seqbench::nn
