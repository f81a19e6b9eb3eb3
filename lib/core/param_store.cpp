#include "core/param_store.hpp"

#include <algorithm>

namespace seqbench::core {

template <class T>
ParamT<T>& ParamStoreT<T>::add(const std::string& name, Shape shape) {
  SB_CHECK(!finalized_, "parameter '{}' declared after the store was finalized", name);
  SB_CHECK(find(name) == nullptr, "parameter '{}' declared twice", name);
  SB_CHECK(shape.numel() > 0, "parameter '{}' has empty shape {}", name, shape.str());
  ParamT<T>& p = params_.emplace_back();
  p.name = name;
  p.shape = shape;
  p.offset = n_;
  n_ += shape.numel();
  return p;
}

template <class T>
void ParamStoreT<T>::finalize(int n_slots) {
  SB_CHECK(!finalized_, "ParamStore::finalize called twice");
  SB_CHECK(n_slots >= 0, "negative slot count {}", n_slots);
  n_slots_ = n_slots;
  block_.assign(static_cast<size_t>(n_ * (2 + n_slots)), T(0));
  for (auto& p : params_) {
    p.value = block_.data() + p.offset;
    p.grad = block_.data() + n_ + p.offset;
  }
  finalized_ = true;
}

template <class T>
std::span<T> ParamStoreT<T>::slot(int k) {
  SB_CHECK(k >= 0 && k < n_slots_, "optimizer slot {} of {}", k, n_slots_);
  return {block_.data() + (2 + k) * n_, static_cast<size_t>(n_)};
}

template <class T>
void ParamStoreT<T>::zero_grad() {
  auto g = grads();
  std::fill(g.begin(), g.end(), T(0));
}

template <class T>
const ParamT<T>* ParamStoreT<T>::find(const std::string& name) const {
  for (const auto& p : params_)
    if (p.name == name) return &p;
  return nullptr;
}

template <class T>
ParamT<T>& ParamStoreT<T>::get(const std::string& name) {
  for (auto& p : params_)
    if (p.name == name) return p;
  std::string names;
  for (const auto& p : params_) names += (names.empty() ? "" : ", ") + p.name;
  SB_CHECK(false, "no parameter named '{}' (have: {})", name, names);
  __builtin_unreachable();
}

template class ParamStoreT<float>;
template class ParamStoreT<double>;

}  // namespace seqbench::core
