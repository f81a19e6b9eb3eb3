// One threading runtime for everything: OpenMP. OpenBLAS is the OpenMP build and
// oneDNN uses OpenMP, so one call sets the thread count for all of them.
#pragma once

namespace seqbench::core {

// n <= 0 keeps the runtime default (OMP_NUM_THREADS or the number of cores).
void set_threads(int n);
int num_threads();

}  // namespace seqbench::core
