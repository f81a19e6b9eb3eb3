#include "apps/char_ptb/char_ptb_report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "core/check.hpp"

namespace seqbench::apps {

namespace {

double number(const report::CsvTable& runs, size_t row, const std::string& col) {
  const std::string& cell = runs.rows[row][size_t(runs.col(col))];
  char* end = nullptr;
  const double v = std::strtod(cell.c_str(), &end);
  SB_CHECK(!cell.empty() && end && *end == '\0', "{}: row {}: column '{}' is not a number: '{}'",
           runs.path, row + 2, col, cell);
  return v;
}

std::string mean_sd(const std::vector<double>& v, int decimals) {
  double mean = 0;
  for (double x : v) mean += x / double(v.size());
  if (v.size() < 2) return fmt::format("{:.{}f}", mean, decimals);
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return fmt::format("{:.{}f} ± {:.{}f}", mean, decimals, std::sqrt(ss / double(v.size() - 1)),
                     decimals);
}

}  // namespace

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
    it->second.bpc.push_back(number(runs, r, "test_bpc"));
    it->second.epochs.push_back(number(runs, r, "epochs"));
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
    t.rows.push_back({key[0], key[1], key[2], paper, source, mean_sd(g.bpc, 3),
                      std::to_string(g.bpc.size()), key[3], key[4], fmt::format("{:.3g}", epochs)});
  }
  return t;
}

}  // namespace seqbench::apps
