// Routing attention (online spherical k-means, Roy et al. 2021): centroids move toward
// the data under repeated updates; one update with λ = 0 is exactly the normalised mean
// direction of each centroid's members, λ = 1 and memberless centroids stay put; the
// causal structure only groups tokens of the same nearest centroid; the non-causal
// clusters are each centroid's top-w queries and keys; the commitment term is the mean
// distance to the nearest centroid, with its gradient by finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "gradcheck.hpp"
#include "nn/attention/kinds.hpp"
#include "test_util.hpp"

using namespace seqbench;
using core::Shape;
using DTensor = core::TensorT<double>;
using DRouting = nn::RoutingAttention<double>;

namespace {

nn::AttentionConfig routing_cfg(bool causal, int64_t window, int64_t clusters, double decay) {
  nn::AttentionConfig c;
  c.kind = "routing";
  c.causal = causal;
  c.window = window;
  c.clusters = clusters;
  c.ema_decay = decay;
  c.seed = 5;
  return c;
}

// (B, H, N, D) rows near `dirs` unit directions (chosen round-robin), noise σ.
DTensor clustered(int64_t B, int64_t H, int64_t N, int64_t D, const std::vector<int>& dirs,
                  double noise, core::Rng& rng) {
  DTensor x(Shape{B, H, N, D});
  for (int64_t r = 0; r < B * H * N; ++r) {
    const int axis = dirs[static_cast<size_t>(r) % dirs.size()];
    for (int64_t j = 0; j < D; ++j) x[r * D + j] = noise * rng.normal() + (j == axis ? 2.0 : 0.0);
  }
  return x;
}

std::vector<double> unit(const double* x, int64_t D) {
  double s = 0;
  for (int64_t j = 0; j < D; ++j) s += x[j] * x[j];
  std::vector<double> u(x, x + D);
  for (auto& v : u) v /= std::sqrt(s);
  return u;
}

// Index of the centroid of head h nearest (largest cosine) to row x.
int64_t nearest(const DRouting& r, int64_t h, const double* x) {
  const int64_t D = r.head_dim(), K = r.config().clusters;
  const auto u = unit(x, D);
  int64_t best = 0;
  double bv = -2;
  for (int64_t c = 0; c < K; ++c) {
    double s = 0;
    for (int64_t j = 0; j < D; ++j) s += u[j] * r.centroids()[(h * K + c) * D + j];
    if (s > bv) bv = s, best = c;
  }
  return best;
}

// Mean squared distance between each normalised row of q and k and its nearest centroid.
double mean_distance(const DRouting& r, const DTensor& q, const DTensor& k) {
  const int64_t H = q.dim(1), N = q.dim(2), D = q.dim(3), K = r.config().clusters;
  double sum = 0;
  int64_t count = 0;
  for (const DTensor* x : {&q, &k})
    for (int64_t row = 0; row < x->numel() / D; ++row) {
      const int64_t h = (row / N) % H;
      const auto u = unit(x->data() + row * D, D);
      const int64_t c = nearest(r, h, x->data() + row * D);
      for (int64_t j = 0; j < D; ++j) {
        const double d = u[j] - r.centroids()[(h * K + c) * D + j];
        sum += d * d;
      }
      ++count;
    }
  return sum / static_cast<double>(count);
}

DRouting& as_routing(nn::Attention<double>& a) { return dynamic_cast<DRouting&>(a); }

TEST(RoutingAttention, CentroidsMoveTowardTheData) {
  const int64_t B = 2, H = 2, N = 48, D = 6;
  core::Rng rng(1);
  const DTensor q = clustered(B, H, N, D, {0, 2, 4}, 0.2, rng);
  const DTensor k = clustered(B, H, N, D, {0, 2, 4}, 0.2, rng);
  auto att = nn::make_attention<double>(routing_cfg(true, 8, 3, 0.5), H, D);
  DRouting& r = as_routing(*att);
  DTensor o(q.shape());
  const double before = mean_distance(r, q, k);
  double last = before;
  for (int it = 0; it < 6; ++it) {
    att->forward(q.cview(), k.cview(), k.cview(), o.view());
    att->update_centroids();
    const double now = mean_distance(r, q, k);
    EXPECT_LE(now, last + 1e-12) << "iteration " << it;
    last = now;
  }
  EXPECT_LT(last, 0.5 * before);
  EXPECT_LT(last, 0.1);
  for (int64_t c = 0; c < H * 3; ++c) {
    double s = 0;
    for (int64_t j = 0; j < D; ++j) s += r.centroids()[c * D + j] * r.centroids()[c * D + j];
    EXPECT_NEAR(s, 1.0, 1e-12) << "centroid " << c << " is not a unit vector";
  }
}

TEST(RoutingAttention, UpdateIsTheEmaOfTheMembersMeanDirection) {
  const int64_t B = 1, H = 1, N = 20, D = 3, K = 3;
  core::Rng rng(2);
  const DTensor q = clustered(B, H, N, D, {0, 1}, 0.3, rng);
  const DTensor k = clustered(B, H, N, D, {0, 1}, 0.3, rng);
  DTensor o(q.shape());
  for (double decay : {0.0, 0.25, 1.0}) {
    auto att = nn::make_attention<double>(routing_cfg(true, 4, K, decay), H, D);
    DRouting& r = as_routing(*att);
    // μ0 ≈ e0, μ1 ≈ e1, μ2 = -e0 - e1: never the nearest, so it has no members.
    const std::vector<double> init = {0.9, 0.1, 0.1, 0.1, 0.9, -0.1, -0.7, -0.7, 0.0};
    for (int64_t c = 0; c < K; ++c) {
      const auto u = unit(init.data() + c * D, D);
      std::copy(u.begin(), u.end(), r.centroids().begin() + c * D);
    }
    const std::vector<double> old(r.centroids().begin(), r.centroids().end());
    std::vector<double> sums(static_cast<size_t>(K * D), 0.0);
    for (const DTensor* x : {&q, &k})
      for (int64_t t = 0; t < N; ++t) {
        const int64_t c = nearest(r, 0, x->data() + t * D);
        ASSERT_NE(c, 2);
        const auto u = unit(x->data() + t * D, D);
        for (int64_t j = 0; j < D; ++j) sums[c * D + j] += u[j];
      }
    att->forward(q.cview(), k.cview(), k.cview(), o.view());
    att->update_centroids();
    for (int64_t c = 0; c < 2; ++c) {
      const auto s = unit(sums.data() + c * D, D);
      std::vector<double> m(static_cast<size_t>(D));
      for (int64_t j = 0; j < D; ++j) m[j] = decay * old[c * D + j] + (1 - decay) * s[j];
      const auto expect = unit(m.data(), D);
      for (int64_t j = 0; j < D; ++j)
        EXPECT_NEAR(r.centroids()[c * D + j], expect[j], 1e-12) << "decay " << decay << " c " << c;
    }
    for (int64_t j = 0; j < D; ++j) EXPECT_EQ(r.centroids()[2 * D + j], old[2 * D + j]);
  }
}

TEST(RoutingAttention, CausalGroupsShareTheNearestCentroid) {
  const int64_t B = 2, H = 2, N = 40, D = 4, K = 3;
  auto att = nn::make_attention<double>(routing_cfg(true, 4, K, 0.9), H, D);
  const DRouting& r = as_routing(*att);
  core::Rng rng(3);
  DTensor q(Shape{B, H, N, D}), k(q.shape()), o(q.shape());
  gradcheck::fill_normal(rng, q);
  gradcheck::fill_normal(rng, k);
  att->forward(q.cview(), k.cview(), k.cview(), o.view());
  int64_t groups = 0;
  for (int64_t s = 0; s < B * H; ++s) {
    const auto& st = att->structure(s);
    const int64_t h = s % H;
    for (const auto& g : st.groups) {
      ++groups;
      for (int64_t i = 0; i < g.q_len; ++i) {
        const int64_t t = st.q[g.q_off + i];
        const int64_t cq = nearest(r, h, q.data() + (s * N + t) * D);
        for (int64_t j = 0; j < g.k_len; ++j)
          EXPECT_EQ(nearest(r, h, k.data() + (s * N + st.k[g.k_off + j]) * D), cq);
        // Its own key is in the group exactly when it routes to the same centroid.
        EXPECT_EQ(static_cast<bool>(st.self[g.q_off + i]),
                  nearest(r, h, k.data() + (s * N + t) * D) != cq);
      }
    }
  }
  EXPECT_GT(groups, B * H * K / 2);
}

TEST(RoutingAttention, NonCausalClustersAreEachCentroidsTopW) {
  const int64_t B = 1, H = 2, N = 30, D = 4, K = 4, w = 6;
  auto att = nn::make_attention<double>(routing_cfg(false, w, K, 0.9), H, D);
  const DRouting& r = as_routing(*att);
  core::Rng rng(4);
  DTensor q(Shape{B, H, N, D}), k(q.shape()), o(q.shape());
  gradcheck::fill_normal(rng, q);
  gradcheck::fill_normal(rng, k);
  att->forward(q.cview(), k.cview(), k.cview(), o.view());
  for (int64_t s = 0; s < B * H; ++s) {
    const auto& st = att->structure(s);
    ASSERT_EQ(static_cast<int64_t>(st.q.size()), K * w);
    for (int side = 0; side < 2; ++side) {
      const DTensor& x = side == 0 ? q : k;
      const auto& idx = side == 0 ? st.q : st.k;
      for (int64_t c = 0; c < K; ++c) {
        std::vector<bool> in(static_cast<size_t>(N), false);
        for (int64_t i = 0; i < w; ++i) in[idx[c * w + i]] = true;
        double min_in = 2, max_out = -2;
        for (int64_t t = 0; t < N; ++t) {
          const auto u = unit(x.data() + (s * N + t) * D, D);
          double sim = 0;
          for (int64_t j = 0; j < D; ++j) sim += u[j] * r.centroids()[((s % H) * K + c) * D + j];
          if (in[t])
            min_in = std::min(min_in, sim);
          else
            max_out = std::max(max_out, sim);
        }
        EXPECT_GE(min_in, max_out) << "slice " << s << " side " << side << " cluster " << c;
      }
    }
  }
}

TEST(RoutingAttention, CommitmentIsTheMeanDistanceToTheNearestCentroidWithItsGradient) {
  const int64_t B = 2, H = 2, N = 10, D = 5;
  core::Rng rng(3);
  DTensor q(Shape{B, H, N, D}), k(Shape{B, H, N, D}), v(Shape{B, H, N, D}), o(Shape{B, H, N, D});
  for (DTensor* x : {&q, &k, &v}) gradcheck::fill_normal(rng, *x);
  auto att = nn::make_attention<double>(routing_cfg(true, 4, 3, 0.9), H, D);
  DRouting& r = as_routing(*att);
  att->forward(q.cview(), k.cview(), v.cview(), o.view());
  EXPECT_NEAR(r.commitment(1.0, nullptr, nullptr), mean_distance(r, q, k), 1e-12);
  // β ∂c/∂q and β ∂c/∂k, against finite differences of β c (commitment reads the
  // forward's q and k, so perturbing them in place is enough).
  const double beta = 0.7;
  DTensor dq(q.shape()), dk(k.shape());
  dq.zero();
  dk.zero();
  const double c = r.commitment(beta, dq.data(), dk.data());
  EXPECT_GT(c, 0.0);
  auto loss = [&] { return beta * r.commitment(1.0, nullptr, nullptr); };
  gradcheck::expect_gradient("dq", q.data(), dq.data(), dq.numel(), loss);
  gradcheck::expect_gradient("dk", k.data(), dk.data(), dk.numel(), loss);
  // Scaling a row leaves its direction, hence the term: the gradient is orthogonal to x.
  for (int64_t row = 0; row < B * H * N; ++row) {
    double dot = 0;
    for (int64_t j = 0; j < D; ++j) dot += dq[row * D + j] * q[row * D + j];
    EXPECT_NEAR(dot, 0.0, 1e-12) << "row " << row;
  }
  // Shared QK (k is q): the queries count once.
  att->forward(q.cview(), q.cview(), v.cview(), o.view());
  EXPECT_NEAR(r.commitment(1.0, nullptr, nullptr), mean_distance(r, q, q), 1e-12);
}

TEST(RoutingAttention, SharedQkCountsTheRowsOnceWithTheSameResult) {
  // Keys that are the queries (the same buffer) and keys that are a copy of them give
  // the same centroid update and the same causal clusters.
  const int64_t B = 2, H = 2, N = 40, D = 5;
  core::Rng rng(8);
  const DTensor q = clustered(B, H, N, D, {0, 2, 4}, 0.3, rng);
  const DTensor copy = q;
  DTensor o(q.shape());
  auto shared = nn::make_attention<double>(routing_cfg(true, 6, 3, 0.5), H, D);
  auto separate = nn::make_attention<double>(routing_cfg(true, 6, 3, 0.5), H, D);
  shared->forward(q.cview(), q.cview(), q.cview(), o.view());
  separate->forward(q.cview(), copy.cview(), q.cview(), o.view());
  for (int64_t s = 0; s < B * H; ++s) {
    EXPECT_EQ(shared->structure(s).q, separate->structure(s).q);
    EXPECT_EQ(shared->structure(s).k, separate->structure(s).k);
  }
  shared->update_centroids();
  separate->update_centroids();
  const auto a = as_routing(*shared).centroids(), b = as_routing(*separate).centroids();
  double diff = 0, moved = 0;
  for (size_t i = 0; i < a.size(); ++i) diff = std::max(diff, std::abs(a[i] - b[i]));
  auto fresh = nn::make_attention<double>(routing_cfg(true, 6, 3, 0.5), H, D);
  const auto c0 = as_routing(*fresh).centroids();
  for (size_t i = 0; i < a.size(); ++i) moved = std::max(moved, std::abs(a[i] - c0[i]));
  EXPECT_LT(diff, 1e-12);
  EXPECT_GT(moved, 1e-2);  // the update did something
}

TEST(RoutingAttention, UpdateNeedsAForward) {
  auto att = nn::make_attention<double>(routing_cfg(true, 4, 2, 0.9), 1, 4);
  EXPECT_NE(testutil::message_of([&] { att->update_centroids(); }).find("call forward first"),
            std::string::npos);
  // Kinds without centroids accept the call and do nothing.
  nn::AttentionConfig full;
  full.kind = "full";
  auto f = nn::make_attention<double>(full, 1, 4);
  EXPECT_NO_THROW(f->update_centroids());
}

}  // namespace
