#include "backend/gemm.hpp"

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/check.hpp"

namespace seqbench::backend {
namespace {

// OpenBLAS (Debian's OpenMP build) sets up a 128 MiB buffer for every OpenMP thread when
// it is loaded, before main(); under an address-space limit (ulimit -v) too small for
// them it retried the failing mmap for ever, and every command hung, `seqbench list`
// included (measured: 300000 KiB hung with 2 threads, 400000 KiB started, and
// OMP_NUM_THREADS=1 started at 300000). Functions in .preinit_array run first, before
// any library initialises: a process under such a limit, with OMP_NUM_THREADS unset,
// sets it to as many threads as buffers fit in half the limit (at least one) and
// executes itself again, so that every library starts with it as if the user had set
// it (setenv does not work that early, measured). Without a limit, or with
// room for a buffer per core, nothing changes.
constexpr unsigned long long kOpenblasBufferBytes = 128ull << 20;
void fit_threads_to_address_limit(int, char** argv, char** envp) {
  struct rlimit rl {};
  if (!argv || !envp || ::getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return;
  // getenv and setenv do not work yet (libc sets its environment up after this runs):
  // the environment is the array the loader passes.
  size_t n = 0;
  for (; envp[n]; ++n)
    if (std::strncmp(envp[n], "OMP_NUM_THREADS=", 16) == 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  const int cores = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  const unsigned long long fit =
      std::max<unsigned long long>(1, (unsigned long long)rl.rlim_cur / 2 / kOpenblasBufferBytes);
  if ((unsigned long long)cores <= fit) return;
  static char var[48];
  std::snprintf(var, sizeof var, "OMP_NUM_THREADS=%llu", fit);
  char** env = static_cast<char**>(std::malloc((n + 2) * sizeof(char*)));
  if (!env) return;
  for (size_t i = 0; i < n; ++i) env[i] = envp[i];
  env[n] = var;
  env[n + 1] = nullptr;
  ::execve("/proc/self/exe", argv, env);  // returns only if it failed: go on as we are
  std::free(env);
}
[[gnu::section(".preinit_array"), gnu::used]] void (*kFitThreads)(int, char**, char**) =
    fit_threads_to_address_limit;

std::atomic<GemmImpl> g_impl{GemmImpl::OneDnn};

// OpenBLAS may be built with 32-bit integers (blasint == int): refuse sizes it
// would silently truncate instead of computing garbage.
void check_fits_blasint(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc) {
  constexpr int64_t kMax = std::numeric_limits<blasint>::max();
  SB_CHECK(m <= kMax && n <= kMax && k <= kMax && lda <= kMax && ldb <= kMax && ldc <= kMax,
           "gemm: m={} n={} k={} lda={} ldb={} ldc={} exceed the BLAS integer range {} "
           "(hint: split the product)",
           m, n, k, lda, ldb, ldc, kMax);
}

template <class T>
void scale_c(int64_t m, int64_t n, T beta, T* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    T* row = c + i * ldc;
    // beta == 0 overwrites rather than multiplies so NaN/Inf in C do not survive,
    // matching BLAS semantics on the k > 0 path.
    if (beta == T(0)) {
      for (int64_t j = 0; j < n; ++j) row[j] = T(0);
    } else if (beta != T(1)) {
      for (int64_t j = 0; j < n; ++j) row[j] *= beta;
    }
  }
}

CBLAS_TRANSPOSE to_cblas(Trans t) { return t == Trans::N ? CblasNoTrans : CblasTrans; }

// Products below this many multiply-adds run on one thread. The per-step GEMMs of a
// small-batch recurrent step (B=10, H=128: 0.65M) take ~15 us; splitting them costs a
// fork/join each, and on a shared machine a thread that waits for a descheduled peer
// turned a 18 ms copy-task update into 190 ms (docs/performance.md).
constexpr int64_t kSerialBelow = int64_t(1) << 21;

// Runs f with OpenMP limited to one thread when the product is small (restored after).
template <class F>
void maybe_serial(int64_t m, int64_t n, int64_t k, F&& f) {
  const int prev = omp_get_max_threads();
  if (prev > 1 && !omp_in_parallel() && m * n * k < kSerialBelow) {
    omp_set_num_threads(1);
    f();
    omp_set_num_threads(prev);
  } else {
    f();
  }
}

}  // namespace

template <class T>
void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
          const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  SB_CHECK(m >= 0 && n >= 0 && k >= 0, "gemm: negative size m={} n={} k={}", m, n, k);
  if (m == 0 || n == 0) return;
  SB_CHECK(ldc >= n, "gemm: ldc={} < n={} (hint: ldc is the row stride of C)", ldc, n);
  if (k == 0) {
    scale_c(m, n, beta, c, ldc);
    return;
  }
  const int64_t a_cols = ta == Trans::N ? k : m;
  const int64_t b_cols = tb == Trans::N ? n : k;
  SB_CHECK(lda >= a_cols, "gemm: lda={} < {} columns of A (ta={}; hint: lda is the row stride)",
           lda, a_cols, ta == Trans::N ? 'N' : 'T');
  SB_CHECK(ldb >= b_cols, "gemm: ldb={} < {} columns of B (tb={}; hint: ldb is the row stride)",
           ldb, b_cols, tb == Trans::N ? 'N' : 'T');

  if constexpr (std::is_same_v<T, float>) {
    if (g_impl.load(std::memory_order_relaxed) == GemmImpl::OneDnn) {
      dnnl_status_t st = dnnl_success;
      maybe_serial(m, n, k, [&] {
        st = dnnl_sgemm(ta == Trans::N ? 'N' : 'T', tb == Trans::N ? 'N' : 'T', m, n, k, alpha, a,
                        lda, b, ldb, beta, c, ldc);
      });
      SB_CHECK(st == dnnl_success, "gemm: dnnl_sgemm failed with status {} (m={} n={} k={})",
               static_cast<int>(st), m, n, k);
      return;
    }
    check_fits_blasint(m, n, k, lda, ldb, ldc);
    cblas_sgemm(CblasRowMajor, to_cblas(ta), to_cblas(tb), blasint(m), blasint(n), blasint(k),
                alpha, a, blasint(lda), b, blasint(ldb), beta, c, blasint(ldc));
  } else {
    static_assert(std::is_same_v<T, double>, "gemm is instantiated for float and double only");
    check_fits_blasint(m, n, k, lda, ldb, ldc);
    cblas_dgemm(CblasRowMajor, to_cblas(ta), to_cblas(tb), blasint(m), blasint(n), blasint(k),
                alpha, a, blasint(lda), b, blasint(ldb), beta, c, blasint(ldc));
  }
}

template void gemm<float>(Trans, Trans, int64_t, int64_t, int64_t, float, const float*, int64_t,
                          const float*, int64_t, float, float*, int64_t);
template void gemm<double>(Trans, Trans, int64_t, int64_t, int64_t, double, const double*, int64_t,
                           const double*, int64_t, double, double*, int64_t);

void set_gemm_impl(GemmImpl impl) { g_impl.store(impl, std::memory_order_relaxed); }

GemmImpl gemm_impl() { return g_impl.load(std::memory_order_relaxed); }

GemmImpl parse_gemm_impl(const std::string& name) {
  if (name == "onednn") return GemmImpl::OneDnn;
  if (name == "openblas") return GemmImpl::OpenBlas;
  throw core::UsageError(fmt::format(
      "backend.gemm: unknown GEMM implementation '{}' (hint: use onednn or openblas)", name));
}

const char* gemm_impl_name(GemmImpl impl) {
  return impl == GemmImpl::OneDnn ? "onednn" : "openblas";
}

std::string library_versions() {
  const dnnl_version_t* v = dnnl_version();
  std::string blas = openblas_get_config();  // "OpenBLAS 0.3.21 DYNAMIC_ARCH ..."
  const size_t first = blas.find(' ');
  const size_t second = first == std::string::npos ? first : blas.find(' ', first + 1);
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch) + ", " + blas.substr(0, second);
}

}  // namespace seqbench::backend
