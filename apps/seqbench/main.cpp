// seqbench: the front door. `seqbench <experiment> [args]` runs that experiment with
// the remaining arguments, exactly as its own binary would; `seqbench report ...` and
// `seqbench compare ...` read results (apps/seqbench/report_main.cpp).
#include <fmt/format.h>

#include <cstring>
#include <string>

#include "apps/char_ptb/char_ptb_experiment.hpp"
#include "apps/copy/copy_experiment.hpp"
#include "apps/recall/recall_experiment.hpp"
#include "apps/imagenet64/imagenet64_experiment.hpp"
#include "apps/minigrid/minigrid_experiment.hpp"
#include "apps/pmnist/pmnist_experiment.hpp"
#include "apps/stability/stability_main.hpp"
#include "apps/wikitext103/wikitext103_experiment.hpp"

namespace seqbench::apps {
int report_main(int argc, char** argv);   // report_main.cpp
int compare_main(int argc, char** argv);  // report_main.cpp
int sweep_main(int argc, char** argv);    // sweep_main.cpp
int list_main(int argc, char** argv);     // list_main.cpp
}  // namespace seqbench::apps

namespace {

struct Entry {
  const char* name;
  int (*main)(int, char**);
  const char* what;
};

const Entry kExperiments[] = {
    {"copy", seqbench::apps::copy_main,
     "copy, denoise, adding tasks and transfer (synthetic, no data needed)"},
    {"pmnist", seqbench::apps::pmnist_main,
     "sequential / permuted MNIST, test accuracy at the best validation (data/mnist)"},
    {"char_ptb", seqbench::apps::char_ptb_main,
     "character-level language modelling, bits per character (data/brown stand-in)"},
    {"wikitext103", seqbench::apps::wikitext103_main,
     "word-level Transformer LM, full/local/routing/random/smyrf/lsh heads (Brown stand-in)"},
    {"imagenet64", seqbench::apps::imagenet64_main,
     "pixel-level image Transformer, bits/dim, same head kinds (MNIST stand-in)"},
    {"minigrid", seqbench::apps::minigrid_main,
     "MiniGrid RL: PPO with lstm / rel_lstm / momentum_lstm agents (C++ environments)"},
    {"recall", seqbench::apps::recall_main,
     "MQAR, selective copying, induction heads: attention vs mixers vs cells at equal state"},
    {"stability", seqbench::apps::stability_main,
     "Miller & Hardt: gradient gap / weight gap vs truncation k (`stability --config ...`)"},
};

// Commands that read results rather than train.
const Entry kCommands[] = {
    {"report", seqbench::apps::report_main,
     "tables and figures from runs: `report <experiment>`, `report gradnorm RUN_DIR...`, "
     "`report attention approx|jsd RUN_DIR` (docs/report.md)"},
    {"compare", seqbench::apps::compare_main,
     "one row per model from a runs.csv: `compare results/copy/runs.csv`"},
    {"list", seqbench::apps::list_main,
     "the registered cells, agent cores, attention kinds, environments and tasks: `list [cells]` "
     "(docs/models.md)"},
    {"sweep", seqbench::apps::sweep_main,
     "seeds x grid from a sweep file, here (--jobs N) or on Slurm: `sweep SPEC`, "
     "`sweep status SPEC` (docs/sweeps.md)"},
};

void usage(std::FILE* out) {
  fmt::print(out, "usage: seqbench <experiment> [options]   (seqbench <experiment> --help)\n\n");
  fmt::print(out, "experiments:\n");
  for (const auto& e : kExperiments) fmt::print(out, "  {:<10} {}\n", e.name, e.what);
  fmt::print(out, "\ncommands:\n");
  for (const auto& e : kCommands) fmt::print(out, "  {:<10} {}\n", e.name, e.what);
  fmt::print(out, "\nexample: seqbench copy --config configs/copy/lstm_small.yaml\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  for (const auto& e : kCommands) {
    // The command sees its own name as argv[0].
    if (std::string(argv[1]) == e.name) return e.main(argc - 1, argv + 1);
  }
  for (const auto& e : kExperiments) {
    if (std::string(argv[1]) == e.name) {
      // The experiment sees its own name as argv[0].
      return e.main(argc - 1, argv + 1);
    }
  }
  std::string names;
  for (const auto& e : kExperiments) names += (names.empty() ? "" : ", ") + std::string(e.name);
  for (const auto& e : kCommands) names += ", " + std::string(e.name);
  fmt::print(stderr, "seqbench: error: unknown experiment '{}' (have: {})\n", argv[1], names);
  return 2;
}
