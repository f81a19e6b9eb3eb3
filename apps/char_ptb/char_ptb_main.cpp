#include <fmt/format.h>

#include "apps/char_ptb/char_ptb_experiment.hpp"
#include "report/csv.hpp"
#include "report/markdown.hpp"
#include "train/app.hpp"

namespace seqbench::apps {

int char_ptb_main(int argc, char** argv) {
  train::AppSpec<CharPtbConfig, CharPtbExperiment> spec;
  spec.name = "char_ptb";
  spec.description =
      "character-level language modelling, bits per character (docs/experiments/char_ptb.md)";
  spec.demo_yaml = kCharPtbDemoYaml;
  spec.memory = char_ptb_memory;
  spec.identity = [](const CharPtbConfig& c, CharPtbExperiment& e) {
    const std::string label = c.output.label.empty() ? c.model.cell : c.output.label;
    const auto& o = e.outcome();
    const auto num = [](double v) { return fmt::format("{:.6g}", v); };
    train::RunIdentity id{
        {"label", label},
        {"task", c.data.level == "char" ? "char_lm" : "word_lm"},
        {"T", std::to_string(c.lm.seq_len)},
        {"model", c.model.cell},
        {"backend", c.model.backend},
        {"hidden", std::to_string(c.model.hidden)},
    };
    train::append(id, train::setup_columns(e.params().size(), c.train, c.optim));
    train::append(id, train::data_columns(c.data.name, c.data.stand_in, e.corpus().digest));
    train::append(id, {
        {"embedding", std::to_string(c.lm.embedding)},
        {"carry_state", c.lm.carry_state ? "true" : "false"},
        {"vocab", std::to_string(e.corpus().vocab.size())},
        {"train_tokens", std::to_string(e.tokens(e.train_stream()))},
        {"valid_tokens", std::to_string(e.tokens(e.valid_stream()))},
        {"test_tokens", std::to_string(e.tokens(e.test_stream()))},
        {"updates_per_epoch", std::to_string(e.updates_per_epoch())},
        {"epochs", num(e.epochs_done())},
        {"best_epoch", o.has_best ? num(double(o.best_update) / double(e.updates_per_epoch())) : ""},
        {"valid_bpc", o.has_best ? num(o.best_valid_bpc) : ""},
        {"test_bpc", o.has_best ? num(o.test_bpc) : ""},
    });
    return id;
  };
  // Miller & Hardt's Figure 2 on a trained run: ||dl_{t+i}/dx_t|| against distance i.
  int64_t probe_L = 0, probe_windows = 20;
  spec.add_options = [&](CLI::App& app) {
    app.add_option("--probe-input-grad", probe_L,
                   "input gradients of the checkpoint of --run-id (no training): windows of L "
                   "validation tokens, loss at the last; writes inputgrad.csv in the run "
                   "directory (draw it with `seqbench report gradnorm --input`)")
        ->type_name("L")
        ->check(CLI::Range(int64_t(2), int64_t(100000)));
    app.add_option("--probe-windows", probe_windows,
                   "windows per validation column for --probe-input-grad (default 20)")
        ->check(CLI::Range(int64_t(1), int64_t(1000000)));
  };
  spec.on_saved_run = [&] { return probe_L > 0; };
  spec.alternative = [&](const CharPtbConfig& c, CharPtbExperiment& e,
                         const train::Checkpoint& ck) {
    train::load_parameters(e.params(), ck);
    const auto probe = e.input_grad_probe(probe_L, probe_windows);
    const std::string dir = c.output.dir + "/char_ptb/" + c.output.run_id;
    // The gradnorm.csv layout (t is the input's position in the window), so the same
    // report draws it.
    report::CsvWriter out(dir + "/inputgrad.csv", {"step", "t", "distance", "norm"},
                          report::CsvWriter::Mode::Truncate);
    using W = report::CsvWriter;
    std::vector<std::vector<std::string>> rows, shown;
    const int64_t L = probe_L;
    for (int64_t t = 0; t < L; ++t)
      rows.push_back({ck.meta_at("step"), W::cell(t), W::cell(L - 1 - t),
                      W::cell(probe.norm[size_t(L - 1 - t)])});
    out.rows(rows);
    for (const int64_t i : {0, 1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000})
      if (i < L - 1)
        shown.push_back({std::to_string(i), fmt::format("{:.3e}", probe.norm[size_t(i)])});
    shown.push_back({std::to_string(L - 1), fmt::format("{:.3e}", probe.norm.back())});
    fmt::print("{}", report::markdown_table({"distance i", "mean ||dl_{t+i}/dx_t||"}, shown));
    fmt::print("{} windows x {} columns -> {}/inputgrad.csv\n", probe.windows, probe.columns, dir);
    return 0;
  };
  return train::run_app(argc, argv, spec);
}

}  // namespace seqbench::apps
