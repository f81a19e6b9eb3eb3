#include "apps/wikitext103/wikitext103_report.hpp"

#include <fmt/format.h>

#include <map>
#include <string>

#include "report/markdown.hpp"
#include "report/paper_spec.hpp"

namespace seqbench::apps {

report::CsvTable wikitext103_table(const report::CsvTable& runs) {
  const std::vector<std::string> key_cols{"label", "attention", "layers", "hidden", "T", "data"};
  for (const auto& c : key_cols) (void)runs.col(c);  // a missing column fails here, named
  const int test_col = runs.col("test_ppl");
  for (const char* c : {"ms_per_update", "updates", "epochs"}) (void)runs.col(c);
  struct Group {
    std::vector<double> ppl, ms, updates, epochs;
  };
  std::map<std::vector<std::string>, Group> groups;
  std::vector<std::vector<std::string>> order;  // first appearance
  for (size_t r = 0; r < runs.rows.size(); ++r) {
    if (runs.rows[r][size_t(test_col)].empty()) continue;  // no validation ran
    std::vector<std::string> key;
    for (const auto& c : key_cols) key.push_back(runs.rows[r][size_t(runs.col(c))]);
    auto [it, fresh] = groups.try_emplace(key);
    if (fresh) order.push_back(key);
    it->second.ppl.push_back(runs.number(r, "test_ppl"));
    it->second.ms.push_back(runs.number(r, "ms_per_update"));
    it->second.updates.push_back(runs.number(r, "updates"));
    it->second.epochs.push_back(runs.number(r, "epochs"));
  }
  const auto mean = [](const std::vector<double>& v) {
    double m = 0;
    for (double x : v) m += x / double(v.size());
    return m;
  };
  report::CsvTable t;
  t.path = runs.path;
  t.columns = {"label", "attention", "layers",    "d_model", "seq_len", "paper", "source",
               "ours",  "n",         "ms/update", "data",    "updates", "epochs"};
  for (const auto& key : order) {
    const Group& g = groups[key];
    // Roy et al.'s Wikitext-103 result (configs/papers/roy2021/numbers.yaml).
    const auto [paper, source] =
        report::paper_cells("roy2021", "wikitext103", report::attention_kinds(key[1]), "");
    t.rows.push_back(
        {key[0], key[1], key[2], key[3], key[4], paper, source, report::mean_sd(g.ppl, 1),
         std::to_string(g.ppl.size()), fmt::format("{:.0f}", mean(g.ms)), key[5],
         fmt::format("{:.0f}", mean(g.updates)), fmt::format("{:.3g}", mean(g.epochs))});
  }
  return t;
}

}  // namespace seqbench::apps
