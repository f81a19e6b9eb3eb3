// ParamStore: every trainable parameter of a model in one contiguous block.
//
//   block = [ values (N) | grads (N) | slot 0 (N) | slot 1 (N) | ... ]
//
// Layers declare parameters by hierarchical name ("rnn.w_x") while they are built;
// finalize(n_slots) then allocates the block and points every Param into it. The
// optimizer, clipping and checkpointing are flat loops over values()/grads()/slot(k)
// and never need to know which layer owns what. Param objects have stable addresses
// (std::deque), so layers keep a Param& to their own.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace seqbench::core {

template <class T>
struct ParamT {
  std::string name;
  Shape shape;
  int64_t offset = 0;  // into the block's value region
  T* value = nullptr;  // valid after ParamStore::finalize
  T* grad = nullptr;

  int64_t numel() const { return shape.numel(); }
  ViewT<T> v() const { return ViewT<T>(value, shape); }
  ViewT<T> g() const { return ViewT<T>(grad, shape); }
};

template <class T>
class ParamStoreT {
 public:
  ParamStoreT() = default;
  ParamStoreT(const ParamStoreT&) = delete;
  ParamStoreT& operator=(const ParamStoreT&) = delete;

  // Declares a parameter; its storage exists after finalize(). Names must be unique.
  ParamT<T>& add(const std::string& name, Shape shape);

  // Allocates values, gradients and n_slots optimizer slots (all zero). Once only.
  void finalize(int n_slots);
  bool finalized() const { return finalized_; }

  int64_t size() const { return n_; }  // total number of scalars in the values region
  int n_slots() const { return n_slots_; }
  std::span<T> values() { return {block_.data(), static_cast<size_t>(n_)}; }
  std::span<T> grads() { return {block_.data() + n_, static_cast<size_t>(n_)}; }
  std::span<T> slot(int k);
  std::span<const T> values() const { return {block_.data(), static_cast<size_t>(n_)}; }
  std::span<const T> grads() const { return {block_.data() + n_, static_cast<size_t>(n_)}; }

  void zero_grad();

  std::deque<ParamT<T>>& params() { return params_; }
  const std::deque<ParamT<T>>& params() const { return params_; }
  ParamT<T>& get(const std::string& name);  // throws with the nearest names on a miss
  const ParamT<T>* find(const std::string& name) const;

 private:
  std::deque<ParamT<T>> params_;
  std::vector<T> block_;
  int64_t n_ = 0;
  int n_slots_ = 0;
  bool finalized_ = false;
};

using Param = ParamT<float>;
using ParamStore = ParamStoreT<float>;

}  // namespace seqbench::core
