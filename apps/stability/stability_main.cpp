// seqbench stability: the analyses of Miller & Hardt (2019), "Stable Recurrent Models".
//   seqbench stability truncation [--lambda 0.8] [--T 80] [--k-max 50] ...
//     writes results/stability/truncation-l<λ>.csv (k, gap, bound) and prints the fitted
//     decay rate of the gradient gap next to log λ (Lemma 2: gap = O(k λ^k)).
//   seqbench stability weights [--lambda 0.8] [--k 2 4 8 16] [--steps 200] ...
//     writes results/stability/weight-gap-l<λ>.csv (k, step, gap): the distance between
//     recurrent and truncated weights under projected GD with step α/t (Proposition 2).
#include "apps/stability/stability_main.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>

#include "config/cli.hpp"
#include "core/check.hpp"
#include "core/fs.hpp"
#include "report/csv.hpp"
#include "report/markdown.hpp"
#include "train/truncation.hpp"
#include "train/weight_gap.hpp"

namespace seqbench::apps {

int stability_main(int argc, char** argv) {
  try {
    CLI::App app{"stability analyses of Miller & Hardt (2019): recurrent vs truncated models",
                 "seqbench stability"};
    app.require_subcommand(1);
    train::TruncationGapConfig cfg;
    std::string out = "results";
    CLI::App* trunc = app.add_subcommand(
        "truncation", "gradient gap between a λ-contractive RNN and its k-truncation, vs k");
    trunc->add_option("--lambda", cfg.lambda, "spectral norm of W_h, in (0, 1)")
        ->check(CLI::Range(1e-6, 1.0 - 1e-9));
    trunc->add_option("--T", cfg.T, "sequence length")->check(CLI::Range(2, 100000));
    trunc->add_option("--hidden", cfg.hidden, "hidden units")->check(CLI::Range(1, 4096));
    trunc->add_option("--input", cfg.input, "input size")->check(CLI::Range(1, 4096));
    trunc->add_option("--k-max", cfg.k_max, "largest truncation k (< T)")->check(CLI::Range(1, 100000));
    trunc->add_option("--instances", cfg.instances, "random instances averaged")
        ->check(CLI::Range(1, 100000));
    trunc->add_option("--input-scale", cfg.input_scale,
                      "standard deviation of the inputs (small: near-linear, the bound is tight)")
        ->check(config::positive_real());
    trunc->add_option("--seed", cfg.seed, "random seed");
    trunc->add_option("--out", out, "results root");
    train::WeightGapConfig wg;
    CLI::App* weights = app.add_subcommand(
        "weights",
        "weight gap between a recurrent and a k-truncated model trained by projected GD with "
        "step alpha/t (Proposition 2)");
    weights->add_option("--lambda", wg.lambda, "contraction bound λ, in (0, 1)")
        ->check(CLI::Range(1e-6, 1.0 - 1e-9));
    weights->add_option("--T", wg.T, "sequence length")->check(CLI::Range(2, 100000));
    weights->add_option("--hidden", wg.hidden, "hidden units")->check(CLI::Range(1, 4096));
    weights->add_option("--steps", wg.steps, "gradient steps N")->check(CLI::Range(0, 10000000));
    weights->add_option("--alpha", wg.alpha, "step size α (step t uses α/t)")
        ->check(config::positive_real());
    weights->add_option("--k", wg.ks, "truncation windows")
        ->check(config::whole_number(1, 100000));
    weights->add_option("--seed", wg.seed, "random seed");
    weights->add_option("--out", out, "results root");
    if (!config::parse_cli(app, argc, argv)) return core::kExitOk;
    if (weights->parsed()) {
      const auto rows = train::weight_gap(wg);
      const std::string dir = out + "/stability";
      core::make_dirs(dir);
      const std::string path = fmt::format("{}/weight-gap-l{}.csv", dir, wg.lambda);
      report::CsvWriter csv(path, {"k", "step", "gap"}, report::CsvWriter::Mode::Truncate);
      std::vector<std::vector<std::string>> cells, shown;
      for (const auto& r : rows) {
        cells.push_back({report::CsvWriter::cell(r.k), report::CsvWriter::cell(r.step),
                         report::CsvWriter::cell(r.gap)});
        if (r.step == wg.steps)
          shown.push_back({std::to_string(r.k), fmt::format("{:.3e}", r.gap)});
      }
      csv.rows(cells);
      fmt::print("{}\n", report::markdown_table(
                             {"k", fmt::format("weight gap after {} steps", wg.steps)}, shown));
      fmt::print("wrote {}\n", path);
      return core::kExitOk;
    }
    if (cfg.k_max >= cfg.T)
      throw core::UsageError(fmt::format("--k-max {} must be below --T {}", cfg.k_max, cfg.T));

    const auto rows = train::truncation_gradient_gap(cfg);
    const std::string dir = out + "/stability";
    core::make_dirs(dir);
    const std::string path = fmt::format("{}/truncation-l{}.csv", dir, cfg.lambda);
    report::CsvWriter csv(path, {"k", "gap", "bound_k_lambda_k"}, report::CsvWriter::Mode::Truncate);
    std::vector<std::vector<std::string>> cells, shown;
    for (const auto& r : rows) {
      cells.push_back({report::CsvWriter::cell(r.k), report::CsvWriter::cell(r.gap),
                       report::CsvWriter::cell(r.bound)});
      if (r.k == 1 || r.k % 5 == 0)
        shown.push_back({std::to_string(r.k), fmt::format("{:.3e}", r.gap),
                         fmt::format("{:.3e}", r.bound)});
    }
    csv.rows(cells);
    // Fit over the second half of the k range whose gaps are above rounding noise.
    double largest = 0;
    int64_t usable = 1;
    for (const auto& r : rows) largest = std::max(largest, r.gap);
    for (const auto& r : rows)
      if (r.gap > 1e-11 * largest) usable = r.k;
    const int64_t from = std::max<int64_t>(1, usable / 2), to = usable;
    const double rate = train::fitted_log_rate(rows, from, to);
    fmt::print("{}\n", report::markdown_table({"k", "gradient gap", "k λ^k"}, shown));
    fmt::print("fitted log-rate of gap/k over k in [{}, {}]: {:.4f}; log λ = {:.4f} (ratio {:.3f})\n",
               from, to, rate, std::log(cfg.lambda), rate / std::log(cfg.lambda));
    fmt::print("wrote {}\n", path);
    return core::kExitOk;
  } catch (const core::Error& e) {
    fmt::print(stderr, "seqbench stability: error: {}\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    fmt::print(stderr, "seqbench stability: error: {}\n", e.what());
    return core::kExitError;
  }
}

}  // namespace seqbench::apps
