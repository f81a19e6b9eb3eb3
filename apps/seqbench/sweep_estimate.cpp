// What a sweep will cost: the estimate `seqbench sweep --dry-run` prints after the run
// list, and `--calibrate`, which measures the configs that have no measurement yet. Each
// run's resolved config comes from the experiment itself (`--dump-config`, the same
// command line the run gets); the measurements are finished runs of this build, found in
// the sweep's own directory, its calibration runs and the results tree. The arithmetic
// and the matching rule are lib/sweep/estimate.hpp. docs/sweeps.md, "Estimates".
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <optional>
#include <filesystem>
#include <map>
#include <set>

#include "apps/seqbench/sweep_backend.hpp"
#include "core/check.hpp"
#include "core/fs.hpp"
#include "sweep/estimate.hpp"

namespace seqbench::apps {

namespace {

namespace fs = std::filesystem;
using sweep::FlatConfig;
using sweep::format_duration;
using sweep::Measurement;
using sweep::Plan;
using sweep::Run;
using sweep::RunEstimate;
using sweep::RunStatus;
using sweep::Spec;
using sweep::State;

struct Captured {
  int code = -1;
  std::string out, err;
};

// Runs this program with `args`, capturing its output.
Captured capture(const std::vector<std::string>& args) {
  const std::string exe = self_exe();
  std::vector<char*> argv{const_cast<char*>(exe.c_str())};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw core::Error("cannot start a process: pipe failed");
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    throw core::Error("cannot start a process: pipe failed");
  }
  const pid_t pid = ::fork();
  if (pid < 0) throw core::Error("cannot start a process: fork failed");
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  Captured c;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* into[2] = {&c.out, &c.err};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        into[i]->append(buf, size_t(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  c.code = exit_code_of(status);
  return c;
}

std::string last_line_of(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  const size_t at = text.rfind('\n');
  return at == std::string::npos ? text : text.substr(at + 1);
}

// A run's id without its seed: the name of its config and grid point.
std::string config_label(const Run& r) {
  const std::string suffix = "-s" + std::to_string(r.seed);
  return r.id.size() > suffix.size() && r.id.ends_with(suffix)
             ? r.id.substr(0, r.id.size() - suffix.size())
             : r.id;
}

// The runs of one config and grid point (they differ only in the seed), resolved once.
struct Group {
  std::string label;
  std::vector<size_t> runs;  // indices into the sweep's runs
  FlatConfig cfg;
  Plan plan;
  std::string error;  // why the config did not resolve
};

// What makes runs one group: the config and every --set (not the seed).
std::string point_of(const Run& r) {
  std::string point = r.config;
  for (const auto& [k, v] : r.sets) point += "\n" + k + "=" + v;
  return point;
}

// Each group is resolved by a process of its own (10 to 100 ms on a busy machine): an
// estimate of more groups than this would cost far more than listing the runs.
constexpr size_t kMaxGroups = 200;

std::vector<Group> resolve(const Spec& spec, const std::vector<Run>& runs,
                           const std::vector<size_t>& todo, int64_t threads) {
  std::vector<Group> groups;
  std::map<std::string, size_t> by_point;
  for (size_t i : todo) {
    const Run& r = runs[i];
    const auto [it, fresh] = by_point.emplace(point_of(r), groups.size());
    if (!fresh) {
      groups[it->second].runs.push_back(i);
      continue;
    }
    Group g;
    g.label = config_label(r);
    g.runs.push_back(i);
    auto args = sweep::run_arguments(spec, r, threads, false);
    args.push_back("--dump-config");
    const Captured c = capture(args);
    if (c.code != 0) {
      g.error = last_line_of(c.err.empty() ? c.out : c.err);
      if (g.error.empty()) g.error = fmt::format("--dump-config exited {}", c.code);
    } else {
      try {
        g.cfg = sweep::flatten_config(c.out, "--dump-config of " + r.id);
        g.plan = sweep::plan_of(g.cfg);
      } catch (const core::Error& e) {
        g.error = e.what();
      }
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

}  // namespace

void check_configs(const Spec& spec, const std::vector<Run>& runs) {
  std::set<std::string> seen;
  for (const Run& r : runs) {
    if (!seen.insert(r.config).second) continue;
    auto args = sweep::run_arguments(spec, r, 1, false);
    args.push_back("--dump-config");
    const Captured c = capture(args);
    if (c.code == 0) continue;
    // "seqbench copy: error: unknown key ..." -> "unknown key ..."
    std::string why = last_line_of(c.err.empty() ? c.out : c.err);
    if (const size_t at = why.find(": error: "); at != std::string::npos) why.erase(0, at + 9);
    if (why.empty()) why = fmt::format("--dump-config exited {}", c.code);
    const std::string msg = fmt::format("{}: run {} would fail: {}", spec.path, r.id, why);
    if (c.code == core::kExitUsage) throw core::UsageError(msg);
    throw core::Error(msg);
  }
}

namespace {

std::string calibration_out(const Spec& spec) { return sweep::bookkeeping_dir(spec) + "/calibrate"; }

// The finished runs this build measured: the sweep's own (rank 0), its calibration runs
// (rank 1), then every <experiment>/runs.csv under the search directories (rank 2).
std::vector<Measurement> gather(const Spec& spec, const std::vector<std::string>& search,
                                std::vector<std::string>& looked_in) {
  std::vector<Measurement> all;
  std::set<std::string> seen;
  const auto add = [&](const std::string& csv, const std::string& source, int rank) {
    std::error_code ec;
    const fs::path canon = fs::weakly_canonical(csv, ec);
    if (!seen.insert(ec ? csv : canon.string()).second) return;
    auto ms = sweep::read_measurements(csv, source, rank);
    all.insert(all.end(), ms.begin(), ms.end());
  };
  add(spec.out + "/" + spec.experiment + "/runs.csv", "this sweep", 0);
  add(calibration_out(spec) + "/" + spec.experiment + "/runs.csv", "calibration", 1);
  looked_in = {"this sweep's runs", "its calibration runs"};
  for (const std::string& root : search) {
    if (!core::file_exists(root)) continue;
    looked_in.push_back(root + "/");
    std::error_code ec;
    std::vector<std::string> found;
    for (fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec),
         end;
         !ec && it != end; it.increment(ec)) {
      const fs::path& p = it->path();
      if (p.filename() == "stale" && p.parent_path().filename() == ".sweep") {
        it.disable_recursion_pending();
        continue;
      }
      if (p.filename() == "runs.csv" && p.parent_path().filename() == spec.experiment)
        found.push_back(p.string());
    }
    std::sort(found.begin(), found.end());
    for (const auto& csv : found) add(csv, fs::path(csv).parent_path().string(), 2);
  }
  return all;
}

std::string threads_word(int64_t n) { return fmt::format("{} thread{}", n, n == 1 ? "" : "s"); }

std::string measured_by(const RunEstimate& e, int64_t threads) {
  const Measurement& m = *e.used.front();
  std::string what;
  if (m.rank == 1) {
    what = m.training ? fmt::format("calibration, {} updates", m.updates) : "calibration, whole run";
  } else {
    what = fmt::format("{}: {} run{}", m.source, e.used.size(), e.used.size() == 1 ? "" : "s");
  }
  if (e.measured_threads != threads) what += ", at " + threads_word(e.measured_threads);
  return what;
}

std::string fixed(double v, int digits) { return fmt::format("{:.{}f}", v, digits); }

// Core-hours with three significant digits, whole numbers from 100 on: 0.0237, 4.21, 1106.
std::string hours_text(double seconds) {
  const double h = seconds / 3600;
  return h >= 100 ? fixed(h, 0) : fmt::format("{:.3g}", h);
}

// Significant digits for a time per update: 0.0123, 1.23, 12.3, 123.
std::string ms_text(double ms) {
  return ms >= 100 ? fixed(ms, 0) : ms >= 10 ? fixed(ms, 1) : ms >= 1 ? fixed(ms, 2) : fixed(ms, 3);
}

std::string join_ids(const std::vector<std::string>& ids, size_t at_most = 6) {
  std::string s;
  for (size_t i = 0; i < ids.size() && i < at_most; ++i) s += (i ? ", " : "") + ids[i];
  if (ids.size() > at_most) s += fmt::format(", ... ({} more)", ids.size() - at_most);
  return s;
}

// The runs still to run, in the sweep's order (what a launch would start).
std::vector<size_t> runs_to_go(const Spec& spec, const std::vector<Run>& runs, bool retry_failed,
                               std::map<State, int>& counts) {
  std::vector<size_t> todo;
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunStatus st = sweep::run_status(spec, runs[i]);
    ++counts[st.state];
    if (st.state == State::kPending || st.state == State::kInterrupted ||
        (st.state == State::kFailed && retry_failed))
      todo.push_back(i);
  }
  return todo;
}

int run_calibration(const Spec& cal, const Run& run, int64_t threads, bool force_threads) {
  const StartedRun started = start_run(cal, run, threads, force_threads, RunStatus{});
  int status = 0;
  struct rusage ru {};
  bool forwarded = false;
  for (;;) {
    const pid_t r = ::wait4(started.pid, &status, 0, &ru);
    if (r == started.pid) break;
    if (r < 0 && errno != EINTR) throw core::Error("lost the calibration run (waitpid failed)");
    if (caught_signal() && !forwarded) {
      ::kill(started.pid, caught_signal());
      forwarded = true;
    }
  }
  const int code = exit_code_of(status);
  record_end(cal, run, started, code, cpu_seconds(ru));
  return code;
}

}  // namespace

std::vector<ConfigEstimate> estimate_configs(const Spec& spec, const std::vector<Run>& runs, int64_t threads,
                                             const std::vector<std::string>& search) {
  std::vector<std::string> looked_in;
  const std::vector<Measurement> all = gather(spec, search, looked_in);
  std::vector<size_t> todo(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) todo[i] = i;
  std::vector<ConfigEstimate> out(runs.size());
  for (const Group& g : resolve(spec, runs, todo, threads)) {
    ConfigEstimate e;
    if (!g.error.empty()) {
      e.resolves = false;
      e.why_not = g.error;
    } else {
      const RunEstimate r = sweep::estimate_run(g.plan, threads, all);
      e.may_stop_early = g.plan.may_stop_early;
      if (r.ok) {
        e.seconds = r.seconds;
        e.measured_runs = int(r.used.size());
      } else {
        e.why_not = fmt::format("no finished run of this config under {}", fmt::join(search, ", "));
        e.near_miss = sweep::near_miss_keys(g.plan.cost_key, all);
      }
    }
    for (size_t i : g.runs) out[i] = e;
  }
  return out;
}

int print_estimate(const Spec& spec, const std::vector<Run>& runs, const EstimateOptions& opts) {
  std::map<State, int> counts;
  const std::vector<size_t> todo = runs_to_go(spec, runs, opts.retry_failed, counts);
  const bool slurm = opts.backend == "slurm";
  const int64_t cpus = slurm ? spec.slurm.cpus_per_task : opts.threads;
  const int64_t slots = slurm ? std::max<int64_t>(1, opts.slurm_cores / cpus) : opts.jobs;
  const std::string held =
      fmt::format("{} done, {} running, {} failed{}", counts[State::kDone],
                  counts[State::kRunning], counts[State::kFailed],
                  counts[State::kFailed] && !opts.retry_failed ? " (not retried)" : "");
  if (todo.empty()) {
    fmt::print("\nEstimate: nothing left to run ({}).\n", held);
    return core::kExitOk;
  }
  std::set<std::string> points;
  for (size_t i : todo) points.insert(point_of(runs[i]));
  if (points.size() > kMaxGroups) {
    fmt::print("\nEstimate: not made: the {} runs to go ({}) have {} distinct configs, more "
               "than the {} an estimate resolves (hint: estimate a smaller sweep file with a part "
               "of the grid)\n",
               todo.size(), held, points.size(), kMaxGroups);
    return core::kExitOk;
  }
  const std::vector<Group> groups = resolve(spec, runs, todo, opts.threads);
  std::vector<std::string> looked_in;
  const std::vector<Measurement> ms = gather(spec, opts.search, looked_in);

  fmt::print("\nEstimate for the {} run{} to go ({}), from times this build measured "
             "(docs/sweeps.md, \"Estimates\"):\n",
             todo.size(), todo.size() == 1 ? "" : "s", held);
  size_t w = 6;
  for (const Group& g : groups) w = std::max(w, g.label.size());
  fmt::print("  {:<{}}  {:>4}  {:>8}  {:>9}  {:>16}  {:>8}  {:>13}  {}\n", "config", w, "runs",
             "updates", "ms/update", "validations", "start-up", "per run", "measured by");
  std::map<size_t, double> seconds;  // run index -> estimate
  std::map<size_t, double> own_core;  // the same on a core of its own (CPU share applied)
  std::vector<std::string> missing_ids, missing_configs, unresolved, early, fewer_threads,
      no_start, over_limit;
  const std::optional<double> limit = sweep::parse_slurm_time(spec.slurm.time);
  for (const Group& g : groups) {
    std::vector<std::string> ids;
    for (size_t i : g.runs) ids.push_back(runs[i].id);
    if (!g.error.empty()) {
      fmt::print("  {:<{}}  {:>4}  {:>8}  {:>9}  {:>16}  {:>8}  {:>13}  {}\n", g.label, w,
                 g.runs.size(), "-", "-", "-", "-", "-", "config does not resolve");
      unresolved.push_back(fmt::format("{}: {}", g.label, g.error));
      missing_ids.insert(missing_ids.end(), ids.begin(), ids.end());
      continue;
    }
    const RunEstimate e = sweep::estimate_run(g.plan, opts.threads, ms);
    const std::string updates = g.plan.training ? fmt::format("{}", g.plan.updates) : "-";
    if (!e.ok) {
      fmt::print("  {:<{}}  {:>4}  {:>8}  {:>9}  {:>16}  {:>8}  {:>13}  {}\n", g.label, w,
                 g.runs.size(), updates, "-", "-", "-", "-", "no estimate");
      missing_configs.push_back(g.label);
      missing_ids.insert(missing_ids.end(), ids.begin(), ids.end());
      continue;
    }
    // A one-thread run that got a fraction of its core would take that fraction of the
    // time on a core of its own; with more threads the share also holds the threads'
    // idle time, so it is left as measured.
    const double share = e.share_known && e.measured_threads == 1 ? std::min(1.0, e.cpu_share) : 1.0;
    for (size_t i : g.runs) {
      seconds[i] = e.seconds;
      own_core[i] = e.seconds * share;
    }
    if (g.plan.training) {
      fmt::print("  {:<{}}  {:>4}  {:>8}  {:>9}  {:>16}  {:>8}  {:>13}  {}\n", g.label, w,
                 g.runs.size(), updates, ms_text(e.train_ms),
                 fmt::format("{} x {:.3g} s", e.validations, e.valid_s),
                 fmt::format("{:.3g} s{}", e.start_s, e.start_known ? "" : "*"),
                 format_duration(e.seconds), measured_by(e, opts.threads));
      if (g.plan.may_stop_early) early.insert(early.end(), ids.begin(), ids.end());
    } else {
      fmt::print("  {:<{}}  {:>4}  {:>8}  {:>9}  {:>16}  {:>8}  {:>13}  {}\n", g.label, w,
                 g.runs.size(), "-", "-", "-", e.start_known ? "-" : "*",
                 format_duration(e.seconds), measured_by(e, opts.threads));
    }
    if (e.measured_threads < opts.threads) fewer_threads.insert(fewer_threads.end(), ids.begin(), ids.end());
    if (!e.start_known) no_start.insert(no_start.end(), ids.begin(), ids.end());
    // A Slurm task has its cores to itself: the limit is checked at a full core per run.
    if (slurm && limit && e.seconds * share > *limit)
      over_limit.insert(over_limit.end(), ids.begin(), ids.end());
  }

  if (!seconds.empty()) {
    std::vector<double> in_order, own_order;
    double total = 0, own_total = 0;
    for (size_t i : todo)
      if (seconds.count(i)) {
        in_order.push_back(seconds[i]);
        own_order.push_back(own_core[i]);
        total += seconds[i];
        own_total += own_core[i];
      }
    const std::string partial =
        missing_ids.empty() ? "" : fmt::format(" of the {} runs with an estimate", in_order.size());
    const double wall = sweep::makespan(in_order, slots);
    if (slurm) {
      fmt::print("CPU time{}: {} core-hours allocated (each run's time x its {} CPU{})\n",
                 partial, hours_text(total * double(cpus)), cpus, cpus == 1 ? "" : "s");
      fmt::print("Wall time{}, slurm: {} with {} cores (--slurm-cores): {} task{} of {} CPU{} at "
                 "once, each started in array order as one ends; time waiting in the queue not "
                 "included\n",
                 partial, format_duration(wall), opts.slurm_cores, slots, slots == 1 ? "" : "s",
                 cpus, cpus == 1 ? "" : "s");
    } else {
      fmt::print("CPU time{}: {} core-hours (each run's time x its {})\n", partial,
                 hours_text(total * double(cpus)), threads_word(cpus));
      fmt::print("Wall time{}, local: {} ({} run{} at once x {}, on {} core{}, each started in "
                 "the order listed as one ends)\n",
                 partial, format_duration(wall), slots, slots == 1 ? "" : "s",
                 threads_word(opts.threads), opts.cores, opts.cores == 1 ? "" : "s");
    }
    // The measurements' CPU time over their wall time: below 1, the machine was shared
    // while they ran, and cores of the runs' own would be that much faster.
    if (own_total < 0.9 * total)
      fmt::print("On cores of their own: the measurements got {:.0f}% of a core (CPU time / wall "
                 "time; the machine was shared while they ran); at a full core per run: CPU "
                 "time {} core-hours, wall time {}\n",
                 100 * own_total / total, hours_text(own_total * double(cpus)),
                 format_duration(sweep::makespan(own_order, slots)));
  }
  if (!early.empty())
    fmt::print("Upper bound: {} run{} stop{} early at train.target or train.patience and may "
               "take less ({}).\n",
               early.size(), early.size() == 1 ? "" : "s", early.size() == 1 ? "s" : "",
               join_ids(early, 3));
  if (!fewer_threads.empty())
    fmt::print("Upper bound: {} run{} measured with fewer threads than {} get{}, estimated at "
               "that speed.\n",
               fewer_threads.size(), fewer_threads.size() == 1 ? "" : "s",
               fewer_threads.size() == 1 ? "it" : "they", fewer_threads.size() == 1 ? "s" : "");
  if (!no_start.empty())
    fmt::print("* start-up not recorded for the measurements of {} run{} (runs not started by "
               "`seqbench sweep`): their estimates leave out process start and loading.\n",
               no_start.size(), no_start.size() == 1 ? "" : "s");
  if (!over_limit.empty())
    fmt::print("Over the time limit {} (slurm.time / --time), at a full core per run: {} run{} "
               "({}); Slurm stops them there, and running the sweep again continues them from "
               "their checkpoints.\n",
               spec.slurm.time, over_limit.size(), over_limit.size() == 1 ? "" : "s",
               join_ids(over_limit, 3));
  for (const auto& u : unresolved) fmt::print("No estimate: the config of {}\n", u);
  if (!missing_configs.empty()) {
    size_t n = 0;
    for (const Group& g : groups)
      if (g.error.empty() && std::find(missing_configs.begin(), missing_configs.end(), g.label) !=
                                 missing_configs.end())
        n += g.runs.size();
    fmt::print("No estimate for {} run{} ({} config{}: {}): no finished run of the same config "
               "(same experiment and cost keys; docs/sweeps.md) with at most {} in {}.\n"
               "  Measure each config for a few updates: seqbench sweep {} --calibrate{}\n",
               n, n == 1 ? "" : "s", missing_configs.size(), missing_configs.size() == 1 ? "" : "s",
               join_ids(missing_configs), threads_word(opts.threads),
               fmt::format("{}", fmt::join(looked_in, ", ")), spec.path,
               slurm ? fmt::format(" --threads {}", opts.threads) : std::string());
    // Finished runs that miss by one cost key: say which, so that a changed default (or a
    // key added since) does not look like "never measured".
    std::set<std::string> near;
    for (const Group& g : groups)
      if (g.error.empty() &&
          std::find(missing_configs.begin(), missing_configs.end(), g.label) != missing_configs.end())
        for (const auto& k : sweep::near_miss_keys(g.plan.cost_key, ms)) near.insert(k);
    if (!near.empty())
      fmt::print("  Finished runs differ from some of these configs in one cost key only ({}), so they do "
                 "not stand for them: a measurement counts only where every cost key is equal.\n",
                 fmt::join(near, ", "));
  }
  return core::kExitOk;
}

int calibrate(const Spec& spec, const std::vector<Run>& runs, const EstimateOptions& opts,
              int64_t updates, double min_seconds, bool force_threads) {
  std::map<State, int> counts;
  const std::vector<size_t> todo = runs_to_go(spec, runs, opts.retry_failed, counts);
  const std::vector<Group> groups = resolve(spec, runs, todo, opts.threads);
  std::vector<std::string> looked_in;
  std::vector<Measurement> ms = gather(spec, opts.search, looked_in);
  Spec cal = spec;
  cal.out = calibration_out(spec);
  install_signals();
  int measured = 0, failed = 0, had = 0;
  for (const Group& g : groups) {
    if (caught_signal()) break;
    if (!g.error.empty()) {
      fmt::print(stderr, "seqbench sweep: calibrate {}: skipped, the config does not resolve: {}\n",
                 g.label, g.error);
      ++failed;
      continue;
    }
    const RunEstimate e = sweep::estimate_run(g.plan, opts.threads, ms);
    if (e.ok && e.measured_threads == opts.threads) {
      ++had;
      continue;
    }
    const Run& first = runs[g.runs.front()];
    // One calibration run of n updates; its estimate, or nullopt when it failed (said).
    const auto cal_run = [&](const char* suffix) {
      Run run = first;
      run.id = fmt::format("{}-t{}-cal{}", g.label, opts.threads, suffix);
      return run;
    };
    const auto measure_with = [&](int64_t n, const char* suffix,
                                  bool count_failure) -> std::optional<RunEstimate> {
      Run run = cal_run(suffix);
      if (g.plan.training) {
        // Only the budget and the bookkeeping change, none of which is a cost key: the
        // same updates and validation as the sweep's runs, validating once at the end, a
        // few training rows for the steady rate.
        const auto set = [&](const std::string& k, const std::string& v) {
          run.sets.emplace_back(k, v);
        };
        set("train.steps", std::to_string(n));
        set("train.eval_every", "0");
        set("train.log_every", std::to_string(std::max<int64_t>(1, n / 5)));
        set("train.checkpoint_every", "0");
        set("train.gradnorm_every", "0");
        set("train.target", "null");
        set("train.patience", "0");
        if (g.cfg.count("data.check_epochs")) set("data.check_epochs", "false");
        if (g.cfg.count("ppo.frames")) set("ppo.frames", "0");
      }
      fmt::print(stderr, "seqbench sweep: calibrating {} ({}, {})\n", g.label,
                 g.plan.training ? fmt::format("{} updates", n) : "the whole run",
                 threads_word(opts.threads));
      const int code = run_calibration(cal, run, opts.threads, force_threads);
      if (code == 130 || code == 143) return std::nullopt;
      if (code != 0) {
        failed += count_failure;
        std::string why;
        try {
          why = last_line_of(core::read_file(sweep::log_path(cal, run)));
        } catch (const core::Error&) {
        }
        fmt::print(stderr, "seqbench sweep: calibrate {}: failed (exit {}): {}\n", g.label, code,
                   why);
        return std::nullopt;
      }
      ms = gather(spec, opts.search, looked_in);
      const RunEstimate now = sweep::estimate_run(g.plan, opts.threads, ms);
      if (!now.ok || now.measured_threads != opts.threads) {
        failed += count_failure;
        fmt::print(stderr, "seqbench sweep: calibrate {}: the run left no measurement in {}/{}/\n",
                   g.label, cal.out, cal.experiment);
        return std::nullopt;
      }
      return now;
    };
    int64_t n = std::min(updates, g.plan.updates);
    std::optional<RunEstimate> now = measure_with(n, "", true);
    // A rate taken over a fraction of a second is at the mercy of whatever else the
    // machine does in that moment: a cheap config is measured again for min_seconds,
    // under another id, which replaces the short run once it has finished (a longer run
    // that fails, e.g. diverges, leaves the short one as the measurement).
    if (now && g.plan.training && now->train_ms * double(n) / 1000 < min_seconds &&
        n < g.plan.updates && !caught_signal()) {
      const int64_t longer = std::min(
          g.plan.updates,
          std::max(n + 1, int64_t(std::ceil(min_seconds * 1000 / std::max(now->train_ms, 1e-3)))));
      // Worth it only for at least twice the updates.
      if (longer >= 2 * n) {
        if (measure_with(longer, "-long", false)) {
          move_aside(cal, cal_run(""));
          ms = gather(spec, opts.search, looked_in);
          now = sweep::estimate_run(g.plan, opts.threads, ms);
        } else if (!caught_signal()) {
          fmt::print(stderr, "seqbench sweep: {}: the estimate keeps the {}-update measurement\n",
                     g.label, n);
        }
      }
    }
    if (!now || !now->ok) continue;
    ++measured;
    if (g.plan.training)
      fmt::print(stderr,
                 "seqbench sweep: {}: {} ms/update, validation {:.3g} s, start-up {:.3g} s\n",
                 g.label, ms_text(now->train_ms), now->valid_s, now->start_s);
    else
      fmt::print(stderr, "seqbench sweep: {}: {}\n", g.label, format_duration(now->seconds));
  }
  if (caught_signal()) {
    fmt::print(stderr, "seqbench sweep: calibration interrupted; the same command measures the "
                       "configs still missing.\n");
    return core::kExitInterrupted;
  }
  fmt::print(stderr, "seqbench sweep: calibrated {} config{}, {} had a measurement, {} failed; "
                     "runs under {}/{}/\n",
             measured, measured == 1 ? "" : "s", had, failed, cal.out, cal.experiment);
  const int rc = print_estimate(spec, runs, opts);
  return failed ? core::kExitError : rc;
}

}  // namespace seqbench::apps
