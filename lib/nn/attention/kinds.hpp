// The attention kinds: each builds a slice's sparse structure (nn/attention/structure.hpp)
// and leaves the arithmetic to the engine in nn/attention/attention.hpp. Make them with
// make_attention(cfg, heads, head_dim). Shapes: N tokens, D head dim, w = cfg.window.
// Equations, memory and the deviations from the papers' code: docs/attention.md.
//
//   full     blocks of 64 queries attend to every key (causal: keys <= the block's end,
//            masked per token). The reference; never more than 64 x N scores at a time.
//   local    blocks of w tokens attend to their own and the previous block (causal), or
//            to the previous, own and next block (non-causal).
//   routing  online spherical k-means (Roy et al. 2021). Centroids μ (H, k, D) shared by
//            Q and K; x̂ = x / ‖x‖. Non-causal: centroid c takes its top-w queries and
//            top-w keys by x̂ . μ_c (balanced clusters, the paper), the i-th query set
//            attends to the i-th key set, a token in several clusters gets the average
//            of its outputs, a token in none gets 0. Causal: every query and key goes to
//            its nearest centroid (argmax x̂ . μ_c) and bucketed chunks of w
//            (build_bucket_chunks) keep each block at <= 2w keys without letting a
//            future token change what a past token sees (the paper's top-w would).
//   random   the routing ablation: per round a seeded random permutation of the tokens
//            cut into clusters of w (balanced), attention inside a cluster (causal:
//            keys <= the query), rounds averaged. Data-independent, hence leak-free.
//   smyrf    Daras et al. 2020. Per round r, a ~ N(0, I_{D+2}) and the XBOX+ transform
//            F(q) = [q; 0; √(C - ‖q‖²)], G(k) = [k; √(C - ‖k‖²); 0], C = M_Q² + M_K²,
//            hash h = a . F(q) or a . G(k). Non-causal: queries and keys sorted by hash
//            separately and cut into clusters of w; query cluster i attends to key
//            cluster i. Causal: C_t from the prefix maxima of the norms, the hash of the
//            unit vector F / √C_t quantised into nb = ceil(N / w) equal-probability
//            buckets (Φ quantiles), bucketed chunks, and every query also sees its own
//            key. Rounds combined by logsumexp weights.
//   lsh      Reformer angular LSH: per round R ~ N(0, 1)^(D, nb/2), bucket =
//            argmax [xR; -xR] (nb = clusters; 1 = a single bucket), queries hashed by Q,
//            keys by K (with shared QK both are Q up to a norm, so the buckets agree),
//            bucketed chunks of w: a chunk sees its own and the previous chunk of its
//            bucket (non-causal: and the next). Rounds combined by logsumexp weights.
#pragma once

#include <span>
#include <vector>

#include "nn/attention/attention.hpp"

namespace seqbench::nn {

template <class T>
class FullAttention : public Attention<T> {
 public:
  FullAttention(const AttentionConfig& cfg, int64_t heads, int64_t head_dim);

 protected:
  void build(int64_t h, const T* q, const T* k, int64_t n, AttnStructure& st,
             BuildScratch<T>& sc, core::Rng& rng) const override;
};

template <class T>
class LocalAttention : public Attention<T> {
 public:
  LocalAttention(const AttentionConfig& cfg, int64_t heads, int64_t head_dim);

 protected:
  void build(int64_t h, const T* q, const T* k, int64_t n, AttnStructure& st,
             BuildScratch<T>& sc, core::Rng& rng) const override;
};

template <class T>
class RoutingAttention : public Attention<T> {
 public:
  // Centroids start as unit vectors drawn from N(0, I) with Rng::derive(seed, kCentroidStream).
  RoutingAttention(const AttentionConfig& cfg, int64_t heads, int64_t head_dim);

  // Training mode only, after forward: with x̂ the last forward's normalised queries and
  // keys (every batch row; the queries once when the keys are the queries, shared QK,
  // which leaves the direction of s_c as it is) and c(x̂) = argmax_c x̂ . μ_c,
  //   s_c = Σ_{c(x̂) = c} x̂,   μ_c <- normalise(λ μ_c + (1 - λ) s_c / ‖s_c‖)
  // for each head and each centroid with members (λ = ema_decay).
  void update_centroids() override;
  // The commitment term of the last forward (Roy et al.: β‖x − sg(μ)‖², as in VQ-VAE),
  // with the centroids as they are now (call it before update_centroids):
  //   c = (1 / R) Σ_x ‖x̂ − μ_{c(x̂)}‖²,  x̂ = x / ‖x‖,
  // over the R rows of q and k (of q only when k is q, shared QK). Adds β ∂c/∂q to dq and
  // β ∂c/∂k to dk, both (B, H, N, D) (dk may be null when k is q):
  //   ∂‖x̂ − μ‖²/∂x = 2 ((x̂ . μ) x̂ − μ) / ‖x‖   (0 for a zero row).
  // The centroids get no gradient (they follow the EMA). Returns c.
  double commitment(double beta, T* dq, T* dk);
  // (H, k, D) unit rows; writable for checkpoints and tests.
  std::span<T> centroids() { return centroids_; }
  std::span<const T> centroids() const { return centroids_; }
  // Nearest centroid of head h for each of the n rows of x (n, D): out (n). Uses the
  // scratch vectors xn and sims (see for_each_assignment).
  void assign(int64_t h, const T* x, int64_t n, int32_t* out, std::vector<T>& xn,
              std::vector<T>& sims) const;
  size_t held_bytes() const override;

  static constexpr uint64_t kCentroidStream = 0x6b6d65616e73ULL;
  // Rows normalised and scored against the centroids at a time.
  static constexpr int64_t kAssignBlock = 256;

 protected:
  void build(int64_t h, const T* q, const T* k, int64_t n, AttnStructure& st,
             BuildScratch<T>& sc, core::Rng& rng) const override;

 private:
  // fn(t, c, x̂_t) for every row t of x (n, D) in order: c = argmax_c x̂_t . μ_c of head
  // h (ties: the lower c), x̂_t the row normalised. Works through kAssignBlock rows at a
  // time, so the scratch is xn (block, D) and sims (block, k), not (n, D) and (n, k).
  template <class Fn>
  void for_each_assignment(int64_t h, const T* x, int64_t n, std::vector<T>& xn,
                           std::vector<T>& sims, Fn&& fn) const;

  int64_t kc_;                       // clusters k
  std::vector<T> centroids_;         // (H, k, D)
  // Workspaces of update_centroids (sums_ (k, D)) and of both it and commitment (xn_
  // (block, D), sims_ (block, k)).
  std::vector<T> sums_, xn_, sims_;
};

template <class T>
class RandomAttention : public Attention<T> {
 public:
  RandomAttention(const AttentionConfig& cfg, int64_t heads, int64_t head_dim);

 protected:
  void build(int64_t h, const T* q, const T* k, int64_t n, AttnStructure& st,
             BuildScratch<T>& sc, core::Rng& rng) const override;
};

template <class T>
class SmyrfAttention : public Attention<T> {
 public:
  SmyrfAttention(const AttentionConfig& cfg, int64_t heads, int64_t head_dim);

 protected:
  void build(int64_t h, const T* q, const T* k, int64_t n, AttnStructure& st,
             BuildScratch<T>& sc, core::Rng& rng) const override;
};

template <class T>
class LshAttention : public Attention<T> {
 public:
  LshAttention(const AttentionConfig& cfg, int64_t heads, int64_t head_dim);

 protected:
  void build(int64_t h, const T* q, const T* k, int64_t n, AttnStructure& st,
             BuildScratch<T>& sc, core::Rng& rng) const override;
};

}  // namespace seqbench::nn
