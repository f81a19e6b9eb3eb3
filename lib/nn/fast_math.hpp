// Vectorisable exp / sigmoid / tanh for the per-step elementwise kernels.
//
// Why: libm's expf/tanhf are scalar calls; in a small-batch LSTM step (B=10, H=128)
// they took ~45% of a training step (perf, docs/performance.md). These versions are
// branch-free, so GCC vectorises the loops that call them (SSE2 in the portable
// build, AVX-512 with -march=native).
//
// float: Cephes-style range reduction exp(x) = 2^n e^r, |r| <= ln2/2, degree-6
// polynomial; relative error < 2e-7 over the clamped range [-87.3, 88.3] (outside it
// the result saturates at ~1e-38 / ~2e38; NaN stays NaN, so divergence is still seen).
// tanh is a rational minimax approximation x·p(x²)/q(x²) (degrees 13/6, the
// coefficients Eigen's float tanh uses), with no exp and no cancellation near 0:
// absolute error < 4e-7 (2.7e-7 with FMA), and about half the cost of the earlier
// exp-based form (0.28 against 0.52 ns per element in rel_lstm's attention loop,
// docs/performance.md).
// double: the libm functions (the gradient checks run in double and want them exact).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace seqbench::nn {

inline float fast_exp(float x) {
  x = x < -87.3f ? -87.3f : x;
  x = x > 88.3f ? 88.3f : x;
  // Round x log2(e) to the nearest integer n with the 1.5 * 2^23 trick (no SSE4.1
  // needed): t = 1.5 * 2^23 + n holds n in its low mantissa bits.
  const float magic = 12582912.0f;
  const float t = x * 1.44269504088896341f + magic;
  const float n = t - magic;
  const float r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // 2^n from t's bits, not from a float-to-int cast of n, which is undefined for NaN
  // (the result is then NaN through p whatever the bits are).
  const uint32_t e = (std::bit_cast<uint32_t>(t) - std::bit_cast<uint32_t>(magic) + 127u) << 23;
  return p * std::bit_cast<float>(e);
}
inline double fast_exp(double x) { return std::exp(x); }

template <class T>
inline T sigmoid(T x) {
  return T(1) / (T(1) + fast_exp(-x));
}

inline float fast_tanh(float x) {
  // x is clamped to ±7.905..., where the quotient rounds to ±1 (NaN passes through).
  const float c = 7.90531110763549805f;
  x = x < -c ? -c : x;
  x = x > c ? c : x;
  const float x2 = x * x;
  float p = -2.76076847742355e-16f;
  p = p * x2 + 2.00018790482477e-13f;
  p = p * x2 + -8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  float q = 1.19825839466702e-06f;
  q = q * x2 + 1.18534705686654e-04f;
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  return x * p / q;
}
inline double fast_tanh(double x) { return std::tanh(x); }

// log(1 + y) for y in [0, 1] (what softplus and log σ need: y = e^-|x|), branch-free so
// that the loops calling it vectorise. log(1 + y) = 2 atanh(s) with s = y / (2 + y) in
// [0, 1/3], no cancellation for small y, and the odd series 2 s (1 + s²/3 + ... + s¹²/13)
// leaves under 1e-8 of relative error at s = 1/3; with the division's and the terms'
// rounding the result is within 3e-7 relative of log1p (FastMath.Log1pUnit). NaN stays
// NaN. Outside [0, 1] the series converges more slowly: do not use it there.
inline float log1p_unit(float y) {
  const float s = y / (2.0f + y), s2 = s * s;
  float p = 1.0f / 13.0f;
  p = p * s2 + 1.0f / 11.0f;
  p = p * s2 + 1.0f / 9.0f;
  p = p * s2 + 1.0f / 7.0f;
  p = p * s2 + 1.0f / 5.0f;
  p = p * s2 + 1.0f / 3.0f;
  p = p * s2 + 1.0f;
  return 2.0f * s * p;
}
inline double log1p_unit(double y) { return std::log1p(y); }

}  // namespace seqbench::nn
