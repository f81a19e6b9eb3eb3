// Learning-rate schedules, as functions of the 0-based update index u (base = optim.lr):
//   none:     lr(u) = base
//   step:     lr(u) = max(base gamma^floor(u / step_size), min_lr)
//             i.e. updates [0, step_size) use base, [step_size, 2 step_size) base gamma ...
//             (PyTorch StepLR stepped once per update, plus the min_lr floor)
//   plateau:  lr(u) = max(base scale, min_lr), scale changed only by on_eval():
//             an evaluation is good when it is strictly better than the best so far
//             (the first non-NaN one always is), otherwise bad. The bad evaluation that makes
//             the run of consecutive bad ones exceed `patience` multiplies scale by
//             factor and restarts the count; so patience = 0 decays at every bad one
//             (PyTorch ReduceLROnPlateau with threshold = 0 and cooldown = 0).
//             scale never goes below min_lr / base.
// A NaN metric is never better, so it counts as bad.
#pragma once

#include <cstdint>

#include "optim/optim_config.hpp"

namespace seqbench::optim {

class LrSchedule {
 public:
  // Validates cfg (core::UsageError on a bad value).
  explicit LrSchedule(const OptimConfig& cfg);

  // The lr to use for update `update` (0-based), including every plateau decay so far.
  double lr(int64_t update) const;
  // Plateau bookkeeping after an evaluation; does nothing for kind none or step.
  void on_eval(double metric, bool higher_is_better);

  // What a checkpoint saves to continue exactly: plateau scale, best metric so far,
  // whether there is one, and the current run of bad evaluations.
  struct State {
    double scale = 1.0;
    double best = 0;
    bool has_best = false;
    int64_t bad = 0;
  };
  State state() const { return state_; }
  void set_state(const State& s);

 private:
  enum class Kind { kNone, kStep, kPlateau };
  Kind kind_;
  double base_lr_, min_lr_, gamma_, factor_;
  int64_t step_size_, patience_;
  State state_;
};

}  // namespace seqbench::optim
