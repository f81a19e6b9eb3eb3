// Scratch buffers that only grow: layers size their per-call workspaces with grow(v, n),
// so a steady shape allocates once and a smaller call reuses the larger buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace seqbench::core {

template <class V>
void grow(std::vector<V>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
}

}  // namespace seqbench::core
