#include "core/tensor.hpp"

namespace seqbench::core {

std::string Shape::str() const {
  std::string s = "(";
  for (int i = 0; i < rank; ++i) {
    if (i) s += ", ";
    s += std::to_string(d[i]);
  }
  return s + ")";
}

}  // namespace seqbench::core
