// seqbench_bench_cell: wall time and peak memory of one full training step of any
// seqbench recurrent cell, the same step that tools/bench/torch_cells.py times in PyTorch:
//   zero grads -> SeqModel forward (the cell + per-step linear head) -> softmax
//   cross-entropy -> backward -> clip_grad_norm(1.0) -> Adam(1e-3) -> after_update()
//   (the stability projection of stable_rnn / stable_lstm; nothing for other cells).
// Workloads (--task):
//   pmnist  x (T, B, I=1) uniform pixels, random labels, loss on the last step only
//   copy    the copy task of data::SyntheticTask (L = T + 20 steps, one-hot inputs over 10
//           values, 9 classes), loss on every step (mask all ones, mean over L*B rows)
// One fixed batch in both: the data pipeline is not part of the step being timed.
// Prints one machine-readable line (key=value, space separated) that run.sh parses;
// loss0 is the first step's loss (at init), loss the last one's.
// --dump FILE times nothing: it builds the same recurrent layer (the head is not used),
// runs one forward of x (T, B, I) from the zero state and one backward of
// loss = sum(w ⊙ y) (dy = w, y (T, B, H)), x and w N(0, 1), and writes the layer's
// parameters, x, w, y, dx and every parameter gradient to FILE in seqbench_bench_mixer's
// format (one tensor a line: "key numel values", parameters under their ParamStore names
// without the "rnn." prefix, in our layouts, gradients as "grad.<name>"), which
// tools/bench/torch_cells.py --check recomputes in PyTorch from the same weights (run.sh's
// numerical check of the cells). stable_lstm's weights are the projected ones (init runs
// the projection), so its forward and backward are a plain LSTM's. --dump-scale S multiplies
// every weight of the layer by S first (after init and its projection): run.sh's check uses
// S = 4, which makes rel_lstm's attention peaked enough for a state to win a place in the
// relevant set from a member within a few steps (at S = 1 it is close to uniform, and the
// earliest states, attended among fewer others, keep their places).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <vector>

#include "backend/gemm.hpp"
#include "bench_common.hpp"
#include "core/check.hpp"
#include "core/param_store.hpp"
#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "core/threads.hpp"
#include "data/synthetic.hpp"
#include "nn/loss.hpp"
#include "nn/model_config.hpp"
#include "nn/registry.hpp"
#include "nn/seq_model.hpp"
#include "optim/optimizer.hpp"
#include "train/trainer.hpp"

namespace {

using namespace seqbench;

struct BenchArgs {
  std::string cell = "lstm", task = "pmnist", backend = "ours";
  int64_t batch = 100, T = 784, input = 1, hidden = 128, classes = 10;
  int64_t nu = 10, rho = 15, bptt = 0;
  int steps = 5, warmup = 3, threads = 2;
  uint64_t seed = 1;
  std::string gemm = "auto";  // backend::parse_gemm_impl
  std::string dump;
  double dump_scale = 1;
};

void write_tensor(std::FILE* f, const std::string& key, const float* v, int64_t n) {
  fmt::print(f, "{} {}", key, n);
  for (int64_t i = 0; i < n; ++i) fmt::print(f, " {:.9g}", v[i]);
  fmt::print(f, "\n");
}

bool relevancy(const std::string& cell) {
  return (nn::find_cell(cell, nn::kBench, "--cell").reads & nn::kRelevancy) != 0;
}

nn::ModelConfig model_config(const BenchArgs& a) {
  nn::ModelConfig mc;
  mc.cell = a.cell;
  mc.hidden = a.hidden;
  mc.backend = a.backend;
  mc.nu = a.nu;
  mc.rho = a.rho;
  return mc;
}

// --dump: one forward and backward of the recurrent layer alone; see the header comment.
int dump(const BenchArgs& a) {
  const int64_t T = a.T, B = a.batch, I = a.input, H = a.hidden;
  core::ParamStore ps;
  nn::SeqModel model(model_config(a), ps, I, a.classes, a.bptt);
  ps.finalize(0);
  core::Rng init_rng = core::Rng::derive(a.seed, 1);
  model.init(init_rng);  // stable_lstm: the projection too
  nn::SequenceLayer<float>& rnn = model.recurrent();
  const std::string prefix = "rnn.";
  std::vector<const core::Param*> params;
  for (const auto& p : ps.params())
    if (p.name.starts_with(prefix)) params.push_back(&p);
  for (const auto* p : params)
    for (int64_t i = 0; i < p->numel(); ++i) p->value[i] *= float(a.dump_scale);

  core::Tensor x(core::Shape{T, B, I}), dx(core::Shape{T, B, I});
  core::Tensor w(core::Shape{T, B, H}), y(core::Shape{T, B, H});
  core::Rng data_rng = core::Rng::derive(a.seed, 2);
  for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] = float(data_rng.normal());
  for (int64_t i = 0; i < w.numel(); ++i) w.data()[i] = float(data_rng.normal());
  ps.zero_grad();
  rnn.forward(x.cview(), core::ConstView(), y.view());
  rnn.backward(w.cview(), dx.view(), core::View());

  std::FILE* f = std::fopen(a.dump.c_str(), "w");
  SB_CHECK(f != nullptr, "--dump: cannot write {}", a.dump);
  for (const auto* p : params) write_tensor(f, p->name.substr(prefix.size()), p->value, p->numel());
  write_tensor(f, "x", x.data(), x.numel());
  write_tensor(f, "w", w.data(), w.numel());
  write_tensor(f, "y", y.data(), y.numel());
  write_tensor(f, "dx", dx.data(), dx.numel());
  for (const auto* p : params)
    write_tensor(f, "grad." + p->name.substr(prefix.size()), p->grad, p->numel());
  const bool ok = std::fclose(f) == 0;
  SB_CHECK(ok, "--dump: writing {} failed", a.dump);
  return core::kExitOk;
}

int run(const BenchArgs& a) {
  core::set_threads(a.threads);
  backend::set_gemm_impl(backend::parse_gemm_impl(a.gemm));
  if (!a.dump.empty()) return dump(a);
  const int64_t B = a.batch;
  const bool copy = a.task == "copy";

  // The batch first: the copy task fixes I and the number of classes.
  core::Rng data_rng = core::Rng::derive(a.seed, 2);
  data::SeqBatch batch;
  std::optional<data::SyntheticTask> task;
  int64_t L = a.T, I = a.input, O = a.classes;
  if (copy) {
    data::TaskConfig tc;
    tc.name = "copy";
    tc.T = a.T;
    task.emplace(tc);
    L = task->length();
    I = task->input_size();
    O = task->output_size();
    task->generate(data_rng, B, batch);
  } else {
    batch.L = L;
    batch.B = B;
    batch.x.resize(core::Shape{L, B, I});  // pixel intensities in [0, 1)
    for (int64_t i = 0; i < batch.x.numel(); ++i) batch.x.data()[i] = float(data_rng.uniform());
    batch.labels.resize(static_cast<size_t>(B));
    for (auto& y : batch.labels) y = int32_t(data_rng.randint(O));
  }

  const nn::ModelConfig mc = model_config(a);
  optim::OptimConfig oc;
  oc.name = "adam";
  oc.lr = 1e-3;
  oc.clip = 1.0;

  core::ParamStore ps;
  nn::SeqModel model(mc, ps, I, O, a.bptt);
  auto opt = optim::make_optimizer<float>(oc);
  ps.finalize(opt->n_slots());
  core::Rng init_rng = core::Rng::derive(a.seed, 1);
  model.init(init_rng);  // also runs the layer's after_update (stable_*: projection)

  core::Tensor out(core::Shape{L, B, O});
  core::Tensor dout(core::Shape{L, B, O});
  dout.zero();
  // pmnist: only the last step carries a loss, so every other step's dout stays zero and
  // the loss writes just the last (B, O) slice. copy: every step, all rows weighted 1.
  const int64_t first = copy ? 0 : L - 1;
  const core::ConstView logits(out.data() + first * B * O, core::Shape{(L - first) * B, O});
  const core::View dlogits(dout.data() + first * B * O, core::Shape{(L - first) * B, O});
  const float* mask = copy ? batch.mask.data() : nullptr;

  double loss = 0, loss0 = NAN;
  auto step = [&] {
    ps.zero_grad();
    model.forward(batch.x.cview(), out.view());
    loss = nn::softmax_cross_entropy<float>(logits, batch.labels.data(), mask, dlogits).loss;
    model.backward(dout.cview());
    optim::clip_grad_norm(ps, oc.clip);
    opt->step(ps, oc.lr);
    model.after_update();
    if (std::isnan(loss0)) loss0 = loss;
  };

  for (int i = 0; i < a.warmup; ++i) step();
  std::vector<double> ms;
  for (int i = 0; i < a.steps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    step();
    const auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  SB_CHECK(std::isfinite(loss),
           "loss is {} after {} steps of cell {} (hint: a cell bug, not a "
           "bench one)",
           loss, a.warmup + a.steps, a.cell);

  const std::string impl =
      a.cell == "lstm" && a.backend == "onednn" ? "seqbench-lstm-onednn" : "seqbench-" + a.cell;
  const std::string rel = relevancy(a.cell) ? fmt::format(" nu={} rho={}", a.nu, a.rho) : "";
  fmt::print(
      "impl={} task={} B={} T={} L={} I={} H={} classes={}{} threads={} gemm={} warmup={} "
      "steps={} ms_per_step={:.1f} ms_min={:.1f} ms_max={:.1f} peak_rss_mb={:.1f} rnn_held_mb={:.1f} "
      "loss0={:.4f} loss={:.4f}\n",
      impl, a.task, B, a.T, L, I, a.hidden, O, rel, core::num_threads(), a.gemm, a.warmup,
      a.steps,
      bench::median(ms), *std::min_element(ms.begin(), ms.end()),
      *std::max_element(ms.begin(), ms.end()), train::peak_rss_mb(),
      double(model.recurrent().held_bytes()) / (1024.0 * 1024.0), loss0, loss);
  std::fflush(stdout);
  return core::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  BenchArgs a;
  CLI::App app{
      "Time one training step of a seqbench recurrent cell (forward, cross-entropy, backward, "
      "clip, Adam, projection) on the pMNIST or copy-task shape",
      "seqbench_bench_cell"};
  app.add_option("--cell", a.cell, "recurrent cell (model.cell)")
      ->check(CLI::IsMember(nn::cell_names(nn::kBench)))
      ->capture_default_str();
  app.add_option("--task", a.task, "pmnist (last-step loss) | copy (loss on every step)")
      ->check(CLI::IsMember({"pmnist", "copy"}))
      ->capture_default_str();
  app.add_option("--backend", a.backend, "ours | onednn (onednn: lstm only)")
      ->check(CLI::IsMember({"ours", "onednn"}))
      ->capture_default_str();
  app.add_option("--batch", a.batch, "batch size B")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--T", a.T, "pmnist: sequence length; copy: the delay (length T + 20)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  auto* input = app.add_option("--input", a.input, "pmnist only: input size I")
                    ->check(CLI::PositiveNumber)
                    ->capture_default_str();
  app.add_option("--hidden", a.hidden, "hidden units H")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  auto* classes = app.add_option("--classes", a.classes, "pmnist only: classes of the head")
                      ->check(CLI::PositiveNumber)
                      ->capture_default_str();
  app.add_option("--nu", a.nu, "rel_rnn / rel_lstm: short-term buffer size")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--rho", a.rho, "rel_rnn / rel_lstm: relevant set size")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--bptt", a.bptt, "truncation window (0 = full BPTT; sab's window)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--steps", a.steps, "timed steps (the median is reported)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--warmup", a.warmup, "untimed steps first")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--gemm", a.gemm, "float GEMM: auto | onednn | openblas | xsmm (train.gemm)")
      ->check(CLI::IsMember({"auto", "onednn", "openblas", "xsmm"}))
      ->capture_default_str();
  app.add_option("--threads", a.threads, "OpenMP threads (0 = runtime default)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--seed", a.seed, "seed of the weights and the batch")->capture_default_str();
  auto* dump_opt = app.add_option(
      "--dump", a.dump,
      "time nothing: write the weights, x, w, y, dx and the gradients of one forward + "
      "backward of the recurrent layer (sizes --batch, --T, --input, --hidden; loss sum(w * y)) "
      "to this file (for torch_cells.py --check)");
  auto* scale_opt =
      app.add_option("--dump-scale", a.dump_scale, "--dump: the layer's weights times this")
          ->check(CLI::PositiveNumber)
          ->capture_default_str();
  try {
    app.parse(argc, argv);
    if (a.task == "copy" && (input->count() > 0 || classes->count() > 0))
      throw CLI::ValidationError("--input/--classes",
                                 "fixed by the copy task (10 inputs, 9 classes); drop them");
    if (scale_opt->count() > 0 && dump_opt->count() == 0)
      throw CLI::ValidationError("--dump-scale", "applies to --dump only");
    if (a.task == "copy" && dump_opt->count() > 0)
      throw CLI::ValidationError("--dump", "draws its own x (T, B, I); drop --task copy");
    if (a.task == "copy" && a.T < 2)
      throw CLI::ValidationError("--T", "the copy task needs T >= 2 (data/synthetic.hpp)");
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? core::kExitOk : core::kExitUsage;
  }
  return bench::guarded_main("seqbench_bench_cell", [&] { return run(a); });
}
