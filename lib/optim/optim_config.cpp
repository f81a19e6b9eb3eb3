#include "optim/optim_config.hpp"

#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "core/check.hpp"

namespace seqbench::optim {

namespace {

// Config mistakes are usage errors (exit code 2), one line with a hint.
template <class... Args>
[[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw core::UsageError(fmt::format(f, std::forward<Args>(args)...));
}

// [0, 1): the upper end would make an average that never forgets (or never moves).
void check_unit_open_hi(const char* key, double x, const char* hint) {
  if (!(x >= 0.0 && x < 1.0)) fail("optim.{} = {} must be in [0, 1) (hint: {})", key, x, hint);
}

// (0, 1]: a zero factor would set the learning rate to zero.
void check_unit_open_lo(const char* key, double x, const char* hint) {
  if (!(x > 0.0 && x <= 1.0)) fail("optim.{} = {} must be in (0, 1] (hint: {})", key, x, hint);
}

}  // namespace

void validate(const OptimConfig& cfg) {
  if (cfg.name != "sgd" && cfg.name != "adam" && cfg.name != "rmsprop")
    fail("optim.name = '{}' is not an optimizer (hint: use sgd, adam or rmsprop)", cfg.name);
  if (!(cfg.lr > 0.0 && std::isfinite(cfg.lr)))
    fail("optim.lr = {} must be positive (hint: e.g. optim.lr: 1e-3)", cfg.lr);
  check_unit_open_hi("momentum", cfg.momentum, "0.9 is typical, 0 turns it off");
  check_unit_open_hi("alpha", cfg.alpha, "PyTorch's default is 0.99");
  check_unit_open_hi("beta1", cfg.beta1, "Adam's default is 0.9");
  check_unit_open_hi("beta2", cfg.beta2, "Adam's default is 0.999");
  if (!(cfg.eps > 0.0)) fail("optim.eps = {} must be positive (hint: 1e-8)", cfg.eps);
  if (!(cfg.weight_decay >= 0.0))
    fail("optim.weight_decay = {} must be >= 0 (hint: 0 turns it off)", cfg.weight_decay);
  if (!(cfg.clip >= 0.0)) fail("optim.clip = {} must be >= 0 (hint: 0 turns it off)", cfg.clip);

  // Settings another optimizer would silently ignore are mistakes worth stopping for.
  if (cfg.nesterov && cfg.name != "sgd")
    fail("optim.nesterov is only used by sgd, not {} (hint: remove it or use name: sgd)", cfg.name);
  if (cfg.nesterov && cfg.momentum == 0.0)
    fail("optim.nesterov needs momentum > 0 (hint: set optim.momentum: 0.9)");
  if (cfg.name == "adam" && cfg.momentum != 0.0)
    fail("optim.momentum = {} is not used by adam (hint: adam's momentum is optim.beta1)",
         cfg.momentum);

  const ScheduleConfig& s = cfg.schedule;
  if (s.kind != "none" && s.kind != "step" && s.kind != "plateau")
    fail("optim.schedule.kind = '{}' is not a schedule (hint: use none, step or plateau)", s.kind);
  if (s.step_size <= 0)
    fail("optim.schedule.step_size = {} must be positive (hint: updates between decays)",
         s.step_size);
  check_unit_open_lo("schedule.gamma", s.gamma, "0.1 divides lr by 10 at each step");
  if (s.patience < 0)
    fail("optim.schedule.patience = {} must be >= 0 (hint: 0 decays at every bad eval)",
         s.patience);
  check_unit_open_lo("schedule.factor", s.factor, "0.5 halves lr on a plateau");
  if (!(s.min_lr >= 0.0 && s.min_lr <= cfg.lr))
    fail("optim.schedule.min_lr = {} must be in [0, optim.lr = {}] (hint: 0 means no floor)",
         s.min_lr, cfg.lr);
}

}  // namespace seqbench::optim
