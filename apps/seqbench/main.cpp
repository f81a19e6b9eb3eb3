// seqbench: the front door. `seqbench <experiment> [args]` runs that experiment with
// the remaining arguments, exactly as its own binary would; `seqbench report ...` and
// `seqbench compare ...` read results (apps/seqbench/report_main.cpp). The experiments
// are the table of apps/experiments.cpp.
#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "apps/experiments.hpp"
#include "backend/gemm.hpp"
#include "core/fs.hpp"

namespace seqbench::apps {
int report_main(int argc, char** argv);   // report_main.cpp
int compare_main(int argc, char** argv);  // report_main.cpp
int sweep_main(int argc, char** argv);    // sweep_main.cpp
int list_main(int argc, char** argv);     // list_main.cpp
int runs_main(int argc, char** argv);     // runs_main.cpp
}  // namespace seqbench::apps

namespace {

struct Command {
  const char* name;
  int (*main)(int, char**);
  const char* what;
};

// Commands that read results rather than train.
const Command kCommands[] = {
    {"report", seqbench::apps::report_main,
     "tables and figures from runs: `report <experiment>`, `report gradnorm RUN_DIR...`, "
     "`report curves RUN_OR_SWEEP_DIR...`, "
     "`report attention approx|jsd RUN_DIR` (docs/report.md)"},
    {"compare", seqbench::apps::compare_main,
     "one row per model from a runs.csv: `compare results/copy/runs.csv`"},
    {"list", seqbench::apps::list_main,
     "the presets (`list presets [EXPERIMENT]`) and the registered cells, agent cores, attention "
     "kinds, environments and tasks (`list [cells]`, docs/models.md)"},
    {"runs", seqbench::apps::runs_main,
     "the runs of an experiment, newest first: state, updates, final metric, age: `runs copy`"},
    {"sweep", seqbench::apps::sweep_main,
     "seeds x grid from a sweep file, here (--jobs N) or on Slurm: `sweep SPEC`, "
     "`sweep status SPEC` (docs/sweeps.md)"},
};

#ifndef SEQBENCH_VERSION
#define SEQBENCH_VERSION "unknown"
#define SEQBENCH_GIT_COMMIT "unknown"
#define SEQBENCH_BUILD_TYPE "unknown"
#define SEQBENCH_ARCH "unknown"
#endif

void version() {
  fmt::print("seqbench {} (commit {})\nbuild: {}, {}\nlibraries: {}\n", SEQBENCH_VERSION,
             SEQBENCH_GIT_COMMIT, SEQBENCH_BUILD_TYPE, SEQBENCH_ARCH,
             seqbench::backend::library_versions());
}

void usage(std::FILE* out) {
  fmt::print(out, "usage: seqbench <experiment> [options]   (seqbench <experiment> --help)\n\n");
  fmt::print(out, "experiments:\n");
  for (const auto& e : seqbench::apps::experiments())
    fmt::print(out, "  {:<10} {}\n", e.name, e.help);
  fmt::print(out, "\ncommands:\n");
  for (const auto& e : kCommands) fmt::print(out, "  {:<10} {}\n", e.name, e.what);
  fmt::print(out,
             "\nthe loop (docs/cli.md):\n"
             "  seqbench list presets copy                        the presets, with what they take\n"
             "  seqbench copy --config configs/copy/lstm_small.yaml   run one (a progress line, an ETA)\n"
             "  seqbench sweep configs/sweeps/copy_cells.yaml     or a sweep: [k/N done] and an ETA\n"
             "  seqbench runs copy                                the runs: state, updates, metric, age\n"
             "  seqbench compare results/copy/runs.csv            mean, sd and n per model\n"
             "  seqbench report gradnorm results/copy             figures (report paper NAME: a paper)\n"
             "\n  --version  the version, commit, build and libraries\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    version();
    return seqbench::core::stdout_checked(0, "--version");
  }
  for (const auto& e : kCommands) {
    // The command sees its own name as argv[0].
    if (std::string(argv[1]) == e.name)
      return seqbench::core::stdout_checked(e.main(argc - 1, argv + 1), argv[1]);
  }
  // The experiment sees its own name as argv[0].
  if (const auto* e = seqbench::apps::find_experiment(argv[1]))
    return seqbench::core::stdout_checked(e->main(argc - 1, argv + 1), argv[1]);
  std::string names;
  for (const auto& e : seqbench::apps::experiments())
    names += (names.empty() ? "" : ", ") + std::string(e.name);
  for (const auto& e : kCommands) names += ", " + std::string(e.name);
  fmt::print(stderr, "seqbench: error: unknown experiment '{}' (have: {})\n", argv[1], names);
  return 2;
}
