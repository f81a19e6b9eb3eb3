// The LSTM's elementwise step for one batch row, shared by every LSTM-based cell
// (LstmCell, MomentumLstmCell). Gate order i, f, c~ (g), o as oneDNN.
#pragma once

#include <cstdint>

#include "nn/fast_math.hpp"

namespace seqbench::nn {

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
