// seqbench stability: the analyses of Miller & Hardt (2019), "Stable Recurrent Models",
// with the bookkeeping of every experiment (docs/experiments/stability.md).
//   seqbench stability --config configs/stability/truncation.yaml [--set k=v] [--seed S]
//                      [--out DIR] [--run-id ID] [--threads N] [-q]
// runs one analysis (config key `analysis`, apps/stability/stability_config.hpp) into
// <out>/stability/<run-id>/:
//   config.yaml     the resolved config (written before the analysis starts)
//   truncation.csv  k, gap, bound_k_lambda_k: the gradient gap between a λ-contractive RNN
//                   and its k-truncation (Lemma 2: gap = O(k λ^k)), or
//   weight_gap.csv  k, step, gap: the distance between recurrent and truncated weights
//                   under projected GD with step α/t (Proposition 2)
//   <same>.gp, .png, .svg   the figure (gap against k on a log axis with the k λ^k bound;
//                   weight gap against step, one curve per k)
//   log.txt         what was printed
//   summary.json    status, the fitted log-rate, log λ and their ratio, the final gap per k
// and one row in <out>/stability/runs.csv. The flow is every experiment's, train::run_app
// (options, config, memory check, run id rule, directory lock, a run id that holds a run:
// exit 2), with the analysis (AppSpec::analyse) in place of training.
//
// The old subcommands are shortcuts that build the same config:
//   seqbench stability truncation [--lambda 0.8] [--T 80] [--k-max 50] ...
//   seqbench stability weights [--lambda 0.8] [--k 2 4 8 16] [--steps 200] ...
// They write the run directory too and, for the scripts that read them, the old files
// <out>/stability/truncation-l<λ>.csv and weight-gap-l<λ>.csv.
#include "apps/stability/stability_main.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "apps/stability/demo_config.hpp"
#include "apps/stability/stability_config.hpp"
#include "analysis/truncation.hpp"
#include "analysis/weight_gap.hpp"
#include "config/cli.hpp"
#include "core/check.hpp"
#include "core/threads.hpp"
#include "report/csv.hpp"
#include "report/gnuplot.hpp"
#include "report/markdown.hpp"
#include "train/app.hpp"

namespace seqbench::apps {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string num(double v) { return fmt::format("{:.6g}", v); }

// Mistakes that involve two keys, found before anything is written.
void check_config(const StabilityConfig& c) {
  if (c.analysis == "truncation" && c.truncation.k_max >= c.truncation.T)
    throw core::UsageError(fmt::format(
        "truncation.k_max: {} must be below truncation.T = {} (k = T would be the full model)",
        c.truncation.k_max, c.truncation.T));
  if (c.analysis == "weights" && c.weights.ks.empty())
    throw core::UsageError(
        "weights.ks: the list is empty; give at least one truncation window, e.g. [2, 4, 8]");
}

// What run_app builds from the config before anything is written: the analysis has no
// state of its own, so building it is checking the config.
struct StabilityAnalysis {
  explicit StabilityAnalysis(const StabilityConfig& c) { check_config(c); }
  // Fitted log-rate / log λ: 1 when the gap decays like k λ^k.
  std::string metric() const { return "rate_ratio"; }
};

// The runs.csv identity columns: the same for both analyses, so that one runs.csv holds
// both (a sweep over λ runs each). `label` is the run's label.
train::RunIdentity identity(const StabilityConfig& c, const std::string& label) {
  const bool trunc = c.analysis == "truncation";
  std::string ks;
  if (trunc) {
    ks = fmt::format("1-{}", c.truncation.k_max);
  } else {
    for (const int64_t k : c.weights.ks) ks += (ks.empty() ? "" : " ") + std::to_string(k);
  }
  return {
      {"label", label},
      {"analysis", c.analysis},
      {"lambda", fmt::format("{}", c.lambda)},
      {"T", std::to_string(trunc ? c.truncation.T : c.weights.T)},
      {"hidden", std::to_string(trunc ? c.truncation.hidden : c.weights.hidden)},
      {"input", std::to_string(trunc ? c.truncation.input : c.weights.input)},
      {"input_scale", fmt::format("{}", trunc ? c.truncation.input_scale : c.weights.input_scale)},
      {"k", ks},
      {"instances", std::to_string(trunc ? c.truncation.instances : int64_t(1))},
      {"steps", std::to_string(trunc ? int64_t(0) : c.weights.steps)},
      {"seed", std::to_string(c.seed)},
      {"threads", std::to_string(core::num_threads())},
      {"data", "synthetic"},
  };
}

// What an analysis found: its headline numbers (summary.json and runs.csv, after the
// usual columns) and what to print.
struct Outcome {
  double log_rate = kNaN;  // fitted log-rate of gap / k against k
  std::string fit_k;       // the k range (truncation) or list (weights) the rate was fitted on
  std::string final_gaps;  // weights: "k:gap" per k after the last step
  std::string note;        // why there is no rate, or no figure (one line), else empty
  std::string printed;     // the table and the lines printed after it
};

// Writes <stem>.gp beside the analysis' CSV (the script reads it) and draws <stem>.png and
// <stem>.svg with gnuplot. Returns "" when drawn, else one line saying why not (no
// gnuplot, or its error): the numbers are the run's result, a figure that cannot be drawn
// does not fail it.
std::string draw(const train::RunFiles& files, const std::string& stem,
                 const std::string& settings, const std::string& plot) {
  report::GnuplotFigure fig;
  fig.stem = stem;
  fig.written_by = "seqbench stability";
  fig.settings = "set datafile separator ','\nset grid\n" + settings;
  fig.plot = plot;
  fig.width = 800;
  fig.height = 560;
  try {
    const report::GnuplotStatus r = report::draw_figure(files.dir(), fig, std::nullopt).status;
    return r.drawn() ? "" : "figure skipped: " + r.message;
  } catch (const core::Error& e) {
    return fmt::format("figure skipped: {}", e.what());
  }
}

Outcome run_truncation(const StabilityConfig& c, train::RunFiles& files,
                       const std::string& legacy_csv) {
  const analysis::TruncationGapConfig tc = c.truncation_gap();
  const auto rows = analysis::truncation_gradient_gap(tc);
  std::vector<std::vector<std::string>> cells, shown;
  for (const auto& r : rows) {
    cells.push_back({report::CsvWriter::cell(r.k), report::CsvWriter::cell(r.gap),
                     report::CsvWriter::cell(r.bound)});
    if (r.k == 1 || r.k % 5 == 0)
      shown.push_back(
          {std::to_string(r.k), fmt::format("{:.3e}", r.gap), fmt::format("{:.3e}", r.bound)});
  }
  const std::vector<std::string> columns{"k", "gap", "bound_k_lambda_k"};
  for (const std::string& path : {files.path("truncation.csv"), legacy_csv})
    if (!path.empty())
      report::CsvWriter(path, columns, report::CsvWriter::Mode::Truncate).rows(cells);

  Outcome o;
  o.printed = report::markdown_table({"k", "gradient gap", "k λ^k"}, shown) + "\n";
  try {
    const analysis::RateFit fit = analysis::fit_upper_half(rows);
    o.log_rate = fit.log_rate;
    o.fit_k = fmt::format("{}-{}", fit.k_from, fit.k_to);
    o.printed += fmt::format(
        "fitted log-rate of gap/k over k in [{}, {}]: {:.4f}; log λ = {:.4f} (ratio {:.3f})\n",
        fit.k_from, fit.k_to, fit.log_rate, std::log(c.lambda), fit.log_rate / std::log(c.lambda));
  } catch (const core::Error& e) {
    o.note = fmt::format("no rate fitted: {}", e.what());
  }

  // The bound up to its constant: γ k λ^k with the smallest γ that puts it above every gap.
  double gamma = 0;
  for (const auto& r : rows)
    if (r.bound > 0) gamma = std::max(gamma, r.gap / r.bound);
  if (!(gamma > 0)) gamma = 1;
  const std::string settings = fmt::format(
      "set logscale y\n"
      "set format y '10^{{%L}}'\n"
      "set key top right\n"
      "set xlabel 'truncation length k'\n"
      "set ylabel '‖∇_θ p_T − ∇_θ p_T^k‖'\n"
      "set title 'Gradient gap, recurrent vs k-truncated, λ = {} "
      "(T = {}, H = {}, {} instances)' noenhanced\n",
      c.lambda, tc.T, tc.hidden, tc.instances);
  const std::string plot = fmt::format(
      "plot 'truncation.csv' skip 1 using 1:($2 > 0 ? $2 : 1/0) with linespoints pt 7 ps 0.6 "
      "title 'gradient gap', \\\n"
      "     '' skip 1 using 1:({} * $3) with lines dt 2 lw 2 title 'γ k λ^k, γ = {:.3g}'\n",
      gamma, gamma);
  const std::string drawn = draw(files, "truncation", settings, plot);
  if (!drawn.empty()) o.note += (o.note.empty() ? "" : "; ") + drawn;
  return o;
}

Outcome run_weights(const StabilityConfig& c, train::RunFiles& files,
                    const std::string& legacy_csv) {
  const analysis::WeightGapConfig wc = c.weight_gap();
  const auto rows = analysis::weight_gap(wc);
  std::vector<std::vector<std::string>> cells, shown;
  Outcome o;
  bool any_positive = false;
  for (const auto& r : rows) {
    cells.push_back({report::CsvWriter::cell(r.k), report::CsvWriter::cell(r.step),
                     report::CsvWriter::cell(r.gap)});
    any_positive = any_positive || r.gap > 0;
    if (r.step != wc.steps) continue;
    shown.push_back({std::to_string(r.k), fmt::format("{:.3e}", r.gap)});
    o.final_gaps += fmt::format("{}{}:{:.6g}", o.final_gaps.empty() ? "" : " ", r.k, r.gap);
  }
  const std::vector<std::string> columns{"k", "step", "gap"};
  for (const std::string& path : {files.path("weight_gap.csv"), legacy_csv})
    if (!path.empty())
      report::CsvWriter(path, columns, report::CsvWriter::Mode::Truncate).rows(cells);

  o.printed =
      report::markdown_table({"k", fmt::format("weight gap after {} steps", wc.steps)}, shown) +
      "\n";
  // The slope of log(final gap) against k, to compare with log λ.
  try {
    const analysis::WeightGapFit fit = analysis::final_gap_log_rate(rows, wc.T, wc.steps);
    o.log_rate = fit.log_rate;
    for (const int64_t k : fit.ks) o.fit_k += (o.fit_k.empty() ? "" : " ") + std::to_string(k);
    o.printed += fmt::format(
        "fitted log-rate of the final gap over k in {{{}}}: {:.4f}; log λ = {:.4f} "
        "(ratio {:.3f})\n",
        o.fit_k, o.log_rate, std::log(c.lambda), o.log_rate / std::log(c.lambda));
  } catch (const core::Error& e) {
    o.note = fmt::format("no rate fitted: {}", e.what());
  }

  // One curve per k; zero gaps (step 0, and k >= T) cannot go on the log axis.
  std::string curves;
  for (size_t i = 0; i < wc.ks.size(); ++i)
    curves += fmt::format(
        "{}'weight_gap.csv' skip 1 using 2:($1 == {} ? {} : 1/0) with linespoints pt 7 ps 0.5 "
        "title 'k = {}{}'",
        i ? ", \\\n     " : "", wc.ks[i], any_positive ? "($3 > 0 ? $3 : 1/0)" : "$3", wc.ks[i],
        wc.ks[i] >= wc.T ? " (≥ T: gap 0)" : "");
  const std::string settings = fmt::format(
      "{}"
      "set key outside right\n"
      "set xlabel 'gradient step t (step size α / t)'\n"
      "set ylabel '‖θ_{{recurrent}} − θ_{{truncated}}‖_2'\n"
      "set title 'Weight gap under projected GD, λ = {} (T = {}, α = {})' "
      "noenhanced\n",
      any_positive ? "set logscale y\nset format y '10^{%L}'\n" : "", c.lambda, wc.T, wc.alpha);
  const std::string drawn = draw(files, "weight_gap", settings, "plot " + curves + "\n");
  if (!drawn.empty()) o.note += (o.note.empty() ? "" : "; ") + drawn;
  return o;
}

// The memory an analysis needs, in doubles: the inputs, one RNN (parameters with their
// gradients, its time loop's buffers, hidden states and their gradients) at a time, and
// for weights the parameters recorded along the recurrent model's training.
train::MemoryEstimate stability_memory(const StabilityConfig& cfg) {
  train::MemoryEstimate e;
  constexpr double kD = sizeof(double);
  if (cfg.analysis == "truncation") {
    const auto& c = cfg.truncation;
    const double T = double(c.T), H = double(c.hidden), I = double(c.input);
    e.add("one instance (inputs, RNN, states)",
          kD * (T * I + 5 * T * H + 2 * (H * I + H * H + H) + H * H),
          {train::key("truncation.T", c.T), train::key("truncation.hidden", c.hidden),
           train::key("truncation.input", c.input)});
    return e;
  }
  const auto& c = cfg.weights;
  const double T = double(c.T), H = double(c.hidden), I = double(c.input), n = double(c.n);
  const double P = H * I + H * H + 2 * H;
  e.add("inputs (T x n x input)", kD * (T * n * I + n),
        {train::key("weights.T", c.T), train::key("weights.n", c.n),
         train::key("weights.input", c.input)});
  e.add("one RNN (parameters, buffers, states)", kD * (5 * T * n * H + 3 * P + H * H),
        {train::key("weights.T", c.T), train::key("weights.n", c.n),
         train::key("weights.hidden", c.hidden)});
  const double records = std::floor(double(c.steps) / double(c.record_every)) + 2;
  e.add("recorded parameters", kD * records * P,
        {train::key("weights.steps", c.steps), train::key("weights.record_every", c.record_every),
         train::key("weights.hidden", c.hidden)});
  return e;
}

// The old subcommands' shortcut options: each sets one config key, after --config and
// --set (so its bounds and errors are the key's own).
struct Shortcut {
  const char* flag;
  const char* key;   // weights.ks takes a list (--k 2 4 8), the others one value
  const char* type;  // for --help
  const char* help;
};
const Shortcut kTruncationShortcuts[] = {
    {"--lambda", "lambda", "FLOAT", "spectral norm of W_h, in (0, 1)"},
    {"--T", "truncation.T", "INT", "sequence length"},
    {"--hidden", "truncation.hidden", "INT", "hidden units"},
    {"--input", "truncation.input", "INT", "input size"},
    {"--k-max", "truncation.k_max", "INT", "largest truncation k (< T)"},
    {"--instances", "truncation.instances", "INT", "random instances averaged"},
    {"--input-scale", "truncation.input_scale", "FLOAT",
     "standard deviation of the inputs (small: near-linear, the bound is tight)"},
};
const Shortcut kWeightsShortcuts[] = {
    {"--lambda", "lambda", "FLOAT", "contraction bound λ, in (0, 1)"},
    {"--T", "weights.T", "INT", "sequence length"},
    {"--hidden", "weights.hidden", "INT", "hidden units"},
    {"--steps", "weights.steps", "INT", "gradient steps N"},
    {"--alpha", "weights.alpha", "FLOAT", "step size α (step t uses α/t)"},
    {"--k", "weights.ks", "INT ...", "truncation windows"},
};

}  // namespace

int stability_main(int argc, char** argv) {
  train::AppSpec<StabilityConfig, StabilityAnalysis> spec{
      "stability",
      "stability analyses of Miller & Hardt (2019): recurrent vs truncated models "
      "(docs/experiments/stability.md)",
      kStabilityDemoYaml, stability_memory};
  spec.label = [](const StabilityConfig& c) { return fmt::format("{}-l{}", c.analysis, c.lambda); };
  spec.identity = [](const StabilityConfig& c, StabilityAnalysis&, const std::string& label) {
    return identity(c, label);
  };

  // The old subcommands: shortcuts for `analysis` and the keys they set. Their options
  // win over --config and --set, like --seed and --out; the common options may follow
  // them (fallthrough).
  std::vector<CLI::App*> subcommands;
  const CLI::App* subcommand = nullptr;  // the one given, if any
  // Each shortcut given: its config assignment and the option as typed, for errors.
  std::vector<std::pair<std::string, std::string>> shortcut_sets;
  std::optional<uint64_t> shortcut_seed;
  std::string shortcut_out;
  spec.add_options = [&](CLI::App& app) {
    app.require_subcommand(0, 1);
    const auto add = [&](const char* name, const char* what, std::span<const Shortcut> shortcuts) {
      CLI::App* sub = app.add_subcommand(name, what);
      sub->fallthrough();
      subcommands.push_back(sub);
      for (const Shortcut& s : shortcuts) {
        const bool list = std::string(s.key) == "weights.ks";
        sub->add_option_function<std::vector<std::string>>(
               s.flag,
               [&shortcut_sets, s, name, list](const std::vector<std::string>& v) {
                 const std::string value =
                     list ? fmt::format("[{}]", fmt::join(v, ",")) : v.back();
                 shortcut_sets.emplace_back(fmt::format("{}={}", s.key, value),
                                            fmt::format("{} {} {}", name, s.flag,
                                                        fmt::join(v, " ")));
               },
               s.help)
            ->expected(list ? -1 : 1)
            ->type_name(s.type);
      }
      sub->add_option_function<uint64_t>(
          "--seed", [&](const uint64_t& seed) { shortcut_seed = seed; }, "random seed");
      sub->add_option("--out", shortcut_out, "results root");
    };
    add("truncation", "gradient gap between a λ-contractive RNN and its k-truncation, vs k",
        kTruncationShortcuts);
    add("weights",
        "weight gap between a recurrent and a k-truncated model trained by projected GD with "
        "step alpha/t (Proposition 2)",
        kWeightsShortcuts);
  };
  spec.configure = [&](StabilityConfig& c, config::CommonOptions& opts) {
    for (const CLI::App* sub : subcommands)
      if (sub->parsed()) subcommand = sub;
    if (!subcommand) return;
    config::apply_override(c, "analysis=" + subcommand->get_name());
    for (const auto& [set, given] : shortcut_sets) config::apply_override(c, set, given);
    if (shortcut_seed) opts.seed = shortcut_seed;
    if (!shortcut_out.empty()) opts.out = shortcut_out;
  };

  spec.analyse = [&](const StabilityConfig& c, StabilityAnalysis&, train::RunFiles& files) {
    // The old subcommands' files, beside the runs.
    const std::string legacy =
        subcommand ? fmt::format("{}/{}/{}-l{}.csv", c.output.dir, spec.name,
                                 c.analysis == "truncation" ? "truncation" : "weight-gap",
                                 c.lambda)
                   : "";
    train::AnalysisOutcome a;
    Outcome o;
    try {
      o = c.analysis == "truncation" ? run_truncation(c, files, legacy)
                                     : run_weights(c, files, legacy);
    } catch (const std::exception& e) {
      a.error = e.what();  // recorded with the columns below, NaN
    }
    a.metric = o.log_rate / std::log(c.lambda);
    a.updates = c.analysis == "weights" ? c.weights.steps : 0;
    a.columns = {{"fitted_log_rate", num(o.log_rate)},
                 {"log_lambda", num(std::log(c.lambda))},
                 {"rate_ratio", num(a.metric)},
                 {"fit_k", o.fit_k},
                 {"final_gaps", o.final_gaps}};
    a.printed = o.printed + (legacy.empty() ? "" : fmt::format("wrote {}\n", legacy));
    a.note = o.note;
    return a;
  };
  return train::run_app(argc, argv, spec);
}

}  // namespace seqbench::apps
