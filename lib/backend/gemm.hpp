// The one GEMM entry point of seqbench. Model code calls backend::gemm and never
// names a BLAS; the float path goes to oneDNN's dnnl_sgemm or OpenBLAS's
// cblas_sgemm according to a process-wide setting (both are row-major here), the
// double path (gradient checks) always to cblas_dgemm.
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

enum class GemmImpl { OneDnn, OpenBlas };

// Process-wide choice for the float path; default OneDnn (faster on the AVX-512
// machines we measured, see docs/backend.md). Not meant to be flipped while
// another thread is inside gemm, although doing so is not a data race.
void set_gemm_impl(GemmImpl impl);
GemmImpl gemm_impl();
// "onednn" | "openblas"; anything else throws core::UsageError naming the valid values.
GemmImpl parse_gemm_impl(const std::string& name);
const char* gemm_impl_name(GemmImpl impl);

// The linked libraries' versions, for `seqbench --version`:
// "oneDNN 2.6.3 (ISA avx512_core_bf16), OpenBLAS 0.3.21" (OpenBLAS's own config string,
// its first two words).
std::string library_versions();
// The instruction set oneDNN dispatches to on this machine (dnnl_get_effective_cpu_isa):
// "avx2", "avx512_core", "avx512_core_bf16", ... ("unknown" for one this list lacks).
// ONEDNN_MAX_CPU_ISA lowers it.
const char* onednn_isa();

}  // namespace seqbench::backend
