// The one GEMM entry point of seqbench. Model code calls backend::gemm and never
// names a BLAS; the float path goes to libxsmm's JIT small-matrix kernels, oneDNN's
// dnnl_sgemm or OpenBLAS's cblas_sgemm according to a process-wide setting and the
// product's shape, the double path (gradient checks) always to cblas_dgemm.
#pragma once

#include <cstdint>
#include <string>

namespace seqbench::backend {

enum class Trans { N, T };

// C (m, n) = alpha * op(A) (m, k) * op(B) (k, n) + beta * C, all row-major.
// a: A is (m, k) if ta == N, else (k, m); lda is its row stride (>= its column count).
// b: B is (k, n) if tb == N, else (n, k); ldb likewise.
// c: (m, n) with row stride ldc >= n.
// As in BLAS, C is not read when beta == 0 (NaNs in C do not propagate).
// m == 0 or n == 0: nothing happens; k == 0: C = beta * C without calling a BLAS.
template <class T>
void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
          const T* b, int64_t ldb, T beta, T* c, int64_t ldc);

// The same product for a caller that has already cut its work into small row blocks and
// wants them on libxsmm's cached JIT kernel whatever the shape (the fused LSTM step,
// nn/cells/lstm.cpp): float with tb == N, alpha 1, beta 0 or 1 runs on libxsmm on the
// calling thread unless the setting below is OneDnn or OpenBlas; a product libxsmm has no
// kernel for, another form, and double go to gemm.
template <class T>
void gemm_small(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc);

// The float path's implementation (docs/backend.md, "Small GEMMs and libxsmm"):
// - Auto (default): libxsmm for the small products it measured faster on (tb == N,
//   alpha == 1, beta 0 or 1): the weight gradient's A^T B with k <= 12 rows and
//   m, n <= 512, and A B with 2 <= m <= 12 and n, k <= 512 (auto_uses_xsmm), on AVX2
//   and AVX-512 alike; only where oneDNN would run the product on one thread
//   anyway (inside a parallel region, one thread, or under 2^21 multiply-adds); every
//   other product on oneDNN;
// - OneDnn: every product on dnnl_sgemm (the path before libxsmm);
// - OpenBlas: every product on cblas_sgemm;
// - Xsmm: libxsmm for every product it has a kernel for (tb == N, alpha == 1, beta 0 or
//   1, any size, on the calling thread), oneDNN for the rest; for measuring and tests.
enum class GemmImpl { OneDnn, OpenBlas, Xsmm, Auto };

// Process-wide choice for the float path; default Auto. Not meant to be flipped while
// another thread is inside gemm, although doing so is not a data race.
void set_gemm_impl(GemmImpl impl);
GemmImpl gemm_impl();
// "auto" | "onednn" | "openblas" | "xsmm"; anything else throws core::UsageError naming
// the valid values.
GemmImpl parse_gemm_impl(const std::string& name);
const char* gemm_impl_name(GemmImpl impl);
// Whether Auto sends this product to libxsmm when called here and now (the thread rule
// reads the calling context); libxsmm may still lack the kernel (then oneDNN runs it).
bool auto_uses_xsmm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, float beta);

// libxsmm's kernels are generated once per (m, n, k, lda, ldb, ldc, ta, beta == 0) in
// the process and cached; each thread also keeps its 16 most recent ones, looked up
// without a lock. dispatches: kernels generated (or found missing) in the process so far;
// thread_hits / thread_misses: the calling thread's lookups answered by its own cache /
// passed on to the process's; thread_calls: the calling thread's products that ran on
// libxsmm. For tests and diagnostics.
struct SmallGemmStats {
  int64_t dispatches = 0;
  int64_t thread_hits = 0;
  int64_t thread_misses = 0;
  int64_t thread_calls = 0;
};
SmallGemmStats small_gemm_stats();

// The linked libraries' versions, for `seqbench --version`:
// "oneDNN 2.6.3 (ISA avx512_core_bf16), OpenBLAS 0.3.21, libxsmm 1.17 (target cpx)"
// (OpenBLAS's own config string, its first two words; libxsmm's code path, which
// LIBXSMM_TARGET lowers).
std::string library_versions();
// The instruction set oneDNN dispatches to on this machine (dnnl_get_effective_cpu_isa):
// "avx2", "avx512_core", "avx512_core_bf16", ... ("unknown" for one this list lacks).
// ONEDNN_MAX_CPU_ISA lowers it.
const char* onednn_isa();

}  // namespace seqbench::backend
