#include "nn/ffn.hpp"

#include <cmath>

namespace seqbench::nn {

namespace {

template <class T>
void ensure(core::TensorT<T>& t, core::Shape s) {
  if (!(t.shape() == s)) t.resize(s);
}

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

}  // namespace

Activation parse_activation(const std::string& name) {
  if (name == "relu") return Activation::Relu;
  if (name == "gelu") return Activation::Gelu;
  throw core::UsageError(fmt::format("activation: unknown '{}' (valid: relu, gelu)", name));
}

template <class T>
void init_normal(LinearT<T>& lin, core::Rng& rng, double sd) {
  auto& w = lin.w();
  for (int64_t i = 0; i < w.numel(); ++i) w.value[i] = static_cast<T>(rng.normal() * sd);
  if (auto* b = lin.b())
    for (int64_t i = 0; i < b->numel(); ++i) b->value[i] = T(0);
}

template <class T>
FeedForwardT<T>::FeedForwardT(core::ParamStoreT<T>& ps, const std::string& name, int64_t dim,
                              int64_t inner, Activation act)
    : in_(ps, name + ".in", dim, inner), out_(ps, name + ".out", inner, dim), act_(act) {}

template <class T>
void FeedForwardT<T>::init(core::Rng& rng, double sd, double out_std) {
  init_normal(in_, rng, sd);
  init_normal(out_, rng, out_std);
}

template <class T>
void FeedForwardT<T>::forward(core::ViewT<const T> src, core::ViewT<T> dst,
                              FeedForwardCache<T>& cache) const {
  const int64_t n = src.dim(0), F = inner();
  ensure(cache.u, core::Shape{n, F});
  ensure(cache.a, core::Shape{n, F});
  in_.forward(src, cache.u.view());
  const T* u = cache.u.data();
  T* a = cache.a.data();
  const int64_t m = n * F;
  if (act_ == Activation::Relu) {
    for (int64_t i = 0; i < m; ++i) a[i] = u[i] > T(0) ? u[i] : T(0);
  } else {
#pragma omp parallel for schedule(static) if (m > 65536)
    for (int64_t i = 0; i < m; ++i)
      a[i] = static_cast<T>(0.5 * double(u[i]) * (1.0 + std::erf(double(u[i]) * kInvSqrt2)));
  }
  out_.forward(cache.a.cview(), dst);
}

template <class T>
void FeedForwardT<T>::backward(core::ViewT<const T> src, core::ViewT<const T> ddst,
                               FeedForwardCache<T>& cache, core::ViewT<T> dsrc) {
  const int64_t n = src.dim(0), F = inner();
  core::check_shape(cache.u.cview(), core::Shape{n, F}, "FeedForward.backward cache");
  ensure(cache.du, core::Shape{n, F});
  out_.backward(cache.a.cview(), ddst, cache.du.view());  // du holds da for now
  const T* u = cache.u.data();
  T* du = cache.du.data();
  const int64_t m = n * F;
  if (act_ == Activation::Relu) {
    for (int64_t i = 0; i < m; ++i)
      if (!(u[i] > T(0))) du[i] = T(0);
  } else {
#pragma omp parallel for schedule(static) if (m > 65536)
    for (int64_t i = 0; i < m; ++i) {
      const double x = double(u[i]);
      const double d = 0.5 * (1.0 + std::erf(x * kInvSqrt2)) + x * kInvSqrt2Pi * std::exp(-0.5 * x * x);
      du[i] = static_cast<T>(double(du[i]) * d);
    }
  }
  in_.backward(src, cache.du.cview(), dsrc);
}

template void init_normal<float>(LinearT<float>&, core::Rng&, double);
template void init_normal<double>(LinearT<double>&, core::Rng&, double);
template class FeedForwardT<float>;
template class FeedForwardT<double>;

}  // namespace seqbench::nn
