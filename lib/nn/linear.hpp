// Linear layer: dst (N, O) = src (N, I) w^T + b, with w (O, I) and b (O).
// Shapes: N rows (e.g. T*B), I in, O out. Backward accumulates dw and db.
#pragma once

#include <string>

#include "core/param_store.hpp"
#include "core/rng.hpp"

namespace seqbench::nn {

template <class T>
class LinearT {
 public:
  LinearT(core::ParamStoreT<T>& ps, const std::string& name, int64_t in, int64_t out,
          bool bias = true);

  // PyTorch's default: w, b ~ U(-1/sqrt(I), 1/sqrt(I)). Call after ps.finalize().
  void init(core::Rng& rng);

  // src (N, I) -> dst (N, O).
  void forward(core::ViewT<const T> src, core::ViewT<T> dst) const;
  // ddst (N, O) -> dsrc (N, I) (overwritten; skipped when dsrc.data is null);
  // dw += ddst^T src, db += column sums of ddst.
  void backward(core::ViewT<const T> src, core::ViewT<const T> ddst, core::ViewT<T> dsrc);

  int64_t in() const { return in_; }
  int64_t out() const { return out_; }
  core::ParamT<T>& w() { return *w_; }
  core::ParamT<T>* b() { return b_; }

 private:
  int64_t in_, out_;
  core::ParamT<T>* w_;
  core::ParamT<T>* b_ = nullptr;
};

using Linear = LinearT<float>;

}  // namespace seqbench::nn
