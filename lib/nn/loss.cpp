#include "nn/loss.hpp"

#include <algorithm>
#include <cmath>

namespace seqbench::nn {

template <class T>
CrossEntropyResult softmax_cross_entropy(core::ViewT<const T> logits, const int32_t* targets,
                                         const T* mask, core::ViewT<T> dlogits,
                                         double grad_scale) {
  const int64_t n = logits.dim(0), c = logits.dim(1);
  if (dlogits.data) core::check_shape(dlogits, logits.shape, "softmax_cross_entropy dlogits");
  CrossEntropyResult r;
  for (int64_t i = 0; i < n; ++i) r.count += mask ? double(mask[i]) : 1.0;
  const double inv = r.count > 0 ? 1.0 / r.count : 0.0;
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T* z = logits.data + i * c;
    const int32_t y = targets[i];
    SB_CHECK(y >= 0 && y < c, "target {} at row {} outside [0, {})", y, i, c);
    const double m = mask ? double(mask[i]) : 1.0;
    T* dz = dlogits.data ? dlogits.data + i * c : nullptr;
    if (m == 0) {
      if (dz) std::fill_n(dz, c, T(0));
      continue;
    }
    int64_t arg = 0;
    double zmax = z[0];
    for (int64_t k = 1; k < c; ++k)
      if (z[k] > zmax) zmax = z[k], arg = k;
    double sum = 0;
    for (int64_t k = 0; k < c; ++k) sum += std::exp(double(z[k]) - zmax);
    const double log_sum = std::log(sum) + zmax;
    total += m * (log_sum - double(z[y]));
    if (arg == y) ++r.correct;
    if (dz) {
      const double s = m * inv * grad_scale;
      for (int64_t k = 0; k < c; ++k) {
        const double p = std::exp(double(z[k]) - log_sum);
        dz[k] = static_cast<T>(s * (p - (k == y ? 1.0 : 0.0)));
      }
    }
  }
  r.loss = total * inv;
  return r;
}

template <class T>
double mse(core::ViewT<const T> pred, core::ViewT<const T> target, core::ViewT<T> dpred) {
  core::check_shape(target, pred.shape, "mse target");
  if (dpred.data) core::check_shape(dpred, pred.shape, "mse dpred");
  const int64_t n = pred.numel();
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = double(pred.data[i]) - double(target.data[i]);
    total += d * d;
    if (dpred.data) dpred.data[i] = static_cast<T>(2.0 * d / double(n));
  }
  return n ? total / double(n) : 0.0;
}

template CrossEntropyResult softmax_cross_entropy<float>(core::ViewT<const float>, const int32_t*,
                                                         const float*, core::ViewT<float>, double);
template CrossEntropyResult softmax_cross_entropy<double>(core::ViewT<const double>,
                                                          const int32_t*, const double*,
                                                          core::ViewT<double>, double);
template double mse<float>(core::ViewT<const float>, core::ViewT<const float>, core::ViewT<float>);
template double mse<double>(core::ViewT<const double>, core::ViewT<const double>,
                            core::ViewT<double>);

}  // namespace seqbench::nn
