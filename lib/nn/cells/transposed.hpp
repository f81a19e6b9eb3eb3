// A transposed copy of a recurrent weight matrix, for the per-step GEMMs that multiply
// by its transpose (dL/dh_{t-1} = dA w_hᵀ in every cell's step_backward).
//
// Why: oneDNN's sgemm runs A·B faster than A·Bᵀ at the recurrent shapes (one thread,
// docs/performance.md): 32.6 against 41.3 us at 50x512 · 512x128, 2.9 against 4.0 ms at
// char-PTB's 64x4096 · 4096x1024. The drivers call the cell's prepare_backward() once
// per backward, which refreshes the copy (the weights change after every optimizer
// step); the time loop then reads it.
#pragma once

#include <cstdint>
#include <vector>

#include "core/check.hpp"

namespace seqbench::nn {

template <class T>
class Transposed {
 public:
  // w (rows, cols) -> the copy (cols, rows).
  void refresh(const T* w, int64_t rows, int64_t cols) {
    wt_.resize(static_cast<size_t>(rows * cols));
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) wt_[static_cast<size_t>(j * rows + i)] = w[i * cols + j];
  }
  // The (cols, rows) copy; refresh() must have run.
  const T* data() const {
    SB_CHECK(!wt_.empty(), "transposed weights used before prepare_backward() (internal)");
    return wt_.data();
  }

 private:
  std::vector<T> wt_;
};

}  // namespace seqbench::nn
