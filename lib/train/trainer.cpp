#include "train/trainer.hpp"

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <fmt/format.h>

#include "core/fs.hpp"
#include "train/signals.hpp"

namespace seqbench::train {

namespace {

double metric_of(const Metrics& m, const std::string& name) {
  for (const auto& [k, v] : m)
    if (k == name) return v;
  SB_CHECK(false, "experiment returned no '{}' metric", name);
  return 0;
}

std::string fmt_metrics(const Metrics& m) {
  std::string s;
  for (const auto& [k, v] : m) s += fmt::format(" {} {:.4g}", k, v);
  return s;
}

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

double peak_rss_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_maxrss) / 1024.0;  // Linux reports KiB
}

Trainer::Trainer(const TrainConfig& train, const optim::OptimConfig& optim, Experiment& exp,
                 RunFiles& files, bool quiet)
    : cfg_(train),
      exp_(exp),
      files_(files),
      quiet_(quiet),
      opt_(optim::make_optimizer<float>(optim)),
      sched_(optim),
      clip_(optim.clip) {
  SB_CHECK(exp_.params().finalized() && exp_.params().n_slots() >= opt_->n_slots(),
           "the experiment's ParamStore must be finalized with {} optimizer slots for {}",
           opt_->n_slots(), opt_->name());
}

void Trainer::log(const std::string& line) {
  files_.log(line);
  if (progress_)
    progress_->line(line);
  else if (!quiet_)
    fmt::print(stderr, "{}\n", line);
}

void Trainer::save_checkpoint_now(double elapsed_s) {
  Checkpoint ck;
  auto& ps = exp_.params();
  ck.put_string("format", "seqbench-trainer");
  ck.put_int("step", step_);
  ck.put_string("optimizer", opt_->name());
  ck.put_int("optimizer_steps", opt_->steps());
  const auto st = sched_.state();
  ck.put_double("sched_scale", st.scale);
  ck.put_double("sched_best", st.best);
  ck.put_bool("sched_has_best", st.has_best);
  ck.put_int("sched_bad", st.bad);
  ck.put_int("acc_n", acc_n_);
  ck.put_double("acc_loss", acc_loss_);
  ck.put_double("acc_metric", acc_metric_);
  ck.put_double("acc_gnorm", acc_gnorm_);
  ck.put_bool("has_best", has_best_);
  ck.put_double("best", best_);
  ck.put_int("best_step", best_step_);
  ck.put_int("bad_evals", bad_evals_);
  ck.put_int("updates_to_target", updates_to_target_);
  ck.put_double("seconds_to_target", seconds_to_target_);
  ck.put_double("last_loss", last_loss_);
  ck.put_double("last_metric", last_metric_);
  exp_.save_state(ck);
  const core::Scope optim = ck.scope("optim");
  for (const auto& p : ps.params()) {
    auto v = ps.values().subspan(size_t(p.offset), size_t(p.numel()));
    ck.put_array(p.name, p.shape, std::vector<float>(v.begin(), v.end()));
    for (int k = 0; k < opt_->n_slots(); ++k) {
      auto s = ps.slot(k).subspan(size_t(p.offset), size_t(p.numel()));
      optim.put_array(fmt::format("slot{}/{}", k, p.name), p.shape,
                      std::vector<float>(s.begin(), s.end()));
    }
  }
  ck.put_double("elapsed_s", elapsed_s);
  if (!config_yaml_.empty()) ck.put_string("config_yaml", config_yaml_);
  // Two generations: the new checkpoint replaces the latest one, which is renamed to the
  // previous one (never linked: a damaged new file must not damage the previous one), and
  // the new one is read back and its checksum checked.
  const std::string latest = files_.checkpoint_path();
  save_checkpoint(latest, ck, files_.previous_checkpoint_path());
  (void)load_checkpoint(latest);
}

void load_parameters(core::ParamStore& ps, const Checkpoint& ck) {
  for (const auto& p : ps.params())
    ck.get_array(p.name, p.shape, ps.values().subspan(size_t(p.offset), size_t(p.numel())));
}

void Trainer::resume(const Checkpoint& ck) {
  // Checked before anything is restored (and so before the run's files are touched): a
  // checkpoint edited to step -5 with its checksum recomputed is refused here.
  const auto at_least = [&](const char* key, int64_t lo) {
    const int64_t v = ck.get_int(key);
    if (v < lo)
      throw core::Error(fmt::format("{}: {} is {}, below {} (the checkpoint was damaged or edited)",
                                    ck.where(), key, v, lo));
  };
  at_least("step", 0);
  at_least("optimizer_steps", 0);
  at_least("sched_bad", 0);
  at_least("acc_n", 0);
  at_least("best_step", 0);
  at_least("bad_evals", 0);
  at_least("updates_to_target", -1);
  const int64_t step = ck.get_int("step");
  for (const char* key : {"acc_n", "best_step", "updates_to_target"})
    if (ck.get_int(key) > step)
      throw core::Error(fmt::format("{}: {} is {}, beyond the checkpoint's step {} (the "
                                    "checkpoint was damaged or edited)",
                                    ck.where(), key, ck.get_int(key), step));
  for (const char* key : {"sched_scale", "elapsed_s"}) {
    const double v = ck.get_double(key);
    if (!std::isfinite(v) || v < 0)
      throw core::Error(fmt::format("{}: {} is {}, not a finite number >= 0 (the checkpoint was "
                                    "damaged or edited)",
                                    ck.where(), key, v));
  }
  auto& ps = exp_.params();
  SB_CHECK(ck.get_string("optimizer") == opt_->name(),
           "{}: checkpoint was written with optimizer '{}', config says '{}'", ck.where(),
           ck.get_string("optimizer"), opt_->name());
  load_parameters(ps, ck);
  const core::ConstScope optim = ck.scope("optim");
  for (const auto& p : ps.params())
    for (int k = 0; k < opt_->n_slots(); ++k)
      optim.get_array(fmt::format("slot{}/{}", k, p.name), p.shape,
                      ps.slot(k).subspan(size_t(p.offset), size_t(p.numel())));
  step_ = ck.get_int("step");
  opt_->set_steps(ck.get_int("optimizer_steps"));
  optim::LrSchedule::State st;
  st.scale = ck.get_double("sched_scale");
  st.best = ck.get_double("sched_best");
  st.has_best = ck.get_bool("sched_has_best");
  st.bad = ck.get_int("sched_bad");
  sched_.set_state(st);
  acc_n_ = ck.get_int("acc_n");
  acc_loss_ = ck.get_double("acc_loss");
  acc_metric_ = ck.get_double("acc_metric");
  acc_gnorm_ = ck.get_double("acc_gnorm");
  has_best_ = ck.get_bool("has_best");
  best_ = ck.get_double("best");
  best_step_ = ck.get_int("best_step");
  bad_evals_ = ck.get_int("bad_evals");
  updates_to_target_ = ck.get_int("updates_to_target");
  seconds_to_target_ = ck.get_double("seconds_to_target");
  last_loss_ = ck.get_double("last_loss");
  last_metric_ = ck.get_double("last_metric");
  elapsed_before_ = ck.get_double("elapsed_s");
  exp_.load_state(ck);
}

void Trainer::probe() {
  const std::vector<double> norms = exp_.gradnorm_probe();
  files_.gradnorm_rows(step_, norms);
}

bool Trainer::validate(Summary& s) {
  const Metrics m = exp_.evaluate();
  const std::string name = exp_.metric();
  last_loss_ = metric_of(m, "loss");
  last_metric_ = metric_of(m, name);
  const double elapsed = s.train_seconds;
  files_.metrics_row(step_, "valid", last_loss_, last_metric_, sched_.lr(step_), 0.0, elapsed);
  const bool hib = exp_.higher_is_better();
  const bool better = !has_best_ || (hib ? last_metric_ > best_ : last_metric_ < best_);
  if (better) {
    has_best_ = true;
    best_ = last_metric_;
    best_step_ = step_;
    bad_evals_ = 0;
  } else {
    ++bad_evals_;
  }
  sched_.on_eval(last_metric_, hib);
  log(fmt::format("valid step {}{}{}", step_, fmt_metrics(m), better ? " (best)" : ""));
  if (cfg_.target) {
    const bool reached = hib ? last_metric_ >= *cfg_.target : last_metric_ <= *cfg_.target;
    if (reached && updates_to_target_ < 0) {
      updates_to_target_ = step_;
      seconds_to_target_ = elapsed;
    }
    if (reached) {
      s.status = "target_reached";
      s.message = fmt::format("validation {} {:.4g} reached the target {:.4g} at update {}", name,
                              last_metric_, *cfg_.target, step_);
      return true;
    }
  }
  if (cfg_.patience > 0 && bad_evals_ >= cfg_.patience) {
    s.status = "early_stopped";
    s.message = fmt::format("no improvement of validation {} in {} validations", name,
                            cfg_.patience);
    return true;
  }
  return false;
}

// The name of the first parameter whose part of `block` (values or gradients) holds a
// NaN or inf, in declaration order; "" when all are finite.
std::string Trainer::first_non_finite(const core::ParamStore& ps, std::span<const float> block) {
  for (const auto& p : ps.params())
    for (int64_t i = 0; i < p.numel(); ++i)
      if (!std::isfinite(block[size_t(p.offset + i)])) return p.name;
  return "";
}

// What a run that stopped on a bad update can resume from.
std::string Trainer::checkpoint_note() const {
  return core::file_exists(files_.checkpoint_path())
             ? "the last checkpoint is untouched"
             : "no checkpoint had been written yet";
}

void Trainer::fail(Summary& s, const core::Error& e) {
  s.status = "failed";
  s.message = fmt::format("update {} failed: {} ({})", step_ + 1, e.what(), checkpoint_note());
}

Summary Trainer::run() {
  Summary s;
  s.metric = exp_.metric();
  auto& ps = exp_.params();
  const std::string name = exp_.metric();
  progress_ = std::make_unique<Progress>(cfg_.steps, step_, stderr, quiet_);
  progress_->set_to_target(cfg_.target.has_value() || cfg_.patience > 0);
  const auto t_start = Clock::now();
  const int64_t first = step_;
  auto elapsed = [&] { return elapsed_before_ + seconds_since(t_start); };
  bool stop = false;
  if (cfg_.gradnorm_every > 0 && step_ == 0) probe();
  double step_seconds = 0;  // in the training steps alone (Summary::step_ms)
  while (!stop && step_ < cfg_.steps) {
    const auto t_step = Clock::now();
    ps.zero_grad();
    Metrics m;
    try {
      m = exp_.train_step();
    } catch (const core::Error& e) {
      fail(s, e);
      break;
    }
    const double loss = metric_of(m, "loss");
    // The norm before clipping; clipping leaves non-finite gradients untouched.
    const double grad_norm = clip_ > 0 ? optim::clip_grad_norm(ps, clip_) : optim::grad_norm(ps);
    if (!std::isfinite(loss) || !std::isfinite(grad_norm)) {
      s.status = "diverged";
      // The first tensor that is not finite: a parameter, else the loss (the forward pass
      // overflowed), else a gradient.
      std::string culprit = first_non_finite(ps, ps.values());
      if (!culprit.empty()) culprit = "parameter " + culprit;
      else if (!std::isfinite(loss)) culprit = "the loss (every parameter is finite)";
      else culprit = "the gradient of " + first_non_finite(ps, ps.grads());
      s.message = fmt::format(
          "training diverged at update {}: loss {}, gradient norm {}; first non-finite: {} (hint: "
          "lower optim.lr or set optim.clip; {})",
          step_ + 1, loss, grad_norm, culprit, checkpoint_note());
      break;
    }
    opt_->step(ps, sched_.lr(step_));
    try {
      exp_.after_update();
    } catch (const core::Error& e) {
      fail(s, e);
      break;
    }
    // A finite gradient can still carry a parameter past the float range (a huge step).
    if (cfg_.nan_check > 0 && (step_ + 1) % cfg_.nan_check == 0) {
      const std::string bad = first_non_finite(ps, ps.values());
      if (!bad.empty()) {
        s.status = "diverged";
        s.message = fmt::format(
            "training diverged at update {}: parameter {} is no longer finite after the update "
            "(hint: lower optim.lr or set optim.clip; {})",
            step_ + 1, bad, checkpoint_note());
        break;
      }
    }
    step_seconds += seconds_since(t_step);
    ++step_;
    acc_n_ += 1;
    acc_loss_ += loss;
    acc_metric_ += metric_of(m, name);
    acc_gnorm_ += grad_norm;
    s.train_seconds = elapsed();
    if (step_ % cfg_.log_every == 0 || step_ == cfg_.steps) {
      const double n = double(acc_n_);
      files_.metrics_row(step_, "train", acc_loss_ / n, acc_metric_ / n, sched_.lr(step_ - 1),
                         acc_gnorm_ / n, s.train_seconds);
      if (!progress_->is_tty() && !quiet_)
        log(fmt::format("train step {}/{} loss {:.4g} {} {:.4g} lr {:.3g} |g| {:.3g}", step_,
                        cfg_.steps, acc_loss_ / n, name, acc_metric_ / n, sched_.lr(step_ - 1),
                        acc_gnorm_ / n));
      else
        files_.log(fmt::format("train step {} loss {:.6g} {} {:.6g}", step_, acc_loss_ / n, name,
                               acc_metric_ / n));
      acc_n_ = 0;
      acc_loss_ = acc_metric_ = acc_gnorm_ = 0;
    }
    progress_->update(step_, {{"loss", loss}, {name, metric_of(m, name)}});
    if (cfg_.gradnorm_every > 0 && step_ % cfg_.gradnorm_every == 0) probe();
    if ((cfg_.eval_every > 0 && step_ % cfg_.eval_every == 0) || step_ == cfg_.steps)
      stop = validate(s);
    s.train_seconds = elapsed();
    if (cfg_.checkpoint_every > 0 && step_ % cfg_.checkpoint_every == 0)
      save_checkpoint_now(s.train_seconds);
    if (!stop && (interrupted() || step_ == interrupt_at_)) {
      s.status = "interrupted";
      s.message = fmt::format("interrupted at update {}", step_);
      break;
    }
  }
  progress_->finish();
  s.train_seconds = elapsed();
  if (s.status == "running") {
    s.status = "finished";
    s.message = fmt::format("finished {} updates", step_);
  }
  // A diverged or failed update may have left the parameters unusable: the last
  // checkpoint written before it stays the one to resume from.
  if (s.status != "diverged" && s.status != "failed") save_checkpoint_now(s.train_seconds);
  s.updates = step_;
  // Without a single validation there is no final or best value: NaN (runs.csv "nan",
  // summary.json null), never a 0 that reads like a perfect or a failed run.
  const double none = std::numeric_limits<double>::quiet_NaN();
  s.final_loss = has_best_ ? last_loss_ : none;
  s.final_metric = has_best_ ? last_metric_ : none;
  s.best_metric = has_best_ ? best_ : none;
  s.best_step = best_step_;
  s.updates_to_target = updates_to_target_;
  s.seconds_to_target = seconds_to_target_;
  const int64_t done = step_ - first;
  s.ms_per_update = done > 0 ? 1000.0 * seconds_since(t_start) / double(done) : 0.0;
  s.step_ms = done > 0 ? 1000.0 * step_seconds / double(done) : 0.0;
  s.update_gflop = exp_.lstm_equivalent_flop() / 1e9;
  s.peak_rss_mb = peak_rss_mb();
  s.held_bytes = exp_.held_bytes();
  // A diverged or failed run's message is the app's error line; printing it here too
  // would show it twice.
  if (s.status == "diverged" || s.status == "failed")
    files_.log(s.message);
  else
    log(s.message);
  return s;
}

}  // namespace seqbench::train
