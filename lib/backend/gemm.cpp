#include "backend/gemm.hpp"

#include <cblas.h>
#include <fcntl.h>
#include <libxsmm.h>
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <type_traits>
#include <unordered_map>

#include "core/check.hpp"

namespace seqbench::backend {
namespace {

// OpenBLAS (Debian's OpenMP build) maps a 128 MiB buffer for every OpenMP thread when it
// is loaded, before main(), and one more at its first call; where the address-space limit
// (ulimit -v) leaves no room for one, it retries the failing mmap for ever and the process
// spins in the kernel (measured: 300000 KiB hung with 2 threads at start-up, and below
// about 250000 KiB even one thread hung there, `seqbench --version` included). Functions
// in .preinit_array run first, before any library initialises. Under a limit:
// - with OMP_NUM_THREADS unset, a process sets it to as many threads as buffers fit in
//   half the limit (at least one) and executes itself again, so that every library starts
//   with it as if the user had set it (setenv does not work that early, measured);
// - with the threads known, it maps (and unmaps at once) the room their buffers and a
//   margin need: where that fails OpenBLAS would hang, so the process stops instead, with
//   one line naming the limit, exit 1.
// The first call is checked the same way (check_openblas_room). Without a limit nothing
// changes.
constexpr unsigned long long kOpenblasBufferBytes = 128ull << 20;
constexpr unsigned long long kMarginBytes = 16ull << 20;  // the heap, stacks, first allocations

// Whether `bytes` more of address space can be mapped now (mapped PROT_NONE and unmapped
// at once: nothing is committed).
bool room_for(unsigned long long bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  ::munmap(p, bytes);
  return true;
}

// The process's address space now (the libraries are mapped already), from /proc.
unsigned long long mapped_bytes() {
  char buf[64] = {};
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  return n > 0 ? std::strtoull(buf, nullptr, 10) * (unsigned long long)::sysconf(_SC_PAGESIZE) : 0;
}

void fit_threads_to_address_limit(int, char** argv, char** envp) {
  struct rlimit rl {};
  if (!argv || !envp || ::getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return;
  // getenv and setenv do not work yet (libc sets its environment up after this runs):
  // the environment is the array the loader passes.
  size_t n = 0;
  const char* given = nullptr;
  for (; envp[n]; ++n)
    if (std::strncmp(envp[n], "OMP_NUM_THREADS=", 16) == 0) given = envp[n] + 16;
  cpu_set_t set;
  CPU_ZERO(&set);
  const int cores = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  const unsigned long long limit = rl.rlim_cur;
  if (!given) {
    const unsigned long long fit = std::max<unsigned long long>(1, limit / 2 / kOpenblasBufferBytes);
    if ((unsigned long long)cores > fit) {
      static char var[48];
      std::snprintf(var, sizeof var, "OMP_NUM_THREADS=%llu", fit);
      char** env = static_cast<char**>(std::malloc((n + 2) * sizeof(char*)));
      if (env) {
        for (size_t i = 0; i < n; ++i) env[i] = envp[i];
        env[n] = var;
        env[n + 1] = nullptr;
        ::execve("/proc/self/exe", argv, env);  // returns only if it failed: go on as we are
        std::free(env);
      }
    }
  }
  // OMP_NUM_THREADS=4 (or 4,2: the outer level counts); anything else, OpenMP's default.
  unsigned long long threads = given ? std::strtoull(given, nullptr, 10) : 0;
  if (threads == 0) threads = (unsigned long long)cores;
  const unsigned long long room = threads * kOpenblasBufferBytes + kMarginBytes;
  if (room_for(room)) return;
  // The limit that would do, rounded up to 10000 KiB.
  const unsigned long long need_kib = ((mapped_bytes() + room) / 1024 + 9999) / 10000 * 10000;
  char line[512];
  const int len = std::snprintf(
      line, sizeof line,
      "seqbench: error: the virtual memory limit (ulimit -v %llu) is too small to start: "
      "OpenBLAS sets up %llu buffer%s of 128 MiB (one per OpenMP thread) before anything runs, "
      "and would wait for room for ever (hint: raise ulimit -v to %llu or more%s)\n",
      limit / 1024, threads, threads == 1 ? "" : "s", need_kib,
      threads > 1 ? ", or set OMP_NUM_THREADS=1" : "");
  if (len > 0) {
    const ssize_t written = ::write(2, line, size_t(std::min(len, int(sizeof line) - 1)));
    (void)written;  // with stderr gone there is no one to tell
  }
  ::_exit(1);
}
[[gnu::section(".preinit_array"), gnu::used]] void (*kFitThreads)(int, char**, char**) =
    fit_threads_to_address_limit;

// OpenBLAS's first call maps one more buffer, and would hang like its start-up where there
// is no room for it: under a limit, the room is checked before the first call, and a call
// without it is an error instead. Checked until a call has had the room; a call with more
// threads than the process started with may still need more.
void check_openblas_room() {
  static std::atomic<bool> had_room{false};
  if (had_room.load(std::memory_order_relaxed)) return;
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
      !room_for(kOpenblasBufferBytes + kMarginBytes))
    throw core::Error(fmt::format(
        "gemm: the virtual memory limit (ulimit -v {}) leaves no room for the 128 MiB buffer "
        "OpenBLAS maps at its first call, for which it would wait for ever (hint: raise ulimit "
        "-v by 150000 or more{})",
        rl.rlim_cur / 1024,
        gemm_impl() == GemmImpl::OpenBlas ? ", or set train.gemm: onednn" : ""));
  had_room.store(true, std::memory_order_relaxed);
}

std::atomic<GemmImpl> g_impl{GemmImpl::Auto};

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

// ---- libxsmm: JIT kernels for the recurrent step's small products -----------------
//
// libxsmm is column-major. A row-major C (m, n) = op(A) B is the column-major
// C^T (n, m) = B^T op(A)^T: the kernel is (n, m, k) with B as its first operand (leading
// dimension ldb) and A as its second (ldb = lda); a row-major A^T is libxsmm's transposed
// second operand (LIBXSMM_GEMM_FLAG_TRANS_B). libxsmm 1.17 has no JIT kernel with a
// transposed first operand, so tb == T stays on oneDNN, as do alpha != 1 and beta other
// than 0 and 1 (its kernels take alpha = 1, beta = 0 or 1).
//
// A kernel is generated once per (m, n, k, lda, ldb, ldc, ta, beta) in the process and
// kept in g_xsmm (a mutex guards it; generating takes tens of microseconds); every thread
// keeps the last kXsmmThreadSlots it used in a thread_local array, so a call that repeats
// a recent shape takes no lock and calls no dispatcher (the recurrent step repeats a
// handful of shapes every time step, on every OpenMP thread).

// GemmImpl::Auto's class, from the measurements in docs/backend.md ("Small GEMMs and
// libxsmm"), both with operands in cache and with the cells' strides and cold rows:
// - the weight gradient's form, op(A) = A^T, with few rows (k <= 12), m, n <= 512:
//   0.41-0.93x oneDNN's time on AVX2, 0.59-0.94x on AVX-512 (even with beta 1 in cache,
//   one cold point 1.11x): oneDNN packs both operands for a product with almost no
//   work to amortise it;
// - op(A) = A with 2 <= m <= 12, n, k <= 512: on AVX-512 0.68-0.91x in cache, 0.58-0.98x
//   cold (m = 1 took 1.41-1.50x: oneDNN has a matrix-vector path; from 16 rows up it was
//   even or slower when cold). On AVX2 (x86-64-v3, both libraries capped) the products
//   alone measured 0.79-1.30x, but in the cells' own step they won: the copy task's
//   training step (B = 10) took 0.94-0.95x with them on libxsmm (lstm; rel_lstm 0.96-0.97x,
//   momentum_lstm 0.97-1.00x), so the class no longer depends on the ISA.
constexpr int64_t kXsmmMaxSmall = 12;  // the small dimension: k of A^T B, m of A B
constexpr int64_t kXsmmMaxOther = 512;

// The product shapes Auto sends to libxsmm (forms and sizes; the thread rule aside).
bool auto_class(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, float beta) {
  if (tb != Trans::N || alpha != 1.0f || (beta != 0.0f && beta != 1.0f)) return false;
  if (ta == Trans::T) return k <= kXsmmMaxSmall && m <= kXsmmMaxOther && n <= kXsmmMaxOther;
  return m >= 2 && m <= kXsmmMaxSmall && n <= kXsmmMaxOther && k <= kXsmmMaxOther;
}

struct XsmmKey {
  int64_t m, n, k, lda, ldb, ldc;
  bool ta, beta0;
  bool operator==(const XsmmKey&) const = default;
};

struct XsmmKeyHash {
  size_t operator()(const XsmmKey& x) const {
    uint64_t h = 1469598103934665603ull;
    for (const int64_t v : {x.m, x.n, x.k, x.lda, x.ldb, x.ldc, int64_t(x.ta), int64_t(x.beta0)})
      h = (h ^ uint64_t(v)) * 1099511628211ull;
    return size_t(h);
  }
};

std::mutex g_xsmm_mu;
std::unordered_map<XsmmKey, libxsmm_smmfunction, XsmmKeyHash> g_xsmm;  // null: no kernel
std::atomic<int64_t> g_xsmm_dispatches{0};

constexpr int kXsmmThreadSlots = 16;
struct XsmmSlot {
  XsmmKey key{};
  libxsmm_smmfunction fn = nullptr;
  bool used = false;
};
struct XsmmThreadCache {
  std::array<XsmmSlot, kXsmmThreadSlots> slots;
  int next = 0;        // the slot a miss overwrites (round robin)
  int64_t hits = 0;    // lookups answered here
  int64_t misses = 0;  // lookups that went to g_xsmm
  int64_t calls = 0;   // products run on libxsmm
};
thread_local XsmmThreadCache t_xsmm;

// The kernel for `key`, generated on first use in the process; null when libxsmm has
// none (the caller falls back to oneDNN).
libxsmm_smmfunction xsmm_kernel(const XsmmKey& key) {
  XsmmThreadCache& tc = t_xsmm;
  for (const XsmmSlot& s : tc.slots)
    if (s.used && s.key == key) {
      ++tc.hits;
      return s.fn;
    }
  ++tc.misses;
  libxsmm_smmfunction fn = nullptr;
  {
    const std::lock_guard<std::mutex> lock(g_xsmm_mu);
    const auto it = g_xsmm.find(key);
    if (it != g_xsmm.end()) {
      fn = it->second;
    } else {
      static std::once_flag init;
      std::call_once(init, [] { libxsmm_init(); });
      const libxsmm_blasint xm = libxsmm_blasint(key.n), xn = libxsmm_blasint(key.m),
                            xk = libxsmm_blasint(key.k), xlda = libxsmm_blasint(key.ldb),
                            xldb = libxsmm_blasint(key.lda), xldc = libxsmm_blasint(key.ldc);
      const float alpha = 1.0f, beta = key.beta0 ? 0.0f : 1.0f;
      const int flags = (key.beta0 ? LIBXSMM_GEMM_FLAG_BETA_0 : LIBXSMM_GEMM_FLAG_NONE) |
                        (key.ta ? LIBXSMM_GEMM_FLAG_TRANS_B : LIBXSMM_GEMM_FLAG_NONE);
      // No prefetch: libxsmm's default (auto) kernels read the next call's operands as
      // three more arguments, which a single product does not have.
      const int prefetch = LIBXSMM_GEMM_PREFETCH_NONE;
      fn = libxsmm_smmdispatch(xm, xn, xk, &xlda, &xldb, &xldc, &alpha, &beta, &flags, &prefetch);
      g_xsmm.emplace(key, fn);
      g_xsmm_dispatches.fetch_add(1, std::memory_order_relaxed);
    }
  }
  XsmmSlot& slot = tc.slots[size_t(tc.next)];
  tc.next = (tc.next + 1) % kXsmmThreadSlots;
  slot = {key, fn, true};
  return fn;
}

// Runs the product on libxsmm's cached kernel where it has one (true); false leaves it to
// the caller.
bool run_xsmm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
              int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (tb != Trans::N || alpha != 1.0f || (beta != 0.0f && beta != 1.0f)) return false;
  constexpr int64_t kMaxInt = std::numeric_limits<libxsmm_blasint>::max();
  if (std::max({m, n, k, lda, ldb, ldc}) > kMaxInt) return false;
  const libxsmm_smmfunction fn = xsmm_kernel({m, n, k, lda, ldb, ldc, ta == Trans::T, beta == 0.0f});
  if (!fn) return false;
  fn(b, a, c);
  ++t_xsmm.calls;
  return true;
}

// Runs the product on libxsmm and returns true where `impl` sends it there and libxsmm has
// a kernel for it; false leaves it to the caller (oneDNN).
bool try_xsmm(GemmImpl impl, Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha,
              const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
              int64_t ldc) {
  if (impl != GemmImpl::Auto && impl != GemmImpl::Xsmm) return false;
  if (impl == GemmImpl::Auto && !auto_uses_xsmm(ta, tb, m, n, k, alpha, beta)) return false;
  return run_xsmm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
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
    const GemmImpl impl = g_impl.load(std::memory_order_relaxed);
    if (try_xsmm(impl, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)) return;
    if (impl != GemmImpl::OpenBlas) {
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
    check_openblas_room();
    cblas_sgemm(CblasRowMajor, to_cblas(ta), to_cblas(tb), blasint(m), blasint(n), blasint(k),
                alpha, a, blasint(lda), b, blasint(ldb), beta, c, blasint(ldc));
  } else {
    static_assert(std::is_same_v<T, double>, "gemm is instantiated for float and double only");
    check_fits_blasint(m, n, k, lda, ldb, ldc);
    check_openblas_room();
    cblas_dgemm(CblasRowMajor, to_cblas(ta), to_cblas(tb), blasint(m), blasint(n), blasint(k),
                alpha, a, blasint(lda), b, blasint(ldb), beta, c, blasint(ldc));
  }
}

template void gemm<float>(Trans, Trans, int64_t, int64_t, int64_t, float, const float*, int64_t,
                          const float*, int64_t, float, float*, int64_t);
template void gemm<double>(Trans, Trans, int64_t, int64_t, int64_t, double, const double*, int64_t,
                           const double*, int64_t, double, double*, int64_t);

template <class T>
void gemm_small(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>) {
    const GemmImpl impl = g_impl.load(std::memory_order_relaxed);
    // A call with sizes or strides gemm would refuse falls through to gemm, which says so.
    if ((impl == GemmImpl::Auto || impl == GemmImpl::Xsmm) && m > 0 && n > 0 && k > 0 &&
        lda >= (ta == Trans::N ? k : m) && ldb >= n && ldc >= n &&
        run_xsmm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))
      return;
  }
  gemm<T>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

template void gemm_small<float>(Trans, Trans, int64_t, int64_t, int64_t, float, const float*,
                                int64_t, const float*, int64_t, float, float*, int64_t);
template void gemm_small<double>(Trans, Trans, int64_t, int64_t, int64_t, double, const double*,
                                 int64_t, const double*, int64_t, double, double*, int64_t);

void set_gemm_impl(GemmImpl impl) { g_impl.store(impl, std::memory_order_relaxed); }

GemmImpl gemm_impl() { return g_impl.load(std::memory_order_relaxed); }

GemmImpl parse_gemm_impl(const std::string& name) {
  if (name == "auto") return GemmImpl::Auto;
  if (name == "onednn") return GemmImpl::OneDnn;
  if (name == "openblas") return GemmImpl::OpenBlas;
  if (name == "xsmm") return GemmImpl::Xsmm;
  throw core::UsageError(fmt::format(
      "backend.gemm: unknown GEMM implementation '{}' (hint: use auto, onednn, openblas or xsmm)",
      name));
}

const char* gemm_impl_name(GemmImpl impl) {
  switch (impl) {
    case GemmImpl::Auto: return "auto";
    case GemmImpl::OneDnn: return "onednn";
    case GemmImpl::OpenBlas: return "openblas";
    case GemmImpl::Xsmm: return "xsmm";
  }
  return "unknown";
}

bool auto_uses_xsmm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, float beta) {
  // A product oneDNN would split across threads stays there: libxsmm runs on the calling
  // thread only.
  return auto_class(ta, tb, m, n, k, alpha, beta) &&
         (omp_in_parallel() || omp_get_max_threads() == 1 || m * n * k < kSerialBelow);
}

SmallGemmStats small_gemm_stats() {
  return {g_xsmm_dispatches.load(std::memory_order_relaxed), t_xsmm.hits, t_xsmm.misses,
          t_xsmm.calls};
}

std::string library_versions() {
  const dnnl_version_t* v = dnnl_version();
  std::string blas = openblas_get_config();  // "OpenBLAS 0.3.21 DYNAMIC_ARCH ..."
  const size_t first = blas.find(' ');
  const size_t second = first == std::string::npos ? first : blas.find(' ', first + 1);
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch) + " (ISA " + onednn_isa() + "), " + blas.substr(0, second) +
         ", libxsmm " LIBXSMM_CONFIG_VERSION " (target " + libxsmm_get_target_arch() + ")";
}

const char* onednn_isa() {
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_all: return "all";
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return "unknown";
  }
}

}  // namespace seqbench::backend
