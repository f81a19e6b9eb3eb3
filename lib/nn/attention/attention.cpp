#include "nn/attention/attention.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "backend/gemm.hpp"
#include "config/check.hpp"
#include "core/buffer.hpp"
#include "core/check.hpp"
#include "nn/attention/kinds.hpp"
#include "nn/simd.hpp"

namespace seqbench::nn {

using core::grow;

using backend::Trans;

namespace {

// Reformer's score for a token's own key under shared QK: low enough that any other
// visible key wins, finite so that a token with nothing else still attends to itself.
constexpr double kSelfMask = -1e5;

// dst rows i = src rows idx[i] (n_rows of d).
template <class T>
void gather(const T* src, const int32_t* idx, int64_t n_rows, int64_t d, T* dst) {
  for (int64_t i = 0; i < n_rows; ++i) std::copy_n(src + idx[i] * d, d, dst + i * d);
}

// dst rows idx[i] += src rows i.
template <class T>
void scatter_add(const T* src, const int32_t* idx, int64_t n_rows, int64_t d, T* dst) {
  for (int64_t i = 0; i < n_rows; ++i) {
    T* row = dst + idx[i] * d;
    const T* s = src + i * d;
    for (int64_t j = 0; j < d; ++j) row[j] += s[j];
  }
}

}  // namespace

AttentionKind parse_attention_kind(const std::string& s) { return find_attention(s).kind; }

void check_rules(const AttentionConfig& cfg) {
  config::check(cfg, "attention");
  if (parse_attention_kind(cfg.kind) == AttentionKind::Lsh && cfg.clusters != 1 &&
      cfg.clusters % 2 != 0)
    throw core::UsageError(fmt::format(
        "attention.clusters must be 1 or even for lsh (angular buckets come in ± pairs), got {} "
        "(hint: use {})",
        cfg.clusters, cfg.clusters + 1));
}

template <class T>
Attention<T>::Attention(const AttentionConfig& cfg, int64_t heads, int64_t head_dim,
                        Combine combine)
    : cfg_(cfg),
      kind_(parse_attention_kind(cfg.kind)),
      heads_(heads),
      dim_(head_dim),
      combine_(combine),
      scale_(static_cast<T>(1.0 / std::sqrt(static_cast<double>(head_dim)))) {
  check_rules(cfg);
  SB_CHECK(heads > 0 && head_dim > 0, "attention ({}): heads={} head_dim={} must be positive",
           cfg.kind, heads, head_dim);
}

template <class T>
const AttnStructure& Attention<T>::structure(int64_t s) const {
  SB_CHECK(s >= 0 && s < slices(), "attention ({}): slice {} out of range [0, {}) (hint: call "
           "forward first)", cfg_.kind, s, slices());
  return st_[static_cast<size_t>(s)];
}

template <class T>
size_t Attention<T>::Workspace::bytes() const {
  size_t n = 0;
  for (const auto* v : {&qg, &kg, &vg, &dog, &dqg, &dkg, &dvg, &s, &dp, &sself, &occ_d,
                        &occ_dlse, &tok_m, &tok_s})
    n += v->capacity();
  return n * sizeof(T);
}

template <class T>
size_t Attention<T>::held_bytes() const {
  size_t n = (lse_.capacity() + w_.capacity() + oocc_.capacity() + dbias_s_.capacity()) *
                 sizeof(T) +
             occ_off_.capacity() * sizeof(int64_t);
  for (const auto& st : st_) n += st.bytes();
  for (const auto& ws : ws_) n += ws.bytes();
  for (const auto& sc : scratch_)
    n += (sc.qb.capacity() + sc.kb.capacity() + sc.order.capacity() + sc.work.capacity()) *
             sizeof(int32_t) +
         (sc.xq.capacity() + sc.xk.capacity() + sc.proj.capacity() + sc.tmp.capacity()) *
             sizeof(T);
  return n;
}

template <class T>
void Attention<T>::reserve_workspaces() {
  const int64_t r = max_rows_, c = max_keys_, d = dim_, n = n_;
  for (auto& ws : ws_) {
    grow(ws.dog, r * d);
    if (gathers_) {  // contiguous structures (full, local) read q, k, v in place
      for (auto* v : {&ws.qg, &ws.dqg}) grow(*v, r * d);
      for (auto* v : {&ws.kg, &ws.vg, &ws.dkg, &ws.dvg}) grow(*v, c * d);
    }
    for (auto* v : {&ws.s, &ws.dp}) grow(*v, r * c);
    grow(ws.sself, r);
    for (auto* v : {&ws.occ_d, &ws.occ_dlse}) grow(*v, max_occ_);
    for (auto* v : {&ws.tok_m, &ws.tok_s}) grow(*v, n);
  }
}

template <class T>
int64_t Attention<T>::bias_bucket(int64_t tq, int64_t tk) const {
  const int64_t d = tq - tk;
  if (cfg_.causal) return std::clamp<int64_t>(d, 0, nb_ - 1);
  const int64_t m = (nb_ + 1) / 2;  // nb = 2M - 1
  return std::clamp<int64_t>(d, -(m - 1), m - 1) + m - 1;
}

template <class T>
const T* Attention<T>::bias_row(int64_t s) const {
  return bias_.data ? bias_.data + (s % heads_) * nb_ : nullptr;
}

template <class T>
T Attention<T>::self_score(const T* qrow, const T* krow, const T* bh) const {
  if (cfg_.shared_qk) return static_cast<T>(kSelfMask);
  T v = scale_ * dot(dim_, qrow, krow);
  if (bh) v += bh[bias_bucket(0, 0)];
  return v;
}

template <class T>
void Attention<T>::scores(const AttnStructure& st, const AttnGroup& g, const T* qg, const T* kg,
                          const T* bh, T* s) const {
  const int64_t r = g.q_len, c = g.k_len;
  if (c == 0) return;
  backend::gemm<T>(Trans::N, Trans::T, r, c, dim_, scale_, qg, dim_, kg, dim_, T(0), s, c);
  const int32_t* kt = st.k.data() + g.k_off;
  if (bh)
    for (int64_t i = 0; i < r; ++i) {
      const int32_t t = st.q[g.q_off + i];
      T* row = s + i * c;
      for (int64_t j = 0; j < c; ++j) row[j] += bh[bias_bucket(t, kt[j])];
    }
  if (!cfg_.causal && !cfg_.shared_qk) return;
  const T neg_inf = -std::numeric_limits<T>::infinity();
  for (int64_t i = 0; i < r; ++i) {
    const int32_t t = st.q[g.q_off + i];
    T* row = s + i * c;
    for (int64_t j = 0; j < c; ++j) {
      if (cfg_.causal && kt[j] > t)
        row[j] = neg_inf;
      else if (cfg_.shared_qk && kt[j] == t)
        row[j] = static_cast<T>(kSelfMask);
    }
  }
}

template <class T>
void Attention<T>::forward(core::ViewT<const T> q, core::ViewT<const T> k,
                           core::ViewT<const T> v, core::ViewT<T> dst,
                           core::ViewT<const T> bias) {
  SB_CHECK(q.shape.rank == 4, "attention ({}).forward: q must be (B, H, N, D), got {}", cfg_.kind,
           q.shape.str());
  const int64_t B = q.dim(0), H = q.dim(1), N = q.dim(2), D = q.dim(3);
  SB_CHECK(H == heads_ && D == dim_,
           "attention ({}).forward: q {} has H={} D={}, the layer was made for H={} D={}",
           cfg_.kind, q.shape.str(), H, D, heads_, dim_);
  SB_CHECK(N > 0 && N < (int64_t{1} << 30), "attention ({}).forward: N={} out of range",
           cfg_.kind, N);
  const core::Shape shape{B, H, N, D};
  core::check_shape(k, shape, "attention.forward k");
  core::check_shape(v, shape, "attention.forward v");
  core::check_shape(dst, shape, "attention.forward dst");
  if (bias.data) {
    SB_CHECK(bias.shape.rank == 2 && bias.dim(0) == H && bias.dim(1) >= 1,
             "attention ({}).forward: the relative bias must be (H={}, buckets), got {}",
             cfg_.kind, H, bias.shape.str());
    SB_CHECK(cfg_.causal || bias.dim(1) % 2 == 1,
             "attention ({}).forward: a non-causal relative bias needs an odd number of buckets "
             "(2M - 1 for distances -(M-1) .. M-1), got {}",
             cfg_.kind, bias.dim(1));
  }
  const int64_t S = B * H;
  const int nthreads = std::max(1, omp_get_max_threads());
  if (static_cast<int>(ws_.size()) < nthreads) ws_.resize(static_cast<size_t>(nthreads));
  if (static_cast<int>(scratch_.size()) < nthreads) scratch_.resize(static_cast<size_t>(nthreads));

  if (hold_ && !st_.empty()) {
    SB_CHECK(b_ == B && n_ == N,
             "attention ({}).forward: the assignment is held for B={} N={}, got B={} N={} "
             "(hint: hold_assignment(false) before changing the shape)",
             cfg_.kind, b_, n_, B, N);
  } else {
    st_.resize(static_cast<size_t>(S));
    const uint64_t draw_seed = core::Rng::derive(cfg_.seed, draws_++).next_u64();
#pragma omp parallel for schedule(dynamic) if (S > 1)
    for (int64_t s = 0; s < S; ++s) {
      core::Rng rng = core::Rng::derive(draw_seed, static_cast<uint64_t>(s));
      AttnStructure& st = st_[static_cast<size_t>(s)];
      st.clear();
      build(s % H, q.data + s * N * D, k.data + s * N * D, N, st,
            scratch_[static_cast<size_t>(omp_get_thread_num())], rng);
    }
    occ_off_.assign(static_cast<size_t>(S + 1), 0);
    max_rows_ = max_keys_ = max_occ_ = 0;
    gathers_ = false;
    for (int64_t s = 0; s < S; ++s) {
      const AttnStructure& st = st_[static_cast<size_t>(s)];
      gathers_ = gathers_ || !st.contiguous;
      const int64_t nocc = static_cast<int64_t>(st.q.size());
      occ_off_[s + 1] = occ_off_[s] + nocc;
      max_occ_ = std::max(max_occ_, nocc);
      max_rows_ = std::max(max_rows_, st.max_rows());
      max_keys_ = std::max(max_keys_, st.max_keys());
    }
  }
  b_ = B;
  n_ = N;
  q_ = q;
  k_ = k;
  v_ = v;
  bias_ = bias;
  nb_ = bias.data ? bias.dim(1) : 0;
  const int64_t total = occ_off_[S];
  grow(lse_, total);
  grow(w_, total);
  grow(oocc_, total * D);
  reserve_workspaces();
#pragma omp parallel for schedule(dynamic) if (S > 1)
  for (int64_t s = 0; s < S; ++s)
    forward_slice(s, dst.data + s * N * D, ws_[static_cast<size_t>(omp_get_thread_num())]);
}

template <class T>
void Attention<T>::forward_slice(int64_t s, T* dst, Workspace& ws) {
  const int64_t N = n_, D = dim_;
  const AttnStructure& st = st_[static_cast<size_t>(s)];
  const T* Q = q_.data + s * N * D;
  const T* K = k_.data + s * N * D;
  const T* V = v_.data + s * N * D;
  const int64_t off = occ_off_[s];
  T* lse = lse_.data() + off;
  T* w = w_.data() + off;
  T* oocc = oocc_.data() + off * D;
  const bool has_self = !st.self.empty();
  const T neg_inf = -std::numeric_limits<T>::infinity();
  const T* bh = bias_row(s);

  for (const AttnGroup& g : st.groups) {
    const int64_t R = g.q_len, C = g.k_len;
    const T *qg = Q, *kg = K, *vg = V;
    if (st.contiguous) {
      qg += st.q[g.q_off] * D;
      if (C > 0) {
        kg += st.k[g.k_off] * D;
        vg += st.k[g.k_off] * D;
      }
    } else {
      gather(Q, st.q.data() + g.q_off, R, D, ws.qg.data());
      gather(K, st.k.data() + g.k_off, C, D, ws.kg.data());
      gather(V, st.k.data() + g.k_off, C, D, ws.vg.data());
      qg = ws.qg.data();
      kg = ws.kg.data();
      vg = ws.vg.data();
    }
    T* sc = ws.s.data();
    scores(st, g, qg, kg, bh, sc);
    for (int64_t i = 0; i < R; ++i) {
      const int64_t occ = g.q_off + i;
      const int32_t t = st.q[occ];
      T* row = sc + i * C;
      const bool self = has_self && st.self[occ];
      const T ss = self ? self_score(Q + t * D, K + t * D, bh) : neg_inf;
      T mx = ss;
      for (int64_t j = 0; j < C; ++j) mx = std::max(mx, row[j]);
      if (mx == neg_inf) {  // nothing visible
        std::fill(row, row + C, T(0));
        ws.sself[i] = 0;
        lse[occ] = neg_inf;
        continue;
      }
      T sum = 0;
      for (int64_t j = 0; j < C; ++j) {
        row[j] = std::exp(row[j] - mx);
        sum += row[j];
      }
      const T ps = self ? std::exp(ss - mx) : T(0);
      sum += ps;
      const T inv = T(1) / sum;
      for (int64_t j = 0; j < C; ++j) row[j] *= inv;
      ws.sself[i] = ps * inv;
      lse[occ] = mx + std::log(sum);
    }
    T* og = oocc + g.q_off * D;
    backend::gemm<T>(Trans::N, Trans::N, R, D, C, T(1), sc, C, vg, D, T(0), og, D);
    if (has_self)
      for (int64_t i = 0; i < R; ++i) {
        const T ps = ws.sself[i];
        if (ps == T(0)) continue;
        const T* vt = V + st.q[g.q_off + i] * D;
        for (int64_t j = 0; j < D; ++j) og[i * D + j] += ps * vt[j];
      }
  }

  // Combine each token's occurrences.
  const int64_t nocc = static_cast<int64_t>(st.q.size());
  T* tm = ws.tok_m.data();
  T* ts = ws.tok_s.data();
  if (combine_ == Combine::Average) {
    std::fill(ts, ts + N, T(0));
    for (int64_t o = 0; o < nocc; ++o) ts[st.q[o]] += 1;
    for (int64_t o = 0; o < nocc; ++o) w[o] = T(1) / ts[st.q[o]];
  } else {
    std::fill(tm, tm + N, neg_inf);
    std::fill(ts, ts + N, T(0));
    for (int64_t o = 0; o < nocc; ++o) tm[st.q[o]] = std::max(tm[st.q[o]], lse[o]);
    for (int64_t o = 0; o < nocc; ++o)
      if (lse[o] != neg_inf) ts[st.q[o]] += std::exp(lse[o] - tm[st.q[o]]);
    for (int64_t o = 0; o < nocc; ++o) {
      const int32_t t = st.q[o];
      w[o] = lse[o] == neg_inf ? T(0) : std::exp(lse[o] - tm[t]) / ts[t];
    }
  }
  std::fill(dst, dst + N * D, T(0));
  for (int64_t o = 0; o < nocc; ++o) {
    T* row = dst + st.q[o] * D;
    const T* src = oocc + o * D;
    for (int64_t j = 0; j < D; ++j) row[j] += w[o] * src[j];
  }
}

template <class T>
void Attention<T>::backward(core::ViewT<const T> ddst, core::ViewT<T> dq, core::ViewT<T> dk,
                            core::ViewT<T> dv, core::ViewT<T> dbias) {
  SB_CHECK(!st_.empty() && q_.data,
           "attention ({}).backward: no forward to differentiate (hint: call forward first)",
           cfg_.kind);
  const int64_t S = b_ * heads_, N = n_, D = dim_;
  const core::Shape shape{b_, heads_, N, D};
  core::check_shape(ddst, shape, "attention.backward ddst");
  core::check_shape(dq, shape, "attention.backward dq");
  core::check_shape(dk, shape, "attention.backward dk");
  core::check_shape(dv, shape, "attention.backward dv");
  if (dbias.data) {
    SB_CHECK(bias_.data, "attention ({}).backward: dbias given, but the forward had no relative "
             "bias (hint: pass the table to forward)", cfg_.kind);
    core::check_shape(dbias, bias_.shape, "attention.backward dbias");
    dbias_s_.assign(static_cast<size_t>(S * nb_), T(0));
  }
  // The thread count may have changed since forward (core::set_threads).
  const int nthreads = std::max(1, omp_get_max_threads());
  if (static_cast<int>(ws_.size()) < nthreads) ws_.resize(static_cast<size_t>(nthreads));
  reserve_workspaces();
#pragma omp parallel for schedule(dynamic) if (S > 1)
  for (int64_t s = 0; s < S; ++s)
    backward_slice(s, ddst.data + s * N * D, dq.data + s * N * D, dk.data + s * N * D,
                   dv.data + s * N * D, dbias.data ? dbias_s_.data() + s * nb_ : nullptr,
                   ws_[static_cast<size_t>(omp_get_thread_num())]);
  // Slices of one head (every batch row) share its bias row: sum them in slice order,
  // so the result does not depend on the thread schedule.
  if (dbias.data)
    for (int64_t s = 0; s < S; ++s) {
      const T* src = dbias_s_.data() + s * nb_;
      T* row = dbias.data + (s % heads_) * nb_;
      for (int64_t j = 0; j < nb_; ++j) row[j] += src[j];
    }
}

template <class T>
void Attention<T>::backward_slice(int64_t s, const T* ddst, T* dq, T* dk, T* dv, T* dbh,
                                  Workspace& ws) const {
  const int64_t N = n_, D = dim_;
  const AttnStructure& st = st_[static_cast<size_t>(s)];
  const T* Q = q_.data + s * N * D;
  const T* K = k_.data + s * N * D;
  const T* V = v_.data + s * N * D;
  const int64_t off = occ_off_[s];
  const T* lse = lse_.data() + off;
  const T* w = w_.data() + off;
  const T* oocc = oocc_.data() + off * D;
  const bool has_self = !st.self.empty();
  const T neg_inf = -std::numeric_limits<T>::infinity();
  const int64_t nocc = static_cast<int64_t>(st.q.size());
  const T* bh = bias_row(s);

  // Per occurrence: D_i = do_occ . o_occ = w ddst_t . o_occ, and for the logsumexp rule
  // dlse = w (ddst_t . o_occ - ddst_t . dst_t).
  T* occ_d = ws.occ_d.data();
  T* occ_dlse = ws.occ_dlse.data();
  if (combine_ == Combine::LogSumExp) {
    // a_o = ddst_t . o_occ, and ddst_t . dst_t = Σ_o w_o a_o over t's occurrences.
    T* tb = ws.tok_s.data();
    std::fill(tb, tb + N, T(0));
    for (int64_t o = 0; o < nocc; ++o) {
      const int32_t t = st.q[o];
      occ_d[o] = dot(D, ddst + t * D, oocc + o * D);
      tb[t] += w[o] * occ_d[o];
    }
    for (int64_t o = 0; o < nocc; ++o) {
      const T a = occ_d[o];
      occ_d[o] = w[o] * a;
      occ_dlse[o] = w[o] * (a - tb[st.q[o]]);
    }
  } else {
    for (int64_t o = 0; o < nocc; ++o) {
      occ_d[o] = w[o] * dot(D, ddst + st.q[o] * D, oocc + o * D);
      occ_dlse[o] = 0;
    }
  }

  for (const AttnGroup& g : st.groups) {
    const int64_t R = g.q_len, C = g.k_len;
    const int32_t* qt = st.q.data() + g.q_off;
    const int32_t* kt = st.k.data() + g.k_off;
    const T *qg = Q, *kg = K, *vg = V;
    if (st.contiguous) {
      qg += qt[0] * D;
      if (C > 0) {
        kg += kt[0] * D;
        vg += kt[0] * D;
      }
    } else {
      gather(Q, qt, R, D, ws.qg.data());
      gather(K, kt, C, D, ws.kg.data());
      gather(V, kt, C, D, ws.vg.data());
      qg = ws.qg.data();
      kg = ws.kg.data();
      vg = ws.vg.data();
    }
    T* dog = ws.dog.data();  // (R, D) do_occ = w ddst_t
    for (int64_t i = 0; i < R; ++i) {
      const T wi = w[g.q_off + i];
      const T* src = ddst + qt[i] * D;
      for (int64_t j = 0; j < D; ++j) dog[i * D + j] = wi * src[j];
    }
    T* p = ws.s.data();
    T* dp = ws.dp.data();
    scores(st, g, qg, kg, bh, p);
    if (C > 0)
      backend::gemm<T>(Trans::N, Trans::T, R, C, D, T(1), dog, D, vg, D, T(0), dp, C);
    for (int64_t i = 0; i < R; ++i) {
      const int64_t occ = g.q_off + i;
      const T l = lse[occ];
      T* prow = p + i * C;
      T* drow = dp + i * C;
      if (l == neg_inf) {
        std::fill(prow, prow + C, T(0));
        std::fill(drow, drow + C, T(0));
        continue;
      }
      const T shift = occ_dlse[occ] - occ_d[occ];
      for (int64_t j = 0; j < C; ++j) {
        prow[j] = std::exp(prow[j] - l);
        drow[j] = prow[j] * (drow[j] + shift);
      }
      // Mask constants (shared-QK self entries) carry no gradient to q and k; causal
      // entries already have P = 0.
      if (cfg_.shared_qk)
        for (int64_t j = 0; j < C; ++j)
          if (kt[j] == qt[i]) drow[j] = 0;
      // dS of a score is also the gradient of its bias entry (causal entries have dS = 0).
      if (dbh)
        for (int64_t j = 0; j < C; ++j)
          if (!(cfg_.causal && kt[j] > qt[i])) dbh[bias_bucket(qt[i], kt[j])] += drow[j];
      if (has_self && st.self[occ]) {
        const int32_t t = qt[i];
        const T ps = std::exp(self_score(Q + t * D, K + t * D, bh) - l);
        const T* dorow = dog + i * D;
        const T ds = ps * (dot(D, dorow, V + t * D) + shift);
        for (int64_t j = 0; j < D; ++j) dv[t * D + j] += ps * dorow[j];
        if (!cfg_.shared_qk) {
          for (int64_t j = 0; j < D; ++j) {
            dq[t * D + j] += scale_ * ds * K[t * D + j];
            dk[t * D + j] += scale_ * ds * Q[t * D + j];
          }
          if (dbh) dbh[bias_bucket(t, t)] += ds;
        }
      }
    }
    if (C == 0) continue;
    if (st.contiguous) {
      backend::gemm<T>(Trans::N, Trans::N, R, D, C, scale_, dp, C, kg, D, T(1), dq + qt[0] * D, D);
      backend::gemm<T>(Trans::T, Trans::N, C, D, R, scale_, dp, C, qg, D, T(1), dk + kt[0] * D, D);
      backend::gemm<T>(Trans::T, Trans::N, C, D, R, T(1), p, C, dog, D, T(1), dv + kt[0] * D, D);
    } else {
      backend::gemm<T>(Trans::N, Trans::N, R, D, C, scale_, dp, C, kg, D, T(0), ws.dqg.data(), D);
      backend::gemm<T>(Trans::T, Trans::N, C, D, R, scale_, dp, C, qg, D, T(0), ws.dkg.data(), D);
      backend::gemm<T>(Trans::T, Trans::N, C, D, R, T(1), p, C, dog, D, T(0), ws.dvg.data(), D);
      scatter_add(ws.dqg.data(), qt, R, D, dq);
      scatter_add(ws.dkg.data(), kt, C, D, dk);
      scatter_add(ws.dvg.data(), kt, C, D, dv);
    }
  }
}

template <class T>
std::unique_ptr<Attention<T>> make_attention(const AttentionConfig& cfg, int64_t heads,
                                             int64_t head_dim) {
  check_rules(cfg);
  switch (parse_attention_kind(cfg.kind)) {
    case AttentionKind::Full: return std::make_unique<FullAttention<T>>(cfg, heads, head_dim);
    case AttentionKind::Local: return std::make_unique<LocalAttention<T>>(cfg, heads, head_dim);
    case AttentionKind::Routing:
      return std::make_unique<RoutingAttention<T>>(cfg, heads, head_dim);
    case AttentionKind::Random: return std::make_unique<RandomAttention<T>>(cfg, heads, head_dim);
    case AttentionKind::Smyrf: return std::make_unique<SmyrfAttention<T>>(cfg, heads, head_dim);
    case AttentionKind::Lsh: return std::make_unique<LshAttention<T>>(cfg, heads, head_dim);
  }
  return nullptr;
}

template class Attention<float>;
template class Attention<double>;
template std::unique_ptr<Attention<float>> make_attention<float>(const AttentionConfig&, int64_t,
                                                                 int64_t);
template std::unique_ptr<Attention<double>> make_attention<double>(const AttentionConfig&,
                                                                   int64_t, int64_t);

}  // namespace seqbench::nn
