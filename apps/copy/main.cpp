// seqbench_copy: the copy experiment's own binary (same as `seqbench copy`).
#include "apps/copy/copy_experiment.hpp"
#include "core/fs.hpp"

int main(int argc, char** argv) {
  return seqbench::core::stdout_checked(seqbench::apps::copy_main(argc, argv), "copy");
}
