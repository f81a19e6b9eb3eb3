// How the recurrent layers use the OpenMP team.
//
// Batch rows of a recurrent layer never interact inside the time loop (the weights'
// gradients are summed over all steps and rows after it), so the drivers
// (Recurrent<Cell>, AttentiveRecurrent) give each thread a contiguous slice of rows and
// run the WHOLE time loop on it: one fork/join per forward or backward, no barrier per
// step, and each thread's per-step GEMMs run single-threaded on its slice (oneDNN and
// OpenBLAS do not fork inside a parallel region). A per-step fork/join costs a few
// microseconds on an idle machine, and far more when another job holds the second
// core; a whole-loop slice pays that once.
//
// Only layers with enough work per step split their rows:
//   kRowParallelMin     elements of per-step elementwise math (B x 4H gates, B x H)
//   kAttendParallelMin  attention work B x attended states x H (rel/mem attention)
// Below both, the loop runs on the calling thread (the papers' B=10, H=128 copy
// setting does; the pMNIST shape B=100 does not). Big GEMMs outside the time loop
// decide for themselves (backend/gemm.cpp).
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <exception>

namespace seqbench::nn {

inline constexpr int64_t kRowParallelMin = int64_t(1) << 15;
inline constexpr int64_t kAttendParallelMin = int64_t(1) << 16;

// Calls f(r0, r1) for contiguous slices [r0, r1) covering [0, b): one slice per thread
// of the team when `split` holds (and a team is available), else f(0, b) here. The
// first exception thrown by any slice is rethrown after the region (an exception may
// not leave an OpenMP region).
template <class F>
void for_row_slices(int64_t b, bool split, F&& f) {
  if (!split || b < 2 || omp_in_parallel() || omp_get_max_threads() < 2) {
    f(int64_t(0), b);
    return;
  }
  std::exception_ptr error;
#pragma omp parallel
  {
    const int64_t n = omp_get_num_threads(), i = omp_get_thread_num();
    const int64_t r0 = b * i / n, r1 = b * (i + 1) / n;
    try {
      if (r1 > r0) f(r0, r1);
    } catch (...) {
#pragma omp critical(seqbench_row_slices)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

// dst[j] += Σ_r src[r·ld + j] for j < cols (a bias gradient: the column sums of the
// N x cols matrix dL/da over all steps and rows). Columns are split across the team in
// blocks, each summed over the rows in row order, so the result does not depend on
// the thread count. Memory-bound: at pMNIST's N = 78400 rows x 512 it reads 160 MB, so
// it runs on both cores.
template <class T>
void add_column_sums(int64_t n, int64_t cols, const T* src, int64_t ld, T* dst) {
  constexpr int64_t kBlock = 64;
  const int64_t blocks = (cols + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (n * cols >= kRowParallelMin)
  for (int64_t bi = 0; bi < blocks; ++bi) {
    const int64_t c0 = bi * kBlock, w = std::min(kBlock, cols - c0);
    T acc[kBlock] = {};
    for (int64_t r = 0; r < n; ++r) {
      const T* row = src + r * ld + c0;
#pragma omp simd
      for (int64_t j = 0; j < w; ++j) acc[j] += row[j];
    }
    for (int64_t j = 0; j < w; ++j) dst[c0 + j] += acc[j];
  }
}

}  // namespace seqbench::nn
