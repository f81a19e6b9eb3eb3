// seqbench_bench_sgemm --small: the small products of a recurrent step, timed per library.
// See small_sgemm.hpp.
#include "small_sgemm.hpp"

#include <cblas.h>
#include <fmt/format.h>
#include <libxsmm.h>
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "backend/gemm.hpp"
#include "bench_common.hpp"
#include "core/check.hpp"

namespace seqbench::bench {
namespace {

struct Shape {
  int64_t m, n, k;
  bool ta = false;  // A stored (k, m): the weight gradient's op(A) = A^T
};

// Row-major (M, N, K) of the recurrent step (docs/backend.md, "Small GEMMs"): the
// forward and backward products, then (T, N) weight gradients (H, 4H, rows), then larger
// products around the edge of where a small-matrix kernel might stop paying.
const std::vector<Shape> kDefaultShapes = {
    {10, 512, 128},        {10, 128, 512},         {50, 512, 128},   {50, 128, 512},
    {100, 512, 128},       {100, 128, 512},        {10, 128, 128},   {100, 128, 128},
    {128, 512, 10, true},  {128, 512, 100, true},  {128, 512, 128},  {128, 512, 512},
    {256, 512, 512},       {1000, 512, 128}};

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using Buf = std::unique_ptr<float[], FreeDeleter>;

Buf make_buf(size_t n, std::mt19937& gen) {
  const size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
  Buf b(static_cast<float*>(std::aligned_alloc(64, bytes)));
  SB_CHECK(b != nullptr, "out of memory ({} bytes)", bytes);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (size_t i = 0; i < n; ++i) b[i] = u(gen);
  return b;
}

std::vector<std::string> split(const std::string& s, char sep = ',') {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

// "m,n,k[,T];..." (T: the weight gradient's form, A stored (k, m)).
std::vector<Shape> parse_shapes(const std::string& s) {
  std::vector<Shape> out;
  for (const std::string& one : split(s, ';')) {
    const std::vector<std::string> f = split(one);
    Shape sh{};
    bool ok = f.size() == 3 || (f.size() == 4 && f[3] == "T");
    try {
      if (ok) sh = {std::stoll(f[0]), std::stoll(f[1]), std::stoll(f[2]), f.size() == 4};
    } catch (const std::exception&) {
      ok = false;
    }
    if (!ok || sh.m < 1 || sh.n < 1 || sh.k < 1 || sh.m * sh.n * sh.k > (int64_t(1) << 32))
      throw core::UsageError(
          fmt::format("--shapes: '{}' is not m,n,k or m,n,k,T (hint: --shapes '10,512,128;"
                      "128,512,10,T')",
                      one));
    out.push_back(sh);
  }
  if (out.empty()) throw core::UsageError("--shapes: empty (hint: --shapes '10,512,128')");
  return out;
}

}  // namespace

int run_small_sgemm(const SmallArgs& a) {
  const std::vector<Shape> kShapes = a.shapes.empty() ? kDefaultShapes : parse_shapes(a.shapes);
  omp_set_num_threads(1);
  openblas_set_num_threads(1);
  libxsmm_init();
  const std::vector<std::string> libs = split(a.libs);
  for (const auto& l : libs)
    SB_CHECK(l == "onednn" || l == "openblas" || l == "xsmm" || l == "gemm-onednn" ||
                 l == "gemm-xsmm" || l == "gemm-auto",
             "--libs: unknown library '{}' (hint: onednn,openblas,xsmm,gemm-onednn,gemm-xsmm,"
             "gemm-auto)",
             l);
  fmt::print(
      "# onednn_isa={} xsmm_target={} openblas_core={} rounds={} samples={} calls={} ring={} "
      "pad={}\n",
      backend::onednn_isa(), libxsmm_get_target_arch(), openblas_get_corename(), a.rounds,
      a.samples, a.calls, a.ring, a.pad);
  std::fflush(stdout);
  const int ring_max = a.ring;  // A and C rotate through up to this many buffers; B is fixed
  std::mt19937 gen(1);
  // (shape index, beta, lib) -> the median ns of each round
  std::map<std::tuple<size_t, int, std::string>, std::vector<double>> ns_of;
  for (int round = 0; round < a.rounds; ++round) {
    for (size_t si = 0; si < kShapes.size(); ++si) {
      // Plain variables, not a structured binding: clang 14 (the sanitizer build) cannot
      // capture a binding in a lambda.
      const int64_t m = kShapes[si].m, n = kShapes[si].n, k = kShapes[si].k;
      const bool ta = kShapes[si].ta;
      const int64_t lda = (ta ? m : k) + a.pad, ldc = n + a.pad;
      const char cta = ta ? 'T' : 'N';
      Buf B = make_buf(size_t(k * n), gen);
      // The ring, as long as it stays under 512 MiB (the large shapes get fewer buffers,
      // still far more than the caches hold).
      const size_t per = size_t((ta ? k : m) * lda + m * ldc) * sizeof(float);
      const int ring = int(std::max<size_t>(1, std::min<size_t>(size_t(ring_max), (512u << 20) / per)));
      std::vector<Buf> A, C;
      for (int r = 0; r < ring; ++r) {
        A.push_back(make_buf(size_t((ta ? k : m) * lda), gen));
        C.push_back(make_buf(size_t(m * ldc), gen));
      }
      for (const int beta : {0, 1}) {
        const float fb = float(beta);
        // libxsmm is column-major: row-major C = A B is column-major C^T = B^T A^T, so
        // the kernel is (n, m, k) with B first.
        // A^T (row-major ta = T) is libxsmm's transposed second operand.
        const int flags = (beta == 0 ? LIBXSMM_GEMM_FLAG_BETA_0 : LIBXSMM_GEMM_FLAG_NONE) |
                          (ta ? LIBXSMM_GEMM_FLAG_TRANS_B : 0);
        const float one = 1.0f;
        const libxsmm_blasint xm = n, xn = m, xk = k, xlda = n, xldb = lda, xldc = ldc;
        // No prefetch: a null `prefetch` means libxsmm's default (auto), whose kernels
        // take the next call's operands as three more arguments.
        const int prefetch = LIBXSMM_GEMM_PREFETCH_NONE;
        const libxsmm_smmfunction kernel =
            libxsmm_smmdispatch(xm, xn, xk, &xlda, &xldb, &xldc, &one, &fb, &flags, &prefetch);
        // The libraries in a rotating order, so none always runs first after a new shape.
        std::vector<std::string> order = libs;
        std::rotate(order.begin(), order.begin() + (round + long(si)) % long(order.size()),
                    order.end());
        for (const auto& lib : order) {
          std::function<void(const float*, float*)> call;
          if (lib == "onednn") {
            call = [&](const float* x, float* y) {
              dnnl_sgemm(cta, 'N', m, n, k, 1.0f, x, lda, B.get(), n, fb, y, ldc);
            };
          } else if (lib == "openblas") {
            call = [&](const float* x, float* y) {
              cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, CblasNoTrans, blasint(m),
                          blasint(n), blasint(k), 1.0f, x, blasint(lda), B.get(), blasint(n), fb,
                          y, blasint(ldc));
            };
          } else if (lib == "xsmm") {
            if (!kernel) {
              fmt::print("round={} m={} n={} k={} ta={} beta={} lib=xsmm ns=- (no kernel)\n",
                         round, m, n, k, cta, beta);
              continue;
            }
            call = [&](const float* x, float* y) { kernel(B.get(), x, y); };
          } else {
            const backend::GemmImpl impl = backend::parse_gemm_impl(lib.substr(5));
            call = [&, impl](const float* x, float* y) {
              backend::set_gemm_impl(impl);
              backend::gemm<float>(ta ? backend::Trans::T : backend::Trans::N, backend::Trans::N,
                                   m, n, k, 1.0f, x, lda, B.get(), n, fb, y, ldc);
            };
          }
          for (int w = 0; w < a.calls * 2; ++w) call(A[w % ring].get(), C[w % ring].get());
          std::vector<double> ns;
          int r = 0;
          for (int s = 0; s < a.samples; ++s) {
            const auto t0 = std::chrono::steady_clock::now();
            for (int c = 0; c < a.calls; ++c, r = (r + 1) % ring) call(A[r].get(), C[r].get());
            const auto t1 = std::chrono::steady_clock::now();
            ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / a.calls);
          }
          const double med = median(ns);
          ns_of[{si, beta, lib}].push_back(med);
          fmt::print("round={} m={} n={} k={} ta={} beta={} lib={} ns={:.0f} gflops={:.1f}\n",
                     round, m, n, k, cta, beta, lib, med, 2.0 * double(m * n * k) / med);
          std::fflush(stdout);
        }
      }
    }
  }
  // The summary: per shape and beta, each library's ns per call in every round, its
  // GFLOP/s (from the median over rounds) and its time relative to the first library
  // measured in the same round.
  fmt::print("\n# M N K ta beta | lib: ns per round | GFLOP/s | time / {}'s (per round)\n",
             libs.front());
  for (size_t si = 0; si < kShapes.size(); ++si) {
    const int64_t m = kShapes[si].m, n = kShapes[si].n, k = kShapes[si].k;
    const bool ta = kShapes[si].ta;
    for (const int beta : {0, 1}) {
      const auto& base = ns_of[{si, beta, libs.front()}];
      for (const auto& lib : libs) {
        const auto it = ns_of.find({si, beta, lib});
        if (it == ns_of.end()) continue;
        std::string rounds, ratios;
        for (size_t r = 0; r < it->second.size(); ++r) {
          rounds += fmt::format("{}{:.0f}", r ? " " : "", it->second[r]);
          if (r < base.size()) ratios += fmt::format("{}{:.2f}", r ? " " : "", it->second[r] / base[r]);
        }
        fmt::print("{:4} {:4} {:4} {} {} | {:12}: {:>16} | {:6.1f} | {}\n", m, n, k, ta ? 'T' : 'N',
                   beta, lib,
                   rounds, 2.0 * double(m * n * k) / median(it->second), ratios);
      }
    }
  }
  std::fflush(stdout);
  return core::kExitOk;
}

}  // namespace seqbench::bench
