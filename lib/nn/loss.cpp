#include "nn/loss.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "nn/parallel.hpp"

namespace seqbench::nn {

template <class T>
CrossEntropyResult softmax_cross_entropy(core::ViewT<const T> logits, const int32_t* targets,
                                         const T* mask, core::ViewT<T> dlogits,
                                         double grad_scale) {
  const int64_t n = logits.dim(0), c = logits.dim(1);
  if (dlogits.data) core::check_shape(dlogits, logits.shape, "softmax_cross_entropy dlogits");
  CrossEntropyResult r;
  for (int64_t i = 0; i < n; ++i) {
    SB_CHECK(targets[i] >= 0 && targets[i] < c, "target {} at row {} outside [0, {})", targets[i],
             i, c);
    r.count += mask ? double(mask[i]) : 1.0;
  }
  const double inv = r.count > 0 ? 1.0 / r.count : 0.0;
  // Rows in parallel (a language model's B·N x V logits make this a large part of a
  // step); the per-row losses are summed in row order afterwards, so the loss does not
  // depend on the thread count.
  std::vector<double> row_loss(static_cast<size_t>(n), 0.0);
  std::vector<char> row_correct(static_cast<size_t>(n), 0);
#pragma omp parallel for schedule(static) if (n * c >= kRowParallelMin)
  for (int64_t i = 0; i < n; ++i) {
    const T* z = logits.data + i * c;
    const int32_t y = targets[i];
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
    // In double, as before rows went parallel: the trajectories of the tuned presets
    // (and the CopyLearns test) depend on these roundings.
    double sum = 0;
    for (int64_t k = 0; k < c; ++k) sum += std::exp(double(z[k]) - zmax);
    const double log_sum = std::log(sum) + zmax;
    row_loss[static_cast<size_t>(i)] = m * (log_sum - double(z[y]));
    if (dz) {
      const double scale = m * inv * grad_scale;
      for (int64_t k = 0; k < c; ++k) {
        const double p = std::exp(double(z[k]) - log_sum);
        dz[k] = static_cast<T>(scale * (p - (k == y ? 1.0 : 0.0)));
      }
    }
    row_correct[static_cast<size_t>(i)] = arg == y;
  }
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    total += row_loss[static_cast<size_t>(i)];
    r.correct += row_correct[static_cast<size_t>(i)];
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
