#include "nn/layer_norm.hpp"

#include <cmath>

namespace seqbench::nn {

template <class T>
void layer_norm_forward(const T* src, int64_t n, int64_t d, const T* gain, const T* bias,
                        double eps, T* dst, T* mean, T* rstd) {
#pragma omp parallel for schedule(static) if (n * d > 32768)
  for (int64_t r = 0; r < n; ++r) {
    const T* x = src + r * d;
    T* y = dst + r * d;
    // Two passes in double: the variance of a row with a large mean loses digits in T.
    // The sums as vector reductions (without the pragma GCC adds one element at a time).
    double mu = 0;
#pragma omp simd reduction(+ : mu)
    for (int64_t j = 0; j < d; ++j) mu += double(x[j]);
    mu /= double(d);
    double var = 0;
#pragma omp simd reduction(+ : var)
    for (int64_t j = 0; j < d; ++j) var += (double(x[j]) - mu) * (double(x[j]) - mu);
    var /= double(d);
    const T m = static_cast<T>(mu), rs = static_cast<T>(1.0 / std::sqrt(var + eps));
    mean[r] = m;
    rstd[r] = rs;
    for (int64_t j = 0; j < d; ++j) {
      const T xh = (x[j] - m) * rs;
      y[j] = (gain ? gain[j] : T(1)) * xh + (bias ? bias[j] : T(0));
    }
  }
}

template <class T>
void layer_norm_backward(const T* src, const T* ddst, int64_t n, int64_t d, const T* gain,
                         const T* mean, const T* rstd, T* dsrc, T* dgain, T* dbias) {
#pragma omp parallel for schedule(static) if (n * d > 32768)
  for (int64_t r = 0; r < n; ++r) {
    const T* x = src + r * d;
    const T* dy = ddst + r * d;
    T* dx = dsrc + r * d;
    const T m = mean[r], rs = rstd[r];
    T s1 = 0, s2 = 0;  // Σ ĝ, Σ ĝ x̂
#pragma omp simd reduction(+ : s1, s2)
    for (int64_t j = 0; j < d; ++j) {
      const T gh = (gain ? gain[j] : T(1)) * dy[j];
      s1 += gh;
      s2 += gh * (x[j] - m) * rs;
    }
    s1 /= T(d);
    s2 /= T(d);
    for (int64_t j = 0; j < d; ++j) {
      const T gh = (gain ? gain[j] : T(1)) * dy[j];
      const T xh = (x[j] - m) * rs;
      dx[j] += rs * (gh - s1 - xh * s2);
    }
  }
  // Parameter sums run over rows, serially, so the order (and float rounding) is fixed.
  if (dgain || dbias)
    for (int64_t r = 0; r < n; ++r) {
      const T* x = src + r * d;
      const T* dy = ddst + r * d;
      for (int64_t j = 0; j < d; ++j) {
        if (dgain) dgain[j] += dy[j] * (x[j] - mean[r]) * rstd[r];
        if (dbias) dbias[j] += dy[j];
      }
    }
}

template <class T>
LayerNormT<T>::LayerNormT(core::ParamStoreT<T>& ps, const std::string& name, int64_t dim,
                          bool affine, double eps)
    : dim_(dim), eps_(eps) {
  SB_CHECK(dim > 0, "{}: layer norm size must be positive, got {}", name, dim);
  SB_CHECK(eps > 0, "{}: layer norm eps must be > 0, got {}", name, eps);
  if (affine) {
    g_ = &ps.add(name + ".g", core::Shape{dim});
    b_ = &ps.add(name + ".b", core::Shape{dim});
  }
}

template <class T>
void LayerNormT<T>::init() {
  if (!g_) return;
  for (int64_t j = 0; j < dim_; ++j) {
    g_->value[j] = T(1);
    b_->value[j] = T(0);
  }
}

template <class T>
void LayerNormT<T>::forward(core::ViewT<const T> src, core::ViewT<T> dst,
                            LayerNormCache<T>& cache) const {
  const int64_t n = src.numel() / dim_;
  SB_CHECK(src.shape.rank >= 1 && src.shape[src.shape.rank - 1] == dim_,
           "LayerNorm.forward src: last dimension must be {}, got shape {}", dim_, src.shape.str());
  core::check_shape(dst, src.shape, "LayerNorm.forward dst");
  cache.mean.resize(size_t(n));
  cache.rstd.resize(size_t(n));
  layer_norm_forward(src.data, n, dim_, g_ ? g_->value : nullptr, b_ ? b_->value : nullptr, eps_,
                     dst.data, cache.mean.data(), cache.rstd.data());
}

template <class T>
void LayerNormT<T>::backward(core::ViewT<const T> src, core::ViewT<const T> ddst,
                             const LayerNormCache<T>& cache, core::ViewT<T> dsrc) {
  const int64_t n = src.numel() / dim_;
  core::check_shape(ddst, src.shape, "LayerNorm.backward ddst");
  core::check_shape(dsrc, src.shape, "LayerNorm.backward dsrc");
  SB_CHECK(int64_t(cache.mean.size()) == n,
           "LayerNorm.backward: the cache holds {} rows, src has {} (hint: call forward on the "
           "same src first)",
           cache.mean.size(), n);
  layer_norm_backward(src.data, ddst.data, n, dim_, g_ ? g_->value : nullptr, cache.mean.data(),
                      cache.rstd.data(), dsrc.data, g_ ? g_->grad : nullptr,
                      b_ ? b_->grad : nullptr);
}

template void layer_norm_forward<float>(const float*, int64_t, int64_t, const float*,
                                        const float*, double, float*, float*, float*);
template void layer_norm_forward<double>(const double*, int64_t, int64_t, const double*,
                                         const double*, double, double*, double*, double*);
template void layer_norm_backward<float>(const float*, const float*, int64_t, int64_t,
                                         const float*, const float*, const float*, float*,
                                         float*, float*);
template void layer_norm_backward<double>(const double*, const double*, int64_t, int64_t,
                                          const double*, const double*, const double*, double*,
                                          double*, double*);
template class LayerNormT<float>;
template class LayerNormT<double>;

}  // namespace seqbench::nn
