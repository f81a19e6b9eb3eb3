// Position-wise feed-forward block of a Transformer (Vaswani et al. 2017):
//   u = x W1^T + b1   (N, F),   a = act(u),   y = a W2^T + b2   (N, D)
// act: relu(u) = max(u, 0), or gelu(u) = u Φ(u) (exact, with erf; Hendrycks & Gimpel 2016).
// Backward: da = dy W2, du = da ⊙ act'(u) with relu' = [u > 0], gelu' = Φ(u) + u φ(u);
// dx = du W1; dW2 += dy^T a, dW1 += du^T x, biases += column sums.
// Shapes: N rows (B T), D model width, F inner width.
#pragma once

#include <string>

#include "core/param_store.hpp"
#include "core/rng.hpp"
#include "nn/linear.hpp"

namespace seqbench::nn {

enum class Activation { Relu, Gelu };
// "relu" | "gelu"; anything else throws core::UsageError naming both.
Activation parse_activation(const std::string& name);

// What forward keeps for backward: u (N, F) and a (N, F); du (N, F) is backward's scratch.
template <class T>
struct FeedForwardCache {
  core::TensorT<T> u, a, du;
};

template <class T>
class FeedForwardT {
 public:
  // Parameters "<name>.in.{w,b}" (F, D), (F) and "<name>.out.{w,b}" (D, F), (D).
  FeedForwardT(core::ParamStoreT<T>& ps, const std::string& name, int64_t dim, int64_t inner,
               Activation act);

  // Weights ~ N(0, sd²) (out: N(0, out_std²)), biases 0.
  void init(core::Rng& rng, double sd, double out_std);

  // src (N, D) -> dst (N, D).
  void forward(core::ViewT<const T> src, core::ViewT<T> dst, FeedForwardCache<T>& cache) const;
  // ddst (N, D) -> dsrc (N, D) overwritten (skipped when null); parameter gradients +=.
  void backward(core::ViewT<const T> src, core::ViewT<const T> ddst, FeedForwardCache<T>& cache,
                core::ViewT<T> dsrc);

  int64_t dim() const { return in_.in(); }
  int64_t inner() const { return in_.out(); }
  Activation activation() const { return act_; }

 private:
  LinearT<T> in_, out_;
  Activation act_;
};

// w ~ N(0, sd²) for a Linear's weight, bias 0 (GPT-2's initialisation).
template <class T>
void init_normal(LinearT<T>& lin, core::Rng& rng, double sd);

}  // namespace seqbench::nn
