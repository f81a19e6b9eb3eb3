#include "core/threads.hpp"

#include <omp.h>

namespace seqbench::core {

void set_threads(int n) {
  if (n > 0) omp_set_num_threads(n);
}

int num_threads() { return omp_get_max_threads(); }

}  // namespace seqbench::core
