// seqbench_stability: the stability analyses' own binary (same as `seqbench stability`).
#include "apps/stability/stability_main.hpp"
#include "core/fs.hpp"

int main(int argc, char** argv) {
  return seqbench::core::stdout_checked(seqbench::apps::stability_main(argc, argv), "stability");
}
