// `seqbench report ...` and `seqbench compare ...`: the analysis side of the front door.
// Thin: parse the command line, call lib/report (plots.hpp, compare.hpp), print where
// things went. Errors are one line on stderr; exit 1 for runtime errors, 2 for usage.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "apps/experiments.hpp"
#include "apps/seqbench/paper_main.hpp"
#include "apps/wikitext103/attention_approx.hpp"
#include "apps/wikitext103/attention_jsd.hpp"
#include "apps/wikitext103/attention_swap.hpp"
#include "config/cli.hpp"
#include "core/check.hpp"
#include "core/fs.hpp"
#include "report/compare.hpp"
#include "report/curves.hpp"
#include "report/run_configs.hpp"
#include "report/csv.hpp"
#include "report/markdown.hpp"
#include "report/paper_figures.hpp"
#include "report/plots.hpp"

namespace seqbench::apps {
namespace {

// Runs body(), turning exceptions into one line on stderr and the matching exit code.
template <class Fn>
int guarded(const char* command, Fn&& body) {
  try {
    return body();
  } catch (const core::Error& e) {
    fmt::print(stderr, "seqbench {}: error: {}\n", command, e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    fmt::print(stderr, "seqbench {}: error: {}\n", command, e.what());
    return core::kExitError;
  }
}

// Where plots go when --out is not given: plots/ beside the first run, so runs in
// results/copy/ get results/copy/plots/.
std::string default_plot_dir(const std::string& first_run) {
  std::string run = first_run;
  while (run.size() > 1 && run.back() == '/') run.pop_back();
  const std::filesystem::path parent = std::filesystem::path(run).parent_path();
  return (parent.empty() ? std::filesystem::path("plots") : parent / "plots").string();
}

int gradnorm_command(const std::vector<std::string>& paths, const std::string& out,
                     std::optional<int64_t> step, bool input) {
  report::GradnormReportOptions opts;
  if (input) opts.source = report::GradnormSource::input_gradients();
  const std::vector<std::string> run_dirs = report::expand_run_dirs(paths, opts.source.file);
  std::vector<report::GradnormRun> runs;
  for (const auto& dir : run_dirs) runs.push_back(report::load_gradnorm_run(dir, opts.source));
  opts.out_dir = out.empty() ? default_plot_dir(run_dirs.front()) : out;
  opts.step = step;
  const report::GradnormReport result = report::write_gradnorm_report(std::move(runs), opts);
  fmt::print("seqbench report gradnorm: {} run{} -> {}\n", run_dirs.size(),
             run_dirs.size() == 1 ? "" : "s", opts.out_dir);
  for (const auto& file : result.files)
    if (file.size() > 4 && file.compare(file.size() - 4, 4, ".png") == 0)
      fmt::print("  {}\n", file);
  if (!result.caption.empty()) fmt::print("  ({})\n", result.caption);
  if (!result.rendered) fmt::print(stderr, "seqbench report: {}\n", result.skipped);
  return core::kExitOk;
}

// Learning curves: one figure per run or experiment directory, written beside it.
int curves_command(const std::vector<std::string>& paths) {
  std::vector<report::CurveTarget> targets;
  for (const auto& p : paths)  // every path checked before anything is drawn
    for (auto& t : report::curve_targets(p)) targets.push_back(std::move(t));
  for (const auto& t : targets) {
    const report::DrawnFigure d = report::draw_curves(t.dir, t.title, t.groups);
    if (d.status.drawn())
      fmt::print("seqbench report curves: {} ({} config{})\n", d.files.png, t.groups.size(),
                 t.groups.size() == 1 ? "" : "s");
    else
      fmt::print(stderr, "seqbench report curves: no PNG ({}); data and script in {}\n", d.status.message, t.dir);
  }
  return core::kExitOk;
}

// `seqbench report scaling [BENCH_DIR] [--out DIR]`.
int scaling_command(const std::string& bench_dir, const std::string& out) {
  report::PaperFigure fig;
  if (!report::attention_scaling_figure(fig, bench_dir, out))
    throw core::UsageError(fmt::format(
        "no attention-scaling data in '{}' (hint: make bench writes attention_scaling.dat and .gp there)", bench_dir));
  if (fig.pngs.empty()) throw core::Error(fmt::format("seqbench report scaling: {}", fig.status));
  fmt::print("seqbench report scaling: {}\n", fig.pngs.front());
  return core::kExitOk;
}

// An experiment's results table: `seqbench report TABLE [RUNS_CSV]`.
int table_command(const ExperimentEntry& e, const ReportTable& r, std::string runs_csv,
                  const std::string& format, const std::string& out) {
  if (runs_csv.empty()) runs_csv = fmt::format("results/{}/runs.csv", e.name);
  if (!core::file_exists(runs_csv))
    throw core::UsageError(fmt::format(
        "no runs at '{}' (hint: train with `seqbench {} --config configs/{}/...` first, or "
        "give the runs.csv path)",
        runs_csv, e.name, e.name));
  const report::CsvTable t = r.build(report::read_csv(runs_csv));
  std::string text;
  if (format == "csv") {
    text = report::csv_line(t.columns);
    for (const auto& row : t.rows) text += report::csv_line(row);
  } else {
    text = fmt::format("{}\nRuns: {}\n\n{}", r.title, runs_csv,
                       report::markdown_table(t.columns, t.rows));
  }
  if (out.empty())
    fmt::print("{}", text);
  else
    core::write_file_atomic(out, text);
  return core::kExitOk;
}

}  // namespace

int report_main(int argc, char** argv) {
  return guarded("report", [&] {
    CLI::App app("seqbench report: figures (and tables) from results/", "seqbench report");
    app.require_subcommand(1);
    CLI::App* gradnorm = app.add_subcommand(
        "gradnorm",
        "gradient-norm figures from gradnorm.csv: ||dL/dh_t|| against distance (one curve "
        "per run) and a heat map per run over (t, training step); see docs/report.md");
    std::vector<std::string> paths;
    std::string out;
    std::optional<int64_t> step;
    gradnorm
        ->add_option("RUN_DIR", paths,
                     "run directories (results/<experiment>/<run-id>); an experiment "
                     "directory stands for all its runs")
        ->required();
    gradnorm->add_option("--out", out, "output directory (default: plots/ beside the runs)")
        ->type_name("DIR");
    gradnorm
        ->add_option_function<int64_t>(
            "--step", [&step](const int64_t& s) { step = s; },
            "probe step for the distance figure (default: each run's last probe)")
        ->type_name("N")
        ->check(config::whole_number(0, 1000000000));
    bool input = false;
    gradnorm->add_flag("--input", input,
                       "draw inputgrad.csv instead: ||dl_{t+i}/dx_t|| of a trained model against "
                       "distance i (`seqbench char_ptb --probe-input-grad`), no heat maps");
    CLI::App* curves = app.add_subcommand(
        "curves",
        "learning curves from metrics.csv: loss and the task's metric against updates, train and "
        "validation; a run gets RUN/curves.png, an experiment or sweep directory one panel row per "
        "config with seeds as mean ± band (see docs/report.md)");
    std::vector<std::string> curve_paths;
    curves
        ->add_option("RUN_OR_SWEEP_DIR", curve_paths,
                     "run directories (results/<experiment>/<run-id>), experiment directories (holding "
                     "runs.csv) or sweep directories (holding experiment directories)")
        ->required();
    std::string runs_csv, format = "md", table_out;
    struct TableCommand {
      CLI::App* sub;
      const ExperimentEntry* experiment;
      const ReportTable* table;
    };
    std::vector<TableCommand> tables;
    for (const auto& e : experiments())
      for (const auto& r : e.tables) {
        CLI::App* sub = app.add_subcommand(r.name, r.what);
        sub->add_option("RUNS_CSV", runs_csv,
                        fmt::format("the experiment's runs.csv (default results/{}/runs.csv)", e.name));
        sub->add_option("--format", format, "md (Markdown, default) or csv")
            ->check(CLI::IsMember({"md", "csv"}))
            ->type_name("md|csv");
        sub->add_option("--out", table_out, "write the table to FILE (atomically) instead of stdout")
            ->type_name("FILE");
        tables.push_back({sub, &e, &r});
      }
    CLI::App* scaling = app.add_subcommand(
        "scaling", "`make bench`'s attention-scaling figure in the house style, with the n^1.5 and n^2 guides");
    std::string bench_dir = "results/bench", scaling_out;
    scaling->add_option("BENCH_DIR", bench_dir, "where `make bench` wrote attention_scaling.dat")
        ->capture_default_str();
    scaling->add_option("--out", scaling_out, "where the figure goes (default BENCH_DIR)")->type_name("DIR");
    PaperCommand paper_cmd;
    add_paper_commands(app, paper_cmd);
    CLI::App* attention = app.add_subcommand(
        "attention",
        "analyses of trained attention models, wikitext103 or imagenet64 runs "
        "(docs/experiments/wikitext103.md)");
    attention->require_subcommand(1);
    CLI::App* approx = attention->add_subcommand(
        "approx",
        "relative output error of local / routing / random / smyrf / lsh attention against "
        "full attention, on the attention inputs of a trained full-attention wikitext103 or "
        "imagenet64 run");
    ApproxCommandOptions approx_opts;
    approx->add_option("RUN_DIR", approx_opts.run_dir, "results/<wikitext103|imagenet64>/<run-id>")
        ->required();
    approx->add_option("--out", approx_opts.out_dir, "output directory (default RUN_DIR/attention_approx)")
        ->type_name("DIR");
    approx->add_option("--segments", approx_opts.segments,
                       "validation segments (imagenet64: batches of data.eval_batch images) to use")
        ->capture_default_str();
    approx->add_option("--windows", approx_opts.approx.windows, "windows w (each query sees <= 2w keys)")
        ->delimiter(',')
        ->capture_default_str();
    approx->add_option("--kinds", approx_opts.approx.kinds, "sparse kinds to compare")
        ->delimiter(',')
        ->capture_default_str();
    approx->add_option("--kmeans-iters", approx_opts.approx.kmeans_iters,
                       "routing: spherical k-means steps on each segment's q, k")
        ->check(config::whole_number(0, 1000000000))
        ->capture_default_str();
    CLI::App* jsd = attention->add_subcommand(
        "jsd",
        "Jensen-Shannon divergence between the attention distributions of a trained mixed "
        "wikitext103 or imagenet64 model's heads (local-local, routing-routing, local-routing)");
    JsdCommandOptions jsd_opts;
    jsd->add_option("RUN_DIR", jsd_opts.run_dir, "results/<wikitext103|imagenet64>/<run-id>")
        ->required();
    jsd->add_option("--out", jsd_opts.out_dir, "output directory (default RUN_DIR/attention_jsd)")
        ->type_name("DIR");
    jsd->add_option("--segments", jsd_opts.segments,
                    "validation segments (imagenet64: batches of data.eval_batch images) to use")
        ->capture_default_str();
    CLI::App* swap = attention->add_subcommand(
        "swap",
        "a trained full-attention wikitext103 or imagenet64 model evaluated with other kinds in place "
        "of its full heads, no retraining (SMYRF's drop-in claim)");
    SwapCommandOptions swap_opts;
    swap->add_option("RUN_DIR", swap_opts.run_dir, "results/<wikitext103|imagenet64>/<run-id>")->required();
    swap->add_option("--out", swap_opts.out_dir, "output directory (default RUN_DIR/attention_swap)")
        ->type_name("DIR");
    swap->add_option("--kinds", swap_opts.kinds, "kinds to put in place of the full heads")
        ->check(CLI::IsMember({"local", "smyrf", "lsh", "random", "routing"}))
        ->capture_default_str();
    if (!config::parse_cli(app, argc, argv)) return static_cast<int>(core::kExitOk);
    if (paper_cmd.parsed()) return paper_command(paper_cmd);
    if (curves->parsed()) return curves_command(curve_paths);
    if (scaling->parsed()) return scaling_command(bench_dir, scaling_out.empty() ? bench_dir : scaling_out);
    if (swap->parsed()) return attention_swap_command(swap_opts, load_trained_run);
    if (approx->parsed()) return attention_approx_command(approx_opts, load_trained_run);
    if (jsd->parsed()) return attention_jsd_command(jsd_opts, load_trained_run);
    for (const auto& t : tables)
      if (t.sub->parsed()) return table_command(*t.experiment, *t.table, runs_csv, format, table_out);
    return gradnorm_command(paths, out, step, input);
  });
}

int compare_main(int argc, char** argv) {
  return guarded("compare", [&] {
    CLI::App app(
        "seqbench compare: one row per model from an experiment's runs.csv (means over "
        "runs sharing a label with sd and n, min-max for n = 2, best first); see docs/report.md",
        "seqbench compare");
    std::string runs_csv, format = "md", out, by = "label";
    app.add_option("RUNS_CSV", runs_csv, "e.g. results/copy/runs.csv")->required();
    app.add_option("--format", format, "md (Markdown, default) or csv")
        ->check(CLI::IsMember({"md", "csv"}))
        ->type_name("md|csv");
    app.add_option("--out", out, "write the table to FILE (atomically) instead of stdout")
        ->type_name("FILE");
    auto* by_opt =
        app.add_option("--by", by,
                       "what groups runs into rows, averaging over any other difference: a "
                       "runs.csv column, or a config key the runs differ in (task.T, "
                       "model.hidden: read from each run's config.yaml); default: label, split "
                       "by config")
            ->type_name("COLUMN|KEY");
    if (!config::parse_cli(app, argc, argv)) return static_cast<int>(core::kExitOk);

    report::CompareOptions opts;
    opts.by = by;
    opts.average_over_configs = by_opt->count() > 0;
    const report::CsvTable runs = report::read_csv(runs_csv);
    const report::CompareTable table =
        report::compare_runs(runs, opts, report::read_run_configs(runs));
    const std::string text =
        format == "csv" ? report::compare_csv(table) : report::compare_markdown(table);
    if (out.empty()) {
      fmt::print("{}", text);
    } else {
      core::write_file_atomic(out, text);
      fmt::print(stderr, "seqbench compare: {} row{} -> {}\n", table.rows.size(),
                 table.rows.size() == 1 ? "" : "s", out);
    }
    return static_cast<int>(core::kExitOk);
  });
}

}  // namespace seqbench::apps
