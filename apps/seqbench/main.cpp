// seqbench: the front door. `seqbench <experiment> [args]` runs that experiment with
// the remaining arguments, exactly as its own binary would.
#include <fmt/format.h>

#include <cstring>
#include <string>

#include "apps/copy/copy_experiment.hpp"

namespace {

struct Entry {
  const char* name;
  int (*main)(int, char**);
  const char* what;
};

const Entry kExperiments[] = {
    {"copy", seqbench::apps::copy_main, "copy and adding tasks (synthetic, no data needed)"},
};

void usage(std::FILE* out) {
  fmt::print(out, "usage: seqbench <experiment> [options]   (seqbench <experiment> --help)\n\n");
  fmt::print(out, "experiments:\n");
  for (const auto& e : kExperiments) fmt::print(out, "  {:<10} {}\n", e.name, e.what);
  fmt::print(out, "\nexample: seqbench copy --config configs/copy/lstm_small.yaml\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  for (const auto& e : kExperiments) {
    if (std::string(argv[1]) == e.name) {
      // The experiment sees its own name as argv[0].
      return e.main(argc - 1, argv + 1);
    }
  }
  std::string names;
  for (const auto& e : kExperiments) names += (names.empty() ? "" : ", ") + std::string(e.name);
  fmt::print(stderr, "seqbench: error: unknown experiment '{}' (have: {})\n", argv[1], names);
  return 2;
}
