// seqbench_bench_lstm: wall time and peak memory of one full LSTM training step on the
// pMNIST shape (B=100, T=784, I=1, H=128, 10 classes), the same step that
// tools/bench/torch_lstm.py times in PyTorch:
//   zero grads -> SeqModel forward (LSTM + per-step linear head) -> softmax cross-entropy
//   on the last step only -> backward -> clip_grad_norm(1.0) -> Adam.
// Prints one machine-readable line (key=value, space separated) that run.sh parses.
#include <fmt/format.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/check.hpp"
#include "core/param_store.hpp"
#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "core/threads.hpp"
#include "nn/loss.hpp"
#include "nn/model_config.hpp"
#include "nn/seq_model.hpp"
#include "optim/optimizer.hpp"

namespace {

using namespace seqbench;

struct BenchArgs {
  std::string backend = "onednn";
  int64_t batch = 100, T = 784, input = 1, hidden = 128, classes = 10;
  int steps = 5, warmup = 3, threads = 2;
  uint64_t seed = 1;
};

// Peak resident set of this process so far, in MiB (Linux reports ru_maxrss in KiB).
double peak_rss_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_maxrss) / 1024.0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int run(const BenchArgs& a) {
  core::set_threads(a.threads);
  const int64_t T = a.T, B = a.batch, I = a.input, O = a.classes;

  nn::ModelConfig mc;
  mc.cell = "lstm";
  mc.hidden = a.hidden;
  mc.backend = a.backend;
  optim::OptimConfig oc;
  oc.name = "adam";
  oc.lr = 1e-3;
  oc.clip = 1.0;

  core::ParamStore ps;
  nn::SeqModel model(mc, ps, I, O, /*bptt=*/0);
  auto opt = optim::make_optimizer<float>(oc);
  ps.finalize(opt->n_slots());
  core::Rng init_rng = core::Rng::derive(a.seed, 1);
  model.init(init_rng);

  // One fixed batch: the data pipeline is not part of the step being timed.
  core::Rng data_rng = core::Rng::derive(a.seed, 2);
  core::Tensor x(core::Shape{T, B, I});  // pixel intensities in [0, 1)
  for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] = float(data_rng.uniform());
  std::vector<int32_t> labels(static_cast<size_t>(B));
  for (auto& y : labels) y = int32_t(data_rng.randint(O));

  core::Tensor out(core::Shape{T, B, O});
  // Only the last step carries a loss (pMNIST classifies after all T pixels), so every
  // other step's dout stays zero; the loss writes just the last (B, O) slice.
  core::Tensor dout(core::Shape{T, B, O});
  dout.zero();
  const core::ConstView last(out.data() + (T - 1) * B * O, core::Shape{B, O});
  const core::View dlast(dout.data() + (T - 1) * B * O, core::Shape{B, O});

  double loss = 0;
  auto step = [&] {
    ps.zero_grad();
    model.forward(x.cview(), out.view());
    loss = nn::softmax_cross_entropy<float>(last, labels.data(), nullptr, dlast).loss;
    model.backward(dout.cview());
    optim::clip_grad_norm(ps, oc.clip);
    opt->step(ps, oc.lr);
  };

  for (int i = 0; i < a.warmup; ++i) step();
  std::vector<double> ms;
  for (int i = 0; i < a.steps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    step();
    const auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  SB_CHECK(std::isfinite(loss), "loss is {} after {} steps (hint: a backend bug, not a bench one)",
           loss, a.warmup + a.steps);

  fmt::print(
      "impl=seqbench-{} B={} T={} I={} H={} classes={} threads={} warmup={} steps={} "
      "ms_per_step={:.1f} ms_min={:.1f} ms_max={:.1f} peak_rss_mb={:.1f} rnn_held_mb={:.1f} "
      "loss={:.4f}\n",
      a.backend, B, T, I, a.hidden, O, core::num_threads(), a.warmup, a.steps, median(ms),
      *std::min_element(ms.begin(), ms.end()), *std::max_element(ms.begin(), ms.end()),
      peak_rss_mb(), double(model.recurrent().held_bytes()) / (1024.0 * 1024.0), loss);
  std::fflush(stdout);
  return core::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  BenchArgs a;
  CLI::App app{
      "Time one LSTM training step (forward, last-step cross-entropy, backward, "
      "clip, Adam) on the pMNIST shape",
      "seqbench_bench_lstm"};
  app.add_option("--backend", a.backend, "ours | onednn")
      ->check(CLI::IsMember({"ours", "onednn"}))
      ->capture_default_str();
  app.add_option("--batch", a.batch, "batch size B")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--T", a.T, "sequence length T")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--input", a.input, "input size I")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--hidden", a.hidden, "hidden units H")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--classes", a.classes, "classes of the head")
      ->check(CLI::PositiveNumber)
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
  app.add_option("--seed", a.seed, "seed of the weights and the batch")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? core::kExitOk : core::kExitUsage;
  }
  try {
    return run(a);
  } catch (const core::Error& e) {
    fmt::print(stderr, "seqbench_bench_lstm: {}\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    fmt::print(stderr, "seqbench_bench_lstm: {}\n", e.what());
    return core::kExitError;
  }
}
