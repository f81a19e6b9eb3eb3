// seqbench_recall: the recall experiment's own binary (same as `seqbench recall`).
#include "apps/recall/recall_experiment.hpp"

int main(int argc, char** argv) { return seqbench::apps::recall_main(argc, argv); }
