// seqbench_bench_sgemm: the machine's single-precision GEMM peak, the yardstick run.sh
// states the GEMM-bound rows against (docs/bench.md, "sgemm peak").
//   --lib openblas   cblas_sgemm of the OpenBLAS this binary loads (PyTorch's BLAS here);
//                    OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE / OPENBLAS_NUM_THREADS are read
//                    when the library loads, so run.sh starts one process per setting
//   --lib onednn     dnnl_sgemm (what seqbench's own cells call)
// It times C = A B for square row-major float matrices of size --n (2048: 17.2 GFLOP
// per product), --warmup untimed products, then at least --reps timed ones (more until
// they add up to --min-ms), for each thread count of --threads (a list: "1,2").
// Prints one line of key=value pairs per thread count (parsed by run.sh):
//   gflops       2 n^3 / the median time of one product;   gflops_best: / the fastest one
//   core         OpenBLAS's kernel set (openblas_get_corename()), "-" for onednn
// --info prints the libraries instead, one "key=value" per line (values may have spaces):
// the oneDNN version and the ISA it dispatches to, OpenBLAS's build configuration, its
// kernel set and thread count, and OpenMP's default team size.
// --small times the recurrent step's small products instead, per library (onednn,
// openblas, libxsmm, backend::gemm): see small_sgemm.hpp.
#include <cblas.h>
#include <fmt/format.h>
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backend/gemm.hpp"
#include "bench_common.hpp"
#include "small_sgemm.hpp"
#include "core/check.hpp"

namespace {

using namespace seqbench;

struct Args {
  std::string lib = "openblas";
  std::string threads = "0";  // comma-separated; 0 = the runtime default
  int64_t n = 2048;
  int reps = 5, warmup = 1;
  double min_ms = 200;
  bool info = false;
  bool small = false;
  bench::SmallArgs small_args;
};

int print_info() {
  const dnnl_version_t* v = dnnl_version();
  fmt::print("onednn_version={}.{}.{}\n", v->major, v->minor, v->patch);
  fmt::print("onednn_hash={}\n", v->hash ? v->hash : "-");
  fmt::print("onednn_isa={}\n", backend::onednn_isa());
  fmt::print("openblas_config={}\n", openblas_get_config());
  fmt::print("openblas_core={}\n", openblas_get_corename());
  fmt::print("openblas_threads={}\n", openblas_get_num_threads());
  fmt::print("openblas_parallel={}\n", openblas_get_parallel() == 2   ? "openmp"
                                       : openblas_get_parallel() == 1 ? "pthreads"
                                                                      : "sequential");
  fmt::print("omp_max_threads={}\n", omp_get_max_threads());
  std::fflush(stdout);
  return core::kExitOk;
}

std::vector<int> parse_threads(const std::string& s) {
  std::vector<int> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    int t = -1;
    try {
      t = std::stoi(item);
    } catch (const std::exception&) {
    }
    if (t < 0) throw core::UsageError(fmt::format("--threads: '{}' is not a list like 1,2", s));
    out.push_back(t);
  }
  if (out.empty()) throw core::UsageError("--threads: empty list (hint: --threads 1,2)");
  return out;
}

int run(const Args& a) {
  if (a.info) return print_info();
  if (a.small) return bench::run_small_sgemm(a.small_args);
  const int64_t n = a.n;
  std::vector<float> A(size_t(n * n)), B(size_t(n * n)), C(size_t(n * n), 0.0f);
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (auto& x : A) x = u(gen);
  for (auto& x : B) x = u(gen);
  const bool blas = a.lib == "openblas";
  auto product = [&] {
    if (blas) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasint(n), blasint(n), blasint(n),
                  1.0f, A.data(), blasint(n), B.data(), blasint(n), 0.0f, C.data(), blasint(n));
    } else {
      const dnnl_status_t st = dnnl_sgemm('N', 'N', n, n, n, 1.0f, A.data(), n, B.data(), n, 0.0f,
                                          C.data(), n);
      SB_CHECK(st == dnnl_success, "dnnl_sgemm failed with status {}", static_cast<int>(st));
    }
  };
  const double flop = 2.0 * double(n) * double(n) * double(n);
  const int default_threads = omp_get_max_threads();
  for (const int t : parse_threads(a.threads)) {
    const int th = t > 0 ? t : default_threads;
    omp_set_num_threads(th);
    if (blas) openblas_set_num_threads(th);
    for (int i = 0; i < a.warmup; ++i) product();
    std::vector<double> ms;
    double total = 0;
    while (int(ms.size()) < a.reps || (total < a.min_ms && ms.size() < 100)) {
      const auto t0 = std::chrono::steady_clock::now();
      product();
      const auto t1 = std::chrono::steady_clock::now();
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      total += ms.back();
    }
    const double med = bench::median(ms);
    const double best = *std::min_element(ms.begin(), ms.end());
    fmt::print(
        "impl=sgemm lib={} n={} threads={} blas_threads={} core={} reps={} ms={:.2f} "
        "ms_min={:.2f} gflops={:.1f} gflops_best={:.1f} c0={:.4f}\n",
        a.lib, n, th, blas ? openblas_get_num_threads() : th,
        blas ? openblas_get_corename() : "-", ms.size(), med, best, flop / (med * 1e6),
        flop / (best * 1e6), double(C[0]));
    std::fflush(stdout);
  }
  return core::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{"Measure single-precision GEMM GFLOP/s (square, row-major) with OpenBLAS or oneDNN",
               "seqbench_bench_sgemm"};
  app.add_option("--lib", a.lib, "openblas | onednn")
      ->check(CLI::IsMember({"openblas", "onednn"}))
      ->capture_default_str();
  app.add_option("--n", a.n, "matrix size (n x n times n x n)")
      ->check(CLI::Range(int64_t(16), int64_t(16384)))
      ->capture_default_str();
  app.add_option("--threads", a.threads, "thread counts to time, comma-separated (0 = default)")
      ->capture_default_str();
  app.add_option("--reps", a.reps, "timed products at least (the median is reported)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--warmup", a.warmup, "untimed products first, per thread count")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--min-ms", a.min_ms, "keep timing until the timed products add up to this")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_flag("--info", a.info, "print library versions and settings instead of timing");
  app.add_flag("--small", a.small,
               "time the recurrent step's small products per library instead (small_sgemm.hpp)");
  app.add_option("--libs", a.small_args.libs,
                 "--small: libraries, comma-separated (onednn,openblas,xsmm,gemm-onednn,"
                 "gemm-xsmm,gemm-auto); ratios are against the first")
      ->capture_default_str();
  app.add_option("--rounds", a.small_args.rounds, "--small: rounds over all shapes")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--samples", a.small_args.samples, "--small: timings per shape (median taken)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--calls", a.small_args.calls, "--small: calls per timing")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--ring", a.small_args.ring, "--small: A and C buffers cycled through")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--shapes", a.small_args.shapes,
                 "--small: 'm,n,k[,T];...' instead of the default shapes (T: A stored (k, m))");
  app.add_option("--pad", a.small_args.pad, "--small: added to lda and ldc")
      ->check(CLI::Range(int64_t(0), int64_t(4096)))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? core::kExitOk : core::kExitUsage;
  }
  return bench::guarded_main("seqbench_bench_sgemm", [&] { return run(a); });
}
