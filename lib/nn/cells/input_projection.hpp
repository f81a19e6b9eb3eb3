// The input side of every recurrent cell: one GEMM over all T·B rows.
//   forward   xp (N, G) = x (N, I) w (I, G) + b (G)
//   backward  dx (N, I) = dxp w^T,  dw += x^T dxp,  db += Σ_rows dxp
#pragma once

#include <algorithm>
#include <cstdint>

#include "backend/gemm.hpp"
#include "nn/parallel.hpp"

namespace seqbench::nn {

// b may be null (no bias).
template <class T>
void project_input(int64_t n, int64_t in, int64_t g, const T* x, const T* w, const T* b, T* xp) {
  if (b)
    for (int64_t r = 0; r < n; ++r) std::copy_n(b, g, xp + r * g);
  backend::gemm<T>(backend::Trans::N, backend::Trans::N, n, g, in, T(1), x, in, w, g,
                   b ? T(1) : T(0), xp, g);
}

// dx (overwritten) and db may be null (not needed / no bias); dw accumulates.
template <class T>
void project_input_backward(int64_t n, int64_t in, int64_t g, const T* x, const T* w,
                            const T* dxp, T* dx, T* dw, T* db) {
  using backend::Trans;
  if (dx) backend::gemm<T>(Trans::N, Trans::T, n, in, g, T(1), dxp, g, w, g, T(0), dx, in);
  backend::gemm<T>(Trans::T, Trans::N, in, g, n, T(1), x, in, dxp, g, T(1), dw, g);
  if (db) add_column_sums(n, g, dxp, g, db);
}

}  // namespace seqbench::nn
