#include "optim/optim_config.hpp"

#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "config/check.hpp"
#include "core/check.hpp"

namespace seqbench::optim {

namespace {

// Config mistakes are usage errors (exit code 2), one line with a hint.
template <class... Args>
[[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw core::UsageError(fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace

void check_rules(const OptimConfig& cfg) {
  config::check(cfg, "optim");
  // lr = inf passes "> 0" but is no learning rate.
  if (!std::isfinite(cfg.lr)) fail("optim.lr = {} must be finite (hint: e.g. optim.lr: 1e-3)", cfg.lr);

  // Settings another optimizer would silently ignore are mistakes worth stopping for.
  if (cfg.nesterov && cfg.name != "sgd")
    fail("optim.nesterov is only used by sgd, not {} (hint: remove it or use name: sgd)", cfg.name);
  if (cfg.nesterov && cfg.momentum == 0.0)
    fail("optim.nesterov needs momentum > 0 (hint: set optim.momentum: 0.9)");
  if (cfg.name == "adam" && cfg.momentum != 0.0)
    fail("optim.momentum = {} is not used by adam (hint: adam's momentum is optim.beta1)",
         cfg.momentum);

  const ScheduleConfig& s = cfg.schedule;
  if (s.min_lr > cfg.lr)
    fail("optim.schedule.min_lr = {} must be in [0, optim.lr = {}] (hint: 0 means no floor)",
         s.min_lr, cfg.lr);
}

}  // namespace seqbench::optim
