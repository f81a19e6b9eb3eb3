// The additive attention energy of the self-attentive RNNs (nn/recurrent/attentive.cpp),
//   e = Σ_j v_j tanh(q_j + u_j),
// and its backward for one upstream gradient de = dL/de:
//   with t_j = tanh(q_j + u_j):  dv_j += de t_j,  p_j = de v_j (1 - t_j²),  dq_j += p_j,  du_j += p_j.
// These two loops are most of rel_lstm's attention time (docs/performance.md).
//
// Why not the plain `omp simd` loops over fast_tanh: GCC 12 vectorises fast_tanh's clamp
// (x < -c ? -c : x, x > c ? c : x) as a compare and a blend per bound, because without
// -ffinite-math-only it does not turn a NaN-preserving select into vmaxps/vminps. Four
// extra instructions on top of ~15 make the energy loop ~30 % slower on AVX2 (0.32
// against 0.24 ns per element, one thread) and on AVX-512 (0.18 against 0.13). Here the
// float loops are written once over a small vector type whose max/min are the
// instructions themselves, with the operand order that keeps a NaN (max(lo, x) returns x
// when x is NaN). Each element goes through fast_tanh's clamp, polynomials and division
// in the same order, so both stay within its 4e-7 of tanh (they can differ in the last
// bits where the compiler fuses the scalar form's multiply-adds otherwise), and the sum's
// terms are added in another order than the compiler's reduction.
// AVX-512 and AVX2+FMA builds take these; other builds and double take the plain loops.
#pragma once

#include <cstdint>

#include "nn/fast_math.hpp"
#include "nn/simd.hpp"

namespace seqbench::nn {

namespace additive_detail {

// One element of the backward (the tail of the vector loop, and the generic loop).
template <class T>
inline void backward_one(T de, T v, T q, T u, T& dv, T& dq, T& du) {
  const T t = fast_tanh(q + u);
  dv += de * t;
  const T p = de * v * (T(1) - t * t);
  dq += p;
  du += p;
}

#ifdef SEQBENCH_SIMD
#define SEQBENCH_ADDITIVE_ENERGY_SIMD 1
using simd::Vec;

// fast_tanh(float) on a vector, operation for operation.
inline Vec::R tanh_vec(Vec::R x) {
  const float c = 7.90531110763549805f;
  x = Vec::max(Vec::set1(-c), x);  // NaN stays NaN: max/min return the second operand
  x = Vec::min(Vec::set1(c), x);
  const Vec::R x2 = Vec::mul(x, x);
  Vec::R p = Vec::set1(-2.76076847742355e-16f);
  p = Vec::fma(p, x2, Vec::set1(2.00018790482477e-13f));
  p = Vec::fma(p, x2, Vec::set1(-8.60467152213735e-11f));
  p = Vec::fma(p, x2, Vec::set1(5.12229709037114e-08f));
  p = Vec::fma(p, x2, Vec::set1(1.48572235717979e-05f));
  p = Vec::fma(p, x2, Vec::set1(6.37261928875436e-04f));
  p = Vec::fma(p, x2, Vec::set1(4.89352455891786e-03f));
  Vec::R q = Vec::set1(1.19825839466702e-06f);
  q = Vec::fma(q, x2, Vec::set1(1.18534705686654e-04f));
  q = Vec::fma(q, x2, Vec::set1(2.26843463243900e-03f));
  q = Vec::fma(q, x2, Vec::set1(4.89352518554385e-03f));
  return Vec::div(Vec::mul(x, p), q);
}
#endif

}  // namespace additive_detail

// Σ_j v_j tanh(q_j + u_j) over n elements.
template <class T>
inline T additive_energy(int64_t n, const T* v, const T* q, const T* u) {
  T e = T(0);
#pragma omp simd reduction(+ : e)
  for (int64_t j = 0; j < n; ++j) e += v[j] * fast_tanh(q[j] + u[j]);
  return e;
}

// dv, dq, du (n each) += the energy's gradients for upstream gradient de (see the top).
template <class T>
inline void additive_energy_backward(int64_t n, T de, const T* v, const T* q, const T* u, T* dv,
                                     T* dq, T* du) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j)
    additive_detail::backward_one(de, v[j], q[j], u[j], dv[j], dq[j], du[j]);
}

#ifdef SEQBENCH_ADDITIVE_ENERGY_SIMD
template <>
inline float additive_energy<float>(int64_t n, const float* v, const float* q, const float* u) {
  using additive_detail::Vec;
  Vec::R acc = Vec::set1(0.0f);
  int64_t j = 0;
  for (; j + Vec::kWidth <= n; j += Vec::kWidth)
    acc = Vec::fma(Vec::load(v + j),
                   additive_detail::tanh_vec(Vec::add(Vec::load(q + j), Vec::load(u + j))), acc);
  float e = Vec::sum(acc);
  for (; j < n; ++j) e += v[j] * fast_tanh(q[j] + u[j]);
  return e;
}

template <>
inline void additive_energy_backward<float>(int64_t n, float de, const float* v, const float* q,
                                            const float* u, float* dv, float* dq, float* du) {
  using additive_detail::Vec;
  const Vec::R vde = Vec::set1(de), one = Vec::set1(1.0f);
  int64_t j = 0;
  for (; j + Vec::kWidth <= n; j += Vec::kWidth) {
    const Vec::R t = additive_detail::tanh_vec(Vec::add(Vec::load(q + j), Vec::load(u + j)));
    Vec::store(dv + j, Vec::fma(vde, t, Vec::load(dv + j)));
    const Vec::R p = Vec::mul(Vec::mul(vde, Vec::load(v + j)), Vec::fnma(t, t, one));
    Vec::store(dq + j, Vec::add(Vec::load(dq + j), p));
    Vec::store(du + j, Vec::add(Vec::load(du + j), p));
  }
  for (; j < n; ++j) additive_detail::backward_one(de, v[j], q[j], u[j], dv[j], dq[j], du[j]);
}
#endif

}  // namespace seqbench::nn
