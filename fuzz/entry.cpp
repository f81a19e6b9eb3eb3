// libFuzzer's entry point for one target, chosen at build time (fuzz/CMakeLists.txt).
#include <cstddef>
#include <cstdint>

#include "fuzz/targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  SEQBENCH_FUZZ_TARGET({reinterpret_cast<const char*>(data), size});
  return 0;
}
