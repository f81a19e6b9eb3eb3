// seqbench_pmnist: the pMNIST experiment's own binary (same as `seqbench pmnist`).
#include "apps/pmnist/pmnist_experiment.hpp"
#include "core/fs.hpp"

int main(int argc, char** argv) {
  return seqbench::core::stdout_checked(seqbench::apps::pmnist_main(argc, argv), "pmnist");
}
