// Scratch buffers and activations sized per call. Buffers that only grow: layers size their per-call workspaces with grow(v, n),
// so a steady shape allocates once and a smaller call reuses the larger buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/tensor.hpp"

namespace seqbench::core {

template <class V>
void grow(std::vector<V>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
}

// The bytes a buffer holds (its size, not its capacity), for held_bytes() reports.
template <class V>
size_t bytes_of(const std::vector<V>& v) {
  return v.size() * sizeof(V);
}

template <class T>
size_t bytes_of(const TensorT<T>& t) {
  return static_cast<size_t>(t.numel()) * sizeof(T);
}

// Gives t shape s unless it has it already (an activation sized for the current batch).
template <class T>
void ensure_shape(TensorT<T>& t, const Shape& s) {
  if (!(t.shape() == s)) t.resize(s);
}

}  // namespace seqbench::core
