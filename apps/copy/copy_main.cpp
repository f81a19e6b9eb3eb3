#include <fmt/format.h>

#include <algorithm>

#include "apps/copy/copy_experiment.hpp"
#include "core/fs.hpp"
#include "report/csv.hpp"
#include "report/markdown.hpp"
#include "train/app.hpp"

namespace seqbench::apps {

int copy_main(int argc, char** argv) {
  train::AppSpec<CopyConfig, CopyExperiment> spec;
  spec.name = "copy";
  spec.description =
      "copy and adding tasks: recurrent models on synthetic long-memory problems "
      "(docs/experiments/copy.md)";
  spec.demo_yaml = kCopyDemoYaml;
  spec.memory = copy_memory;
  spec.identity = [](const CopyConfig& c, CopyExperiment& e) {
    const std::string label = c.output.label.empty() ? c.model.cell : c.output.label;
    train::RunIdentity id{
        {"label", label},
        {"task", c.task.name},
        {"T", std::to_string(c.task.T)},
        {"model", c.model.cell},
        {"backend", c.model.backend},
        {"hidden", std::to_string(c.model.hidden)},
    };
    train::append(id, train::setup_columns(e.params().size(), c.train, c.optim));
    id.push_back({"data", "synthetic"});
    return id;
  };
  // Transfer: evaluate a trained run's checkpoint on longer (or shorter) sequences.
  std::vector<int64_t> eval_T, probe_T;
  spec.add_options = [&](CLI::App& app) {
    app.add_option("--eval-T", eval_T,
                   "transfer: evaluate the checkpoint of --run-id at these T (no training); "
                   "writes transfer.csv in the run directory")
        ->check(config::whole_number(1, 10000000));
    app.add_option("--probe-memory", probe_T,
                   "memory vs T: one training step of the configured model at each T (no "
                   "training run); appends to <output.dir>/copy/memory.csv")
        ->check(config::whole_number(1, 10000000));
  };
  // Memory vs T (Kerg et al.'s memory figure): in increasing T in one process, so the
  // peak RSS of each row is the high-water mark up to and including that T.
  spec.action = [&](const CopyConfig& c) -> int {
    if (probe_T.empty()) return -1;
    std::sort(probe_T.begin(), probe_T.end());
    const std::string label = c.output.label.empty() ? c.model.cell : c.output.label;
    core::make_dirs(c.output.dir + "/copy");
    report::CsvWriter out(c.output.dir + "/copy/memory.csv",
                          {"label", "model", "backend", "hidden", "batch", "task", "T", "length",
                           "held_mb", "peak_rss_mb"},
                          report::CsvWriter::Mode::Append);
    std::vector<std::vector<std::string>> shown;
    for (const int64_t T : probe_T) {
      CopyConfig cc = c;
      cc.task.T = T;
      CopyExperiment e(cc);
      e.init();
      e.params().zero_grad();
      e.train_step();
      using W = report::CsvWriter;
      const double held = double(e.held_bytes()) / (1024.0 * 1024.0), rss = train::peak_rss_mb();
      out.row({label, c.model.cell, c.model.backend, W::cell(c.model.hidden), W::cell(c.train.batch),
               c.task.name, W::cell(T), W::cell(e.task().length()), W::cell(held), W::cell(rss)});
      shown.push_back({label, std::to_string(T), fmt::format("{:.2f}", held),
                       fmt::format("{:.1f}", rss)});
    }
    fmt::print("{}", report::markdown_table({"label", "T", "held MB", "peak RSS MB"}, shown));
    return 0;
  };
  spec.on_saved_run = [&] { return !eval_T.empty(); };
  spec.alternative = [&](const CopyConfig& c, CopyExperiment& e, const train::Checkpoint& ck) {
    train::load_parameters(e.params(), ck);
    const std::string dir = c.output.dir + "/copy/" + c.output.run_id;
    report::CsvWriter out(dir + "/transfer.csv",
                          {"step", "trained_T", "eval_T", "batches", "batch", "loss", e.metric()},
                          report::CsvWriter::Mode::Append);
    std::vector<std::vector<std::string>> shown;
    for (const int64_t T : eval_T) {
      const train::Metrics m = e.evaluate_at(T);
      using W = report::CsvWriter;
      std::vector<std::string> row{ck.meta_at("step"), W::cell(c.task.T), W::cell(T),
                                   W::cell(c.train.eval_batches), W::cell(c.train.batch)};
      out.row({row[0], row[1], row[2], row[3], row[4], W::cell(m[0].second), W::cell(m[1].second)});
      row.push_back(fmt::format("{:.4f}", m[0].second));
      row.push_back(fmt::format("{:.4f}", m[1].second));
      shown.push_back(row);
    }
    fmt::print("{}", report::markdown_table(out.columns(), shown));
    return 0;
  };
  return train::run_app(argc, argv, spec);
}

}  // namespace seqbench::apps
