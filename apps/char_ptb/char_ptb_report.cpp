#include "apps/char_ptb/char_ptb_report.hpp"

#include <fmt/format.h>

#include <map>

#include "core/check.hpp"
#include "report/markdown.hpp"

namespace seqbench::apps {

const std::vector<CharPtbPaperNumber>& char_ptb_paper_numbers() {
  // PAPERS.md section 3, Table 1 (marked (?) there). Kerg et al.'s and Nguyen et al.'s
  // char-PTB numbers are not in PAPERS.md.
  static const std::vector<CharPtbPaperNumber> numbers{
      {"lstm", "1.4 (?)", "Miller & Hardt 2019"},
      {"stable_lstm", "1.9 (?)", "Miller & Hardt 2019"},
  };
  return numbers;
}

report::CsvTable char_ptb_table(const report::CsvTable& runs) {
  const std::vector<std::string> key_cols{"label", "model", "hidden", "data", "train_tokens"};
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
    it->second.bpc.push_back(runs.number(r, "test_bpc"));
    it->second.epochs.push_back(runs.number(r, "epochs"));
  }
  report::CsvTable t;
  t.path = runs.path;
  t.columns = {"label", "model",  "hidden", "paper",        "source",
               "ours",  "n",      "data",   "train_tokens", "epochs"};
  for (const auto& key : order) {
    const Group& g = groups[key];
    std::string paper = "—", source = "";
    for (const auto& p : char_ptb_paper_numbers())
      if (key[1] == p.model) paper = p.value, source = p.source;
    double epochs = 0;
    for (double e : g.epochs) epochs += e / double(g.epochs.size());
    t.rows.push_back({key[0], key[1], key[2], paper, source, report::mean_sd(g.bpc, 3),
                      std::to_string(g.bpc.size()), key[3], key[4], fmt::format("{:.3g}", epochs)});
  }
  return t;
}

}  // namespace seqbench::apps
