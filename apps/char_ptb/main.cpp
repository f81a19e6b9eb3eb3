// seqbench_char_ptb: the character-level LM experiment's own binary (same as
// `seqbench char_ptb`).
#include "apps/char_ptb/char_ptb_experiment.hpp"
#include "core/fs.hpp"

int main(int argc, char** argv) {
  return seqbench::core::stdout_checked(seqbench::apps::char_ptb_main(argc, argv), "char_ptb");
}
