// The flow every experiment binary shares, from argv to results:
//   parse the command line -> resolve the config (defaults < --demo < --config files <
//   --set; with --resume the run's saved config.yaml comes first) -> cap the threads to
//   the cores -> estimate the memory and refuse a run above --max-memory (default: the
//   memory available) -> build the experiment (config mistakes fail here, before
//   anything is written) -> create the run directory and write config.yaml -> train ->
//   summary.json, runs.csv, a table.
// The run's label (runs.csv, tables, the app's own files) is derived here once, from
// output.label or the app's default (AppSpec::label), and handed to the hooks that need it.
// Errors print one line "seqbench <name>: error: ..." and exit 2 for config and
// command-line mistakes, 1 for everything else; Ctrl-C writes a checkpoint and exits 130.
// An app whose run is one computation instead of a training loop (stability's analyses)
// goes through the same flow with AppSpec::analyse in place of the Trainer.
#pragma once

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <concepts>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <new>
#include <string>

#include "backend/gemm.hpp"
#include "config/cli.hpp"
#include "config/yaml_config.hpp"
#include "core/fs.hpp"
#include "core/threads.hpp"
#include "report/run_id.hpp"
#include "train/efficiency.hpp"
#include "train/memory_estimate.hpp"
#include "train/run_record.hpp"
#include "train/signals.hpp"
#include "train/trainer.hpp"

namespace seqbench::train {

// A word for a command line the user may paste into a shell: as it is when that is safe,
// else single-quoted ("results/my runs" -> 'results/my runs').
inline std::string shell_word(const std::string& s) {
  bool plain = !s.empty();
  for (const char c : s)
    plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || (c && std::strchr("_./+,:=@%-", c)));
  if (plain) return s;
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// What the run of an app without a training loop (AppSpec::analyse) found.
struct AnalysisOutcome {
  double metric = std::numeric_limits<double>::quiet_NaN();  // the run's final and best metric
  int64_t updates = 0;   // steps it took (runs.csv's updates)
  RunIdentity columns;   // summary.json and runs.csv columns after the usual ones
  std::string printed;   // printed (unless -q) and logged
  std::string note;      // one line on stderr and summary.json's message, or empty
  // Why the analysis failed, or empty. A failed run is recorded (status failed, its
  // columns as they are) like a failed training update; an exception out of analyse is
  // too, without the columns.
  std::string error;
};

// A training app's Exp is a train::Experiment, run by the Trainer; any other Exp (built
// from the config, naming its metric()) is an analysis run by AppSpec::analyse.
template <class Exp>
concept TrainedExperiment = std::derived_from<Exp, Experiment>;

// Where a config keeps the run's seed and threads: train.seed and train.threads, or at
// its top (`seed`, `threads`) for an app without training settings.
template <class Cfg>
constexpr bool kHasTrainSection = requires(Cfg& c) { c.train; };
template <class Cfg>
std::string run_key(const char* key) {
  return kHasTrainSection<Cfg> ? std::string("train.") + key : std::string(key);
}
template <class Cfg>
auto& config_seed(Cfg& c) {
  if constexpr (kHasTrainSection<Cfg>)
    return c.train.seed;
  else
    return c.seed;
}
template <class Cfg>
auto& config_threads(Cfg& c) {
  if constexpr (kHasTrainSection<Cfg>)
    return c.train.threads;
  else
    return c.threads;
}

template <class Cfg, class Exp>
struct AppSpec {
  AppSpec() = default;
  // The four parts every app has; the hooks below are set one by one.
  AppSpec(std::string name_, std::string description_, std::string demo_yaml_,
          std::function<MemoryEstimate(const Cfg&)> memory_)
      : name(std::move(name_)),
        description(std::move(description_)),
        demo_yaml(std::move(demo_yaml_)),
        memory(std::move(memory_)) {}

  std::string name;         // experiment name: results/<name>/, `seqbench <name>`
  std::string description;  // one line for --help
  std::string demo_yaml;    // the embedded default (--demo)
  // Identity columns of runs.csv for a resolved config (label, task, model, data ...);
  // `label` is the run's label (app_label).
  std::function<RunIdentity(const Cfg&, Exp&, const std::string& label)> identity;
  // The memory the resolved config needs (lib/train/memory_estimate.hpp), computed before
  // the experiment is built; --dump-config prints it and a run above the limit is refused.
  std::function<MemoryEstimate(const Cfg&)> memory;
  // Optional: extra options on the app, and a different action than training on a
  // saved run (e.g. evaluating its checkpoint): when on_saved_run() says so, the run's
  // config is loaded as for --resume and alternative(cfg, exp, checkpoint) replaces
  // training; it returns the exit code.
  std::function<void(CLI::App&)> add_options;
  // Optional: what those options set, applied to the resolved config before the common
  // shorthands (--seed, --out, ...), which it may also set (stability's old subcommands).
  std::function<void(Cfg&, config::CommonOptions&)> configure;
  std::function<bool()> on_saved_run;
  std::function<int(const Cfg&, Exp&, const Checkpoint&)> alternative;
  // Optional: an action on the resolved config instead of training (e.g. a memory
  // probe), given the run's label and the memory limit (--max-memory, else the memory
  // available); returns an exit code, or -1 to go on and train.
  std::function<int(const Cfg&, const std::string& label, const MemoryLimit& limit)> action;
  // Optional hooks of the training flow:
  //   label     the run's label (runs.csv, tables, run ids) when output.label is empty;
  //             default model.cell (when the config has one), else the experiment's name
  //   run_id_label  the run id's prefix when output.label is empty, where the label holds
  //             characters a run id cannot (e.g. "local:2,routing:2" -> "local2-routing2");
  //             default the label
  //   adjust    after the experiment is built, may change the config it reports (e.g.
  //             a frame budget turned into train.steps); with it, --dump-config builds
  //             the experiment first
  //   on_start  the run directory exists (e.g. to open an experiment's own CSV file);
  //             resume and the step resumed from as RunFiles gets them
  //   on_finish after training (finished, stopped early, interrupted or diverged: see the
  //             summary's status), before the run record, given the run's label; returns
  //             extra lines to print
  std::function<std::string(const Cfg&)> label;
  std::function<std::string(const Cfg&)> run_id_label;
  std::function<void(Cfg&, Exp&)> adjust;
  std::function<void(Exp&, RunFiles&, bool resume, int64_t resume_step)> on_start;
  std::function<std::string(const Cfg&, Exp&, RunFiles&, const std::string& label, const Summary&)> on_finish;
  // The run of an app without a training loop (Exp not a train::Experiment): it writes its
  // own files into the run directory and returns what it found; run_app does the rest
  // (label, run id, config.yaml, summary.json, runs.csv). An error it throws is recorded as
  // a failed run. There is no checkpoint: --resume is refused.
  std::function<AnalysisOutcome(const Cfg&, Exp&, RunFiles&)> analyse;
};

// The run's label: output.label, else spec.label(cfg), else model.cell (when the config
// has one), else the experiment's name.
template <class Cfg, class Exp>
std::string app_label(const Cfg& cfg, const AppSpec<Cfg, Exp>& spec) {
  std::string label = cfg.output.label;
  if (label.empty() && spec.label) label = spec.label(cfg);
  if constexpr (requires { cfg.model.cell; })
    if (label.empty()) label = cfg.model.cell;
  if (label.empty()) label = spec.name;
  return label;
}

// The prefix of a new run's id: output.label, else spec.run_id_label(cfg) when the app has
// one, else `label` (app_label).
template <class Cfg, class Exp>
std::string app_run_id_prefix(const Cfg& cfg, const AppSpec<Cfg, Exp>& spec,
                              const std::string& label) {
  if (cfg.output.label.empty() && spec.run_id_label) {
    const std::string prefix = spec.run_id_label(cfg);
    if (!prefix.empty()) return prefix;
  }
  return label;
}

// The run of an analysis app: the run directory, record and messages of a training run,
// with spec.analyse in place of the Trainer.
template <class Cfg, class Exp>
int run_analysis(Cfg& cfg, Exp& exp, const AppSpec<Cfg, Exp>& spec, bool quiet,
                 const std::string& label) {
  if (cfg.output.run_id.empty())
    cfg.output.run_id = report::make_run_id(cfg.output.dir + "/" + spec.name,
                                            app_run_id_prefix(cfg, spec, label), config_seed(cfg));
  RunFiles files(cfg.output.dir, spec.name, cfg.output.run_id, exp.metric(), false);
  // No training curve and no gradient probes: RunFiles' empty training files go (they
  // would hold only their headers).
  std::error_code ec;
  std::filesystem::remove(files.path("metrics.csv"), ec);
  std::filesystem::remove(files.path("gradnorm.csv"), ec);
  files.write_config(config::to_yaml(cfg));
  if (!quiet)
    fmt::print(stderr, "seqbench {}: starting run {} -> {}\n", spec.name, cfg.output.run_id,
               files.dir());

  // From here on the directory holds a run: an error in the analysis is recorded
  // (summary.json status failed, a runs.csv row) like a failed training update.
  const auto start = std::chrono::steady_clock::now();
  AnalysisOutcome o;
  Summary s;
  s.status = "finished";
  try {
    o = spec.analyse(cfg, exp, files);
  } catch (const std::exception& e) {
    o.error = e.what();
  }
  if (!o.error.empty()) s.status = "failed";
  s.message = o.error.empty() ? o.note : o.error;
  s.train_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  s.updates = o.updates;
  s.metric = exp.metric();
  s.final_metric = s.best_metric = o.metric;
  s.final_loss = std::numeric_limits<double>::quiet_NaN();
  s.peak_rss_mb = peak_rss_mb();
  RunIdentity record = run_record(files, spec.name, spec.identity(cfg, exp, label), s);
  append(record, o.columns);
  files.log(o.printed + (s.message.empty() ? "" : s.message + "\n"));
  write_run_outputs(files, record, s);
  if (s.status == "failed") {
    fmt::print(stderr, "seqbench {}: error: {}\n", spec.name, s.message);
    return core::kExitError;
  }
  if (!quiet) fmt::print("{}wrote {}/\n", o.printed, files.dir());
  if (!o.note.empty()) fmt::print(stderr, "seqbench {}: {}\n", spec.name, o.note);
  return core::kExitOk;
}

inline int report_error(const std::string& app, const std::exception& e, int code) {
  std::fflush(stdout);
  // The C++ runtime's own word for a failed allocation says nothing a user can act on.
  if (dynamic_cast<const std::bad_alloc*>(&e))
    fmt::print(stderr,
               "seqbench {}: error: out of memory: an allocation failed (hint: `--dump-config` prints the "
               "run's memory estimate; make the model or batch smaller, or allow more: --max-memory, "
               "ulimit -v)\n",
               app);
  else
    fmt::print(stderr, "seqbench {}: error: {}\n", app, e.what());
  return code;
}

template <class Cfg, class Exp>
int run_app(int argc, char** argv, const AppSpec<Cfg, Exp>& spec) {
  try {
    CLI::App app{spec.description, "seqbench " + spec.name};
    config::CommonOptions opts;
    config::add_common_options(app, opts);
    int64_t interrupt_at = -1;
    app.add_option("--interrupt-at", interrupt_at,
                   "testing: act as if Ctrl-C arrived after this update")
        ->group("");  // hidden
    if (spec.add_options) spec.add_options(app);
    if (!config::parse_cli(app, argc, argv)) return core::kExitOk;
    [[maybe_unused]] const PeakMode peak = peak_mode();  // a bad SEQBENCH_SGEMM_PEAK first
    if (!opts.resume_from.empty()) opts.resume = true;
    if (!TrainedExperiment<Exp> && opts.resume)
      throw core::UsageError(fmt::format(
          "--resume: a {} run has no checkpoint to continue from (hint: run it again with "
          "another --run-id)",
          spec.name));

    // Resolve the config. Command-line shorthands act like --set after everything else.
    Cfg cfg;
    auto shorthands = [&](Cfg& c) {
      if (spec.configure) spec.configure(c, opts);
      if (opts.seed) config::apply_override(c, fmt::format("{}={}", run_key<Cfg>("seed"), *opts.seed));
      if (opts.threads)
        config::apply_override(c, fmt::format("{}={}", run_key<Cfg>("threads"), *opts.threads));
      if (!opts.out.empty()) c.output.dir = opts.out;
      if (!opts.run_id.empty()) c.output.run_id = opts.run_id;
    };
    config::resolve(cfg, opts, spec.demo_yaml);
    shorthands(cfg);
    if (opts.resume_run == "latest") {
      // The newest run of this label (of any label when nothing names a config).
      if (!opts.run_id.empty())
        throw core::UsageError("--resume latest finds the run itself (hint: drop --run-id, or give "
                               "--resume alone with --run-id)");
      const bool by_label = !opts.configs.empty() || !opts.sets.empty() || opts.demo;
      const std::string dir = cfg.output.dir + "/" + spec.name;
      const std::string prefix = by_label ? app_run_id_prefix(cfg, spec, app_label(cfg, spec)) : "";
      cfg.output.run_id = report::newest_run_id(dir, prefix);
      if (cfg.output.run_id.empty())
        throw core::UsageError(fmt::format(
            "--resume latest: no run {}in '{}' (hint: `seqbench runs {} --out {}` lists them)",
            prefix.empty() ? "" : "labelled '" + prefix + "' ", dir, spec.name, cfg.output.dir));
      if (!opts.quiet)
        fmt::print(stderr, "seqbench {}: --resume latest: {}\n", spec.name, cfg.output.run_id);
    }
    // Before the id is used in any path: it must not leave the results root.
    if (!cfg.output.run_id.empty())
      report::check_run_id(cfg.output.run_id, opts.run_id.empty() ? "output.run_id" : "--run-id");
    std::string run_dir;
    const bool saved_run = spec.on_saved_run && spec.on_saved_run();
    if (opts.resume || saved_run) {
      if (cfg.output.run_id.empty())
        throw core::UsageError(fmt::format(
            "{} needs a saved run: add --run-id ID (a directory under <output.dir>/{}/)",
            opts.resume ? "--resume" : "this action", spec.name));
      run_dir = cfg.output.dir + "/" + spec.name + "/" + cfg.output.run_id;
      // Nothing of the run is read, let alone written, through a symbolic link.
      check_run_dir(cfg.output.dir, spec.name, cfg.output.run_id);
      const std::string saved = run_dir + "/config.yaml";
      if (!core::file_exists(saved))
        throw core::UsageError(fmt::format("--resume: no run at '{}' (config.yaml missing)", run_dir));
      const std::string root = cfg.output.dir, id = cfg.output.run_id;
      cfg = Cfg{};
      config::apply_yaml_file(cfg, saved);
      const std::string saved_yaml = config::to_yaml(cfg);
      config::resolve(cfg, opts);
      shorthands(cfg);
      cfg.output.dir = root;
      cfg.output.run_id = id;
      if (opts.resume) check_resume_config(saved_yaml, config::to_yaml(cfg), run_dir);
    }
    const MemoryLimit limit = memory_limit(opts.max_memory);
    // The resolved config, then the memory estimate as YAML comments (still a valid config).
    auto dump = [&] {
      fmt::print("{}", config::to_yaml(cfg));
      if (spec.memory) fmt::print("{}", memory_comment(spec.memory(cfg), limit));
      return core::kExitOk;
    };
    if (opts.dump_config && !spec.adjust) return dump();

    // Before anything can start OpenMP threads (signals.hpp); unarmed until training.
    install_interrupt_handler(false);
    // Capped now, said when the run starts (so that a usage error is still one line).
    std::string threads_warning;
    config_threads(cfg) = core::cap_threads(config_threads(cfg), opts.force_threads,
                                            run_key<Cfg>("threads"), threads_warning);
    auto warn_threads = [&] {
      if (!threads_warning.empty())
        fmt::print(stderr, "seqbench {}: warning: {}\n", spec.name, threads_warning);
    };
    core::set_threads(config_threads(cfg));
    if constexpr (kHasTrainSection<Cfg>)
      backend::set_gemm_impl(backend::parse_gemm_impl(cfg.train.gemm));
    // The run's label, derived once from the resolved config, on first use (the action's
    // probe needs it before the experiment is built; a training run after the experiment
    // has checked the config).
    std::optional<std::string> label_once;
    const auto label = [&]() -> const std::string& {
      if (!label_once) label_once = app_label(cfg, spec);
      return *label_once;
    };
    if (spec.action) {
      const int rc = spec.action(cfg, label(), limit);
      if (rc >= 0) return rc;
    }
    // Before the experiment allocates its model, optimizer and data, and before any file of
    // the run is written.
    if (spec.memory) check_memory(spec.memory(cfg), limit);
    Exp exp(cfg);
    if (spec.adjust) spec.adjust(cfg, exp);
    if (opts.dump_config) return dump();
    if constexpr (!TrainedExperiment<Exp>) {
      warn_threads();
      return run_analysis(cfg, exp, spec, opts.quiet, label());
    } else {
      if (saved_run) {
        Checkpoint saved = load_checkpoint(run_dir + "/checkpoint.sbck");
        warn_threads();
        return spec.alternative(cfg, exp, saved);
      }

      Checkpoint ck;
      int64_t resume_step = 0;
      const std::string latest = run_dir + "/checkpoint.sbck", previous = run_dir + "/checkpoint.prev.sbck";
      const bool from_previous = opts.resume_from == "previous";
      if (opts.resume) {
        if (from_previous && !core::file_exists(previous))
          throw core::UsageError(fmt::format(
              "--resume-from previous: {} does not exist (a run keeps one once it has written two "
              "checkpoints)",
              previous));
        try {
          ck = load_checkpoint(from_previous ? previous : latest);
        } catch (const core::Error& e) {
          if (from_previous || !core::file_exists(previous)) throw;
          // One hint per message: this one replaces the loader's own.
          std::string what = e.what();
          if (const size_t h = what.find(" (hint: "); h != std::string::npos) what.erase(h);
          throw core::Error(fmt::format("{} (hint: --resume-from previous continues from the checkpoint "
                                        "before it, {})",
                                        what, previous));
        }
        resume_step = ck.get_int("step");
        // The checkpoint knows the config it was written with: a config.yaml edited since
        // (task.T, the seed, ...) is refused before anything is touched.
        if (ck.has("config_yaml"))
          check_checkpoint_config(ck.get_string("config_yaml"), config::to_yaml(cfg),
                                  from_previous ? previous : latest);
      } else {
        exp.init();
      }
      if (cfg.output.run_id.empty())
        cfg.output.run_id = report::make_run_id(cfg.output.dir + "/" + spec.name,
                                                app_run_id_prefix(cfg, spec, label()),
                                                cfg.train.seed);
      RunFiles files(cfg.output.dir, spec.name, cfg.output.run_id, exp.metric(), opts.resume);
      Trainer trainer(cfg.train, cfg.optim, exp, files, opts.quiet);
      trainer.set_config_yaml(config::to_yaml(cfg));
      // A resumed run touches its files only once its checkpoint has been restored, so a
      // checkpoint that does not fit leaves the run as it was.
      if (opts.resume) {
        trainer.resume(ck);
        ck = Checkpoint{};  // restored: its copy of the parameters is not needed any more
        files.continue_after(resume_step);
        // The damaged latest checkpoint must not become the next "previous" one: the
        // previous one takes its place (a rename; the next checkpoint makes it previous again).
        if (from_previous) core::rename_file(previous, latest);
      }
      files.write_config(config::to_yaml(cfg));
      if (spec.on_start) spec.on_start(exp, files, opts.resume, resume_step);
      warn_threads();
      if (!opts.quiet)
        fmt::print(stderr, "seqbench {}: {} run {} -> {}\n", spec.name,
                   opts.resume ? "resuming" : "starting", cfg.output.run_id, files.dir());

      install_interrupt_handler();
      if (interrupt_at >= 0) trainer.interrupt_after(interrupt_at);
      Summary s;
      try {
        s = trainer.run();
      } catch (const core::OutOfSpace& e) {
        // What to do once there is room: continue from the checkpoint, if one was written;
        // else start again, which this run's directory would refuse (it holds a run).
        throw core::Error(e.then(
            core::file_exists(files.checkpoint_path())
                ? std::string("continue the run with --resume")
                : fmt::format("start the run again: it wrote no checkpoint to resume from "
                              "(remove '{}' first, or give another --run-id)",
                              files.dir())));
      }
      restore_default_handlers();
      // The machine's sgemm peak, the yardstick of the run's GFLOP/s: cached, measured once
      // per machine (a few hundred ms); an interrupted run only reads the cache.
      if (s.update_gflop > 0) {
        const PeakLookup p = machine_sgemm_peak(
            core::num_threads(), s.status == "interrupted" ? std::max(peak, PeakMode::kCached) : peak);
        s.sgemm_peak_gflops = p.gflops;
        if (!opts.quiet && !p.note.empty())
          fmt::print(stderr, "seqbench {}: note: {}\n", spec.name, p.note);
        if (!opts.quiet && p.measured && std::isfinite(p.gflops))
          fmt::print(stderr, "seqbench {}: this machine's sgemm peak: {:.1f} GFLOP/s on {} thread{} "
                     "(measured once, cached in {})\n",
                     spec.name, p.gflops, core::num_threads(), core::num_threads() == 1 ? "" : "s",
                     p.path);
      }
      const std::string extra =
          spec.on_finish ? spec.on_finish(cfg, exp, files, label(), s) : std::string();

      const RunIdentity record = run_record(files, spec.name, spec.identity(cfg, exp, label()), s);
      write_run_outputs(files, record, s);
      if (s.status == "interrupted") {
        fmt::print(stderr,
                   "seqbench {}: interrupted at update {}; checkpoint written. Continue with:\n"
                   "  seqbench {} --out {} --run-id {} --resume\n",
                   spec.name, s.updates, spec.name, shell_word(cfg.output.dir),
                   shell_word(cfg.output.run_id));
        return core::kExitInterrupted;
      }
      if (!opts.quiet)
        fmt::print("\n{}\n{}", summary_table(record, s), extra.empty() ? "" : extra + "\n");
      if (s.status == "diverged" || s.status == "failed") {
        fmt::print(stderr, "seqbench {}: error: {}\n", spec.name, s.message);
        return core::kExitError;
      }
      return core::kExitOk;
    }
  } catch (const core::Error& e) {
    return report_error(spec.name, e, e.exit_code());
  } catch (const std::exception& e) {
    return report_error(spec.name, e, core::kExitError);
  }
}

}  // namespace seqbench::train
