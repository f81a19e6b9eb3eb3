// `seqbench recall`: the app's flow (lib/train/app.hpp) with its runs.csv identity columns
// (the model, its width and the state it carries: the axes of the recall figure) and the
// length-extrapolation evaluation: of a trained run (--eval-T), or at the end of training
// (the config key `extrapolate`).
#include <fmt/format.h>

#include "apps/recall/recall_experiment.hpp"
#include "core/fs.hpp"
#include "report/csv.hpp"
#include "report/markdown.hpp"
#include "train/app.hpp"

namespace seqbench::apps {

namespace {

// Evaluates the model at other sequence lengths and appends a row per length to
// <dir>/transfer.csv (step: the update the parameters come from); returns the table shown.
std::string write_transfer(const RecallConfig& c, RecallExperiment& e, const std::string& dir,
                           const std::string& step, const std::vector<int64_t>& lengths) {
  report::CsvWriter out(dir + "/transfer.csv",
                        {"step", "trained_T", "eval_T", "batches", "batch", "loss", "acc"},
                        report::CsvWriter::Mode::Append);
  std::vector<std::vector<std::string>> shown;
  using W = report::CsvWriter;
  for (const int64_t n : lengths) {
    const train::Metrics m = e.evaluate_at(n);
    const std::vector<std::string> row{step, W::cell(c.task.seq_len), W::cell(n),
                                       W::cell(c.train.eval_batches), W::cell(c.train.batch),
                                       W::cell(m[0].second), W::cell(m[1].second)};
    out.row(row);
    shown.push_back({row[1], row[2], fmt::format("{:.4f}", m[0].second),
                     fmt::format("{:.4f}", m[1].second)});
  }
  return report::markdown_table({"trained T", "eval T", "loss", "acc"}, shown);
}

// --eval-T: a trained run's checkpoint at other sequence lengths.
int recall_transfer(const RecallConfig& c, RecallExperiment& e, const train::Checkpoint& ck,
                    const std::vector<int64_t>& lengths) {
  train::load_parameters(e.params(), ck);
  e.load_state(ck);
  fmt::print("{}", write_transfer(c, e, c.output.dir + "/recall/" + c.output.run_id, ck.meta_at("step"),
                                  lengths));
  return 0;
}

}  // namespace

int recall_main(int argc, char** argv) {
  train::AppSpec<RecallConfig, RecallExperiment> spec{
      "recall",
      "associative recall: MQAR, selective copying, induction heads on attention, sequence "
      "mixers and recurrent cells (docs/experiments/recall.md)",
      kRecallDemoYaml, [](const RecallConfig& c) {
        check_rules(c);
        return recall_memory(c);
      }};
  spec.label = [](const RecallConfig& c) { return recall_model_name(c); };
  spec.run_id_label = [](const RecallConfig& c) {
    std::string id;
    for (char ch : recall_model_name(c))
      if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-') id += ch;
      else if (ch == ',' || ch == '=') id += '-';
    return id;
  };
  spec.identity = [](const RecallConfig& cfg, RecallExperiment& e, const std::string& label) {
    const RecallConfig c = resolved(cfg);
    const bool tf = c.family == "transformer";
    train::RunIdentity id{
        {"label", label},
        {"task", c.task.name},
        {"T", std::to_string(c.task.seq_len)},
        {"vocab", std::to_string(c.task.vocab)},
        {"pairs", std::to_string(e.task().pairs_column())},
        {"family", c.family},
        {"model", recall_model_name(c)},
        {"width", std::to_string(tf ? c.model.d_model : c.rnn.hidden)},
        {"layers", std::to_string(tf ? c.model.layers : 1)},
        {"state_bytes", fmt::format("{:.0f}", recall_state_bytes(c, e.task().length()))},
    };
    train::append(id, train::setup_columns(e.params().size(), c.train, c.optim));
    id.push_back({"data", "synthetic"});
    return id;
  };
  std::vector<int64_t> eval_T;
  spec.add_options = [&](CLI::App& app) {
    app.add_option("--eval-T", eval_T,
                   "length extrapolation: evaluate the checkpoint of --run-id at these sequence "
                   "lengths (no training); writes transfer.csv in the run directory")
        ->check(config::whole_number(4, 10000000));
  };
  spec.on_saved_run = [&] { return !eval_T.empty(); };
  // `extrapolate`: the same evaluation at the end of training, at multiples of the length.
  spec.on_finish = [](const RecallConfig& c, RecallExperiment& e, train::RunFiles& files, const std::string&,
                      const train::Summary& s) {
    // Not for a run that stops before its end (interrupted, diverged): its resume does it.
    if (c.extrapolate.empty() || (s.status != "finished" && s.status != "target_reached" && s.status != "early_stopped")) return std::string();
    std::vector<int64_t> lengths;
    for (const int64_t m : c.extrapolate) lengths.push_back(m * c.task.seq_len);
    const std::string table =
        write_transfer(c, e, files.dir(), std::to_string(s.updates), lengths);
    files.log("length extrapolation (transfer.csv):\n" + table);
    return "length extrapolation (transfer.csv):\n" + table;
  };
  spec.alternative = [&](const RecallConfig& c, RecallExperiment& e, const train::Checkpoint& ck) {
    return recall_transfer(c, e, ck, eval_T);
  };
  return train::run_app(argc, argv, spec);
}

}  // namespace seqbench::apps
