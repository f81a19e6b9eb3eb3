// Multi-head attention with head groups of different kinds (nn/attention/transformer.hpp).
#include <algorithm>
#include <cmath>

#include "core/buffer.hpp"
#include "core/check.hpp"
#include "nn/attention/kinds.hpp"
#include "nn/attention/transformer.hpp"

namespace seqbench::nn {

using core::bytes_of;
using core::ensure_shape;

// ---------------------------------------------------------------- multi-head attention

template <class T>
MultiHeadAttentionT<T>::MultiHeadAttentionT(core::ParamStoreT<T>& ps, const std::string& name,
                                            int64_t dim, const std::vector<HeadGroup>& groups,
                                            const AttentionConfig& base, const MhaOptions& opt)
    : dim_(dim),
      heads_(0),
      hd_(0),
      opt_(opt),
      qkv_(ps, name + ".qkv", dim, 3 * dim),
      out_(ps, name + ".out", dim, dim) {
  for (const auto& g : groups) heads_ += g.heads;
  SB_CHECK(heads_ > 0 && dim % heads_ == 0, "{}: {} heads do not divide width {}", name, heads_,
           dim);
  hd_ = dim / heads_;
  SB_CHECK(opt.relative_positions >= 0, "{}: relative_positions = {} must be >= 0", name,
           opt.relative_positions);
  SB_CHECK(opt.commitment >= 0, "{}: commitment = {} must be >= 0", name, opt.commitment);
  // Zero after finalize, and init leaves it so.
  if (opt.relative_positions > 0)
    relpos_ = &ps.add(name + ".relpos", core::Shape{heads_, opt.relative_positions});
  int64_t h0 = 0;
  groups_.resize(groups.size());
  for (size_t i = 0; i < groups.size(); ++i) {
    Group& g = groups_[i];
    g.spec = groups[i];
    g.h0 = h0;
    h0 += g.spec.heads;
    AttentionConfig c = base;
    c.kind = g.spec.kind;
    c.causal = true;
    if (c.kind == "local" && opt.local_window > 0) c.window = opt.local_window;
    g.shared = opt.shared_qk && (c.kind == "routing" || c.kind == "lsh");
    c.shared_qk = g.shared;
    c.seed = core::Rng::derive(base.seed, i).next_u64();
    g.att = make_attention<T>(c, g.spec.heads, hd_);
  }
}

template <class T>
void MultiHeadAttentionT<T>::init(core::Rng& rng, double sd, double out_std) {
  init_normal(qkv_, rng, sd);
  init_normal(out_, rng, out_std);
}

template <class T>
void MultiHeadAttentionT<T>::hold_assignment(bool hold) {
  hold_ = hold;
  for (auto& g : groups_) g.att->hold_assignment(hold);
}

template <class T>
void MultiHeadAttentionT<T>::forward(core::ViewT<const T> src, core::ViewT<T> dst, bool train) {
  SB_CHECK(src.shape.rank == 3 && src.dim(2) == dim_,
           "MultiHeadAttention.forward src: expected (B, N, {}), got {}", dim_, src.shape.str());
  core::check_shape(dst, src.shape, "MultiHeadAttention.forward dst");
  const int64_t B = src.dim(0), N = src.dim(1), E = dim_, D = hd_, BN = B * N;
  b_ = B;
  n_ = N;
  src_ = src;
  ensure_shape(qkv_buf_, core::Shape{BN, 3 * E});
  ensure_shape(merged_, core::Shape{BN, E});
  qkv_.forward(src.reshape(core::Shape{BN, E}), qkv_buf_.view());
  for (auto& g : groups_) {
    const int64_t Hg = g.spec.heads;
    const core::Shape gs{B, Hg, N, D};
    const bool qkn = opt_.qk_norm;
    for (auto* t : {&g.q, &g.v, &g.o}) ensure_shape(*t, gs);
    if (!g.shared) ensure_shape(g.k, gs);
    if (qkn) {
      ensure_shape(g.qr, gs);
      if (!g.shared) ensure_shape(g.kr, gs);
    }
    T* qd = qkn ? g.qr.data() : g.q.data();
    T* kd = g.shared ? nullptr : qkn ? g.kr.data() : g.k.data();
    // (B N, 3E) rows -> (B, H_g, N, Dh) slices.
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < Hg; ++j)
        for (int64_t t = 0; t < N; ++t) {
          const T* row = qkv_buf_.data() + (b * N + t) * 3 * E + (g.h0 + j) * D;
          const int64_t o = ((b * Hg + j) * N + t) * D;
          std::copy_n(row, D, qd + o);
          if (kd) std::copy_n(row + E, D, kd + o);
          std::copy_n(row + 2 * E, D, g.v.data() + o);
        }
    if (qkn) {
      const int64_t rows = B * Hg * N;
      for (auto* c : {&g.qn, &g.kn}) {
        c->mean.resize(size_t(rows));
        c->rstd.resize(size_t(rows));
      }
      layer_norm_forward<T>(g.qr.data(), rows, D, nullptr, nullptr, opt_.eps, g.q.data(),
                            g.qn.mean.data(), g.qn.rstd.data());
      if (!g.shared)
        layer_norm_forward<T>(g.kr.data(), rows, D, nullptr, nullptr, opt_.eps, g.k.data(),
                              g.kn.mean.data(), g.kn.rstd.data());
    }
    const core::ViewT<const T> kin = g.shared ? g.q.cview() : g.k.cview();
    g.att->forward(g.q.cview(), kin, g.v.cview(), g.o.view(), bias_rows(g, false));
    // The commitment term against the centroids this forward routed with (training only:
    // it is part of the training objective).
    g.commit = 0;
    g.committed = train && opt_.commitment > 0 && g.spec.kind == "routing";
    if (g.committed) {
      ensure_shape(g.cdq, gs);
      g.cdq.zero();
      if (!g.shared) {
        ensure_shape(g.cdk, gs);
        g.cdk.zero();
      }
      g.commit = static_cast<RoutingAttention<T>&>(*g.att).commitment(
          opt_.commitment, g.cdq.data(), g.shared ? nullptr : g.cdk.data());
    }
    // The EMA step reads this forward's q and k; it cannot change this forward's
    // structure (already built) nor its backward.
    if (train && !hold_) g.att->update_centroids();
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < Hg; ++j)
        for (int64_t t = 0; t < N; ++t)
          std::copy_n(g.o.data() + ((b * Hg + j) * N + t) * D, D,
                      merged_.data() + (b * N + t) * E + (g.h0 + j) * D);
  }
  out_.forward(merged_.cview(), dst.reshape(core::Shape{BN, E}));
}

template <class T>
void MultiHeadAttentionT<T>::backward(core::ViewT<const T> ddst, core::ViewT<T> dsrc) {
  const int64_t B = b_, N = n_, E = dim_, D = hd_, BN = B * N;
  SB_CHECK(src_.data != nullptr, "MultiHeadAttention.backward: no forward before");
  core::check_shape(ddst, core::Shape{B, N, E}, "MultiHeadAttention.backward ddst");
  core::check_shape(dsrc, core::Shape{B, N, E}, "MultiHeadAttention.backward dsrc");
  ensure_shape(dmerged_, core::Shape{BN, E});
  ensure_shape(dqkv_, core::Shape{BN, 3 * E});
  out_.backward(merged_.cview(), ddst.reshape(core::Shape{BN, E}), dmerged_.view());
  for (auto& g : groups_) {
    const int64_t Hg = g.spec.heads;
    const core::Shape gs{B, Hg, N, D};
    for (auto* t : {&g.dq, &g.dk, &g.dv, &g.dout}) ensure_shape(*t, gs);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < Hg; ++j)
        for (int64_t t = 0; t < N; ++t)
          std::copy_n(dmerged_.data() + (b * N + t) * E + (g.h0 + j) * D, D,
                      g.dout.data() + ((b * Hg + j) * N + t) * D);
    g.dq.zero();
    g.dk.zero();
    g.dv.zero();
    g.att->backward(g.dout.cview(), g.dq.view(), g.dk.view(), g.dv.view(), bias_rows(g, true));
    const int64_t n = g.dq.numel();
    if (g.committed) {
      for (int64_t i = 0; i < n; ++i) g.dq[i] += g.cdq[i];
      if (!g.shared)
        for (int64_t i = 0; i < n; ++i) g.dk[i] += g.cdk[i];
    }
    if (g.shared) {  // the core's keys were the queries
      for (int64_t i = 0; i < n; ++i) g.dq[i] += g.dk[i];
      g.dk.zero();
    }
    const T* dqd = g.dq.data();
    const T* dkd = g.dk.data();
    if (opt_.qk_norm) {
      const int64_t rows = B * Hg * N;
      ensure_shape(g.dqr, gs);
      g.dqr.zero();
      layer_norm_backward<T>(g.qr.data(), g.dq.data(), rows, D, nullptr, g.qn.mean.data(),
                             g.qn.rstd.data(), g.dqr.data(), nullptr, nullptr);
      dqd = g.dqr.data();
      if (!g.shared) {
        ensure_shape(g.dkr, gs);
        g.dkr.zero();
        layer_norm_backward<T>(g.kr.data(), g.dk.data(), rows, D, nullptr, g.kn.mean.data(),
                               g.kn.rstd.data(), g.dkr.data(), nullptr, nullptr);
        dkd = g.dkr.data();
      }
    }
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < Hg; ++j)
        for (int64_t t = 0; t < N; ++t) {
          T* row = dqkv_.data() + (b * N + t) * 3 * E + (g.h0 + j) * D;
          const int64_t o = ((b * Hg + j) * N + t) * D;
          std::copy_n(dqd + o, D, row);
          std::copy_n(dkd + o, D, row + E);  // zero for shared groups
          std::copy_n(g.dv.data() + o, D, row + 2 * E);
        }
  }
  qkv_.backward(src_.reshape(core::Shape{BN, E}), dqkv_.cview(), dsrc.reshape(core::Shape{BN, E}));
}

template <class T>
double MultiHeadAttentionT<T>::aux_loss() const {
  double s = 0;
  for (const auto& g : groups_) s += g.commit;
  return opt_.commitment * s;
}

template <class T>
size_t MultiHeadAttentionT<T>::held_bytes() const {
  size_t n = bytes_of(qkv_buf_) + bytes_of(merged_) + bytes_of(dmerged_) + bytes_of(dqkv_);
  for (const auto& g : groups_) {
    n += g.att->held_bytes();
    for (const auto* t : {&g.q, &g.k, &g.v, &g.qr, &g.kr, &g.o, &g.dq, &g.dk, &g.dv, &g.dout,
                          &g.dqr, &g.dkr, &g.cdq, &g.cdk})
      n += bytes_of(*t);
    n += (g.qn.mean.capacity() + g.qn.rstd.capacity() + g.kn.mean.capacity() +
          g.kn.rstd.capacity()) *
         sizeof(T);
  }
  return n;
}

template class MultiHeadAttentionT<float>;
template class MultiHeadAttentionT<double>;

}  // namespace seqbench::nn
