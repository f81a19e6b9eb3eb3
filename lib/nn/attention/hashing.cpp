#include <algorithm>
#include <cmath>
#include <numeric>

#include "backend/gemm.hpp"
#include "core/buffer.hpp"
#include "nn/attention/kinds.hpp"

namespace seqbench::nn {

using core::grow;

using backend::Trans;

namespace {

// Rows hashed per projection product (LSH): bounds the (rows, L nb / 2) scratch.
constexpr int64_t kHashRows = 128;

// order (n) = tokens sorted by z[t * stride] (ties: earlier token first).
template <class T>
void argsort(const T* z, int64_t stride, int64_t n, int32_t* order) {
  std::iota(order, order + n, 0);
  std::sort(order, order + n, [&](int32_t a, int32_t b) {
    const T za = z[a * stride], zb = z[b * stride];
    return za < zb || (za == zb && a < b);
  });
}

}  // namespace

template <class T>
SmyrfAttention<T>::SmyrfAttention(const AttentionConfig& cfg, int64_t heads, int64_t head_dim)
    : Attention<T>(cfg, heads, head_dim, Attention<T>::Combine::LogSumExp) {}

template <class T>
void SmyrfAttention<T>::build(int64_t, const T* q, const T* k, int64_t n, AttnStructure& st,
                              BuildScratch<T>& sc, core::Rng& rng) const {
  const int64_t D = this->dim_, L = this->cfg_.rounds, w = this->cfg_.window, E = D + 2;
  // a (L, D + 2): one E2LSH direction per round. E2LSH's offset b and width r do not
  // change a sort order, so they are left out.
  grow(sc.proj, L * E);
  for (int64_t i = 0; i < L * E; ++i) sc.proj[i] = static_cast<T>(rng.normal());
  const T* a = sc.proj.data();
  // zq, zk (n, L) = the first D coordinates of a . F(q), a . G(k).
  grow(sc.xq, n * L);
  grow(sc.xk, n * L);
  T* zq = sc.xq.data();
  T* zk = sc.xk.data();
  backend::gemm<T>(Trans::N, Trans::T, n, L, D, T(1), q, D, a, E, T(0), zq, L);
  backend::gemm<T>(Trans::N, Trans::T, n, L, D, T(1), k, D, a, E, T(0), zk, L);
  // nq, nk (n): squared norms.
  grow(sc.tmp, 2 * n);
  T* nq = sc.tmp.data();
  T* nk = nq + n;
  for (int64_t t = 0; t < n; ++t) {
    T sq = 0, sk = 0;
    for (int64_t j = 0; j < D; ++j) {
      sq += q[t * D + j] * q[t * D + j];
      sk += k[t * D + j] * k[t * D + j];
    }
    nq[t] = sq;
    nk[t] = sk;
  }

  if (!this->cfg_.causal) {
    const T C = *std::max_element(nq, nq + n) + *std::max_element(nk, nk + n);
    for (int64_t t = 0; t < n; ++t) {
      const T eq = std::sqrt(std::max(T(0), C - nq[t])), ek = std::sqrt(std::max(T(0), C - nk[t]));
      for (int64_t r = 0; r < L; ++r) {
        zq[t * L + r] += a[r * E + D + 1] * eq;  // F(q) = [q; 0; eq]
        zk[t * L + r] += a[r * E + D] * ek;      // G(k) = [k; ek; 0]
      }
    }
    grow(sc.order, 2 * n);
    for (int64_t r = 0; r < L; ++r) {
      argsort(zq + r, L, n, sc.order.data());
      argsort(zk + r, L, n, sc.order.data() + n);
      build_sorted_chunks(st, sc.order.data(), sc.order.data() + n, n, w);
    }
    return;
  }

  // Causal: C_t from the prefix maxima, so that a token's hash depends on the past only;
  // the unit vector F(q_t) / √C_t projects to N(0, 1) over a, so Φ quantiles make
  // equal-probability buckets.
  const int64_t nb = (n + w - 1) / w;
  grow(sc.qb, n * L);
  grow(sc.kb, n * L);
  const auto bucket = [nb](T z) {
    const double u = 0.5 * std::erfc(-static_cast<double>(z) / std::sqrt(2.0));
    return static_cast<int32_t>(std::clamp<int64_t>(static_cast<int64_t>(u * nb), 0, nb - 1));
  };
  T mq = 0, mk = 0;
  for (int64_t t = 0; t < n; ++t) {
    mq = std::max(mq, nq[t]);
    mk = std::max(mk, nk[t]);
    const T C = mq + mk;
    const T inv = C > T(0) ? T(1) / std::sqrt(C) : T(0);
    const T eq = std::sqrt(std::max(T(0), C - nq[t])), ek = std::sqrt(std::max(T(0), C - nk[t]));
    for (int64_t r = 0; r < L; ++r) {
      sc.qb[r * n + t] = bucket((zq[t * L + r] + a[r * E + D + 1] * eq) * inv);
      sc.kb[r * n + t] = bucket((zk[t * L + r] + a[r * E + D] * ek) * inv);
    }
  }
  for (int64_t r = 0; r < L; ++r)
    build_bucket_chunks(st, sc.qb.data() + r * n, sc.kb.data() + r * n, n, nb, w, true, sc.work);
}

template <class T>
LshAttention<T>::LshAttention(const AttentionConfig& cfg, int64_t heads, int64_t head_dim)
    : Attention<T>(cfg, heads, head_dim, Attention<T>::Combine::LogSumExp) {}

template <class T>
void LshAttention<T>::build(int64_t, const T* q, const T* k, int64_t n, AttnStructure& st,
                            BuildScratch<T>& sc, core::Rng& rng) const {
  const int64_t D = this->dim_, L = this->cfg_.rounds, nb = this->cfg_.clusters,
                w = this->cfg_.window;
  grow(sc.qb, n);
  grow(sc.kb, n);
  if (nb == 1) {
    std::fill(sc.qb.begin(), sc.qb.begin() + n, 0);
    std::fill(sc.kb.begin(), sc.kb.begin() + n, 0);
    for (int64_t r = 0; r < L; ++r)
      build_bucket_chunks(st, sc.qb.data(), sc.kb.data(), n, 1, w, this->cfg_.causal, sc.work);
    return;
  }
  // R (D, L half): random rotations of every round side by side. xR is computed for
  // kHashRows rows at a time, so the scratch stays (kHashRows, L half) for any N.
  const int64_t half = nb / 2, cols = L * half;
  grow(sc.proj, D * cols);
  for (int64_t i = 0; i < D * cols; ++i) sc.proj[i] = static_cast<T>(rng.normal());
  grow(sc.xq, kHashRows * cols);
  grow(sc.qb, L * n);
  grow(sc.kb, L * n);
  // argmax over [xR; -xR]: bucket j for +xR_j, half + j for -xR_j.
  const auto bucket = [half](const T* p) {
    int32_t best = 0;
    T bv = p[0];
    for (int64_t j = 0; j < half; ++j) {
      if (p[j] > bv) bv = p[j], best = static_cast<int32_t>(j);
      if (-p[j] > bv) bv = -p[j], best = static_cast<int32_t>(half + j);
    }
    return best;
  };
  for (int side = 0; side < 2; ++side) {
    const T* x = side == 0 ? q : k;
    int32_t* out = side == 0 ? sc.qb.data() : sc.kb.data();  // (L, n)
    for (int64_t t0 = 0; t0 < n; t0 += kHashRows) {
      const int64_t rows = std::min(kHashRows, n - t0);
      backend::gemm<T>(Trans::N, Trans::N, rows, cols, D, T(1), x + t0 * D, D, sc.proj.data(),
                       cols, T(0), sc.xq.data(), cols);
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t r = 0; r < L; ++r)
          out[r * n + t0 + i] = bucket(sc.xq.data() + i * cols + r * half);
    }
  }
  for (int64_t r = 0; r < L; ++r)
    build_bucket_chunks(st, sc.qb.data() + r * n, sc.kb.data() + r * n, n, nb, w,
                        this->cfg_.causal, sc.work);
}

template class SmyrfAttention<float>;
template class SmyrfAttention<double>;
template class LshAttention<float>;
template class LshAttention<double>;

}  // namespace seqbench::nn
