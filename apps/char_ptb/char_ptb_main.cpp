// `seqbench char_ptb`: the app's flow (lib/train/app.hpp) with its runs.csv identity
// columns, and the input-gradient probe of a trained run (char_ptb_input_grad.hpp).
#include <fmt/format.h>

#include "apps/char_ptb/char_ptb_experiment.hpp"
#include "apps/char_ptb/char_ptb_input_grad.hpp"
#include "train/app.hpp"

namespace seqbench::apps {

int char_ptb_main(int argc, char** argv) {
  train::AppSpec<CharPtbConfig, CharPtbExperiment> spec{
      "char_ptb",
      "character-level language modelling, bits per character (docs/experiments/char_ptb.md)",
      kCharPtbDemoYaml, char_ptb_memory};
  spec.identity = [](const CharPtbConfig& c, CharPtbExperiment& e, const std::string& label) {
    const auto& o = e.outcome();
    const auto num = [](double v) { return fmt::format("{:.6g}", v); };
    train::RunIdentity id =
        train::recurrent_columns(label, c.data.corpus.level == "char" ? "char_lm" : "word_lm",
                                 c.lm.seq_len, c.model, e.params().size(), c);
    train::append(id, train::data_columns(c.data.name, c.data.stand_in, e.corpus().digest));
    train::append(id, {
        {"embedding", std::to_string(c.lm.embedding)},
        {"carry_state", c.lm.carry_state ? "true" : "false"},
        {"vocab", std::to_string(e.corpus().vocab.size())},
        {"train_tokens", std::to_string(e.train_stream().tokens_used())},
        {"valid_tokens", std::to_string(e.valid_stream().tokens_used())},
        {"test_tokens", std::to_string(e.test_stream().tokens_used())},
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
    return write_input_gradients(c, e, ck, probe_L, probe_windows);
  };
  return train::run_app(argc, argv, spec);
}

}  // namespace seqbench::apps
