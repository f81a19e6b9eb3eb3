#pragma once

namespace seqbench::apps {

// `seqbench stability ...`: Miller & Hardt's recurrent-vs-truncated analyses.
int stability_main(int argc, char** argv);

}  // namespace seqbench::apps
