// Inverted dropout (Srivastava et al. 2014): in training each element is kept with
// probability 1 - p and scaled by 1 / (1 - p), so evaluation is the identity.
//   forward:  dst = src ⊙ m,   m_i = [u_i >= p] / (1 - p),  u_i ~ U(0, 1) from the caller's Rng
//   backward: dsrc = ddst ⊙ m
// The mask is drawn from an Rng the model owns and checkpoints, so a resumed run draws
// the same masks. hold (for finite-difference checks) reuses the last mask.
#pragma once

#include <cstdint>
#include <vector>

#include "core/rng.hpp"

namespace seqbench::nn {

template <class T>
class DropoutT {
 public:
  // p in [0, 1); throws core::UsageError otherwise.
  explicit DropoutT(double p = 0.0);

  // x (n) in place. train: a fresh mask (or the held one) is drawn and applied;
  // eval, or p == 0: nothing happens and backward is the identity too.
  void forward(T* x, int64_t n, bool train, core::Rng& rng);
  // dx (n) in place: multiplied by the last forward's mask (if it applied one).
  void backward(T* dx, int64_t n) const;

  void hold(bool h) { hold_ = h; }
  double p() const { return p_; }
  bool applied() const { return applied_; }
  size_t held_bytes() const { return mask_.capacity() * sizeof(T); }

 private:
  double p_;
  bool hold_ = false, applied_ = false;
  std::vector<T> mask_;  // (n): 0 or 1 / (1 - p)
};

}  // namespace seqbench::nn
