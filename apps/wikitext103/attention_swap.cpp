#include "apps/wikitext103/attention_swap.hpp"

#include <fmt/format.h>

#include "apps/wikitext103/analysis_output.hpp"
#include "core/check.hpp"
#include "core/fs.hpp"
#include "report/csv.hpp"
#include "report/markdown.hpp"

namespace seqbench::apps {

std::string swap_full_heads(const std::string& attention, const std::string& kind) {
  std::string out;
  bool any = false;
  size_t start = 0;
  while (start <= attention.size()) {
    const size_t comma = attention.find(',', start);
    std::string group = attention.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t colon = group.find(':');
    if (group.substr(0, colon) == "full") {
      group = kind + (colon == std::string::npos ? "" : group.substr(colon));
      any = true;
    }
    out += (out.empty() ? "" : ",") + group;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (!any)
    throw core::UsageError(fmt::format(
        "attention swap: the run has no full heads to replace (model.attention: {}; hint: train "
        "configs/wikitext103/full_small.yaml)",
        attention));
  return out;
}

int attention_swap_command(const SwapCommandOptions& opts, const LmRunLoader& load) {
  if (opts.kinds.empty()) throw core::UsageError("attention swap: --kinds needs at least one kind");
  const TrainedLmRun trained = load(opts.run_dir, "attention swap", "");
  for (const auto& kind : opts.kinds) (void)swap_full_heads(trained.attention, kind);  // fail before any work
  struct Row {
    std::string kind, attention;
    double loss, value;
  };
  std::vector<Row> rows;
  const std::string metric = trained.exp->metric();
  auto evaluate = [&](const std::string& kind, TrainedLmRun run) {
    const train::Metrics m = run.exp->evaluate();
    SB_CHECK(m.size() >= 2 && m[0].first == "loss" && m[1].first == metric,
             "attention swap: evaluate() returned no validation {}", metric);
    rows.push_back({kind, run.attention, m[0].second, m[1].second});
  };
  evaluate("full", load(opts.run_dir, "attention swap", ""));
  for (const auto& kind : opts.kinds) {
    const std::string spec = swap_full_heads(trained.attention, kind);
    evaluate(kind, load(opts.run_dir, "attention swap", spec));
  }
  std::string csv = report::csv_line({"kind", "attention", "valid_loss", metric, "ratio_to_full"});
  std::vector<std::vector<std::string>> body;
  for (const auto& r : rows) {
    csv += report::csv_line({r.kind, r.attention, report::CsvWriter::cell(r.loss), report::CsvWriter::cell(r.value),
                             report::CsvWriter::cell(r.value / rows.front().value)});
    body.push_back({r.kind, r.attention, fmt::format("{:.4f}", r.loss), fmt::format("{:.2f}", r.value),
                    fmt::format("{:.3f}", r.value / rows.front().value)});
  }
  const std::string md = fmt::format(
      "Validation {} of {} ({}, data {}) with its full heads replaced, no retraining:\n\n{}", metric,
      opts.run_dir, trained.describe(trained.exp->valid_batches()), trained.data,
      report::markdown_table({"kind", "model.attention", "valid loss (nats)", metric, "over full"}, body));
  write_run_analysis(opts.run_dir, opts.out_dir, "attention_swap", csv, md);
  return core::kExitOk;
}

}  // namespace seqbench::apps
