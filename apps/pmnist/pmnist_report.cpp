#include "apps/pmnist/pmnist_report.hpp"

#include <fmt/format.h>

#include <map>

#include "core/check.hpp"
#include "report/markdown.hpp"

namespace seqbench::apps {

const std::vector<PmnistPaperNumber>& pmnist_paper_numbers() {
  // docs/papers.md section 2 (Nguyen et al. 2020). The whole accuracy line is marked (?)
  // there except MNIST MomentumLSTM-256, confirmed from the authors' sweep data.
  static const std::vector<PmnistPaperNumber> numbers{
      {"smnist", "lstm", 256, "≈98.9 (?)", "Nguyen et al. 2020"},
      {"smnist", "momentum_lstm", 256, "99.08", "Nguyen et al. 2020"},
      {"smnist", "adam_lstm", 256, "99.09 (?)", "Nguyen et al. 2020"},
      {"smnist", "rmsprop_lstm", 256, "99.15 (?)", "Nguyen et al. 2020"},
      {"smnist", "sr_lstm", 256, "99.01 (?)", "Nguyen et al. 2020"},
      {"smnist", "lstm", 128, "≈98.7 (?)", "Nguyen et al. 2020"},
      {"smnist", "momentum_lstm", 128, "99.04 (?)", "Nguyen et al. 2020"},
      {"pmnist", "lstm", 256, "≈92.3 (?)", "Nguyen et al. 2020"},
      {"pmnist", "momentum_lstm", 256, "94.72 (?)", "Nguyen et al. 2020"},
      {"pmnist", "adam_lstm", 256, "95.05 (?)", "Nguyen et al. 2020"},
      {"pmnist", "rmsprop_lstm", 256, "94.32 (?)", "Nguyen et al. 2020"},
      {"pmnist", "sr_lstm", 256, "93.82 (?)", "Nguyen et al. 2020"},
      {"pmnist", "lstm", 128, "≈92.0 (?)", "Nguyen et al. 2020"},
      {"pmnist", "momentum_lstm", 128, "93.40 (?)", "Nguyen et al. 2020"},
  };
  return numbers;
}

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
  t.columns = {"label", "task", "model", "hidden", "paper", "ours", "n", "data", "train", "epochs"};
  for (const auto& key : order) {
    const Group& g = groups[key];
    std::string paper = "—";
    for (const auto& p : pmnist_paper_numbers())
      if (key[1] == p.task && key[2] == p.model && key[3] == std::to_string(p.hidden))
        paper = p.value;
    double epochs = 0;
    for (double e : g.epochs) epochs += e / double(g.epochs.size());
    t.rows.push_back({key[0], key[1], key[2], key[3], paper, report::mean_sd(g.acc, 2),
                      std::to_string(g.acc.size()), key[4], key[5], fmt::format("{:.3g}", epochs)});
  }
  return t;
}

}  // namespace seqbench::apps
