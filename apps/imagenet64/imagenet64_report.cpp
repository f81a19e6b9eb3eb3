#include "apps/imagenet64/imagenet64_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/check.hpp"
#include "report/markdown.hpp"
#include "report/paper_spec.hpp"

namespace seqbench::apps {

report::CsvTable imagenet64_table(const report::CsvTable& runs) {
  const std::vector<std::string> key_cols{"label", "attention", "data", "image_size",
                                          "train_images"};
  for (const auto& c : key_cols) (void)runs.col(c);  // a missing column fails here, named
  const int test_col = runs.col("test_bpd");
  (void)runs.col("updates");
  struct Group {
    std::vector<double> bpd, updates;
  };
  std::map<std::vector<std::string>, Group> groups;
  std::vector<std::vector<std::string>> order;  // first appearance
  for (size_t r = 0; r < runs.rows.size(); ++r) {
    if (runs.rows[r][size_t(test_col)].empty()) continue;
    std::vector<std::string> key;
    for (const auto& c : key_cols) key.push_back(runs.rows[r][size_t(runs.col(c))]);
    auto [it, fresh] = groups.try_emplace(key);
    if (fresh) order.push_back(key);
    it->second.bpd.push_back(runs.number(r, "test_bpd"));
    it->second.updates.push_back(runs.number(r, "updates"));
  }
  report::CsvTable t;
  t.path = runs.path;
  t.columns = {"label", "attention", "data", "image", "paper", "source", "ours", "n", "train", "updates"};
  for (const auto& key : order) {
    const Group& g = groups[key];
    // Roy et al.'s ImageNet-64 result (configs/papers/roy2021/numbers.yaml).
    const auto [paper, source] =
        report::paper_cells("roy2021", "imagenet64", report::attention_kinds(key[1]), "");
    double updates = 0;
    for (double u : g.updates) updates += u / double(g.updates.size());
    t.rows.push_back({key[0], key[1], key[2], key[3], paper, source, report::mean_sd(g.bpd, 3),
                      std::to_string(g.bpd.size()), key[4], fmt::format("{:.0f}", updates)});
  }
  return t;
}

}  // namespace seqbench::apps
