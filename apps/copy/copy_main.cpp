#include <fmt/format.h>

#include "apps/copy/copy_experiment.hpp"
#include "train/app.hpp"

namespace seqbench::apps {

int copy_main(int argc, char** argv) {
  train::AppSpec<CopyConfig, CopyExperiment> spec;
  spec.name = "copy";
  spec.description =
      "copy and adding tasks: recurrent models on synthetic long-memory problems "
      "(docs/experiments/copy.md)";
  spec.demo_yaml = kCopyDemoYaml;
  spec.identity = [](const CopyConfig& c, CopyExperiment& e) {
    const std::string label = c.output.label.empty() ? c.model.cell : c.output.label;
    return train::RunIdentity{
        {"label", label},
        {"task", c.task.name},
        {"T", std::to_string(c.task.T)},
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
        {"data", "synthetic"},
    };
  };
  return train::run_app(argc, argv, spec);
}

}  // namespace seqbench::apps
