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
  if (t >= 0) return x_[size_t((b * N_ + t) * c_ + c)];
  if (!s0_) return T(0);
  return s0_[b * lds_ + (t + w_ - 1) * c_ + c];
}

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
  const T* w = wt_->value;
#pragma omp parallel for schedule(static) if (rows * C * W >= kRowParallelMin)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t b = r / N, t = r % N;
    T* u = u_.data() + r * C;
    T* yr = y + r * ldy;
    for (int64_t c = 0; c < C; ++c) {
      T acc = 0;
      for (int64_t j = 0; j < W; ++j) acc += w[c * W + j] * input(b, t - W + 1 + j, c);
      u[c] = acc;
      yr[c] = silu(acc);
    }
  }
}

template <class T>
void ShortConv<T>::backward(const T* dy, int64_t ldy, T* dx, int64_t ldx, T* ds0, int64_t lds) {
  const int64_t B = B_, N = N_, C = c_, W = w_, rows = B * N;
  SB_CHECK(ldx == ldy || dx != dy, "ShortConv.backward: dx aliases dy with another stride");
  // du = dy ⊙ silu'(u), into dx's rows.
#pragma omp parallel for schedule(static) if (rows * C >= kRowParallelMin)
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < C; ++c)
      dx[r * ldx + c] = dy[r * ldy + c] * silu_grad(u_[size_t(r * C + c)]);
  // dw[c, j] += Σ_{b,t} du_t[c] x_{t-W+1+j}[c], each channel summed in a fixed order.
  T* gw = wt_->grad;
  const T* w = wt_->value;
#pragma omp parallel for schedule(static) if (rows * C * W >= kRowParallelMin)
  for (int64_t c = 0; c < C; ++c)
    for (int64_t j = 0; j < W; ++j) {
      T acc = 0;
      for (int64_t b = 0; b < B; ++b)
        for (int64_t t = 0; t < N; ++t)
          acc += dx[(b * N + t) * ldx + c] * input(b, t - W + 1 + j, c);
      gw[c * W + j] += acc;
    }
  // The buffer: ds[s][c] = Σ_{j<=s, s-j<N} w[c, j] du_{s-j}[c].
  if (ds0)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < W - 1; ++s)
        for (int64_t c = 0; c < C; ++c) {
          T acc = 0;
          for (int64_t j = 0; j <= s; ++j)
            if (s - j < N) acc += w[c * W + j] * dx[(b * N + s - j) * ldx + c];
          ds0[b * lds + s * C + c] = acc;
        }
  // dx_t = Σ_j w[j] du_{t+W-1-j}: reads tokens >= t only, so ascending t works in place.
#pragma omp parallel for schedule(static) if (B >= 2 && rows * C * W >= kRowParallelMin)
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < N; ++t)
      for (int64_t c = 0; c < C; ++c) {
        T acc = 0;
        for (int64_t j = 0; j < W; ++j) {
          const int64_t tau = t + W - 1 - j;
          if (tau < N) acc += w[c * W + j] * dx[(b * N + tau) * ldx + c];
        }
        dx[(b * N + t) * ldx + c] = acc;
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
  return core::bytes_of(x_) + core::bytes_of(u_);
}

template class ShortConv<float>;
template class ShortConv<double>;

}  // namespace seqbench::nn
