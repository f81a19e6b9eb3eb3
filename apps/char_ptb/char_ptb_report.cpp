#include "apps/char_ptb/char_ptb_report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "core/check.hpp"
#include "report/markdown.hpp"

namespace seqbench::apps {

const std::vector<CharPtbPaperNumber>& char_ptb_paper_numbers() {
  // docs/papers.md section 3, Table 1 (marked (?) there): char-PTB BPC and Wikitext-2
  // perplexity. Kerg et al.'s and Nguyen et al.'s char-PTB numbers are not in docs/papers.md.
  static const std::vector<CharPtbPaperNumber> numbers{
      {"char_lm", "lstm", "1.4 (?)", "Miller & Hardt 2019"},
      {"char_lm", "stable_lstm", "1.9 (?)", "Miller & Hardt 2019"},
      {"word_lm", "rnn", "146.7 (?)", "Miller & Hardt 2019, Wikitext-2"},
      {"word_lm", "stable_rnn", "143.5 (?)", "Miller & Hardt 2019, Wikitext-2"},
      {"word_lm", "lstm", "95.7 (?)", "Miller & Hardt 2019, Wikitext-2"},
      {"word_lm", "stable_lstm", "113.2 (?)", "Miller & Hardt 2019, Wikitext-2"},
  };
  return numbers;
}

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
    std::string paper = "—", source = "";
    for (const auto& p : char_ptb_paper_numbers())
      if (key[1] == p.task && key[2] == p.model) paper = p.value, source = p.source;
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
