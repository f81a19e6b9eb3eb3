#include "nn/attention/kinds.hpp"

namespace seqbench::nn {

namespace {
// Query rows per block of full attention: bounds its score workspace at 64 x N.
constexpr int64_t kFullBlock = 64;
}  // namespace

template <class T>
FullAttention<T>::FullAttention(const AttentionConfig& cfg, int64_t heads, int64_t head_dim)
    : Attention<T>(cfg, heads, head_dim, Attention<T>::Combine::Average) {}

template <class T>
void FullAttention<T>::build(int64_t, const T*, const T*, int64_t n, AttnStructure& st,
                             BuildScratch<T>&, core::Rng&) const {
  const int64_t all = (n + kFullBlock - 1) / kFullBlock;
  build_blocks(st, n, kFullBlock, all, this->cfg_.causal ? 0 : all);
}

template <class T>
LocalAttention<T>::LocalAttention(const AttentionConfig& cfg, int64_t heads, int64_t head_dim)
    : Attention<T>(cfg, heads, head_dim, Attention<T>::Combine::Average) {}

template <class T>
void LocalAttention<T>::build(int64_t, const T*, const T*, int64_t n, AttnStructure& st,
                              BuildScratch<T>&, core::Rng&) const {
  build_blocks(st, n, this->cfg_.window, 1, this->cfg_.causal ? 0 : 1);
}

template class FullAttention<float>;
template class FullAttention<double>;
template class LocalAttention<float>;
template class LocalAttention<double>;

}  // namespace seqbench::nn
