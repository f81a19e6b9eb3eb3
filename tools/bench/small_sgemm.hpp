// seqbench_bench_sgemm --small: the per-step products of the recurrent cells, (M, N, K)
// row-major = (10|50|100, 512|128, 128|512) and (10|100, 128, 128), the (T, N) weight
// gradients (128, 512, 10|100), and a few larger products (128|256|1000 rows) to see where
// a small-matrix kernel stops paying; B fixed (a weight),
// A and C rotating through --ring buffers (8: they stay in cache; 784: every call reads
// and writes memory it has not touched for a while, as a recurrent step over 784 steps
// does), lda and ldc exceeding the row length by --pad, beta 0 and 1, one thread. For each shape, beta and
// library of --libs (interleaved, the order rotating), --samples timings of --calls calls
// each, repeated --rounds times; prints one key=value line per measurement and a summary
// table (median ns per call, GFLOP/s, and the time relative to the first library of
// --libs in the same round).
//   onednn     dnnl_sgemm('N', 'N', ...)
//   openblas   cblas_sgemm(CblasRowMajor, ...)
//   xsmm       libxsmm_smmdispatch once per shape and beta (no prefetch), then the kernel
//              (column-major: C^T = B^T A^T, i.e. the kernel (n, m, k) with B first; a
//              row-major A^T is libxsmm's transposed second operand)
//   gemm-onednn, gemm-xsmm, gemm-auto   backend::gemm with that implementation set
// ONEDNN_MAX_CPU_ISA and LIBXSMM_TARGET cap the two libraries' ISA.
#pragma once

#include <string>

namespace seqbench::bench {

struct SmallArgs {
  std::string libs = "onednn,openblas,xsmm";
  int rounds = 2;
  int samples = 101;
  int calls = 20;
  int ring = 8;      // A and C buffers cycled through (784 with --pad 128: the LSTM's cold rows)
  int64_t pad = 0;   // added to lda and ldc (128: the LSTM's state and gate-cache rows)
  std::string shapes;  // "m,n,k[,T];..." instead of the default list
};

int run_small_sgemm(const SmallArgs& a);

}  // namespace seqbench::bench
