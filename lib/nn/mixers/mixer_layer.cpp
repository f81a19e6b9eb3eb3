#include "nn/mixers/mixer_layer.hpp"

#include <cmath>

#include "core/buffer.hpp"

namespace seqbench::nn {

namespace {

// (A, C, W) -> (C, A, W): swaps the two leading dimensions.
template <class T>
void swap_leading(const T* src, int64_t a, int64_t c, int64_t w, T* dst) {
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < c; ++j) std::copy_n(src + (i * c + j) * w, w, dst + (j * a + i) * w);
}

}  // namespace

template <class T>
void MixerLayer<T>::forward(core::ViewT<const T> x, core::ViewT<const T> s0, core::ViewT<T> y) {
  const int64_t L = x.dim(0), B = x.dim(1), I = input_size(), O = hidden();
  core::check_shape(x, core::Shape{L, B, I}, "MixerLayer.forward x");
  core::check_shape(y, core::Shape{L, B, O}, "MixerLayer.forward y");
  core::ensure_shape(xb_, core::Shape{B, L, I});
  core::ensure_shape(yb_, core::Shape{B, L, O});
  swap_leading(x.data, L, B, I, xb_.data());
  m_->forward(xb_.cview(), s0, yb_.view());
  swap_leading(yb_.data(), B, L, O, y.data);
}

template <class T>
void MixerLayer<T>::backward(core::ViewT<const T> dy, core::ViewT<T> dx, core::ViewT<T> ds0,
                             std::vector<double>* dh_norms) {
  const int64_t B = xb_.shape()[0], L = xb_.shape()[1], I = input_size(), O = hidden();
  core::check_shape(dy, core::Shape{L, B, O}, "MixerLayer.backward dy");
  core::ensure_shape(dyb_, core::Shape{B, L, O});
  swap_leading(dy.data, L, B, O, dyb_.data());
  core::ensure_shape(dxb_, core::Shape{B, L, I});
  m_->backward(dyb_.cview(), dxb_.view(), ds0);
  if (dx.data) swap_leading(dxb_.data(), B, L, I, dx.data);
  if (dh_norms) {
    dh_norms->assign(size_t(L), 0.0);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < L; ++t) {
        const T* r = dxb_.data() + (b * L + t) * I;
        for (int64_t i = 0; i < I; ++i) (*dh_norms)[size_t(t)] += double(r[i]) * double(r[i]);
      }
    for (auto& n : *dh_norms) n = std::sqrt(n);
  }
}

template <class T>
size_t MixerLayer<T>::held_bytes() const {
  return m_->held_bytes() + core::bytes_of(xb_) + core::bytes_of(yb_) + core::bytes_of(dyb_) +
         core::bytes_of(dxb_);
}

template <class T>
size_t MixerLayer<T>::estimate_bytes(const Mixer<T>& m, int64_t L, int64_t B) {
  const int64_t I = m.input_size(), O = m.output_size();
  return m.estimate_bytes(B, L) + sizeof(T) * size_t(B * L * (2 * I + 2 * O));
}

template class MixerLayer<float>;
template class MixerLayer<double>;

}  // namespace seqbench::nn
