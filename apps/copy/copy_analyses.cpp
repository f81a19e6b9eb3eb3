#include "apps/copy/copy_analyses.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "report/csv.hpp"
#include "report/markdown.hpp"
#include "train/trainer.hpp"

namespace seqbench::apps {

int copy_memory_probe(const CopyConfig& c, std::vector<int64_t> Ts, const std::string& label,
                      const train::MemoryLimit& limit) {
  std::sort(Ts.begin(), Ts.end());
  // Every T checked before the first step: the largest decides.
  CopyConfig largest = c;
  largest.task.T = Ts.back();
  try {
    train::check_memory(copy_memory(largest), limit);
  } catch (const core::UsageError& e) {
    throw core::UsageError(fmt::format("--probe-memory {}: {}", Ts.back(), e.what()));
  }
  core::make_dirs(c.output.dir + "/copy");
  report::CsvWriter out(c.output.dir + "/copy/memory.csv",
                        {"label", "model", "backend", "hidden", "batch", "task", "T", "length",
                         "held_mb", "peak_rss_mb"},
                        report::CsvWriter::Mode::Append);
  std::vector<std::vector<std::string>> shown;
  for (const int64_t T : Ts) {
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
}

int copy_transfer(const CopyConfig& c, CopyExperiment& e, const train::Checkpoint& ck,
                  const std::vector<int64_t>& eval_Ts) {
  train::load_parameters(e.params(), ck);
  const std::string dir = c.output.dir + "/copy/" + c.output.run_id;
  report::CsvWriter out(dir + "/transfer.csv",
                        {"step", "trained_T", "eval_T", "batches", "batch", "loss", e.metric()},
                        report::CsvWriter::Mode::Append);
  std::vector<std::vector<std::string>> shown;
  for (const int64_t T : eval_Ts) {
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
}

}  // namespace seqbench::apps
