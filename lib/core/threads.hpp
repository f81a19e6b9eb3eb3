// One threading runtime for everything: OpenMP. OpenBLAS is the OpenMP build and
// oneDNN uses OpenMP, so one call sets the thread count for all of them.
#pragma once

namespace seqbench::core {

// n <= 0 keeps the runtime default (OMP_NUM_THREADS or the number of cores).
// Sets the OpenMP thread count (n <= 0: leave the default). More than 4 threads per
// core is a core::UsageError naming train.threads.
void set_threads(int n);
int num_threads();

}  // namespace seqbench::core
