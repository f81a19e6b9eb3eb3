#include "core/threads.hpp"

#include <fmt/format.h>
#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>

#include "core/check.hpp"

namespace seqbench::core {

int available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? int(online) : 1;
}

int cap_threads(int n, bool force, const std::string& key, std::string& warning) {
  const int cores = available_cores();
  if (n <= cores || force) return n;
  warning = fmt::format(
      "{}: {} threads is more than the {} core{} this process may use; using {} (hint: "
      "--force-threads keeps {})",
      key, n, cores, cores == 1 ? "" : "s", cores, n);
  return cores;
}

void set_threads(int n) {
  // More threads than a few per core only slows a run down (2 cores with 4096 threads
  // did not finish 20 updates in 90 s): a mistake, said as one, even with --force-threads.
  const long cores = available_cores();
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
