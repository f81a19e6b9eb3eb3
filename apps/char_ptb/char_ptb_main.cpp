#include <fmt/format.h>

#include "apps/char_ptb/char_ptb_experiment.hpp"
#include "train/app.hpp"

namespace seqbench::apps {

int char_ptb_main(int argc, char** argv) {
  train::AppSpec<CharPtbConfig, CharPtbExperiment> spec;
  spec.name = "char_ptb";
  spec.description =
      "character-level language modelling, bits per character (docs/experiments/char_ptb.md)";
  spec.demo_yaml = kCharPtbDemoYaml;
  spec.identity = [](const CharPtbConfig& c, CharPtbExperiment& e) {
    const std::string label = c.output.label.empty() ? c.model.cell : c.output.label;
    const auto& o = e.outcome();
    const auto num = [](double v) { return fmt::format("{:.6g}", v); };
    return train::RunIdentity{
        {"label", label},
        {"task", c.data.level == "char" ? "char_lm" : "word_lm"},
        {"T", std::to_string(c.lm.seq_len)},
        {"model", c.model.cell},
        {"backend", c.model.backend},
        {"hidden", std::to_string(c.model.hidden)},
        {"params", std::to_string(e.params().size())},
        {"batch", std::to_string(c.train.batch)},
        {"optimizer", c.optim.name},
        {"lr", fmt::format("{}", c.optim.lr)},
        {"bptt", std::to_string(c.train.bptt)},
        {"seed", std::to_string(c.train.seed)},
        {"threads", std::to_string(core::num_threads())},
        {"gemm", c.train.gemm},
        {"data", fmt::format("{} ({})", c.data.name, c.data.stand_in ? "stand-in" : "real")},
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
    };
  };
  return train::run_app(argc, argv, spec);
}

}  // namespace seqbench::apps
