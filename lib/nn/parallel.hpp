// When the per-step loops of the recurrent layers run in an OpenMP team. Every time
// step is a fork/join (a few microseconds on an idle machine, far more when another job
// holds the second core), so only steps with enough work split their batch rows:
//   kRowParallelMin   elements of per-step elementwise math (B x 4H gates, B x H)
//   kAttendParallelMin  attention work B x attended states x H (rel/mem attention)
// Below them a step runs on the calling thread (the papers' B=10, H=128 copy setting
// does; the pMNIST shape B=100 does not). GEMMs decide for themselves (backend/gemm.cpp).
#pragma once

#include <cstdint>

namespace seqbench::nn {

inline constexpr int64_t kRowParallelMin = int64_t(1) << 15;
inline constexpr int64_t kAttendParallelMin = int64_t(1) << 16;

}  // namespace seqbench::nn
