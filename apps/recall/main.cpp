// seqbench_recall: the recall experiment's own binary (same as `seqbench recall`).
#include "apps/recall/recall_experiment.hpp"
#include "core/fs.hpp"

int main(int argc, char** argv) {
  return seqbench::core::stdout_checked(seqbench::apps::recall_main(argc, argv), "recall");
}
