// `seqbench sweep --backend slurm`: the runs not done yet as one Slurm job array. The
// job script calls this binary back with `sweep SPEC --run-index $SLURM_ARRAY_TASK_ID`,
// so each task runs its run in the foreground (run_one, sweep_local.cpp); the array's
// job id and indices are kept in <out>/.sweep/slurm/jobs.txt.
#include <fmt/format.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <thread>

#include "apps/seqbench/sweep_backend.hpp"
#include "core/check.hpp"
#include "core/fs.hpp"
#include "sweep/live.hpp"
#include "sweep/slurm_script.hpp"

namespace seqbench::apps {

namespace {

namespace fs = std::filesystem;
using sweep::Run;
using sweep::RunStatus;
using sweep::Spec;
using sweep::State;

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

// Submits the runs not yet done as one job array; with opts.wait, polls squeue until the
// array has left the queue (at most opts.timeout_s).
class SlurmBackend final : public SweepBackend {
 public:
  using SweepBackend::SweepBackend;
  int launch(const Spec& spec, const std::vector<Run>& runs) override;
};

int SlurmBackend::launch(const Spec& spec, const std::vector<Run>& runs) {
  const bool retry_failed = opts_.retry_failed, wait = opts_.wait,
             force_threads = opts_.force_threads;
  const int64_t timeout_s = opts_.timeout_s, threads = opts_.threads;
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
  std::string indices;  // for jobs.txt and the message
  for (size_t i : todo) {
    if (!indices.empty()) indices += ',';
    indices += std::to_string(i);
  }
  sweep::SlurmJob job_spec;
  job_spec.name = spec.name;
  job_spec.indices = todo;
  job_spec.options = spec.slurm;
  job_spec.command = {self_exe(), "sweep", fs::absolute(spec.path).string()};
  // --seeds / --out given to the submitting sweep
  job_spec.command.insert(job_spec.command.end(), spec.overrides.begin(), spec.overrides.end());
  job_spec.threads = threads;
  job_spec.force_threads = force_threads;
  // Everything is checked (and quoted) before anything is written.
  const std::string script = sweep::slurm_script(job_spec);
  const std::string script_path = fmt::format("{}/job-{}.sh", dir, std::time(nullptr));
  std::string submit = "sbatch";
  for (const auto& a : sweep::slurm_submit_arguments(dir, fs::current_path().string(), script_path))
    submit += " " + sweep::shell_quote(a, "sbatch argument");
  core::make_dirs(dir);
  core::make_dirs(sweep::bookkeeping_dir(spec) + "/logs");
  core::write_file_atomic(script_path, script);
  int code = 0;
  std::string out = capture(submit + " 2>&1", &code);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  if (code != 0)
    throw core::Error(fmt::format("sbatch {} failed: {}", script_path, out));
  const std::string job = out.substr(0, out.find(';'));
  core::AppendFile(dir + "/jobs.txt").write(fmt::format("{} {}\n", job, indices));
  fmt::print(stderr, "seqbench sweep: submitted job array {} ({} run(s): {}); script {}\n", job,
             todo.size(), indices, script_path);
  if (!wait) return core::kExitOk;
  const auto start = std::chrono::steady_clock::now();
  auto last_shown = start;
  int last_ended = -1;  // done + failed at the last line shown
  // The same progress line as a local sweep, from the runs' files, when a run has ended and
  // at least every progress_every_s seconds; the tasks running now are the runs at once.
  const auto show_progress = [&](bool now) {
    if (opts_.quiet) return;
    const sweep::SweepProgress p = sweep::sweep_progress(spec, runs, 0);
    const auto t = std::chrono::steady_clock::now();
    const bool due = opts_.progress_every_s > 0 &&
                     std::chrono::duration<double>(t - last_shown).count() >= opts_.progress_every_s;
    if (!now && !due && p.done + p.failed == last_ended) return;
    last_shown = t;
    last_ended = p.done + p.failed;
    fmt::print(stderr, "seqbench sweep: job {}: {}\n", job, sweep::progress_line(p));
  };
  for (;;) {
    // Empty once the array has left the queue; a job Slurm has already forgotten
    // (MinJobAge passed) is an "Invalid job id" error, which means the same.
    std::string q = capture("squeue -h -j " + sweep::shell_quote(job, "job id") + " -o %i 2>&1", &code);
    if (code == 0 && q.find_first_not_of(" \n") == std::string::npos) break;
    if (code != 0 && q.find("Invalid job id") != std::string::npos) break;
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > double(timeout_s)) {
      fmt::print(stderr, "seqbench sweep: job {} still queued or running after {} s; stopped waiting "
                         "(it goes on; `seqbench sweep status {}`)\n",
                 job, timeout_s, spec.path);
      return core::kExitError;
    }
    show_progress(false);
    std::this_thread::sleep_for(std::chrono::seconds(2));
  }
  show_progress(true);
  int bad = 0;
  for (size_t i : todo)
    if (sweep::run_status(spec, runs[i]).state != State::kDone) ++bad;
  fmt::print(stderr, "seqbench sweep: job {} finished: {} of {} run(s) done\n", job,
             todo.size() - size_t(bad), todo.size());
  return bad ? core::kExitError : core::kExitOk;
}

}  // namespace

std::unique_ptr<SweepBackend> slurm_backend(const LaunchOptions& opts) {
  return std::make_unique<SlurmBackend>(opts);
}

}  // namespace seqbench::apps
