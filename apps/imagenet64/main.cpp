// seqbench_imagenet64: the pixel-level image Transformer experiment's own binary (same as
// `seqbench imagenet64`).
#include "apps/imagenet64/imagenet64_experiment.hpp"
#include "core/fs.hpp"

int main(int argc, char** argv) {
  return seqbench::core::stdout_checked(seqbench::apps::imagenet64_main(argc, argv), "imagenet64");
}
