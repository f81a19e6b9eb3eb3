// seqbench_wikitext103: the word-level Transformer LM experiment's own binary (same as
// `seqbench wikitext103`).
#include "apps/wikitext103/wikitext103_experiment.hpp"
#include "core/fs.hpp"

int main(int argc, char** argv) {
  return seqbench::core::stdout_checked(seqbench::apps::wikitext103_main(argc, argv), "wikitext103");
}
