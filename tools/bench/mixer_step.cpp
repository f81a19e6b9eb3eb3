// seqbench_bench_mixer: wall time and peak memory of one training step of one sequence
// mixer alone (lib/nn/mixers), the same step that tools/bench/torch_mixers.py times in
// PyTorch:
//   zero grads -> forward of x (B, N, E) from the zero state -> loss = sum(w ⊙ y) with a
//   fixed random w (B, N, E) -> backward (dy = w: dx and every parameter gradient) ->
//   Adam (lr 1e-3, PyTorch's defaults; no clipping).
// The mixer is built from its registry line (nn/registry.cpp), input = output = E,
// with model.mixer's defaults except --heads, --d-state, --chunk and --short-conv, which is 0
// here (model.mixer.short_conv defaults to 4): tools/bench/torch_mixers.py's references
// have no short convolution on q, k, v yet, so the bench times and checks the bare mixers. x and w are N(0, 1),
// drawn once: the data is not part of the step being timed.
// Prints one machine-readable line (key=value, space separated) that run.sh parses, with
// the keys of seqbench_bench_cell where they apply: ms_per_step is the median of the timed
// steps; fwd_ms (forward and loss) and bwd_ms (backward) are medians too, the rest of a
// step is the Adam update; held_mb is the mixer's held_bytes() after backward; loss0 is
// the first step's loss and y_rms0 the first step's root-mean-square output (at init:
// comparable with PyTorch's, whose random numbers differ), loss the last step's.
// --dump FILE times nothing: it runs one forward and backward and writes the parameters,
// x, w, y, dx and every parameter gradient to FILE (one tensor a line: "key numel values",
// parameters under their ParamStore names without the "<mixer>." prefix, gradients as
// "grad.<name>"), which tools/bench/torch_mixers.py --check recomputes in PyTorch from the
// same weights (run.sh's numerical check of the mixers group).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "bench_common.hpp"
#include "core/check.hpp"
#include "core/param_store.hpp"
#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "core/threads.hpp"
#include "nn/mixers/mixer.hpp"
#include "nn/registry.hpp"
#include "optim/optimizer.hpp"
#include "train/trainer.hpp"

namespace {

using namespace seqbench;
using Clock = std::chrono::steady_clock;

struct BenchArgs {
  std::string mixer = "gla";
  int64_t B = 64, N = 64, E = 64, heads = 2, d_state = 16, chunk = 64, short_conv = 0;
  int steps = 5, warmup = 2, threads = 2;
  uint64_t seed = 1;
  std::string dump;
};

void write_tensor(std::FILE* f, const std::string& key, const float* v, int64_t n) {
  fmt::print(f, "{} {}", key, n);
  for (int64_t i = 0; i < n; ++i) fmt::print(f, " {:.9g}", v[i]);
  fmt::print(f, "\n");
}

double ms_since(Clock::time_point t0, Clock::time_point t1) {
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

int run(const BenchArgs& a) {
  core::set_threads(a.threads);
  const nn::CellEntry* entry = nn::find_mixer(a.mixer);
  SB_CHECK(entry != nullptr && entry->mixer != nullptr, "--mixer {} is not a sequence mixer",
           a.mixer);
  nn::MixerConfig cfg;
  cfg.heads = a.heads;
  cfg.d_state = a.d_state;
  cfg.chunk = a.chunk;
  cfg.short_conv = a.short_conv;
  optim::OptimConfig oc;
  oc.name = "adam";
  oc.lr = 1e-3;
  oc.clip = 0;

  core::ParamStore ps;
  auto mixer = nn::make_mixer<float>(*entry->mixer, cfg, ps, a.mixer, a.E, a.E);
  auto opt = optim::make_optimizer<float>(oc);
  ps.finalize(opt->n_slots());
  core::Rng init_rng = core::Rng::derive(a.seed, 1);
  mixer->init(init_rng);

  const int64_t B = a.B, N = a.N, E = a.E;
  core::Tensor x(core::Shape{B, N, E}), w(core::Shape{B, N, E});
  core::Tensor y(core::Shape{B, N, E}), dx(core::Shape{B, N, E});
  core::Rng data_rng = core::Rng::derive(a.seed, 2);
  for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] = float(data_rng.normal());
  for (int64_t i = 0; i < w.numel(); ++i) w.data()[i] = float(data_rng.normal());
  const core::ConstView no_state(nullptr, core::Shape{B, mixer->state_size()});
  const core::View no_dstate(nullptr, core::Shape{B, mixer->state_size()});
  const double base_rss = bench::current_rss_mb();

  if (!a.dump.empty()) {
    ps.zero_grad();
    mixer->forward(x.cview(), no_state, y.view());
    mixer->backward(w.cview(), dx.view(), no_dstate);
    std::FILE* f = std::fopen(a.dump.c_str(), "w");
    SB_CHECK(f != nullptr, "--dump: cannot write {}", a.dump);
    const size_t prefix = a.mixer.size() + 1;
    for (const auto& p : ps.params()) write_tensor(f, p.name.substr(prefix), p.value, p.numel());
    write_tensor(f, "x", x.data(), x.numel());
    write_tensor(f, "w", w.data(), w.numel());
    write_tensor(f, "y", y.data(), y.numel());
    write_tensor(f, "dx", dx.data(), dx.numel());
    for (const auto& p : ps.params())
      write_tensor(f, "grad." + p.name.substr(prefix), p.grad, p.numel());
    const bool ok = std::fclose(f) == 0;
    SB_CHECK(ok, "--dump: writing {} failed", a.dump);
    return core::kExitOk;
  }

  double loss = 0, loss0 = NAN, y_rms0 = NAN, fwd = 0, bwd = 0;
  auto step = [&] {
    ps.zero_grad();
    const auto t0 = Clock::now();
    mixer->forward(x.cview(), no_state, y.view());
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < y.numel(); ++i) {
      s += double(w.data()[i]) * double(y.data()[i]);
      s2 += double(y.data()[i]) * double(y.data()[i]);
    }
    loss = s;
    const auto t1 = Clock::now();
    mixer->backward(w.cview(), dx.view(), no_dstate);  // d loss / dy = w
    const auto t2 = Clock::now();
    opt->step(ps, oc.lr);
    fwd = ms_since(t0, t1);
    bwd = ms_since(t1, t2);
    if (std::isnan(loss0)) {
      loss0 = loss;
      y_rms0 = std::sqrt(s2 / double(y.numel()));
    }
  };

  for (int i = 0; i < a.warmup; ++i) step();
  std::vector<double> ms, fwd_ms, bwd_ms;
  for (int i = 0; i < a.steps; ++i) {
    const auto t0 = Clock::now();
    step();
    ms.push_back(ms_since(t0, Clock::now()));
    fwd_ms.push_back(fwd);
    bwd_ms.push_back(bwd);
  }
  SB_CHECK(std::isfinite(loss),
           "loss is {} after {} steps of mixer {} (hint: a mixer bug, not a bench one)", loss,
           a.warmup + a.steps, a.mixer);

  fmt::print(
      "impl=seqbench-{} mixer={} B={} N={} E={} heads={} d_state={} chunk={} params={} "
      "state_floats={} threads={} warmup={} steps={} ms_per_step={:.2f} ms_min={:.2f} "
      "ms_max={:.2f} fwd_ms={:.2f} bwd_ms={:.2f} peak_rss_mb={:.1f} base_rss_mb={:.1f} "
      "held_mb={:.2f} loss0={:.4f} y_rms0={:.4f} loss={:.4f}\n",
      a.mixer, a.mixer, B, N, E, a.heads, a.d_state, a.chunk, ps.size(), mixer->state_size(),
      core::num_threads(), a.warmup, a.steps, bench::median(ms),
      *std::min_element(ms.begin(), ms.end()), *std::max_element(ms.begin(), ms.end()),
      bench::median(fwd_ms), bench::median(bwd_ms), train::peak_rss_mb(), base_rss,
      double(mixer->held_bytes()) / (1024.0 * 1024.0), loss0, y_rms0, loss);
  std::fflush(stdout);
  return core::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  BenchArgs a;
  CLI::App app{
      "Time one training step of one sequence mixer alone (forward from the zero state, "
      "loss = sum(w * y), backward, Adam)",
      "seqbench_bench_mixer"};
  app.add_option("--mixer", a.mixer, "sequence mixer (model.attention / model.cell)")
      ->check(CLI::IsMember(nn::mixer_names()))
      ->capture_default_str();
  app.add_option("--B", a.B, "batch size")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--N", a.N, "tokens")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--E", a.E, "width (input = output)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--heads", a.heads,
                 "model.mixer.heads (linear_attention, retention, gla, deltanet, mlstm, slstm)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--d-state", a.d_state, "model.mixer.d_state (lru: complex units; mamba: N)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--chunk", a.chunk, "model.mixer.chunk")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--short-conv", a.short_conv,
                 "model.mixer.short_conv (0 here: the PyTorch references have none)")
      ->check(CLI::Range(int64_t(0), int64_t(64)))
      ->capture_default_str();
  app.add_option("--steps", a.steps, "timed steps (the median is reported)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--warmup", a.warmup, "untimed steps first")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--threads", a.threads, "OpenMP threads (0 = runtime default)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--seed", a.seed, "seed of the weights and the data")->capture_default_str();
  app.add_option("--dump", a.dump,
                 "time nothing: write the weights, x, w, y, dx and the gradients of one "
                 "forward + backward to this file (for torch_mixers.py --check)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? core::kExitOk : core::kExitUsage;
  }
  return bench::guarded_main("seqbench_bench_mixer", [&] { return run(a); });
}
