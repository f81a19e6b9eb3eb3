// seqbench_minigrid: the MiniGrid experiment's own binary (same as `seqbench minigrid`).
#include "apps/minigrid/minigrid_experiment.hpp"
#include "core/fs.hpp"

int main(int argc, char** argv) {
  return seqbench::core::stdout_checked(seqbench::apps::minigrid_main(argc, argv), "minigrid");
}
