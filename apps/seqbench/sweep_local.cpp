// `seqbench sweep --backend local`: every run not done yet as a child process of this
// binary, at most --jobs at once, each in its own process group with its output in the
// sweep's log of the run; Ctrl-C is passed on once and the runs checkpoint. Also the
// foreground run of one Slurm array task (run_one), which starts its run the same way.
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>

#include "apps/seqbench/sweep_backend.hpp"
#include "core/check.hpp"
#include "core/file_lock.hpp"
#include "core/fs.hpp"
#include "sweep/live.hpp"

namespace seqbench::apps {

namespace {

namespace fs = std::filesystem;
using sweep::Run;
using sweep::RunStatus;
using sweep::Spec;
using sweep::State;

volatile std::sig_atomic_t g_signal = 0;
void on_signal(int sig) { g_signal = sig; }
void on_tick(int) {}

// Wakes a blocked wait4 every `seconds` (SIGALRM without SA_RESTART: wait4 returns EINTR),
// so that progress lines come while the runs go on; 0 stops it. A forked child has no
// timer, and exec resets the handler.
void set_ticks(double seconds) {
  struct sigaction sa {};
  sa.sa_handler = on_tick;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, nullptr);
  itimerval t{};
  t.it_interval.tv_sec = time_t(seconds);
  t.it_interval.tv_usec = suseconds_t((seconds - double(time_t(seconds))) * 1e6);
  t.it_value = t.it_interval;
  setitimer(ITIMER_REAL, &t, nullptr);
}

}  // namespace

void move_aside(const Spec& spec, const Run& run) {
  const std::string dir = sweep::run_dir(spec, run);
  if (!core::file_exists(dir)) return;
  // Held while the directory moves: a run that another process (a plain `seqbench copy
  // --run-id`, say) is writing is never moved.
  core::refuse_symlink(dir);
  const auto lock = core::FileLock::try_lock(dir + "/.lock");
  if (!lock)
    throw core::Error(fmt::format("cannot move '{}' aside: another process is running it (pid {})",
                                  dir, core::FileLock::read_note(dir + "/.lock")));
  const std::string aside = fmt::format("{}/stale/{}-{}", sweep::bookkeeping_dir(spec), run.id,
                                        std::time(nullptr));
  core::make_dirs(sweep::bookkeeping_dir(spec) + "/stale");
  std::error_code ec;
  fs::rename(dir, aside, ec);
  if (ec) throw core::Error(fmt::format("cannot move '{}' aside: {}", dir, ec.message()));
}

int exit_code_of(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

StartedRun start_run(const Spec& spec, const Run& run, int64_t threads, bool force_threads,
                      const RunStatus& st) {
  // An interrupted run continues; a failed one (retried) or a stale directory starts over.
  const bool resume = st.state == State::kInterrupted && st.has_checkpoint;
  if (!resume) move_aside(spec, run);
  const auto args = sweep::run_arguments(spec, run, threads, resume, force_threads);
  core::make_dirs(sweep::bookkeeping_dir(spec) + "/logs");
  const std::string log = sweep::log_path(spec, run);
  std::remove(sweep::exit_path(spec, run).c_str());
  std::remove(sweep::wall_path(spec, run).c_str());
  const std::string exe = self_exe();
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(exe.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  core::AppendFile(log).write(fmt::format("# {} {}\n", exe, fmt::join(args, " ")));
  const pid_t pid = ::fork();
  if (pid < 0) throw core::Error("cannot start a run: fork failed");
  if (pid == 0) {
    ::setpgid(0, 0);
    const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  return {pid, resume, std::chrono::steady_clock::now()};
}

double cpu_seconds(const struct rusage& ru) {
  return double(ru.ru_utime.tv_sec) + 1e-6 * double(ru.ru_utime.tv_usec) +
         double(ru.ru_stime.tv_sec) + 1e-6 * double(ru.ru_stime.tv_usec);
}

void record_end(const Spec& spec, const Run& run, const StartedRun& started, int code,
                double cpu_s) {
  core::write_file_atomic(sweep::exit_path(spec, run), fmt::format("{}\n", code));
  if (code == 0 && !started.resumed) {
    const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - started.at;
    core::write_file_atomic(sweep::wall_path(spec, run),
                            fmt::format("{:.3f} {:.3f}\n", wall.count(), cpu_s));
  }
}

void install_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int caught_signal() { return g_signal; }

namespace {

// Runs the runs not yet done, at most opts.jobs at once.
class LocalBackend final : public SweepBackend {
 public:
  using SweepBackend::SweepBackend;
  int launch(const Spec& spec, const std::vector<Run>& runs) override;
};

int LocalBackend::launch(const Spec& spec, const std::vector<Run>& runs) {
  const int64_t jobs = opts_.jobs, threads = opts_.threads;
  const bool force_threads = opts_.force_threads, retry_failed = opts_.retry_failed,
             quiet = opts_.quiet;
  install_signals();
  struct Active {
    const Run* run;
    StartedRun started;
    std::optional<core::FileLock> claim;  // held until the run's exit file is written
  };
  std::map<pid_t, Active> active;
  int started = 0, skipped_failed = 0;
  std::vector<std::string> failed;  // "<id> (exit N; log PATH)"
  // "[k/N done, j running, f failed] ..." after each run ends, and every
  // progress_every_s seconds while runs go on (a wait woken by the timer).
  auto last_shown = std::chrono::steady_clock::now();
  const auto show_progress = [&](bool now) {
    if (quiet) return;
    const auto t = std::chrono::steady_clock::now();
    if (!now && (opts_.progress_every_s <= 0 ||
                 std::chrono::duration<double>(t - last_shown).count() < opts_.progress_every_s))
      return;
    last_shown = t;
    fmt::print(stderr, "seqbench sweep: {}\n",
               sweep::progress_line(sweep::sweep_progress(spec, runs, jobs)));
  };
  if (!quiet && opts_.progress_every_s > 0) set_ticks(opts_.progress_every_s);
  const auto reap = [&](bool block) {
    int status = 0;
    struct rusage ru {};
    const pid_t pid = ::wait4(-1, &status, block ? 0 : WNOHANG, &ru);
    if (pid <= 0) return false;
    const auto it = active.find(pid);
    if (it == active.end()) return true;
    const int code = exit_code_of(status);
    const Run& ended = *it->second.run;
    record_end(spec, ended, it->second.started, code, cpu_seconds(ru));
    const std::string why = fmt::format("(exit {}; log {})", code, sweep::log_path(spec, ended));
    const bool fail = code != 0 && code != 130 && code != 143;
    if (fail) failed.push_back(ended.id + " " + why);
    if (!quiet)
      fmt::print(stderr, "seqbench sweep: {} {}\n", ended.id,
                 code == 0 ? "done" : fail ? "failed " + why : "interrupted");
    active.erase(it);
    show_progress(true);
    return true;
  };
  for (const Run& run : runs) {
    if (g_signal) break;
    // A free slot first, then the run's state, read under its claim just before acting
    // on it: another sweep on this directory may have started or finished it meanwhile.
    while (int64_t(active.size()) >= jobs && !g_signal) {
      if (!reap(true) && errno != EINTR) break;
      show_progress(false);
    }
    if (g_signal) break;
    std::optional<core::FileLock> claim = sweep::claim_run(spec, run);
    if (!claim) continue;  // another sweep holds it: starting or running it
    const RunStatus st = sweep::run_status(spec, run, /*claimed=*/true);
    if (st.state == State::kDone || st.state == State::kRunning) continue;
    if (st.state == State::kFailed && !retry_failed) {
      ++skipped_failed;
      continue;
    }
    const StartedRun s = start_run(spec, run, threads, force_threads, st);
    active.emplace(s.pid, Active{&run, s, std::move(claim)});
    ++started;
    if (!quiet)
      fmt::print(stderr, "seqbench sweep: {} {} (threads {})\n",
                 st.state == State::kInterrupted && st.has_checkpoint ? "resuming" : "starting", run.id,
                 threads);
  }
  bool forwarded = false;
  while (!active.empty()) {
    if (g_signal && !forwarded) {
      for (const auto& a : active) ::kill(a.first, g_signal);
      forwarded = true;
    }
    if (!reap(true) && errno == ECHILD) break;
    show_progress(false);
  }
  set_ticks(0);
  if (g_signal) {
    fmt::print(stderr,
               "seqbench sweep: interrupted; the runs checkpointed. Run the same command again "
               "to continue.\n");
    return core::kExitInterrupted;
  }
  if (skipped_failed)
    fmt::print(stderr,
               "seqbench sweep: {} failed run{} not retried (--retry-failed runs them again; "
               "`seqbench sweep status {}` shows why)\n",
               skipped_failed, skipped_failed == 1 ? "" : "s", spec.path);
  if (!quiet) fmt::print(stderr, "seqbench sweep: started {} run(s); merged table: {}/{}/runs.csv\n",
                         started, spec.out, spec.experiment);
  // Said also under -q: an exit 1 with nothing on stderr tells nobody anything.
  if (!failed.empty())
    fmt::print(stderr, "seqbench sweep: error: {} of {} run{} failed: {}{}\n", failed.size(), started,
               started == 1 ? "" : "s",
               fmt::join(failed.begin(), failed.begin() + std::min<size_t>(failed.size(), 3), ", "),
               failed.size() > 3 ? fmt::format(", ... ({} more)", failed.size() - 3) : "");
  return !failed.empty() || skipped_failed ? core::kExitError : core::kExitOk;
}

}  // namespace

std::string self_exe() {
  std::error_code ec;
  const auto p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw core::Error("cannot find this program's path (/proc/self/exe)");
  return p.string();
}

std::unique_ptr<SweepBackend> local_backend(const LaunchOptions& opts) {
  return std::make_unique<LocalBackend>(opts);
}

int run_one(const Spec& spec, const std::vector<Run>& runs, int64_t index, int64_t threads,
            bool force_threads) {
  if (index < 0 || index >= int64_t(runs.size()))
    throw core::UsageError(fmt::format("--run-index {}: the sweep has runs 0..{}", index,
                                       runs.size() - 1));
  const Run& run = runs[size_t(index)];
  // Read under the run's claim, held until its exit file is written: a task of a second
  // array (or a local sweep) on this directory never starts it again or moves it.
  const std::optional<core::FileLock> claim = sweep::claim_run(spec, run);
  if (!claim) {
    fmt::print(stderr, "seqbench sweep: {} is being run by another sweep; nothing to do here\n", run.id);
    return core::kExitOk;
  }
  const RunStatus st = sweep::run_status(spec, run, /*claimed=*/true);
  if (st.state == State::kDone) return core::kExitOk;
  if (st.state == State::kRunning) {
    fmt::print(stderr, "seqbench sweep: {} is running in another process; nothing to do here\n", run.id);
    return core::kExitOk;
  }
  install_signals();
  const StartedRun started = start_run(spec, run, threads, force_threads, st);
  const pid_t pid = started.pid;
  int status = 0;
  struct rusage ru {};
  bool forwarded = false;
  for (;;) {
    const pid_t r = ::wait4(pid, &status, 0, &ru);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) throw core::Error("lost the run's process (waitpid failed)");
    if (g_signal && !forwarded) {
      ::kill(pid, g_signal);
      forwarded = true;
    }
  }
  const int code = exit_code_of(status);
  record_end(spec, run, started, code, cpu_seconds(ru));
  return code;
}

}  // namespace seqbench::apps
