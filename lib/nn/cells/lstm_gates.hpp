// The LSTM's elementwise step for one batch row, shared by every LSTM-based cell
// (LstmCell, MomentumLstmCell). Gate order i, f, c~ (g), o as oneDNN.
#pragma once

#include <cstdint>

#include "backend/gemm.hpp"
#include "nn/fast_math.hpp"

namespace seqbench::nn {

// The fused LSTM step (LstmCell, MomentumLstmCell; docs/performance.md, "12. The LSTM
// step in row blocks"): with R > 0 rows per block, step_forward runs the recurrent
// product of R rows (backend::gemm_small: libxsmm's cached kernel, W_h read in place) and
// at once the gate math on those rows while they are in L1, block after block;
// step_backward runs the gate backward of R rows and at once their dA w_hᵀ. 0: the
// unfused step (one GEMM for all rows of the thread's slice, then the gate loop). The
// default, from measurement, is 0 on every ISA (lstm.cpp: even on AVX-512, slower on
// AVX2); SEQBENCH_LSTM_ROWS=<R> in the environment sets it at start-up, for measuring.
int64_t lstm_fused_rows();
// rows >= 0 sets it for the process (0 = unfused); -1 restores the default. Not meant to be
// changed while a step runs.
void set_lstm_fused_rows(int64_t rows);

// A step's row blocks: one block of all b rows on backend::gemm (unfused), or blocks of
// lstm_fused_rows() rows on backend::gemm_small.
struct LstmBlocks {
  int64_t rows;  // rows per block (the last may have fewer)
  bool fused;
  explicit LstmBlocks(int64_t b) {
    const int64_t r = lstm_fused_rows();
    fused = r > 0;
    rows = fused && r < b ? r : b;
  }
  template <class T>
  void gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* bm, int64_t ldb,
            T* c, int64_t ldc) const {
    using backend::Trans;
    if (fused)
      backend::gemm_small<T>(Trans::N, Trans::N, m, n, k, T(1), a, lda, bm, ldb, T(0), c, ldc);
    else
      backend::gemm<T>(Trans::N, Trans::N, m, n, k, T(1), a, lda, bm, ldb, T(0), c, ldc);
  }
};

// gates (4H): pre-activations in, activated gates [i f g o] out; c_prev (H) ->
// c (H) = f c_prev + i g, tc (H) = tanh(c), h (H) = o tc.
template <class T>
inline void lstm_gates_forward(int64_t H, T* gates, const T* c_prev, T* c, T* tc, T* h) {
  // omp simd: iterations are independent even when da aliases gates (each j reads
  // and writes only its own indices), which the compiler cannot prove by itself.
#pragma omp simd
  for (int64_t j = 0; j < H; ++j) {
    const T i = sigmoid(gates[j]);
    const T f = sigmoid(gates[H + j]);
    const T g = fast_tanh(gates[2 * H + j]);
    const T o = sigmoid(gates[3 * H + j]);
    const T cn = f * c_prev[j] + i * g;
    const T t = fast_tanh(cn);
    gates[j] = i;
    gates[H + j] = f;
    gates[2 * H + j] = g;
    gates[3 * H + j] = o;
    c[j] = cn;
    tc[j] = t;
    h[j] = o * t;
  }
}

// Backward of lstm_gates_forward: gates (4H, activated), tc (H), c_prev (H), dh, dc (H)
// -> da (4H) = dL/d(pre-activations), dc_prev (H). da may alias gates (each index is
// read before it is written).
template <class T>
inline void lstm_gates_backward(int64_t H, const T* gates, const T* tc, const T* c_prev,
                                const T* dh, const T* dc, T* da, T* dc_prev) {
#pragma omp simd
  for (int64_t j = 0; j < H; ++j) {
    const T i = gates[j], f = gates[H + j], g = gates[2 * H + j], o = gates[3 * H + j];
    const T t = tc[j];
    const T dct = dc[j] + dh[j] * o * (T(1) - t * t);
    da[j] = dct * g * i * (T(1) - i);
    da[H + j] = dct * c_prev[j] * f * (T(1) - f);
    da[2 * H + j] = dct * i * (T(1) - g * g);
    da[3 * H + j] = dh[j] * t * o * (T(1) - o);
    dc_prev[j] = dct * f;
  }
}

}  // namespace seqbench::nn
