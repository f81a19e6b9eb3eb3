#include "rl/conv.hpp"

#include <algorithm>
#include <cmath>

#include "core/buffer.hpp"
#include "core/check.hpp"

namespace seqbench::rl {

using core::grow;

template <class T>
Conv2dT<T>::Conv2dT(core::ParamStoreT<T>& ps, const std::string& name, int64_t in_ch,
                    int64_t out_ch, int64_t kernel, int64_t in_x, int64_t in_y)
    : in_ch_(in_ch),
      out_ch_(out_ch),
      k_(kernel),
      in_x_(in_x),
      in_y_(in_y),
      out_x_(in_x - kernel + 1),
      out_y_(in_y - kernel + 1),
      lin_(ps, name, kernel * kernel * in_ch, out_ch) {
  SB_CHECK(kernel >= 1 && out_x_ >= 1 && out_y_ >= 1,
           "{}: a {}x{} kernel does not fit a {}x{} image (hint: the MiniGrid view is 7x7)", name,
           kernel, kernel, in_x, in_y);
}

template <class T>
void Conv2dT<T>::init(core::Rng& rng) {
  lin_.init(rng);  // U(-1/sqrt(I), 1/sqrt(I)) with I = k·k·Ci: PyTorch's Conv2d default
}

template <class T>
void Conv2dT<T>::forward(int64_t n, const T* src, T* dst) {
  const int64_t K = k_ * k_ * in_ch_, rows = n * out_x_ * out_y_;
  grow(cols_, rows * K);
  T* col = cols_.data();
  for (int64_t i = 0; i < n; ++i) {
    const T* img = src + i * in_size();
    for (int64_t x = 0; x < out_x_; ++x)
      for (int64_t y = 0; y < out_y_; ++y)
        for (int64_t dx = 0; dx < k_; ++dx) {
          // The k cells (x+dx, y..y+k-1) are contiguous in channels-last layout.
          const T* p = img + ((x + dx) * in_y_ + y) * in_ch_;
          col = std::copy_n(p, k_ * in_ch_, col);
        }
  }
  lin_.forward(core::ViewT<const T>(cols_.data(), core::Shape{rows, K}),
               core::ViewT<T>(dst, core::Shape{rows, out_ch_}));
}

template <class T>
void Conv2dT<T>::backward(int64_t n, const T* ddst, T* dsrc) {
  const int64_t K = k_ * k_ * in_ch_, rows = n * out_x_ * out_y_;
  T* dcol = nullptr;
  if (dsrc) {
    grow(dcols_, rows * K);
    dcol = dcols_.data();
  }
  lin_.backward(core::ViewT<const T>(cols_.data(), core::Shape{rows, K}),
                core::ViewT<const T>(ddst, core::Shape{rows, out_ch_}),
                core::ViewT<T>(dcol, core::Shape{rows, K}));
  if (!dsrc) return;
  std::fill_n(dsrc, n * in_size(), T(0));
  const T* dc = dcols_.data();
  for (int64_t i = 0; i < n; ++i) {
    T* img = dsrc + i * in_size();
    for (int64_t x = 0; x < out_x_; ++x)
      for (int64_t y = 0; y < out_y_; ++y)
        for (int64_t dx = 0; dx < k_; ++dx) {
          T* p = img + ((x + dx) * in_y_ + y) * in_ch_;
          for (int64_t j = 0; j < k_ * in_ch_; ++j) p[j] += dc[j];
          dc += k_ * in_ch_;
        }
  }
}

template <class T>
MaxPool2dT<T>::MaxPool2dT(int64_t channels, int64_t kernel, int64_t in_x, int64_t in_y)
    : ch_(channels), k_(kernel), in_x_(in_x), in_y_(in_y), out_x_(in_x / kernel),
      out_y_(in_y / kernel) {
  SB_CHECK(kernel >= 1 && out_x_ >= 1 && out_y_ >= 1,
           "MaxPool2d: a {}x{} window does not fit a {}x{} image", kernel, kernel, in_x, in_y);
}

template <class T>
void MaxPool2dT<T>::forward(int64_t n, const T* src, T* dst) {
  grow(arg_, n * out_size());
  int32_t* arg = arg_.data();
  for (int64_t i = 0; i < n; ++i) {
    const T* img = src + i * in_size();
    for (int64_t x = 0; x < out_x_; ++x)
      for (int64_t y = 0; y < out_y_; ++y)
        for (int64_t c = 0; c < ch_; ++c) {
          int64_t best = ((x * k_) * in_y_ + y * k_) * ch_ + c;
          for (int64_t dx = 0; dx < k_; ++dx)
            for (int64_t dy = 0; dy < k_; ++dy) {
              const int64_t at = ((x * k_ + dx) * in_y_ + y * k_ + dy) * ch_ + c;
              if (img[at] > img[best]) best = at;
            }
          *dst++ = img[best];
          *arg++ = static_cast<int32_t>(best);
        }
  }
}

template <class T>
void MaxPool2dT<T>::backward(int64_t n, const T* ddst, T* dsrc) const {
  std::fill_n(dsrc, n * in_size(), T(0));
  const int32_t* arg = arg_.data();
  for (int64_t i = 0; i < n; ++i) {
    T* img = dsrc + i * in_size();
    for (int64_t j = 0; j < out_size(); ++j) img[*arg++] += *ddst++;
  }
}

template <class T>
void relu_forward(int64_t n, T* x) {
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] > T(0) ? x[i] : T(0);
}

template <class T>
void relu_backward(int64_t n, const T* y, T* dy) {
  for (int64_t i = 0; i < n; ++i)
    if (!(y[i] > T(0))) dy[i] = T(0);
}

template class Conv2dT<float>;
template class Conv2dT<double>;
template class MaxPool2dT<float>;
template class MaxPool2dT<double>;
template void relu_forward<float>(int64_t, float*);
template void relu_forward<double>(int64_t, double*);
template void relu_backward<float>(int64_t, const float*, float*);
template void relu_backward<double>(int64_t, const double*, double*);

}  // namespace seqbench::rl
