// seqbench_bench_attention: wall time and memory of ONE forward + backward of an attention
// core (nn::Attention<float>, causal) for one kind at one sequence length n: the scaling
// benchmark of issue 6 (analysis 2). run.sh runs every (kind, n) in its own process, so
// the peak RSS of each line belongs to that one shape.
//   inputs  q, k, v, ddst (B, H, n, D) ~ N(0, 1), fixed per seed
//   step    dq = dk = dv = 0; forward(q, k, v) -> dst; backward(ddst) -> dq, dk, dv
// Budget: every sparse kind gets the same window w (--window): local blocks of w,
// routing / smyrf / lsh chunks of w (each query sees at most 2w keys, plus itself for
// smyrf and causal routing), random clusters of w. --clusters 0 picks routing's
// k = round(sqrt(n)) (the paper's choice, which makes its assignment O(n^1.5 D)) and lsh's
// nb = n / w buckets rounded to even (Reformer's); smyrf derives nb = ceil(n / w) itself.
// Prints one line of key=value pairs (parsed by run.sh):
//   ms            median ms of the timed steps (fwd_ms, bwd_ms: medians of each half);
//                 steps = how many were timed: --steps, or more until --min-ms is reached
//   peak_rss_mb   the process's peak resident set (getrusage), runtime included
//   base_rss_mb   resident set after the inputs are allocated and touched, before the
//                 first forward; peak - base is what the attention step added
//   held_mb       the core's held_bytes() after the last backward: caches, structures and
//                 workspaces it keeps (not the caller's q, k, v, dst and gradients)
//   nxn_mb        B H n^2 floats: one dense score matrix, what a dense implementation
//                 (PyTorch's softmax(QK^T) V) materialises at least once; ours never does
//   checksum      sum of dst and dq (both sides of the step ran; finite)
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "bench_common.hpp"
#include "core/check.hpp"
#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "core/threads.hpp"
#include "nn/attention/attention.hpp"
#include "train/trainer.hpp"

namespace {

using namespace seqbench;

struct Args {
  std::string kind = "full";
  int64_t n = 1024, batch = 1, heads = 1, dim = 64, window = 128, clusters = 0, rounds = 1;
  int steps = 3, warmup = 1, threads = 1;
  double min_ms = 300;  // keep timing until the timed steps add up to this
  uint64_t seed = 1;
};

// The kind's clusters / buckets at length n when --clusters is 0 (see the header).
int64_t auto_clusters(const Args& a) {
  if (a.kind == "routing") return std::max<int64_t>(1, std::llround(std::sqrt(double(a.n))));
  if (a.kind == "lsh") {
    const int64_t nb = a.n / a.window;
    return nb < 2 ? 1 : nb - nb % 2;  // 1 or even: the lsh kind's rule
  }
  return 1;  // unused by full, local, random and smyrf
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int run(const Args& a) {
  core::set_threads(a.threads);
  nn::AttentionConfig cfg;
  cfg.kind = a.kind;
  cfg.causal = true;
  cfg.window = a.window;
  cfg.clusters = a.clusters > 0 ? a.clusters : auto_clusters(a);
  cfg.rounds = a.rounds;
  cfg.seed = a.seed;
  auto att = nn::make_attention<float>(cfg, a.heads, a.dim);  // UsageError names the field

  const core::Shape shape{a.batch, a.heads, a.n, a.dim};
  core::Tensor q(shape), k(shape), v(shape), ddst(shape), dst(shape), dq(shape), dk(shape),
      dv(shape);
  core::Rng rng = core::Rng::derive(a.seed, 3);
  for (auto* t : {&q, &k, &v, &ddst})
    for (int64_t i = 0; i < t->numel(); ++i) t->data()[i] = float(rng.normal());
  for (auto* t : {&dst, &dq, &dk, &dv}) t->zero();  // touched: counted in base_rss_mb
  const double base_rss = bench::current_rss_mb();

  // At least a.steps timed steps, and more (up to kMaxSteps) until they add up to
  // a.min_ms: a 2 ms step timed 3 times on a shared machine is mostly noise.
  constexpr int kMaxSteps = 100;
  std::vector<double> total, fwd, bwd;
  double timed_ms = 0;
  for (int i = 0; i < a.warmup + a.steps ||
                  (timed_ms < a.min_ms && i < a.warmup + std::max(a.steps, kMaxSteps));
       ++i) {
    for (auto* t : {&dq, &dk, &dv}) t->zero();  // backward accumulates
    const auto t0 = std::chrono::steady_clock::now();
    att->forward(q.cview(), k.cview(), v.cview(), dst.view());
    const double f = ms_since(t0);
    const auto t1 = std::chrono::steady_clock::now();
    att->backward(ddst.cview(), dq.view(), dk.view(), dv.view());
    const double b = ms_since(t1);
    if (i < a.warmup) continue;  // the first step allocates and first-touches workspaces
    fwd.push_back(f);
    bwd.push_back(b);
    total.push_back(f + b);
    timed_ms += f + b;
  }
  double checksum = 0;
  for (int64_t i = 0; i < dst.numel(); ++i) checksum += double(dst.data()[i]) + dq.data()[i];
  SB_CHECK(std::isfinite(checksum),
           "attention kind {} at n={} produced a non-finite output or gradient (hint: a core "
           "bug, not a bench one; tests/nn/attention_test.cpp should catch it)",
           a.kind, a.n);

  const double mib = 1024.0 * 1024.0;
  const double nxn = double(a.batch) * double(a.heads) * double(a.n) * double(a.n) * 4.0 / mib;
  fmt::print(
      "impl=seqbench kind={} B={} H={} N={} D={} window={} clusters={} rounds={} threads={} "
      "warmup={} steps={} ms={:.2f} ms_min={:.2f} ms_max={:.2f} fwd_ms={:.2f} bwd_ms={:.2f} "
      "peak_rss_mb={:.1f} base_rss_mb={:.1f} held_mb={:.2f} nxn_mb={:.1f} checksum={:.6g}\n",
      a.kind, a.batch, a.heads, a.n, a.dim, cfg.window, cfg.clusters, cfg.rounds,
      core::num_threads(), a.warmup, total.size(), bench::median(total),
      *std::min_element(total.begin(), total.end()), *std::max_element(total.begin(), total.end()),
      bench::median(fwd), bench::median(bwd), train::peak_rss_mb(), base_rss,
      double(att->held_bytes()) / mib, nxn, checksum);
  std::fflush(stdout);
  return core::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{"Time one forward + backward of a causal attention core (one kind, one n)",
               "seqbench_bench_attention"};
  app.add_option("--kind", a.kind, "attention kind (the registry's: seqbench list attention)")
      ->check(CLI::IsMember(nn::attention_kind_names()))
      ->capture_default_str();
  app.add_option("--n", a.n, "sequence length n")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--batch", a.batch, "batch B")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--heads", a.heads, "heads H")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--dim", a.dim, "head dim D")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--window", a.window, "w: local block, cluster / chunk size (the budget)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--clusters", a.clusters,
                 "routing centroids / lsh buckets (0: routing round(sqrt(n)), lsh n/w even)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--rounds", a.rounds, "smyrf / lsh hash rounds, random assignments")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--steps", a.steps, "timed steps at least (the median is reported)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--min-ms", a.min_ms, "more timed steps (up to 100) until they take this long")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--warmup", a.warmup, "untimed steps first")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--threads", a.threads, "OpenMP threads (0 = runtime default)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--seed", a.seed, "seed of the inputs and the random projections")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return bench::guarded_main("seqbench_bench_attention", [&] { return run(a); });
}
