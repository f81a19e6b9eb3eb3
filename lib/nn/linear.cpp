#include "nn/linear.hpp"

#include <cmath>

#include "backend/gemm.hpp"
#include "nn/parallel.hpp"

namespace seqbench::nn {

using backend::Trans;

template <class T>
LinearT<T>::LinearT(core::ParamStoreT<T>& ps, const std::string& name, int64_t in, int64_t out,
                    bool bias)
    : in_(in), out_(out), w_(&ps.add(name + ".w", core::Shape{out, in})) {
  SB_CHECK(in > 0 && out > 0, "{}: sizes must be positive, got in={} out={}", name, in, out);
  if (bias) b_ = &ps.add(name + ".b", core::Shape{out});
}

template <class T>
void LinearT<T>::init(core::Rng& rng) {
  const double a = 1.0 / std::sqrt(static_cast<double>(in_));
  for (int64_t i = 0; i < w_->numel(); ++i) w_->value[i] = static_cast<T>(rng.uniform(-a, a));
  if (b_)
    for (int64_t i = 0; i < b_->numel(); ++i) b_->value[i] = static_cast<T>(rng.uniform(-a, a));
}

template <class T>
void LinearT<T>::forward(core::ViewT<const T> src, core::ViewT<T> dst) const {
  const int64_t n = src.dim(0);
  core::check_shape(src, core::Shape{n, in_}, "Linear.forward src");
  core::check_shape(dst, core::Shape{n, out_}, "Linear.forward dst");
  if (b_) {
    for (int64_t r = 0; r < n; ++r)
      for (int64_t o = 0; o < out_; ++o) dst.data[r * out_ + o] = b_->value[o];
  }
  backend::gemm<T>(Trans::N, Trans::T, n, out_, in_, T(1), src.data, in_, w_->value, in_,
                   b_ ? T(1) : T(0), dst.data, out_);
}

template <class T>
void LinearT<T>::backward(core::ViewT<const T> src, core::ViewT<const T> ddst,
                          core::ViewT<T> dsrc) {
  const int64_t n = src.dim(0);
  core::check_shape(ddst, core::Shape{n, out_}, "Linear.backward ddst");
  if (dsrc.data) {
    core::check_shape(dsrc, core::Shape{n, in_}, "Linear.backward dsrc");
    backend::gemm<T>(Trans::N, Trans::N, n, in_, out_, T(1), ddst.data, out_, w_->value, in_,
                     T(0), dsrc.data, in_);
  }
  backend::gemm<T>(Trans::T, Trans::N, out_, in_, n, T(1), ddst.data, out_, src.data, in_, T(1),
                   w_->grad, in_);
  if (b_) add_column_sums(n, out_, ddst.data, out_, b_->grad);
}

template class LinearT<float>;
template class LinearT<double>;

}  // namespace seqbench::nn
