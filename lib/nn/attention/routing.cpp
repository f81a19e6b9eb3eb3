#include <algorithm>
#include <cmath>
#include <numeric>

#include "backend/gemm.hpp"
#include "core/buffer.hpp"
#include "core/check.hpp"
#include "nn/attention/kinds.hpp"

namespace seqbench::nn {

using core::grow;

using backend::Trans;

namespace {

// dst (n, d) = rows of x scaled to unit length (zero rows stay zero).
template <class T>
void normalise_rows(const T* x, int64_t n, int64_t d, T* dst) {
  for (int64_t t = 0; t < n; ++t) {
    T s = 0;
    for (int64_t j = 0; j < d; ++j) s += x[t * d + j] * x[t * d + j];
    const T inv = s > T(0) ? T(1) / std::sqrt(s) : T(0);
    for (int64_t j = 0; j < d; ++j) dst[t * d + j] = x[t * d + j] * inv;
  }
}

// The w rows of column c of sims (n, kc) with the largest values (ties: earlier token),
// written in time order to out (w).
template <class T>
void top_w(const T* sims, int64_t n, int64_t kc, int64_t c, int64_t w, int32_t* order,
           int32_t* out) {
  std::iota(order, order + n, 0);
  const auto better = [&](int32_t a, int32_t b) {
    const T sa = sims[a * kc + c], sb = sims[b * kc + c];
    return sa > sb || (sa == sb && a < b);
  };
  std::nth_element(order, order + (w - 1), order + n, better);
  std::sort(order, order + w);
  std::copy_n(order, w, out);
}

}  // namespace

template <class T>
RoutingAttention<T>::RoutingAttention(const AttentionConfig& cfg, int64_t heads, int64_t head_dim)
    : Attention<T>(cfg, heads, head_dim, Attention<T>::Combine::Average), kc_(cfg.clusters) {
  centroids_.resize(static_cast<size_t>(heads * kc_ * head_dim));
  core::Rng rng = core::Rng::derive(cfg.seed, kCentroidStream);
  for (auto& x : centroids_) x = static_cast<T>(rng.normal());
  normalise_rows(centroids_.data(), heads * kc_, head_dim, centroids_.data());
}

template <class T>
template <class Fn>
void RoutingAttention<T>::for_each_assignment(int64_t h, const T* x, int64_t n, std::vector<T>& xn,
                                              std::vector<T>& sims, Fn&& fn) const {
  const int64_t D = this->dim_, blk = std::min(n, kAssignBlock);
  grow(xn, blk * D);
  grow(sims, blk * kc_);
  for (int64_t t0 = 0; t0 < n; t0 += blk) {
    const int64_t m = std::min(blk, n - t0);
    normalise_rows(x + t0 * D, m, D, xn.data());
    backend::gemm<T>(Trans::N, Trans::T, m, kc_, D, T(1), xn.data(), D,
                     centroids_.data() + h * kc_ * D, D, T(0), sims.data(), kc_);
    for (int64_t i = 0; i < m; ++i) {
      const T* row = sims.data() + i * kc_;
      fn(t0 + i, static_cast<int32_t>(std::max_element(row, row + kc_) - row),
         xn.data() + i * D);
    }
  }
}

template <class T>
void RoutingAttention<T>::assign(int64_t h, const T* x, int64_t n, int32_t* out,
                                 std::vector<T>& xn, std::vector<T>& sims) const {
  for_each_assignment(h, x, n, xn, sims, [&](int64_t t, int32_t c, const T*) { out[t] = c; });
}

template <class T>
void RoutingAttention<T>::build(int64_t h, const T* q, const T* k, int64_t n, AttnStructure& st,
                                BuildScratch<T>& sc, core::Rng&) const {
  const int64_t D = this->dim_, w = this->cfg_.window;
  if (this->cfg_.causal) {
    grow(sc.qb, n);
    grow(sc.kb, n);
    assign(h, q, n, sc.qb.data(), sc.xq, sc.proj);
    if (k == q)  // shared QK: the keys' clusters are the queries'
      std::copy_n(sc.qb.data(), n, sc.kb.data());
    else
      assign(h, k, n, sc.kb.data(), sc.xq, sc.proj);
    build_bucket_chunks(st, sc.qb.data(), sc.kb.data(), n, kc_, w, true, sc.work);
    return;
  }
  // Balanced clusters: each centroid takes its top-w queries and its top-w keys.
  const int64_t wc = std::min(w, n);
  const T* mu = centroids_.data() + h * kc_ * D;
  grow(sc.xq, n * D);
  grow(sc.proj, n * kc_);
  grow(sc.order, n);
  for (int side = 0; side < 2; ++side) {
    std::vector<int32_t>& idx = side == 0 ? st.q : st.k;
    idx.resize(static_cast<size_t>(kc_ * wc));
    normalise_rows(side == 0 ? q : k, n, D, sc.xq.data());
    backend::gemm<T>(Trans::N, Trans::T, n, kc_, D, T(1), sc.xq.data(), D, mu, D, T(0),
                     sc.proj.data(), kc_);
    for (int64_t c = 0; c < kc_; ++c)
      top_w(sc.proj.data(), n, kc_, c, wc, sc.order.data(), idx.data() + c * wc);
  }
  for (int64_t c = 0; c < kc_; ++c) add_group(st, c * wc, wc, c * wc, wc);
}

template <class T>
void RoutingAttention<T>::update_centroids() {
  SB_CHECK(this->q_.data != nullptr,
           "attention (routing).update_centroids: no forward to learn from (hint: call forward "
           "first, then update_centroids in training mode)");
  const int64_t H = this->heads_, D = this->dim_, N = this->n_, B = this->b_;
  const double lambda = this->cfg_.ema_decay;
  grow(sums_, kc_ * D);
  for (int64_t h = 0; h < H; ++h) {
    std::fill(sums_.begin(), sums_.begin() + kc_ * D, T(0));
    for (int64_t b = 0; b < B; ++b)
      for (int side = 0; side < (this->k_.data == this->q_.data ? 1 : 2); ++side) {
        const T* x = side == 0 ? this->q_.data : this->k_.data;  // shared QK: rows once
        for_each_assignment(h, x + (b * H + h) * N * D, N, xn_, sims_,
                            [&](int64_t, int32_t c, const T* xh) {
                              T* s = sums_.data() + c * D;
                              for (int64_t j = 0; j < D; ++j) s[j] += xh[j];
                            });
      }
    for (int64_t c = 0; c < kc_; ++c) {
      const T* s = sums_.data() + c * D;
      T ss = 0;
      for (int64_t j = 0; j < D; ++j) ss += s[j] * s[j];
      if (ss <= T(0)) continue;  // no members: the centroid stays
      const T a = static_cast<T>(lambda), b1 = static_cast<T>((1.0 - lambda) / std::sqrt(ss));
      T* mu = centroids_.data() + (h * kc_ + c) * D;
      for (int64_t j = 0; j < D; ++j) mu[j] = a * mu[j] + b1 * s[j];
      normalise_rows(mu, 1, D, mu);
    }
  }
}

template <class T>
double RoutingAttention<T>::commitment(double beta, T* dq, T* dk) {
  SB_CHECK(this->q_.data != nullptr,
           "attention (routing).commitment: no forward to measure (hint: call forward first)");
  const int64_t H = this->heads_, D = this->dim_, N = this->n_, B = this->b_;
  const bool shared = this->k_.data == this->q_.data;
  const int64_t rows = (shared ? 1 : 2) * B * H * N;
  double sum = 0;
  const double g = 2.0 * beta / double(rows);
  for (int side = 0; side < (shared ? 1 : 2); ++side) {
    const T* x = side == 0 ? this->q_.data : this->k_.data;
    T* dx = side == 0 ? dq : dk;
    for (int64_t s = 0; s < B * H; ++s) {
      const int64_t h = s % H;
      const T* xs = x + s * N * D;
      for_each_assignment(h, xs, N, xn_, sims_, [&](int64_t t, int32_t c, const T* xh) {
        const T* mu = centroids_.data() + (h * kc_ + c) * D;
        double d2 = 0, dot = 0, nx = 0;
        for (int64_t j = 0; j < D; ++j) {
          const double e = double(xh[j]) - double(mu[j]);
          d2 += e * e;
          dot += double(xh[j]) * double(mu[j]);
          nx += double(xs[t * D + j]) * double(xs[t * D + j]);
        }
        sum += d2;
        if (nx <= 0.0 || dx == nullptr) return;
        const double a = g / std::sqrt(nx);
        T* drow = dx + (s * N + t) * D;
        for (int64_t j = 0; j < D; ++j)
          drow[j] += static_cast<T>(a * (dot * double(xh[j]) - double(mu[j])));
      });
    }
  }
  return sum / double(rows);
}

template <class T>
size_t RoutingAttention<T>::held_bytes() const {
  return Attention<T>::held_bytes() +
         (centroids_.capacity() + sums_.capacity() + xn_.capacity() + sims_.capacity()) *
             sizeof(T);
}

template <class T>
RandomAttention<T>::RandomAttention(const AttentionConfig& cfg, int64_t heads, int64_t head_dim)
    : Attention<T>(cfg, heads, head_dim, Attention<T>::Combine::Average) {}

template <class T>
void RandomAttention<T>::build(int64_t, const T*, const T*, int64_t n, AttnStructure& st,
                               BuildScratch<T>& sc, core::Rng& rng) const {
  grow(sc.order, n);
  int32_t* perm = sc.order.data();
  for (int64_t r = 0; r < this->cfg_.rounds; ++r) {
    std::iota(perm, perm + n, 0);
    for (int64_t i = n - 1; i > 0; --i) std::swap(perm[i], perm[rng.randint(i + 1)]);
    build_sorted_chunks(st, perm, perm, n, this->cfg_.window);
  }
}

template class RoutingAttention<float>;
template class RoutingAttention<double>;
template class RandomAttention<float>;
template class RandomAttention<double>;

}  // namespace seqbench::nn
