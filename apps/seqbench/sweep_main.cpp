// `seqbench sweep SPEC`: runs every run of a sweep file (lib/sweep/sweep.hpp) that is not
// done yet, as child processes of this binary on this machine (--backend local,
// sweep_local.cpp) or as one Slurm job array (--backend slurm, sweep_slurm.cpp), and
// `seqbench sweep status SPEC` shows where each run stands (sweep_status.cpp); --dry-run
// and --calibrate end with what the runs will cost (sweep_estimate.cpp). Every run
// is the ordinary experiment command with --run-id and --out set, so runs.csv in
// <out>/<experiment>/ is the sweep's merged table. This file is the command line and the
// share of the cores each run gets. docs/sweeps.md.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <limits>

#include "apps/experiments.hpp"
#include "apps/seqbench/sweep_backend.hpp"
#include "config/cli.hpp"
#include "core/check.hpp"
#include "core/fs.hpp"
#include "core/threads.hpp"
#include "sweep/slurm_script.hpp"
#include "sweep/sweep.hpp"

namespace seqbench::apps {

namespace {

using sweep::Run;
using sweep::RunStatus;
using sweep::Spec;
using sweep::State;

int cores() { return core::available_cores(); }

}  // namespace

int sweep_main(int argc, char** argv) {
  try {
    const bool status_cmd = argc > 1 && std::string(argv[1]) == "status";
    CLI::App app(status_cmd ? "seqbench sweep status: where each run of a sweep stands"
                            : "seqbench sweep: run a sweep file's runs (docs/sweeps.md)",
                 status_cmd ? "seqbench sweep status" : "seqbench sweep");
    app.set_help_flag("-h,--help");
    std::string spec_path, backend = "local";
    int64_t jobs = 0, threads = 0, run_idx = -1, timeout_s = 3600;
    bool dry_run = false, retry_failed = false, wait = false, quiet = false, force_threads = false,
         calibrate_flag = false;
    int64_t slurm_cores = 64, calibrate_updates = 30;
    double calibrate_seconds = 5, progress_every = 15;
    std::vector<std::string> estimate_from;
    std::string partition, time_limit, mem, account, out;
    int64_t cpus = 0;
    std::string seed_list;
    app.add_option("spec", spec_path, "the sweep file (YAML)")->required();
    CLI::Option* seeds_opt = app.add_option(
        "--seeds", seed_list,
        "these seeds instead of the file's, e.g. --seeds 6,7,8 (a rerun with other seeds; give "
        "the same to `sweep status`)")
        ->type_name("LIST");
    CLI::Option* out_opt = app.add_option(
        "--out", out, "the sweep directory instead of the file's `out` (give the same to `sweep status`)");
    out_opt->type_name("DIR");
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
      app.add_flag("--dry-run", dry_run,
                   "list the runs and their command lines, and what they will cost (from "
                   "finished runs' times; docs/sweeps.md, \"Estimates\"); run nothing");
      app.add_flag("--calibrate", calibrate_flag,
                   "run each distinct config of the runs to go that has no measured time yet for "
                   "a few updates (--calibrate-updates), one at a time, under OUT/.sweep/"
                   "calibrate/; then print the estimate");
      app.add_option("--calibrate-updates", calibrate_updates,
                     "--calibrate: updates per calibration run (default 30)")
          ->check(CLI::Range(int64_t(2), int64_t(1000000)));
      app.add_option("--calibrate-seconds", calibrate_seconds,
                     "--calibrate: a config whose updates took less than this is measured again "
                     "over about this long (default 5; 0: never)")
          ->check(CLI::Range(0.0, 86400.0));
      app.add_option("--slurm-cores", slurm_cores,
                     "the estimate for --backend slurm: cores the job array may hold at once "
                     "(default 64); tasks at once = this / cpus_per_task")
          ->check(CLI::Range(int64_t(1), int64_t(10000000)));
      app.add_option("--estimate-from", estimate_from,
                     "directories searched for finished runs to estimate from, after the sweep's "
                     "own (default: results); repeatable")
          ->option_text("DIR");
      app.add_flag("--retry-failed", retry_failed, "run failed runs again (from scratch)");
      app.add_flag("-q,--quiet", quiet, "no progress lines");
      app.add_option("--progress-every", progress_every,
                     "a progress line ([k/N done, j running, f failed], each running run's update "
                     "and ETA, the sweep's ETA) at least every this many seconds (default 15; 0: "
                     "only when a run ends); slurm: with --wait")
          ->check(CLI::Range(0.0, 86400.0))
          ->type_name("SECONDS");
      app.add_flag("--wait", wait, "slurm: wait until the job array has left the queue");
      app.add_option("--timeout", timeout_s, "slurm --wait: give up waiting after this many seconds")
          ->check(CLI::Range(int64_t(1), int64_t(30LL * 24 * 3600)));
      app.add_option("--partition", partition, "slurm: partition (overrides the spec)");
      app.add_option("--time", time_limit, "slurm: time limit per run, e.g. 02:00:00");
      app.add_option("--mem", mem, "slurm: memory per run, e.g. 4G");
      app.add_option("--account", account, "slurm: the account to charge");
      app.add_option("--cpus-per-task", cpus, "slurm: CPUs per run")
          ->check(CLI::Range(int64_t(1), int64_t(4096)));
      app.add_option("--run-index", run_idx,
                     "run only the run with this index, in the foreground (what each Slurm "
                     "array task does)")
          ->check(CLI::Range(int64_t(0), std::numeric_limits<int64_t>::max()));
    }
    // An unknown option or a bad value: one line and exit 2, like every command.
    if (!config::parse_cli(app, status_cmd ? argc - 1 : argc, status_cmd ? argv + 1 : argv))
      return core::kExitOk;
    Spec spec = sweep::load_spec(spec_path, sweepable_experiments());
    const std::vector<uint64_t> seeds =
        seeds_opt->count() > 0 ? sweep::parse_seed_list(seed_list) : std::vector<uint64_t>{};
    sweep::override_spec(spec, seeds, out, out_opt->count() > 0);
    // Each value reaches the Slurm job script: checked against its field's characters.
    const auto slurm_option = [](const char* field, const std::string& value, std::string& dst) {
      if (value.empty()) return;
      sweep::check_slurm_value(field, value, fmt::format("--{}", field));
      dst = value;
    };
    slurm_option("partition", partition, spec.slurm.partition);
    slurm_option("time", time_limit, spec.slurm.time);
    slurm_option("mem", mem, spec.slurm.mem);
    slurm_option("account", account, spec.slurm.account);
    if (cpus > 0) spec.slurm.cpus_per_task = cpus;
    const std::vector<Run> runs = sweep::expand(spec);
    if (status_cmd) return print_status(spec, runs, spec.jobs > 0 ? spec.jobs : cores());

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
    EstimateOptions est;
    est.backend = backend;
    est.jobs = jobs;
    est.threads = backend == "slurm" ? (threads > 0 ? threads : spec.slurm.cpus_per_task)
                                     : local_threads;
    est.cores = cores();
    est.slurm_cores = slurm_cores;
    est.retry_failed = retry_failed;
    est.search = estimate_from.empty() ? std::vector<std::string>{"results"} : estimate_from;
    if (calibrate_flag) {
      if (dry_run || run_idx >= 0)
        throw core::UsageError("--calibrate runs the calibration runs; it goes with neither "
                               "--dry-run nor --run-index");
      // Calibration runs here, one at a time, with the threads a local run gets (or
      // --threads): that is the speed the estimate then assumes.
      est.threads = local_threads;
      return calibrate(spec, runs, est, calibrate_updates, calibrate_seconds, force_threads);
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
      return print_estimate(spec, runs, est);
    }
    // An array task runs one run: the sweep that submitted it has checked the configs.
    if (run_idx < 0) check_configs(spec, runs);
    core::make_dirs(sweep::bookkeeping_dir(spec));
    if (run_idx >= 0) {
      const char* slurm_cpus = std::getenv("SLURM_CPUS_PER_TASK");
      const int64_t t = threads > 0 ? threads : slurm_cpus ? std::atoll(slurm_cpus) : 1;
      return run_one(spec, runs, run_idx, std::max<int64_t>(1, t), force_threads);
    }
    LaunchOptions launch;
    launch.jobs = jobs;
    launch.threads = backend == "slurm" ? threads : local_threads;
    launch.force_threads = force_threads;
    launch.retry_failed = retry_failed;
    launch.quiet = quiet;
    launch.wait = wait;
    launch.timeout_s = timeout_s;
    launch.progress_every_s = progress_every;
    const std::unique_ptr<SweepBackend> runner =
        backend == "slurm" ? slurm_backend(launch) : local_backend(launch);
    return runner->launch(spec, runs);
  } catch (const core::Error& e) {
    fmt::print(stderr, "seqbench sweep: error: {}\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    fmt::print(stderr, "seqbench sweep: error: {}\n", e.what());
    return core::kExitError;
  }
}

}  // namespace seqbench::apps
