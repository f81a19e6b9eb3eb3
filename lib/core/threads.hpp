// One threading runtime for everything: OpenMP. OpenBLAS is the OpenMP build and
// oneDNN uses OpenMP, so one call sets the thread count for all of them.
#pragma once

#include <string>

namespace seqbench::core {

// The CPU cores this process may run on: the size of its affinity mask
// (sched_getaffinity, which follows taskset, cpusets and Slurm's CPU binding), else the
// online cores; at least 1.
int available_cores();

// The thread count to use for a request of n threads (n <= 0: OpenMP's default, kept).
// Above available_cores() the request is capped to the core count unless force is set;
// `warning` then holds one line saying so, naming `key` (else it is left empty).
int cap_threads(int n, bool force, const std::string& key, std::string& warning);

// Sets the OpenMP thread count (n <= 0: leave the default). More than 4 threads per
// core is a core::UsageError naming train.threads.
void set_threads(int n);
int num_threads();

}  // namespace seqbench::core
