#include "nn/attention/structure.hpp"

#include <algorithm>
#include <cstdint>

#include "core/check.hpp"

namespace seqbench::nn {

void AttnStructure::clear() {
  q.clear();
  k.clear();
  groups.clear();
  self.clear();
  contiguous = false;
}

int64_t AttnStructure::max_rows() const {
  int64_t m = 0;
  for (const auto& g : groups) m = std::max<int64_t>(m, g.q_len);
  return m;
}

int64_t AttnStructure::max_keys() const {
  int64_t m = 0;
  for (const auto& g : groups) m = std::max<int64_t>(m, g.k_len);
  return m;
}

size_t AttnStructure::bytes() const {
  return (q.capacity() + k.capacity()) * sizeof(int32_t) + groups.capacity() * sizeof(AttnGroup) +
         self.capacity();
}

void add_group(AttnStructure& st, int64_t q_off, int64_t q_len, int64_t k_off, int64_t k_len) {
  SB_CHECK(q_off + q_len <= INT32_MAX && k_off + k_len <= INT32_MAX,
           "attention structure: {} query occurrences / {} key slots exceed 32-bit offsets "
           "(hint: fewer rounds or clusters, or a shorter sequence)",
           q_off + q_len, k_off + k_len);
  for (int64_t r = 0; r < q_len; r += kMaxGroupRows) {
    const int64_t len = std::min<int64_t>(kMaxGroupRows, q_len - r);
    st.groups.push_back(AttnGroup{static_cast<int32_t>(q_off + r), static_cast<int32_t>(len),
                                  static_cast<int32_t>(k_off), static_cast<int32_t>(k_len)});
  }
}

void build_blocks(AttnStructure& st, int64_t n, int64_t block, int64_t before, int64_t after) {
  SB_CHECK(block > 0 && before >= 0 && after >= 0, "build_blocks: block={} before={} after={}",
           block, before, after);
  st.clear();
  st.contiguous = true;
  st.q.resize(static_cast<size_t>(n));
  st.k.resize(static_cast<size_t>(n));
  for (int64_t t = 0; t < n; ++t) st.q[t] = st.k[t] = static_cast<int32_t>(t);
  const int64_t nblocks = (n + block - 1) / block;
  for (int64_t b = 0; b < nblocks; ++b) {
    const int64_t q0 = b * block, q1 = std::min(n, q0 + block);
    // Clip in block units first so that "all" (before/after >= nblocks) cannot overflow.
    const int64_t k0 = std::max<int64_t>(0, b - std::min(before, b)) * block;
    const int64_t k1 = std::min(n, (std::min(b + after, nblocks - 1) + 1) * block);
    add_group(st, q0, q1 - q0, k0, k1 - k0);
  }
}

void build_sorted_chunks(AttnStructure& st, const int32_t* q_order, const int32_t* k_order,
                         int64_t n, int64_t w) {
  const int64_t q_base = static_cast<int64_t>(st.q.size());
  const int64_t k_base = static_cast<int64_t>(st.k.size());
  st.q.insert(st.q.end(), q_order, q_order + n);
  st.k.insert(st.k.end(), k_order, k_order + n);
  for (int64_t c0 = 0; c0 < n; c0 += w) {
    const int64_t len = std::min(w, n - c0);
    add_group(st, q_base + c0, len, k_base + c0, len);
  }
}

void build_bucket_chunks(AttnStructure& st, const int32_t* qb, const int32_t* kb, int64_t n,
                         int64_t nb, int64_t w, bool causal, std::vector<int32_t>& work) {
  // Slots: (bucket, chunk) pairs; a bucket with c keys has max(1, ceil(c / w)) of them,
  // so there are at most nb + n / w + 1 <= nb + n + 1.
  const int64_t max_slots = nb + n + 1;
  work.resize(static_cast<size_t>(4 * nb + 2 + n + max_slots + 1));
  int32_t* cnt = work.data();        // (nb) keys per bucket
  int32_t* kstart = cnt + nb;        // (nb + 1) first key slot of each bucket
  int32_t* run = kstart + nb + 1;    // (nb) running counters
  int32_t* sbase = run + nb;         // (nb + 1) first slot of each bucket
  int32_t* slot_of = sbase + nb + 1; // (n) slot of each query
  int32_t* scnt = slot_of + n;       // (max_slots + 1) queries per slot, then offsets

  std::fill(cnt, cnt + nb, 0);
  for (int64_t t = 0; t < n; ++t) ++cnt[kb[t]];
  kstart[0] = 0;
  for (int64_t b = 0; b < nb; ++b) kstart[b + 1] = kstart[b] + cnt[b];
  sbase[0] = 0;
  for (int64_t b = 0; b < nb; ++b)
    sbase[b + 1] = sbase[b] + std::max<int32_t>(1, static_cast<int32_t>((cnt[b] + w - 1) / w));
  const int64_t nslots = sbase[nb];

  // Keys of each bucket in time order.
  const int64_t k_base = static_cast<int64_t>(st.k.size());
  st.k.resize(static_cast<size_t>(k_base + n));
  std::copy(kstart, kstart + nb, run);
  for (int64_t t = 0; t < n; ++t) st.k[k_base + run[kb[t]]++] = static_cast<int32_t>(t);

  // m_t = keys of the query's bucket at positions <= t: a prefix count, so it only
  // depends on the past.
  std::fill(run, run + nb, 0);
  std::fill(scnt, scnt + nslots + 1, 0);
  for (int64_t t = 0; t < n; ++t) {
    ++run[kb[t]];
    const int32_t m = run[qb[t]];
    const int32_t j = m > 0 ? static_cast<int32_t>((m - 1) / w) : 0;
    slot_of[t] = sbase[qb[t]] + j;
    ++scnt[slot_of[t] + 1];
  }
  for (int64_t s = 0; s < nslots; ++s) scnt[s + 1] += scnt[s];

  // Queries by slot, in time order within a slot (counting sort is stable).
  const int64_t q_base = static_cast<int64_t>(st.q.size());
  st.q.resize(static_cast<size_t>(q_base + n));
  st.self.resize(static_cast<size_t>(q_base + n));
  for (int64_t t = 0; t < n; ++t) {
    const int64_t pos = q_base + scnt[slot_of[t]]++;
    st.q[pos] = static_cast<int32_t>(t);
    st.self[pos] = qb[t] != kb[t];
  }
  // scnt[s] is now the end of slot s (= start of slot s + 1).
  for (int64_t b = 0; b < nb; ++b) {
    for (int64_t s = sbase[b]; s < sbase[b + 1]; ++s) {
      const int64_t q1 = scnt[s], q0 = s == 0 ? 0 : scnt[s - 1];
      if (q1 == q0) continue;
      const int64_t j = s - sbase[b];
      const int64_t lo = std::max<int64_t>(0, j - 1) * w;
      const int64_t hi = std::min<int64_t>(cnt[b], (j + (causal ? 1 : 2)) * w);
      add_group(st, q_base + q0, q1 - q0, k_base + kstart[b] + lo, std::max<int64_t>(0, hi - lo));
    }
  }
}

}  // namespace seqbench::nn
