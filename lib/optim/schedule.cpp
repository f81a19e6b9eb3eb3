#include "optim/schedule.hpp"

#include <algorithm>
#include <cmath>

#include "core/check.hpp"

namespace seqbench::optim {

LrSchedule::LrSchedule(const OptimConfig& cfg) {
  check_rules(cfg);
  const ScheduleConfig& s = cfg.schedule;
  kind_ = s.kind == "step" ? Kind::kStep : s.kind == "plateau" ? Kind::kPlateau : Kind::kNone;
  base_lr_ = cfg.lr;
  min_lr_ = s.min_lr;
  gamma_ = s.gamma;
  factor_ = s.factor;
  step_size_ = s.step_size;
  patience_ = s.patience;
}

double LrSchedule::lr(int64_t update) const {
  SB_CHECK(update >= 0, "lr schedule asked for update {} (hint: updates count from 0)", update);
  double rate = base_lr_ * state_.scale;
  if (kind_ == Kind::kStep) rate *= std::pow(gamma_, double(update / step_size_));
  return std::max(rate, min_lr_);
}

void LrSchedule::on_eval(double metric, bool higher_is_better) {
  if (kind_ != Kind::kPlateau) return;
  // The first non-NaN metric becomes the best; NaN compares false and so counts as bad.
  const bool better = state_.has_best
                          ? (higher_is_better ? metric > state_.best : metric < state_.best)
                          : !std::isnan(metric);
  if (better) {
    state_.best = metric;
    state_.has_best = true;
    state_.bad = 0;
    return;
  }
  if (++state_.bad > patience_) {
    // Clamp so the saved scale is the one in effect, not a product below the floor.
    state_.scale = std::max(state_.scale * factor_, min_lr_ / base_lr_);
    state_.bad = 0;
  }
}

void LrSchedule::set_state(const State& s) {
  SB_CHECK(s.scale >= 0 && s.scale <= 1 && s.bad >= 0,
           "lr schedule state scale={} bad={} is out of range (hint: corrupt checkpoint?)", s.scale,
           s.bad);
  state_ = s;
}

}  // namespace seqbench::optim
