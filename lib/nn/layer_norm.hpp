// Layer normalisation over the last dimension (Ba et al. 2016), with an optional gain g
// and bias b. Shapes: N rows, D features; every row is normalised on its own.
//
//   mu = mean_j x_j,   var = mean_j (x_j - mu)^2,   r = 1 / sqrt(var + eps)
//   x̂_j = (x_j - mu) r,   y_j = g_j x̂_j + b_j          (g = 1, b = 0 without affine)
// Backward, with ĝ_j = g_j dy_j:
//   dx_j = r (ĝ_j - mean_k ĝ_k - x̂_j mean_k (ĝ_k x̂_k)),   dg_j += Σ_rows dy_j x̂_j,
//   db_j += Σ_rows dy_j.
// The cache keeps mu and r per row (N each); x̂ is recomputed from src in backward, so
// the caller keeps src alive until then.
#pragma once

#include <string>
#include <vector>

#include "core/param_store.hpp"

namespace seqbench::nn {

// Per-row statistics kept from forward for backward: mean (N), rstd (N).
template <class T>
struct LayerNormCache {
  std::vector<T> mean, rstd;
};

// The kernels, also used without parameters (the routing model's Q/K normalisation).
// src, dst (n, d); gain, bias (d) or null (= 1, 0); mean, rstd (n) are written.
// dst may alias src.
template <class T>
void layer_norm_forward(const T* src, int64_t n, int64_t d, const T* gain, const T* bias,
                        double eps, T* dst, T* mean, T* rstd);
// src, ddst (n, d); dsrc (n, d) += the input gradient; dgain, dbias (d) += (skipped when
// null). dsrc must not alias src or ddst.
template <class T>
void layer_norm_backward(const T* src, const T* ddst, int64_t n, int64_t d, const T* gain,
                         const T* mean, const T* rstd, T* dsrc, T* dgain, T* dbias);

template <class T>
class LayerNormT {
 public:
  // Parameters "<name>.g" and "<name>.b" (D each) when affine.
  LayerNormT(core::ParamStoreT<T>& ps, const std::string& name, int64_t dim, bool affine = true,
             double eps = 1e-5);

  void init();  // g = 1, b = 0

  // src (N, D) -> dst (N, D); fills cache.
  void forward(core::ViewT<const T> src, core::ViewT<T> dst, LayerNormCache<T>& cache) const;
  // ddst (N, D) -> dsrc (N, D) accumulated (+=, so a residual branch can add into the
  // stream's gradient); dg, db +=. src and cache from the matching forward.
  void backward(core::ViewT<const T> src, core::ViewT<const T> ddst,
                const LayerNormCache<T>& cache, core::ViewT<T> dsrc);

  int64_t dim() const { return dim_; }
  double eps() const { return eps_; }
  core::ParamT<T>* gain() { return g_; }
  core::ParamT<T>* bias() { return b_; }

 private:
  int64_t dim_;
  double eps_;
  core::ParamT<T>* g_ = nullptr;
  core::ParamT<T>* b_ = nullptr;
};

}  // namespace seqbench::nn
