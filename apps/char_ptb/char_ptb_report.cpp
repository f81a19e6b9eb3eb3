#include "apps/char_ptb/char_ptb_report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "core/check.hpp"
#include "report/markdown.hpp"
#include "report/paper_spec.hpp"

namespace seqbench::apps {

report::CsvTable char_ptb_table(const report::CsvTable& runs) {
  const std::vector<std::string> key_cols{"label",  "task", "model",
                                          "hidden", "data", "train_tokens"};
  for (const auto& c : key_cols) (void)runs.col(c);
  const int test_col = runs.col("test_bpc");
  (void)runs.col("epochs");
  struct Group {
    std::vector<double> bpc, epochs;
  };
  std::map<std::vector<std::string>, Group> groups;
  std::vector<std::vector<std::string>> order;
  for (size_t r = 0; r < runs.rows.size(); ++r) {
    if (runs.rows[r][size_t(test_col)].empty()) continue;
    std::vector<std::string> key;
    for (const auto& c : key_cols) key.push_back(runs.rows[r][size_t(runs.col(c))]);
    auto [it, fresh] = groups.try_emplace(key);
    if (fresh) order.push_back(key);
    // Word level: bits per word -> perplexity.
    const double bits = runs.number(r, "test_bpc");
    it->second.bpc.push_back(key[1] == "word_lm" ? std::exp2(bits) : bits);
    it->second.epochs.push_back(runs.number(r, "epochs"));
  }
  report::CsvTable t;
  t.path = runs.path;
  t.columns = {"label", "task", "model", "hidden", "metric",       "paper",
               "source", "ours", "n",     "data",   "train_tokens", "epochs"};
  for (const auto& key : order) {
    const Group& g = groups[key];
    // Miller & Hardt's Table 1 (configs/papers/miller2019/numbers.yaml).
    const auto [paper, source] = report::paper_cells(
        "miller2019", key[1] == "word_lm" ? "table1_word" : "table1_char", key[2], "");
    double epochs = 0;
    for (double e : g.epochs) epochs += e / double(g.epochs.size());
    const bool word = key[1] == "word_lm";
    t.rows.push_back({key[0], key[1], key[2], key[3], word ? "ppl" : "BPC", paper, source,
                      report::mean_sd(g.bpc, word ? 1 : 3), std::to_string(g.bpc.size()), key[4],
                      key[5], fmt::format("{:.3g}", epochs)});
  }
  return t;
}

}  // namespace seqbench::apps
