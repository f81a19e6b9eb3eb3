// Helpers shared by the benchmark programs of tools/bench (cell_step.cpp,
// attention_scaling.cpp): the median of timed repetitions and the process's resident
// memory now. Peak memory is train::peak_rss_mb() (getrusage).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace seqbench::bench {

// Median of v (the mean of the two middle values for an even count); v non-empty.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Resident set size now in MiB, from /proc/self/statm (Linux); 0 where it cannot be read.
// Subtracted from the peak, it isolates what a step allocates on top of its inputs.
inline double current_rss_mb() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  long pages = 0, resident = 0;
  const int got = std::fscanf(f, "%ld %ld", &pages, &resident);
  std::fclose(f);
  if (got != 2) return 0;
  return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

}  // namespace seqbench::bench
