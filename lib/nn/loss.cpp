#include "nn/loss.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "nn/fast_math.hpp"
#include "nn/parallel.hpp"

namespace seqbench::nn {

namespace {

// Rows at least this wide (a word vocabulary) take the vectorised float path below; the
// narrow rows of the classification tasks (copy, MNIST, characters, pixels) keep the
// double path whose roundings the tuned presets were run with.
constexpr int64_t kWideSoftmax = 1024;

// One wide float row: returns log sum_k exp(z_k) and its argmax (the first of ties), and
// when dz is given writes scale * softmax(z) into it (the caller subtracts scale at the
// target). Every loop has a shape GCC vectorises: the max and the sum run over kLanes
// partial results, exp is fast_exp (relative error < 2e-7), evaluated once per element
// into dz or a per-thread scratch row, and the sum is accumulated in double. With libm's
// exp in double twice per element and a branchy argmax this took ~60% of a word-level
// LM step (V = 14k, perf).
double wide_row(const float* z, int64_t c, float* dz, double scale, int64_t& arg) {
  constexpr int64_t kLanes = 16;
  const int64_t whole = c / kLanes * kLanes;
  float mx[kLanes];
  std::fill_n(mx, kLanes, z[0]);
  for (int64_t k = 0; k < whole; k += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) mx[l] = std::max(mx[l], z[k + l]);
  float zmax = *std::max_element(mx, mx + kLanes);
  for (int64_t k = whole; k < c; ++k) zmax = std::max(zmax, z[k]);
  arg = 0;
  for (int64_t k = 0; k < c; ++k)
    if (z[k] == zmax) {
      arg = k;
      break;
    }
  thread_local std::vector<float> scratch;
  float* e = dz;
  if (!e) {
    if (scratch.size() < static_cast<size_t>(c)) scratch.resize(static_cast<size_t>(c));
    e = scratch.data();
  }
  for (int64_t k = 0; k < c; ++k) e[k] = fast_exp(z[k] - zmax);
  double acc[kLanes] = {};
  for (int64_t k = 0; k < whole; k += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) acc[l] += double(e[k + l]);
  double sum = 0;
  for (double a : acc) sum += a;
  for (int64_t k = whole; k < c; ++k) sum += double(e[k]);
  if (dz) {
    const float f = static_cast<float>(scale / sum);
    for (int64_t k = 0; k < c; ++k) dz[k] *= f;
  }
  return std::log(sum) + double(zmax);
}

}  // namespace

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
    const double scale = m * inv * grad_scale;
    int64_t arg = 0;
    double log_sum;
    if constexpr (std::is_same_v<T, float>) {
      if (c >= kWideSoftmax) {
        log_sum = wide_row(z, c, dz, scale, arg);
        if (dz) dz[y] -= static_cast<float>(scale);
        row_loss[static_cast<size_t>(i)] = m * (log_sum - double(z[y]));
        row_correct[static_cast<size_t>(i)] = arg == y;
        continue;
      }
    }
    double zmax = z[0];
    for (int64_t k = 1; k < c; ++k)
      if (z[k] > zmax) zmax = z[k], arg = k;
    // In double, as before rows went parallel: the trajectories of the tuned presets
    // (and the CopyLearns test) depend on these roundings.
    double sum = 0;
    for (int64_t k = 0; k < c; ++k) sum += std::exp(double(z[k]) - zmax);
    log_sum = std::log(sum) + zmax;
    row_loss[static_cast<size_t>(i)] = m * (log_sum - double(z[y]));
    if (dz) {
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
