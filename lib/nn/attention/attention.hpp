// Multi-head attention cores: softmax attention of queries over keys, per (batch, head)
// slice, with a hand-written backward. Full attention is the reference; the sparse kinds
// (local, routing, random, smyrf, lsh) compute it over a sparse structure and never form
// an N x N matrix. docs/attention.md has each kind's equations, memory and deviations
// from the papers' code; nn/attention/kinds.hpp the kinds themselves.
//
// Shapes: B batch, H heads, N tokens, D head dim. q, k, v and dst are (B, H, N, D)
// row-major; a slice s = b H + h is one (N, D) block of each.
//
// Engine (one for every kind). For each group of a slice's structure (see
// nn/attention/structure.hpp), with Qg (R, D), Kg (C, D), Vg (C, D) the gathered rows:
//   S   = Qg Kg^T / sqrt(D)                 (R, C)
//         causal: S_ij = -inf where key token > query token
//         shared_qk: S_ij = -1e5 where key token == query token (Reformer: a token
//         attends to itself only when nothing else is visible; constant in backward)
//         + a "self" column s_i = q_t . k_t / sqrt(D) where the structure asks for it
//         relative bias (optional table R (H, nb), h = the slice's head), added to every
//         score including the self column (distance 0), before the masks:
//           causal:     S_ij += R[h, min(t_i - t_j, nb - 1)]          (t_i >= t_j)
//           non-causal: S_ij += R[h, clamp(t_i - t_j, -(M-1), M-1) + M - 1], nb = 2M - 1
//         Mask constants (causal -inf, shared_qk -1e5) replace the biased score. The
//         bias is a score term only: the structure builders (hashing, clustering) never
//         see it.
//   lse = logsumexp_j S_ij,  P = exp(S - lse),  o_occ = P Vg   (R, D)
// A row with no visible key gets o_occ = 0 and lse = -inf. The occurrences of token t
// (one per round / cluster it is in) are combined into dst_t = Σ w_occ o_occ with
//   average:     w_occ = 1 / (number of occurrences of t)           (routing, random)
//   logsumexp:   w_occ = exp(lse_occ - logsumexp over t's occurrences)  (smyrf, lsh)
// Tokens with no occurrence (routing's top-w may leave some out) get dst_t = 0. For a
// single occurrence per token both rules give w = 1.
// Backward (per group, recomputing P from the cached lse; do_occ = w_occ ddst_t):
//   dP = do_occ Vg^T,  D_i = do_occ,i . o_occ,i,
//   dlse_i = w_occ (ddst_t . (o_occ - dst_t))   (logsumexp rule; 0 for average)
//   dS = P ⊙ (dP - D_i + dlse_i)  (0 where S is a mask constant),
//   dQg += dS Kg / sqrt(D), dKg += dS^T Qg / sqrt(D), dVg += P^T do_occ,
// scattered back into dq, dk, dv; dR[h, bucket(t_i - t_j)] += dS_ij (self column too),
// summed per slice and then over the batch in a fixed order (deterministic).
//
// Kept between forward and backward (Nocc occurrences over all slices, typically
// rounds x B H N): the structure of every slice (indices, groups; O(Nocc) ints), lse and
// w (Nocc), o_occ (Nocc, D), views of q, k, v and of the bias table (the caller keeps
// them alive until backward); backward adds a (B H, nb) bias-gradient buffer.
// Workspaces, sized once per shape and per thread: score blocks of (largest group rows)
// x (largest key range), the gathered rows of non-contiguous structures (contiguous
// ones, full and local, are read in place), per-token scalars (N).
//
// Parallelism: slices run in parallel (OpenMP), each on one thread, so the gemm calls
// inside run single-threaded when there are several slices.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "config/field.hpp"
#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "nn/attention/structure.hpp"

namespace seqbench::nn {

enum class AttentionKind { Full, Local, Routing, Random, Smyrf, Lsh };

// The attention kinds, one entry each (nn/attention/registry.cpp). attention.kind's and
// model.attention's allowed values, "did you mean" and the table in docs/models.md come
// from here.
struct AttentionEntry {
  const char* name;
  const char* doc;   // one line
  AttentionKind kind;
  bool content;      // groups tokens by their content (hashing, clustering, random draws)
};
const std::vector<AttentionEntry>& attention_registry();
const std::vector<std::string>& attention_kind_names();
// "full | local | ...".
const std::string& attention_kinds_doc();
// The entry named `name`; throws core::UsageError "<key>: unknown attention kind ...".
const AttentionEntry& find_attention(const std::string& name,
                                     const std::string& key = "attention.kind");
// The docs table: | kind | groups by content | what it is |.
std::string attention_markdown();

struct AttentionConfig {
  std::string kind = "full";  // one of attention_kind_names()
  bool causal = true;         // token t sees keys at positions <= t only
  int64_t window = 64;        // w: local block, routing window, cluster / chunk size
  int64_t clusters = 8;       // routing: centroids k; lsh: hash buckets (1 or even)
  int64_t rounds = 1;         // lsh, smyrf: hash rounds L; random: random assignments
  bool shared_qk = false;     // K derived from Q (Reformer): mask each token's own key
  double ema_decay = 0.999;   // routing: centroid EMA decay λ
  uint64_t seed = 0;          // random projections, random assignments, centroid init

  template <class V>
  void visit(V& v) {
    v("kind", kind, attention_kinds_doc(), config::one_of(attention_kind_names()));
    v("causal", causal, "token t attends to positions <= t only");
    v("window", window, "w: local block / routing window / cluster or chunk size",
      config::at_least(1).because("the Routing Transformer uses 512"));
    v("clusters", clusters, "routing: k-means centroids; lsh: hash buckets (1 or even)",
      config::at_least(1).because("about sqrt(N)"));
    v("rounds", rounds, "lsh / smyrf: hash rounds; random: random assignments",
      config::at_least(1).because("Reformer uses 1 to 8"));
    v("shared_qk", shared_qk, "K is derived from Q: a token's own key is masked (Reformer)");
    v("ema_decay", ema_decay, "routing: centroid EMA decay",
      config::range(0.0, 1.0).because("the paper uses 0.999"));
    v("seed", seed, "seed of random projections, assignments and centroid init");
  }
};

// Throws core::UsageError naming the valid kinds.
AttentionKind parse_attention_kind(const std::string& s);
// Throws core::UsageError for an unknown kind or an out-of-range field (config::check),
// or lsh with an odd bucket count.
void check_rules(const AttentionConfig& cfg);

// Per-thread scratch for the kinds' structure builders (bucket ids, orders,
// projections); grows to the largest shape seen and is then reused.
template <class T>
struct BuildScratch {
  std::vector<int32_t> qb, kb, order, work;
  std::vector<T> xq, xk, proj, tmp;
};

template <class T>
class Attention {
 public:
  enum class Combine { Average, LogSumExp };

  virtual ~Attention() = default;
  Attention(const Attention&) = delete;
  Attention& operator=(const Attention&) = delete;

  // q, k, v (B, H, N, D) -> dst (B, H, N, D). Builds each slice's structure (unless
  // held, see hold_assignment) and caches what backward needs. bias: optional relative
  // position table (H, nb), see the equations above (causal: nb >= 1; non-causal: nb
  // odd); an empty view (data null) means no bias.
  void forward(core::ViewT<const T> q, core::ViewT<const T> k, core::ViewT<const T> v,
               core::ViewT<T> dst, core::ViewT<const T> bias = {});
  // ddst (B, H, N, D) -> dq, dk, dv (B, H, N, D), accumulated (+=). Needs the forward
  // just before, with its q, k, v (and bias table) still alive; may be called more than
  // once. dbias: optional (H, nb), accumulated (+=); needs a bias in that forward.
  void backward(core::ViewT<const T> ddst, core::ViewT<T> dq, core::ViewT<T> dk,
                core::ViewT<T> dv, core::ViewT<T> dbias = {});

  // While held, forward reuses the last structure (clusters, buckets, orders) instead
  // of rebuilding it; the shape must stay the same. For finite-difference checks, and
  // for recomputing a forward exactly.
  void hold_assignment(bool hold) { hold_ = hold; }
  bool holding_assignment() const { return hold_; }

  // Routing only: one EMA step of the centroids towards the last forward's normalised
  // queries and keys; the other kinds have no state and do nothing.
  virtual void update_centroids() {}

  const AttentionConfig& config() const { return cfg_; }
  AttentionKind kind() const { return kind_; }
  int64_t heads() const { return heads_; }
  int64_t head_dim() const { return dim_; }
  Combine combine() const { return combine_; }
  // Bytes held now by caches, structures and workspaces (not the caller's tensors).
  virtual size_t held_bytes() const;

  // The last forward's structure of slice s = b H + h (tests, probes).
  int64_t slices() const { return static_cast<int64_t>(st_.size()); }
  const AttnStructure& structure(int64_t s) const;
  // How many structures forward has built so far; draw i uses random numbers derived
  // from (seed, i), so two instances with the same config draw the same hashes.
  uint64_t draws() const { return draws_; }
  // Restores the draw index (checkpoints: save draws() and, for routing, centroids()).
  void set_draws(uint64_t draws) { draws_ = draws; }

 protected:
  Attention(const AttentionConfig& cfg, int64_t heads, int64_t head_dim, Combine combine);

  // Fills st (cleared) for one slice of head h: q, k (N, D). Runs in parallel over
  // slices, so it may only read members; sc is this thread's scratch, rng this slice's.
  virtual void build(int64_t h, const T* q, const T* k, int64_t n, AttnStructure& st,
                     BuildScratch<T>& sc, core::Rng& rng) const = 0;

  AttentionConfig cfg_;
  AttentionKind kind_;
  int64_t heads_, dim_;
  // The last forward's inputs and shape.
  core::ViewT<const T> q_, k_, v_;
  core::ViewT<const T> bias_;  // (H, nb) or empty
  int64_t b_ = 0, n_ = 0, nb_ = 0;

 private:
  struct Workspace {
    // (R, D) gathered rows / gradients, (C, D) likewise (only when some slice's
    // structure is not contiguous), (R, C) scores, (R) self column, (Nocc of a slice)
    // per-occurrence terms, (N) per token.
    std::vector<T> qg, kg, vg, dog, dqg, dkg, dvg, s, dp, sself, occ_d, occ_dlse, tok_m, tok_s;
    size_t bytes() const;
  };
  void reserve_workspaces();
  // S (R, C) of group g: scaled products plus the relative bias, then the causal and
  // self masks. bh: this slice's head row of the bias table (nb), or null.
  void scores(const AttnStructure& st, const AttnGroup& g, const T* qg, const T* kg,
              const T* bh, T* s) const;
  T self_score(const T* qrow, const T* krow, const T* bh) const;
  // The bias bucket of query token tq and key token tk (0 .. nb - 1).
  int64_t bias_bucket(int64_t tq, int64_t tk) const;
  const T* bias_row(int64_t s) const;
  void forward_slice(int64_t s, T* dst, Workspace& ws);
  // dbh: this slice's bias-gradient row (nb), or null.
  void backward_slice(int64_t s, const T* ddst, T* dq, T* dk, T* dv, T* dbh,
                      Workspace& ws) const;

  Combine combine_;
  T scale_;
  bool hold_ = false;
  uint64_t draws_ = 0;
  std::vector<AttnStructure> st_;       // (B H)
  std::vector<int64_t> occ_off_;        // (B H + 1) offsets into lse_, w_, oocc_
  std::vector<T> lse_, w_, oocc_;       // (Nocc), (Nocc), (Nocc, D)
  std::vector<T> dbias_s_;              // (B H, nb) per-slice bias gradients (backward)
  std::vector<Workspace> ws_;           // per thread
  std::vector<BuildScratch<T>> scratch_;  // per thread
  int64_t max_rows_ = 0, max_keys_ = 0, max_occ_ = 0;
  bool gathers_ = false;  // some slice's structure needs gathered rows
};

// Validates cfg (core::UsageError) and makes the kind's class (nn/attention/kinds.hpp).
template <class T>
std::unique_ptr<Attention<T>> make_attention(const AttentionConfig& cfg, int64_t heads,
                                             int64_t head_dim);

}  // namespace seqbench::nn
