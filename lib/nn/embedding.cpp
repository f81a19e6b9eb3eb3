#include "nn/embedding.hpp"

#include <algorithm>

namespace seqbench::nn {

template <class T>
EmbeddingT<T>::EmbeddingT(core::ParamStoreT<T>& ps, const std::string& name, int64_t vocab,
                          int64_t dim)
    : vocab_(vocab), dim_(dim), table_(&ps.add(name + ".table", core::Shape{vocab, dim})) {}

template <class T>
void EmbeddingT<T>::init(core::Rng& rng) {
  for (int64_t i = 0; i < table_->numel(); ++i) table_->value[i] = static_cast<T>(rng.normal());
}

template <class T>
void EmbeddingT<T>::forward(const int32_t* ids, int64_t n, core::ViewT<T> dst) const {
  core::check_shape(dst, core::Shape{n, dim_}, "Embedding.forward dst");
  for (int64_t r = 0; r < n; ++r) {
    SB_CHECK(ids[r] >= 0 && ids[r] < vocab_, "token id {} at position {} outside vocabulary [0, {})",
             ids[r], r, vocab_);
    std::copy_n(table_->value + int64_t(ids[r]) * dim_, dim_, dst.data + r * dim_);
  }
}

template <class T>
void EmbeddingT<T>::backward(const int32_t* ids, int64_t n, core::ViewT<const T> ddst) {
  core::check_shape(ddst, core::Shape{n, dim_}, "Embedding.backward ddst");
  for (int64_t r = 0; r < n; ++r) {
    T* g = table_->grad + int64_t(ids[r]) * dim_;
    const T* d = ddst.data + r * dim_;
    for (int64_t k = 0; k < dim_; ++k) g[k] += d[k];
  }
}

template class EmbeddingT<float>;
template class EmbeddingT<double>;

}  // namespace seqbench::nn
