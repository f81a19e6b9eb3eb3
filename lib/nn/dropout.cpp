#include "nn/dropout.hpp"

#include "core/check.hpp"

namespace seqbench::nn {

template <class T>
DropoutT<T>::DropoutT(double p) : p_(p) {
  if (!(p >= 0.0 && p < 1.0))
    throw core::UsageError(fmt::format("dropout: p must be in [0, 1), got {}", p));
}

template <class T>
void DropoutT<T>::forward(T* x, int64_t n, bool train, core::Rng& rng) {
  applied_ = train && p_ > 0.0;
  if (!applied_) return;
  if (!(hold_ && int64_t(mask_.size()) == n)) {
    mask_.resize(size_t(n));
    const T keep = static_cast<T>(1.0 / (1.0 - p_));
    // Serial on purpose: the draws must not depend on the thread count.
    for (int64_t i = 0; i < n; ++i) mask_[size_t(i)] = rng.uniform() >= p_ ? keep : T(0);
  }
  for (int64_t i = 0; i < n; ++i) x[i] *= mask_[size_t(i)];
}

template <class T>
void DropoutT<T>::backward(T* dx, int64_t n) const {
  if (!applied_) return;
  SB_CHECK(int64_t(mask_.size()) == n, "dropout.backward: mask has {} elements, gradient {}",
           mask_.size(), n);
  for (int64_t i = 0; i < n; ++i) dx[i] *= mask_[size_t(i)];
}

template class DropoutT<float>;
template class DropoutT<double>;

}  // namespace seqbench::nn
