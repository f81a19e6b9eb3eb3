#include "core/threads.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "core/check.hpp"

namespace seqbench::core {

void set_threads(int n) {
  // More threads than a few per core only slows a run down (2 cores with 4096 threads
  // did not finish 20 updates in 90 s): a mistake, said as one.
  const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  const long limit = 4 * std::max(1L, cores);
  if (n > limit)
    throw UsageError(fmt::format(
        "train.threads: {} is more than 4 per core on this machine ({} cores; hint: use at "
        "most {}, or 0 for OpenMP's default)",
        n, cores, limit));
  if (n > 0) omp_set_num_threads(n);
}

int num_threads() { return omp_get_max_threads(); }

}  // namespace seqbench::core
