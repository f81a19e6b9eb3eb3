// Helpers shared by the benchmark programs of tools/bench (cell_step.cpp,
// attention_scaling.cpp): the median of timed repetitions, the process's resident
// memory now (peak memory is train::peak_rss_mb(), getrusage), and the error handling
// around a program's body.
#pragma once

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <vector>

#include "core/check.hpp"

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

// Runs body() and turns an exception into one line on stderr, "<program>: <what>", and
// its exit code (core::Error's own, else kExitError).
template <class F>
int guarded_main(const char* program, F&& body) {
  try {
    return body();
  } catch (const core::Error& e) {
    fmt::print(stderr, "{}: {}\n", program, e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: {}\n", program, e.what());
    return core::kExitError;
  }
}

}  // namespace seqbench::bench
