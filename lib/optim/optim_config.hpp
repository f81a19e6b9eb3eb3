// OptimConfig: which optimizer, its hyperparameters, gradient clipping and the
// learning-rate schedule; decoded from the `optim:` section of a run's YAML.
//
// visit() lists every field once, with its allowed values (half-open where an end would
// break the method: momentum, alpha and betas in [0, 1); gamma and factor in (0, 1]);
// check_rules() checks them on a struct built in code too (config::check) and adds the
// combinations no single field can see (nesterov without momentum, min_lr > lr).
#pragma once

#include <cstdint>
#include <string>

#include "config/field.hpp"

namespace seqbench::optim {

// Learning-rate schedule (see schedule.hpp for the exact rules).
struct ScheduleConfig {
  std::string kind = "none";  // none | step | plateau
  int64_t step_size = 1000;   // step: multiply lr by gamma every step_size updates (> 0)
  double gamma = 0.1;         // step: factor, (0, 1]
  int64_t patience = 5;       // plateau: bad evaluations tolerated before decaying (>= 0)
  double factor = 0.5;        // plateau: factor, (0, 1]
  double min_lr = 0.0;        // floor for every kind (>= 0, <= optim.lr)

  template <class V>
  void visit(V& v) {
    using namespace seqbench::config;
    v("kind", kind, "learning-rate schedule: none | step | plateau",
      one_of({"none", "step", "plateau"}).because("none keeps the learning rate constant"));
    v("step_size", step_size, "step: multiply lr by gamma every step_size updates",
      positive().because("updates between decays"));
    v("gamma", gamma, "step: decay factor in (0, 1]",
      range_above(0.0, 1.0).because("0.1 divides lr by 10 at each step"));
    v("patience", patience,
      "plateau: evaluations without improvement tolerated; the next one decays lr",
      non_negative().because("0 decays at every bad eval"));
    v("factor", factor, "plateau: decay factor in (0, 1]",
      range_above(0.0, 1.0).because("0.5 halves lr on a plateau"));
    v("min_lr", min_lr, "lower bound on the learning rate",
      non_negative().because("0 means no floor"));
  }
};

struct OptimConfig {
  std::string name = "rmsprop";       // sgd | adam | rmsprop
  double lr = 1e-3;                   // > 0
  double momentum = 0.0;              // sgd and rmsprop, [0, 1)
  bool nesterov = false;              // sgd only, needs momentum > 0
  double alpha = 0.99;                // rmsprop smoothing constant (PyTorch naming), [0, 1)
  double beta1 = 0.9, beta2 = 0.999;  // adam, [0, 1)
  double eps = 1e-8;                  // > 0
  double weight_decay = 0.0;          // L2 term added to the gradient (not AdamW), >= 0
  double clip = 1.0;                  // global-norm clipping threshold, 0 = off, >= 0
  ScheduleConfig schedule;

  template <class V>
  void visit(V& v) {
    using namespace seqbench::config;
    v("name", name, "optimizer: sgd | adam | rmsprop",
      one_of({"sgd", "adam", "rmsprop"}).because("the papers train with adam or rmsprop"));
    v("lr", lr, "base learning rate", positive().because("e.g. optim.lr: 1e-3"));
    v("momentum", momentum, "sgd/rmsprop momentum in [0, 1)",
      range_below(0.0, 1.0).because("0.9 is typical, 0 turns it off"));
    v("nesterov", nesterov, "sgd: Nesterov momentum (needs momentum > 0)", any());
    v("alpha", alpha, "rmsprop: smoothing constant of the squared-gradient average, [0, 1)",
      range_below(0.0, 1.0).because("PyTorch's default is 0.99"));
    v("beta1", beta1, "adam: decay of the first-moment average, [0, 1)",
      range_below(0.0, 1.0).because("Adam's default is 0.9"));
    v("beta2", beta2, "adam: decay of the second-moment average, [0, 1)",
      range_below(0.0, 1.0).because("Adam's default is 0.999"));
    v("eps", eps, "added to the denominator of rmsprop/adam", positive().because("1e-8"));
    v("weight_decay", weight_decay, "L2 penalty added to the gradient",
      non_negative().because("0 turns it off"));
    v("clip", clip, "global gradient-norm clipping threshold (0 = off)",
      non_negative().because("0 turns it off"));
    v("schedule", schedule, "learning-rate schedule");
  }
};

// Throws core::UsageError naming the first offending key (as "optim.<key>") with a hint.
// make_optimizer() and LrSchedule call it, so a bad config never reaches training.
void check_rules(const OptimConfig& cfg);

}  // namespace seqbench::optim
