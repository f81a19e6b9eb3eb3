// Embedding: dst (N, D) = table[ids[n]] with table (V, D). Backward scatters (+=)
// rows of ddst into the table's gradient. Ids are checked against V.
#pragma once

#include <cstdint>
#include <string>

#include "core/param_store.hpp"
#include "core/rng.hpp"

namespace seqbench::nn {

template <class T>
class EmbeddingT {
 public:
  EmbeddingT(core::ParamStoreT<T>& ps, const std::string& name, int64_t vocab, int64_t dim);

  void init(core::Rng& rng);  // N(0, 1), as PyTorch

  // ids (N) in [0, V) -> dst (N, D).
  void forward(const int32_t* ids, int64_t n, core::ViewT<T> dst) const;
  // table.grad[ids[n]] += ddst[n].
  void backward(const int32_t* ids, int64_t n, core::ViewT<const T> ddst);

  int64_t vocab() const { return vocab_; }
  int64_t dim() const { return dim_; }
  core::ParamT<T>& table() { return *table_; }

 private:
  int64_t vocab_, dim_;
  core::ParamT<T>* table_;
};

using Embedding = EmbeddingT<float>;

}  // namespace seqbench::nn
