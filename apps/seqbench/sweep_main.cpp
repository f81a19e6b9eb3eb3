// `seqbench sweep SPEC`: runs every run of a sweep file (lib/sweep/sweep.hpp) that is not
// done yet, as child processes of this binary on this machine (--backend local) or as
// one Slurm job array (--backend slurm), and `seqbench sweep status SPEC` shows where
// each run stands. Every run is the ordinary experiment command with --run-id and --out
// set, so runs.csv in <out>/<experiment>/ is the sweep's merged table. docs/sweeps.md.
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <thread>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "core/threads.hpp"
#include "sweep/sweep.hpp"

namespace seqbench::apps {

namespace {

namespace fs = std::filesystem;
using sweep::Run;
using sweep::RunStatus;
using sweep::Spec;
using sweep::State;

const std::vector<std::string> kSweepable{"copy",       "pmnist",   "char_ptb",  "wikitext103",
                                          "imagenet64", "minigrid", "stability", "recall"};

volatile std::sig_atomic_t g_signal = 0;
void on_signal(int sig) { g_signal = sig; }

std::string self_exe() {
  std::error_code ec;
  const auto p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw core::Error("cannot find this program's path (/proc/self/exe)");
  return p.string();
}

int cores() { return core::available_cores(); }

// A run whose directory exists without a checkpoint or summary (killed before its
// first checkpoint) is moved aside, never deleted, so that it can start again.
void clear_stale(const Spec& spec, const Run& run) {
  const std::string dir = sweep::run_dir(spec, run);
  if (!core::file_exists(dir)) return;
  const std::string aside = fmt::format("{}/stale/{}-{}", sweep::bookkeeping_dir(spec), run.id,
                                        std::time(nullptr));
  core::make_dirs(sweep::bookkeeping_dir(spec) + "/stale");
  std::error_code ec;
  fs::rename(dir, aside, ec);
  if (ec) throw core::Error(fmt::format("cannot move '{}' aside: {}", dir, ec.message()));
}

// Starts one run as a child process in its own process group (so that a Ctrl-C reaches
// it once, through us), output to the sweep's log of the run. Returns its pid.
pid_t start_run(const Spec& spec, const Run& run, int64_t threads, bool force_threads,
                const RunStatus& st) {
  // An interrupted run continues; a failed one (retried) or a stale directory starts over.
  const bool resume = st.state == State::kInterrupted && st.has_checkpoint;
  if (!resume) clear_stale(spec, run);
  const auto args = sweep::run_arguments(spec, run, threads, resume, force_threads);
  core::make_dirs(sweep::bookkeeping_dir(spec) + "/logs");
  const std::string log = sweep::log_path(spec, run);
  std::remove(sweep::exit_path(spec, run).c_str());
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
  return pid;
}

int exit_code_of(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void record_exit(const Spec& spec, const Run& run, int code) {
  core::write_file_atomic(sweep::exit_path(spec, run), fmt::format("{}\n", code));
}

void install_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

// Runs the runs not yet done, at most `jobs` at once. Returns the exit code.
int run_local(const Spec& spec, const std::vector<Run>& runs, int64_t jobs, int64_t threads,
              bool force_threads, bool retry_failed, bool quiet) {
  install_signals();
  std::map<pid_t, const Run*> active;
  int started = 0, failed = 0, skipped_failed = 0;
  const auto reap = [&](bool block) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, block ? 0 : WNOHANG);
    if (pid <= 0) return false;
    const auto it = active.find(pid);
    if (it == active.end()) return true;
    const int code = exit_code_of(status);
    record_exit(spec, *it->second, code);
    if (code != 0 && code != 130 && code != 143) ++failed;
    if (!quiet)
      fmt::print(stderr, "seqbench sweep: {} {}\n", it->second->id,
                 code == 0 ? "done" : code == 130 || code == 143
                                          ? "interrupted"
                                          : fmt::format("failed (exit {}; log {})", code,
                                                        sweep::log_path(spec, *it->second)));
    active.erase(it);
    return true;
  };
  for (const Run& run : runs) {
    if (g_signal) break;
    const RunStatus st = sweep::run_status(spec, run);
    if (st.state == State::kDone || st.state == State::kRunning) continue;
    if (st.state == State::kFailed && !retry_failed) {
      ++skipped_failed;
      continue;
    }
    while (int64_t(active.size()) >= jobs && !g_signal) {
      if (!reap(true) && errno != EINTR) break;
    }
    if (g_signal) break;
    const pid_t pid = start_run(spec, run, threads, force_threads, st);
    active[pid] = &run;
    ++started;
    if (!quiet)
      fmt::print(stderr, "seqbench sweep: {} {} (threads {})\n",
                 st.state == State::kInterrupted && st.has_checkpoint ? "resuming" : "starting", run.id,
                 threads);
  }
  bool forwarded = false;
  while (!active.empty()) {
    if (g_signal && !forwarded) {
      for (const auto& [pid, run] : active) ::kill(pid, g_signal);
      forwarded = true;
    }
    if (!reap(true) && errno == ECHILD) break;
  }
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
  return failed || skipped_failed ? core::kExitError : core::kExitOk;
}

// One run in the foreground (a Slurm array task): its exit code is ours.
int run_index(const Spec& spec, const std::vector<Run>& runs, int64_t index, int64_t threads,
              bool force_threads) {
  if (index < 0 || index >= int64_t(runs.size()))
    throw core::UsageError(fmt::format("--run-index {}: the sweep has runs 0..{}", index,
                                       runs.size() - 1));
  const Run& run = runs[size_t(index)];
  const RunStatus st = sweep::run_status(spec, run);
  if (st.state == State::kDone) return core::kExitOk;
  install_signals();
  const pid_t pid = start_run(spec, run, threads, force_threads, st);
  int status = 0;
  bool forwarded = false;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, 0);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) throw core::Error("lost the run's process (waitpid failed)");
    if (g_signal && !forwarded) {
      ::kill(pid, g_signal);
      forwarded = true;
    }
  }
  const int code = exit_code_of(status);
  record_exit(spec, run, code);
  return code;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string capture(const std::string& cmd, int* code) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) throw core::Error(fmt::format("cannot run '{}'", cmd));
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = ::pclose(p);
  *code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return out;
}

bool have_command(const std::string& name) {
  int code = 0;
  capture("command -v " + name + " >/dev/null 2>&1", &code);
  return code == 0;
}

// Submits the runs not yet done as one job array; with `wait`, polls squeue until the
// array has left the queue (at most timeout_s). Returns the exit code.
int run_slurm(const Spec& spec, const std::vector<Run>& runs, bool retry_failed, bool wait,
              int64_t timeout_s, int64_t threads, bool force_threads) {
  if (!have_command("sbatch"))
    throw core::UsageError(
        "--backend slurm: sbatch not found (hint: run on a Slurm login node, or start a "
        "one-machine cluster with tools/slurm_local start)");
  std::vector<size_t> todo;
  for (const Run& run : runs) {
    const RunStatus st = sweep::run_status(spec, run);
    if (st.state == State::kDone || st.state == State::kRunning) continue;
    if (st.state == State::kFailed && !retry_failed) continue;
    todo.push_back(run.index);
  }
  if (todo.empty()) {
    fmt::print(stderr, "seqbench sweep: nothing to submit (every run is done, running or failed; "
                       "--retry-failed resubmits failed ones)\n");
    return core::kExitOk;
  }
  const std::string dir = fs::absolute(sweep::bookkeeping_dir(spec) + "/slurm").string();
  core::make_dirs(dir);
  core::make_dirs(sweep::bookkeeping_dir(spec) + "/logs");
  std::string indices;
  for (size_t i : todo) indices += (indices.empty() ? "" : ",") + std::to_string(i);
  const auto& sl = spec.slurm;
  std::string script = "#!/bin/bash\n";
  script += fmt::format("#SBATCH --job-name=seqbench-{}\n", spec.name);
  script += fmt::format("#SBATCH --array={}\n", indices);
  script += fmt::format("#SBATCH --output={}/%A_%a.out\n", dir);
  script += fmt::format("#SBATCH --cpus-per-task={}\n", sl.cpus_per_task);
  script += fmt::format("#SBATCH --chdir={}\n", fs::current_path().string());
  if (!sl.partition.empty()) script += fmt::format("#SBATCH --partition={}\n", sl.partition);
  if (!sl.time.empty()) script += fmt::format("#SBATCH --time={}\n", sl.time);
  if (!sl.mem.empty()) script += fmt::format("#SBATCH --mem={}\n", sl.mem);
  for (const auto& e : sl.extra) script += fmt::format("#SBATCH {}\n", e);
  script += fmt::format("exec {} sweep {} --run-index \"$SLURM_ARRAY_TASK_ID\" --threads {}{}\n",
                        shell_quote(self_exe()), shell_quote(fs::absolute(spec.path).string()),
                        threads > 0 ? std::to_string(threads) : "\"${SLURM_CPUS_PER_TASK:-1}\"",
                        force_threads ? " --force-threads" : "");
  const std::string script_path = fmt::format("{}/job-{}.sh", dir, std::time(nullptr));
  core::write_file_atomic(script_path, script);
  int code = 0;
  std::string out = capture("sbatch --parsable " + shell_quote(script_path) + " 2>&1", &code);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  if (code != 0)
    throw core::Error(fmt::format("sbatch {} failed: {}", script_path, out));
  const std::string job = out.substr(0, out.find(';'));
  core::AppendFile(dir + "/jobs.txt").write(fmt::format("{} {}\n", job, indices));
  fmt::print(stderr, "seqbench sweep: submitted job array {} ({} run(s): {}); script {}\n", job,
             todo.size(), indices, script_path);
  if (!wait) return core::kExitOk;
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    // Empty once the array has left the queue; a job Slurm has already forgotten
    // (MinJobAge passed) is an "Invalid job id" error, which means the same.
    std::string q = capture("squeue -h -j " + job + " -o %i 2>&1", &code);
    if (code == 0 && q.find_first_not_of(" \n") == std::string::npos) break;
    if (code != 0 && q.find("Invalid job id") != std::string::npos) break;
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > double(timeout_s)) {
      fmt::print(stderr, "seqbench sweep: job {} still queued or running after {} s; stopped waiting "
                         "(it goes on; `seqbench sweep status {}`)\n",
                 job, timeout_s, spec.path);
      return core::kExitError;
    }
    std::this_thread::sleep_for(std::chrono::seconds(2));
  }
  int bad = 0;
  for (size_t i : todo)
    if (sweep::run_status(spec, runs[i]).state != State::kDone) ++bad;
  fmt::print(stderr, "seqbench sweep: job {} finished: {} of {} run(s) done\n", job,
             todo.size() - size_t(bad), todo.size());
  return bad ? core::kExitError : core::kExitOk;
}

int print_status(const Spec& spec, const std::vector<Run>& runs) {
  std::map<State, int> counts;
  size_t w = 2;
  for (const Run& r : runs) w = std::max(w, r.id.size());
  fmt::print("{:<{}}  {:<11}  {}\n", "id", w, "state", "detail");
  for (const Run& r : runs) {
    const RunStatus st = sweep::run_status(spec, r);
    ++counts[st.state];
    fmt::print("{:<{}}  {:<11}  {}\n", r.id, w, sweep::state_name(st.state), st.detail);
  }
  fmt::print("\n{} run(s): {} done, {} running, {} interrupted, {} failed, {} pending\n",
             runs.size(), counts[State::kDone], counts[State::kRunning],
             counts[State::kInterrupted], counts[State::kFailed], counts[State::kPending]);
  return core::kExitOk;
}

}  // namespace

int sweep_main(int argc, char** argv) {
  try {
    const bool status_cmd = argc > 1 && std::string(argv[1]) == "status";
    CLI::App app(status_cmd ? "seqbench sweep status: where each run of a sweep stands"
                            : "seqbench sweep: run a sweep file's runs (docs/sweeps.md)");
    app.set_help_flag("-h,--help");
    std::string spec_path, backend = "local";
    int64_t jobs = 0, threads = 0, run_idx = -1, timeout_s = 3600;
    bool dry_run = false, retry_failed = false, wait = false, quiet = false, force_threads = false;
    std::string partition, time_limit, mem;
    int64_t cpus = 0;
    app.add_option("spec", spec_path, "the sweep file (YAML)")->required();
    if (!status_cmd) {
      app.add_option("--backend", backend, "local (child processes here) or slurm (sbatch)")
          ->check(CLI::IsMember({"local", "slurm"}));
      app.add_option("--jobs", jobs, "local: runs at once (default: the spec's jobs, else one per "
                                     "core); the cores are split among them")
          ->check(CLI::Range(int64_t(1), int64_t(4096)));
      app.add_option("--threads", threads, "threads per run (default: cores / jobs; on Slurm "
                                           "the task's CPUs)")
          ->check(CLI::Range(int64_t(1), int64_t(4096)));
      app.add_flag("--force-threads", force_threads,
                   "keep --threads even when runs x threads exceed the cores (default: each run "
                   "gets cores / jobs, with a warning); passed on to every run");
      app.add_flag("--dry-run", dry_run, "list the runs and their command lines, run nothing");
      app.add_flag("--retry-failed", retry_failed, "run failed runs again (from scratch)");
      app.add_flag("-q,--quiet", quiet, "no progress lines");
      app.add_flag("--wait", wait, "slurm: wait until the job array has left the queue");
      app.add_option("--timeout", timeout_s, "slurm --wait: give up waiting after this many seconds")
          ->check(CLI::Range(int64_t(1), int64_t(30LL * 24 * 3600)));
      app.add_option("--partition", partition, "slurm: partition (overrides the spec)");
      app.add_option("--time", time_limit, "slurm: time limit per run, e.g. 02:00:00");
      app.add_option("--mem", mem, "slurm: memory per run, e.g. 4G");
      app.add_option("--cpus-per-task", cpus, "slurm: CPUs per run")
          ->check(CLI::Range(int64_t(1), int64_t(4096)));
      app.add_option("--run-index", run_idx,
                     "run only the run with this index, in the foreground (what each Slurm "
                     "array task does)");
    }
    try {
      app.parse(status_cmd ? argc - 1 : argc, status_cmd ? argv + 1 : argv);
    } catch (const CLI::ParseError& e) {
      return app.exit(e);
    }
    Spec spec = sweep::load_spec(spec_path, kSweepable);
    if (!partition.empty()) spec.slurm.partition = partition;
    if (!time_limit.empty()) spec.slurm.time = time_limit;
    if (!mem.empty()) spec.slurm.mem = mem;
    if (cpus > 0) spec.slurm.cpus_per_task = cpus;
    const std::vector<Run> runs = sweep::expand(spec);
    if (status_cmd) return print_status(spec, runs);

    if (jobs == 0) jobs = spec.jobs > 0 ? spec.jobs : cores();
    if (threads == 0) threads = spec.threads;
    int64_t local_threads = threads > 0 ? threads : std::max<int64_t>(1, cores() / jobs);
    // Runs at once times threads each above the cores only makes every run slower: each
    // run gets its share of the cores instead (a run caps its own threads the same way).
    const int64_t share = std::max<int64_t>(1, cores() / jobs);
    if (backend == "local" && run_idx < 0 && threads > share && !force_threads) {
      local_threads = share;
      fmt::print(stderr,
                 "seqbench sweep: warning: {} run{} at once x {} threads is more than the {} "
                 "core{} this process may use; each run gets {} (hint: --force-threads keeps "
                 "{})\n",
                 jobs, jobs == 1 ? "" : "s", threads, cores(), cores() == 1 ? "" : "s",
                 local_threads, threads);
    }
    if (dry_run) {
      for (const Run& r : runs) {
        const RunStatus st = sweep::run_status(spec, r);
        fmt::print(
            "{:>3}  {:<11}  seqbench {}\n", r.index, sweep::state_name(st.state),
            fmt::join(
                sweep::run_arguments(
                    spec, r,
                    backend == "slurm" && threads == 0 ? spec.slurm.cpus_per_task : local_threads,
                    st.state == State::kInterrupted && st.has_checkpoint, force_threads),
                " "));
      }
      fmt::print("{} run(s) into {}/{}/ (merged table runs.csv there)\n", runs.size(), spec.out,
                 spec.experiment);
      return core::kExitOk;
    }
    core::make_dirs(sweep::bookkeeping_dir(spec));
    if (run_idx >= 0) {
      const char* slurm_cpus = std::getenv("SLURM_CPUS_PER_TASK");
      const int64_t t = threads > 0 ? threads : slurm_cpus ? std::atoll(slurm_cpus) : 1;
      return run_index(spec, runs, run_idx, std::max<int64_t>(1, t), force_threads);
    }
    if (backend == "slurm")
      return run_slurm(spec, runs, retry_failed, wait, timeout_s, threads, force_threads);
    return run_local(spec, runs, jobs, local_threads, force_threads, retry_failed, quiet);
  } catch (const core::Error& e) {
    fmt::print(stderr, "seqbench sweep: error: {}\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    fmt::print(stderr, "seqbench sweep: error: {}\n", e.what());
    return core::kExitError;
  }
}

}  // namespace seqbench::apps
