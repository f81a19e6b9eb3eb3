// Losses. Each returns the mean loss and writes the gradient of that mean.
#pragma once

#include <cstdint>

#include "core/tensor.hpp"

namespace seqbench::nn {

struct CrossEntropyResult {
  double loss = 0;      // mean over counted rows (natural log)
  double count = 0;     // sum of the mask (number of rows counted)
  int64_t correct = 0;  // rows (with mask > 0) whose argmax equals the target
};

// Softmax cross-entropy over rows: logits (N, C), targets (N) in [0, C), mask (N) of
// weights (nullptr = all 1). loss = sum_n m_n * -log softmax(logits_n)[y_n] / sum_n m_n.
// dlogits (N, C) = m_n (softmax_n - onehot(y_n)) / sum m, scaled by grad_scale
// (skipped when dlogits.data is null). Rows with m_n = 0 get zero gradient.
template <class T>
CrossEntropyResult softmax_cross_entropy(core::ViewT<const T> logits, const int32_t* targets,
                                         const T* mask, core::ViewT<T> dlogits,
                                         double grad_scale = 1.0);

// Mean squared error: pred, target (N, D); loss = mean over all N*D elements of
// (pred - target)^2; dpred = 2 (pred - target) / (N*D) (skipped when null).
template <class T>
double mse(core::ViewT<const T> pred, core::ViewT<const T> target, core::ViewT<T> dpred);

}  // namespace seqbench::nn
