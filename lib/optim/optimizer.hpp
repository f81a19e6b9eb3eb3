// Optimizers: flat loops over a ParamStore's values / grads / slots, one update per
// step(). The rules are PyTorch's torch.optim ones (single-tensor path, defaults for
// everything not in OptimConfig: dampening 0, centered=False, amsgrad=False), so a run
// can be compared step for step with a PyTorch script. Notation per scalar parameter:
//   p value, g its gradient as stored (already clipped), lr the rate passed to step(),
//   wd weight_decay, t the update number counted from 1.
// Every optimizer first adds the L2 term, g' = g + wd p (into a temporary: the stored
// gradient is left as it is for probes), then:
//
//   SGD (momentum μ, slot 0 = buf when μ > 0):
//     μ = 0:   p -= lr g'
//     μ > 0:   buf = μ buf + g'    (first step buf = g'; the slot starts at zero and
//                                   dampening is 0, so the same formula gives that)
//              plain:     p -= lr buf
//              nesterov:  p -= lr (g' + μ buf)
//   RMSprop (α alpha, slot 0 = sq, slot 1 = buf when μ > 0):
//     sq = α sq + (1 − α) g'^2
//     μ = 0:   p -= lr g' / (√sq + eps)
//     μ > 0:   buf = μ buf + g' / (√sq + eps);  p -= lr buf
//   Adam (slot 0 = m, slot 1 = v):
//     m = β1 m + (1 − β1) g';  v = β2 v + (1 − β2) g'^2
//     p -= (lr / (1 − β1^t)) m / (√v / √(1 − β2^t) + eps)   (eps after the bias-corrected
//                                                           root, as PyTorch)
//
// Scalars that depend only on t and the config are computed in double; the per-element
// arithmetic runs in T. The slot layout above is what checkpoints save; steps() (t so
// far) is saved beside it so Adam's bias correction continues exactly on --resume.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/param_store.hpp"
#include "optim/optim_config.hpp"

namespace seqbench::optim {

template <class T>
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // ParamStore slots this optimizer needs; the model owner calls ps.finalize(n_slots()).
  virtual int n_slots() const = 0;
  // One update with this lr from the gradients as they are (clip before calling).
  virtual void step(core::ParamStoreT<T>& ps, double lr) = 0;
  virtual std::string name() const = 0;

  int64_t steps() const { return steps_; }
  void set_steps(int64_t t);

 protected:
  // Throws unless ps is finalized with enough slots and lr is finite and >= 0.
  void check_store(const core::ParamStoreT<T>& ps, double lr) const;

  int64_t steps_ = 0;  // updates done so far (t - 1 during step())
};

template <class T>
class Sgd final : public Optimizer<T> {
 public:
  explicit Sgd(const OptimConfig& cfg);
  int n_slots() const override { return momentum_ > 0 ? 1 : 0; }
  void step(core::ParamStoreT<T>& ps, double lr) override;
  std::string name() const override { return "sgd"; }

 private:
  double momentum_, weight_decay_;
  bool nesterov_;
};

template <class T>
class RmsProp final : public Optimizer<T> {
 public:
  explicit RmsProp(const OptimConfig& cfg);
  int n_slots() const override { return momentum_ > 0 ? 2 : 1; }
  void step(core::ParamStoreT<T>& ps, double lr) override;
  std::string name() const override { return "rmsprop"; }

 private:
  double alpha_, momentum_, eps_, weight_decay_;
};

template <class T>
class Adam final : public Optimizer<T> {
 public:
  explicit Adam(const OptimConfig& cfg);
  int n_slots() const override { return 2; }
  void step(core::ParamStoreT<T>& ps, double lr) override;
  std::string name() const override { return "adam"; }

 private:
  double beta1_, beta2_, eps_, weight_decay_;
};

// Validates cfg (UsageError on a bad value) and builds the optimizer it names.
template <class T>
std::unique_ptr<Optimizer<T>> make_optimizer(const OptimConfig& cfg);

// sqrt(sum of g^2) over the whole store, accumulated in double.
template <class T>
double grad_norm(const core::ParamStoreT<T>& ps);

// Global-norm clipping (PyTorch clip_grad_norm_ over all parameters). Returns the norm
// BEFORE clipping. When max_norm > 0 and norm > max_norm, every gradient is scaled by
// max_norm / norm, so the clipped norm is max_norm (PyTorch divides by norm + 1e-6).
// max_norm = 0 turns clipping off. A non-finite norm leaves the gradients untouched and
// is returned as it is, so the caller can stop on NaN/Inf instead of training on zeros.
template <class T>
double clip_grad_norm(core::ParamStoreT<T>& ps, double max_norm);

}  // namespace seqbench::optim
