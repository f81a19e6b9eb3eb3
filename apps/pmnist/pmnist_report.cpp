#include "apps/pmnist/pmnist_report.hpp"

#include <fmt/format.h>

#include <map>

#include "core/check.hpp"
#include "report/markdown.hpp"
#include "report/paper_spec.hpp"

namespace seqbench::apps {

report::CsvTable pmnist_table(const report::CsvTable& runs) {
  const std::vector<std::string> key_cols{"label", "task",  "model",
                                          "hidden", "data", "train_examples"};
  for (const auto& c : key_cols) (void)runs.col(c);  // a missing column fails here, named
  (void)runs.col("test_acc");
  (void)runs.col("epochs");
  struct Group {
    std::vector<double> acc, epochs;
  };
  std::map<std::vector<std::string>, Group> groups;
  std::vector<std::vector<std::string>> order;  // first appearance
  for (size_t r = 0; r < runs.rows.size(); ++r) {
    if (runs.rows[r][size_t(runs.col("test_acc"))].empty()) continue;
    std::vector<std::string> key;
    for (const auto& c : key_cols) key.push_back(runs.rows[r][size_t(runs.col(c))]);
    auto [it, fresh] = groups.try_emplace(key);
    if (fresh) order.push_back(key);
    it->second.acc.push_back(100.0 * runs.number(r, "test_acc"));
    it->second.epochs.push_back(runs.number(r, "epochs"));
  }
  report::CsvTable t;
  t.path = runs.path;
  t.columns = {"label", "task", "model", "hidden", "paper", "source", "ours", "n", "data", "train", "epochs"};
  for (const auto& key : order) {
    const Group& g = groups[key];
    // Nguyen et al. 2020's table (configs/papers/nguyen2020/numbers.yaml).
    const auto [paper, source] = report::paper_cells("nguyen2020", key[1], key[2], key[3]);
    double epochs = 0;
    for (double e : g.epochs) epochs += e / double(g.epochs.size());
    t.rows.push_back({key[0], key[1], key[2], key[3], paper, source, report::mean_sd(g.acc, 2),
                      std::to_string(g.acc.size()), key[4], key[5], fmt::format("{:.3g}", epochs)});
  }
  return t;
}

}  // namespace seqbench::apps
