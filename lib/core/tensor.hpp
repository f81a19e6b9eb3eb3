// Tensor (owning) and View (non-owning), f32 by default, row-major, rank <= 4.
// Kernels are templated on the scalar so gradient checks can run in double:
// TensorT<double>, ViewT<double>. Shapes are checked at layer boundaries with
// check_shape(); element access is unchecked in Release.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "core/check.hpp"

namespace seqbench::core {

struct Shape {
  std::array<int64_t, 4> d{0, 0, 0, 0};
  int rank = 0;

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) {
    SB_CHECK(dims.size() <= 4, "rank {} > 4 is not supported", dims.size());
    for (int64_t x : dims) d[rank++] = x;
  }
  int64_t operator[](int i) const { return d[i]; }
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= d[i];
    return n;
  }
  bool operator==(const Shape& o) const {
    if (rank != o.rank) return false;
    for (int i = 0; i < rank; ++i)
      if (d[i] != o.d[i]) return false;
    return true;
  }
  std::string str() const;  // "(3, 4)"
};

template <class T>
struct ViewT {
  T* data = nullptr;
  Shape shape;

  ViewT() = default;
  ViewT(T* p, Shape s) : data(p), shape(s) {}
  // A mutable view converts to a const one.
  template <class U, class = std::enable_if_t<std::is_same_v<T, const U>>>
  ViewT(const ViewT<U>& o) : data(o.data), shape(o.shape) {}

  int64_t numel() const { return shape.numel(); }
  int64_t dim(int i) const { return shape[i]; }
  T& operator[](int64_t i) const { return data[i]; }
  T& operator()(int64_t i, int64_t j) const { return data[i * shape[1] + j]; }
  T& operator()(int64_t i, int64_t j, int64_t k) const {
    return data[(i * shape[1] + j) * shape[2] + k];
  }
  // Slice along the first dimension: rows [i] -> rank-1 lower view.
  ViewT sub(int64_t i) const {
    SB_CHECK(shape.rank >= 2 && i >= 0 && i < shape[0], "sub({}) of shape {}", i, shape.str());
    Shape s;
    for (int k = 1; k < shape.rank; ++k) s.d[s.rank++] = shape[k];
    return ViewT(data + i * s.numel(), s);
  }
  // Rows [begin, end) of the first dimension, same rank.
  ViewT rows(int64_t begin, int64_t end) const {
    SB_CHECK(0 <= begin && begin <= end && end <= shape[0], "rows({}, {}) of shape {}", begin,
             end, shape.str());
    Shape s = shape;
    s.d[0] = end - begin;
    return ViewT(data + begin * (shape.numel() / (shape[0] ? shape[0] : 1)), s);
  }
  ViewT reshape(Shape s) const {
    SB_CHECK(s.numel() == shape.numel(), "reshape {} -> {} changes the size", shape.str(),
             s.str());
    return ViewT(data, s);
  }
};

template <class T>
class TensorT {
 public:
  TensorT() = default;
  explicit TensorT(Shape s) : buf_(static_cast<size_t>(s.numel()), T(0)), shape_(s) {}

  void resize(Shape s) {
    shape_ = s;
    buf_.assign(static_cast<size_t>(s.numel()), T(0));
  }
  void zero() { std::fill(buf_.begin(), buf_.end(), T(0)); }

  T* data() { return buf_.data(); }
  const T* data() const { return buf_.data(); }
  const Shape& shape() const { return shape_; }
  int64_t numel() const { return shape_.numel(); }
  int64_t dim(int i) const { return shape_[i]; }
  T& operator[](int64_t i) { return buf_[i]; }
  const T& operator[](int64_t i) const { return buf_[i]; }

  ViewT<T> view() { return ViewT<T>(buf_.data(), shape_); }
  ViewT<const T> view() const { return ViewT<const T>(buf_.data(), shape_); }
  ViewT<const T> cview() const { return view(); }
  operator ViewT<T>() { return view(); }
  operator ViewT<const T>() const { return view(); }

 private:
  std::vector<T> buf_;
  Shape shape_;
};

using Tensor = TensorT<float>;
using View = ViewT<float>;
using ConstView = ViewT<const float>;

// Throws "<what>: expected shape (a, b), got (c, d)" unless v has exactly that shape.
template <class V>
void check_shape(const V& v, Shape expected, const char* what) {
  SB_CHECK(v.shape == expected, "{}: expected shape {}, got {}", what, expected.str(),
           v.shape.str());
}

}  // namespace seqbench::core
