// A small vector type over AVX-512 or AVX2+FMA floats, for the few loops whose vector
// form GCC does not find or makes slow (nn/additive_energy.hpp, and the dot products
// below): `dot`, a dot product whose lanes are added as a tree, and `add_rows`, a sum of
// scaled rows kept in registers.
//
// Why `dot` and not `#pragma omp simd reduction(+ : s)`: GCC 12 ends such a loop by
// storing the vector of partial sums and adding its lanes one at a time, in order (16
// dependent scalar adds for a 512-bit float vector). For a dot product of 16 to 64
// elements, which the mixers take once per state row and token (mamba's d_state, a
// DeltaNet or mLSTM head's width), that tail is most of the work (docs/performance.md,
// section 15). Here the lanes are added pairwise. The sum's order is fixed by this code
// for a given vector width (AVX-512 and AVX2 builds differ in the last bits), not left to
// the compiler.
// SEQBENCH_SIMD is defined where Vec exists (AVX-512, or AVX2 with FMA); other builds,
// and double, take the plain loop.
#pragma once

#include <cstdint>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#define SEQBENCH_SIMD 1
#endif

namespace seqbench::nn {

namespace simd {

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
inline float sum8(__m256 x) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
  const __m128 h = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(h, _mm_shuffle_ps(h, h, 1)));
}
#endif

#if defined(__AVX512F__)
// GCC 12.2's _mm512_max_ps/_min_ps and its 256-bit extracts pass an undefined vector as
// the mask source and set off -Wmaybe-uninitialized; the masked forms with every lane set
// are the same instructions with a defined source, and the sum goes through memory.
struct Vec {
  using R = __m512;
  static constexpr int kWidth = 16;
  static R load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, R x) { _mm512_storeu_ps(p, x); }
  static R set1(float x) { return _mm512_set1_ps(x); }
  static R add(R a, R b) { return _mm512_add_ps(a, b); }
  static R mul(R a, R b) { return _mm512_mul_ps(a, b); }
  static R div(R a, R b) { return _mm512_div_ps(a, b); }
  static R fma(R a, R b, R c) { return _mm512_fmadd_ps(a, b, c); }     // a b + c
  static R fnma(R a, R b, R c) { return _mm512_fnmadd_ps(a, b, c); }   // c - a b
  static R max(R a, R b) { return _mm512_mask_max_ps(b, __mmask16(0xffff), a, b); }
  static R min(R a, R b) { return _mm512_mask_min_ps(b, __mmask16(0xffff), a, b); }
  static float sum(R x) {
    alignas(64) float t[16];
    _mm512_store_ps(t, x);
    return sum8(_mm256_add_ps(_mm256_load_ps(t), _mm256_load_ps(t + 8)));
  }
};
#elif defined(__AVX2__) && defined(__FMA__)
struct Vec {
  using R = __m256;
  static constexpr int kWidth = 8;
  static R load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, R x) { _mm256_storeu_ps(p, x); }
  static R set1(float x) { return _mm256_set1_ps(x); }
  static R add(R a, R b) { return _mm256_add_ps(a, b); }
  static R mul(R a, R b) { return _mm256_mul_ps(a, b); }
  static R div(R a, R b) { return _mm256_div_ps(a, b); }
  static R fma(R a, R b, R c) { return _mm256_fmadd_ps(a, b, c); }
  static R fnma(R a, R b, R c) { return _mm256_fnmadd_ps(a, b, c); }
  static R max(R a, R b) { return _mm256_max_ps(a, b); }
  static R min(R a, R b) { return _mm256_min_ps(a, b); }
  static float sum(R x) { return sum8(x); }
};
#endif

}  // namespace simd

// Σ_i a[i] b[i].
template <class T>
inline T dot(int64_t n, const T* a, const T* b) {
  T s = T(0);
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

#ifdef SEQBENCH_SIMD
template <>
inline float dot<float>(int64_t n, const float* a, const float* b) {
  using simd::Vec;
  constexpr int W = Vec::kWidth;
  // Two accumulators, so consecutive multiply-adds do not wait on each other.
  Vec::R acc0 = Vec::set1(0.0f), acc1 = Vec::set1(0.0f);
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    acc0 = Vec::fma(Vec::load(a + i), Vec::load(b + i), acc0);
    acc1 = Vec::fma(Vec::load(a + i + W), Vec::load(b + i + W), acc1);
  }
  if (i + W <= n) {
    acc0 = Vec::fma(Vec::load(a + i), Vec::load(b + i), acc0);
    i += W;
  }
  float s = Vec::sum(Vec::add(acc0, acc1));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}
#endif

// y[j] += Σ_k coef[k] row_k[j] for j < n, with row_k = base + k stride, each element's
// terms added in order k = 0..K-1 (one multiply-add each, as `y[j] += row[j] * c` compiles).
// The float form keeps up to four vectors of y in registers across all K rows instead of
// loading and storing y once per row (sLSTM's per-head R h and Rᵀ dpre, K = n = 64 and
// less, where that traffic was most of the mixer's time).
template <class T>
inline void add_rows(int64_t n, int64_t K, const T* base, int64_t stride, const T* coef, T* y) {
  for (int64_t k = 0; k < K; ++k) {
    const T* row = base + k * stride;
    const T c = coef[k];
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) y[j] += row[j] * c;
  }
}

#ifdef SEQBENCH_SIMD
template <>
inline void add_rows<float>(int64_t n, int64_t K, const float* base, int64_t stride,
                            const float* coef, float* y) {
  using simd::Vec;
  constexpr int W = Vec::kWidth;
  int64_t j = 0;
  for (; j + 4 * W <= n; j += 4 * W) {
    Vec::R a0 = Vec::load(y + j), a1 = Vec::load(y + j + W), a2 = Vec::load(y + j + 2 * W),
           a3 = Vec::load(y + j + 3 * W);
    for (int64_t k = 0; k < K; ++k) {
      const float* row = base + k * stride + j;
      const Vec::R c = Vec::set1(coef[k]);
      a0 = Vec::fma(Vec::load(row), c, a0);
      a1 = Vec::fma(Vec::load(row + W), c, a1);
      a2 = Vec::fma(Vec::load(row + 2 * W), c, a2);
      a3 = Vec::fma(Vec::load(row + 3 * W), c, a3);
    }
    Vec::store(y + j, a0);
    Vec::store(y + j + W, a1);
    Vec::store(y + j + 2 * W, a2);
    Vec::store(y + j + 3 * W, a3);
  }
  for (; j + W <= n; j += W) {
    Vec::R a = Vec::load(y + j);
    for (int64_t k = 0; k < K; ++k) a = Vec::fma(Vec::load(base + k * stride + j), Vec::set1(coef[k]), a);
    Vec::store(y + j, a);
  }
  for (; j < n; ++j) {
    float a = y[j];
    for (int64_t k = 0; k < K; ++k) a = __builtin_fmaf(base[k * stride + j], coef[k], a);
    y[j] = a;
  }
}
#endif

}  // namespace seqbench::nn
