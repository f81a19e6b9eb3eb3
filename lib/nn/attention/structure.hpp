// The sparse structure of one (batch, head) slice of attention: which query occurrences
// attend to which keys. Every attention kind is a way of building this structure; one
// engine (nn/attention/attention.hpp) runs it.
//
//   q       (Nocc)  token of each query occurrence, grouped; a token occurs once per
//                   hash round / cluster it belongs to (or not at all)
//   k       (Nk)    token of each key slot, grouped
//   groups          a group is a range of q and a range of k: every occurrence in the
//                   q range attends to every key in the k range (minus the causal mask,
//                   which the engine applies on token positions), so a group is one
//                   dense (q_len, k_len) block of scores
//   self    (Nocc)  empty, or 1 where the occurrence also attends to its own token's key
//                   although that key is not in its group (SMYRF's "every query sees at
//                   least itself"; bucketed kinds whose query and key buckets differ)
//   contiguous      q and k are 0 .. N-1 in order, so the engine reads Q/K/V rows in
//                   place instead of gathering them (full and local attention)
//
// Cluster ids, hash buckets and sort orders only decide this structure; they are
// discrete and so constants in backward.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace seqbench::nn {

struct AttnGroup {
  int32_t q_off, q_len, k_off, k_len;
};

struct AttnStructure {
  std::vector<int32_t> q, k;
  std::vector<AttnGroup> groups;
  std::vector<uint8_t> self;
  bool contiguous = false;

  // Keeps the capacity, so rebuilding for the same shape does not allocate.
  void clear();
  int64_t max_rows() const;  // largest q_len
  int64_t max_keys() const;  // largest k_len
  size_t bytes() const;      // capacity held, in bytes
};

// Groups longer than this are split into several groups with the same key range, which
// bounds the score workspace by kMaxGroupRows x (largest key range).
inline constexpr int32_t kMaxGroupRows = 128;

// Appends a group (split by kMaxGroupRows); offsets index st.q and st.k.
void add_group(AttnStructure& st, int64_t q_off, int64_t q_len, int64_t k_off, int64_t k_len);

// Contiguous blocks of `block` tokens; block b attends to the keys of blocks
// [b - before, b + after] (clipped to the sequence). Full attention is before = after =
// "all" (non-causal) or after = 0 (causal); local attention is before = 1.
void build_blocks(AttnStructure& st, int64_t n, int64_t block, int64_t before, int64_t after);

// Appends one round of equal-size clusters: q_order and k_order (N each) are the tokens
// in cluster order (e.g. sorted by hash); cluster i is positions [i w, (i+1) w) of both,
// and the i-th query cluster attends to the i-th key cluster.
void build_sorted_chunks(AttnStructure& st, const int32_t* q_order, const int32_t* k_order,
                         int64_t n, int64_t w);

// Appends one round of bucketed chunks, causally consistent (no future token can change
// what a token sees). qb, kb (N): the query and key bucket of every token, in [0, nb).
// The keys of bucket b, in time order, are cut into chunks of w. A query at position t
// in bucket b with m_t keys of bucket b at positions <= t belongs to chunk
// j = (m_t - 1) / w (0 when m_t = 0) and attends to key chunks j-1 and j (causal; the
// engine masks keys after t) or j-1 .. j+1 (non-causal). Because m_t and the ranks of
// keys up to t depend only on tokens <= t, the past keys a query sees never depend on
// the future. self[t] = (qb[t] != kb[t]): then its own key is not in the chunks.
// work: scratch, resized as needed.
void build_bucket_chunks(AttnStructure& st, const int32_t* qb, const int32_t* kb, int64_t n,
                         int64_t nb, int64_t w, bool causal, std::vector<int32_t>& work);

}  // namespace seqbench::nn
