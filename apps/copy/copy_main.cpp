// `seqbench copy`: the app's flow (lib/train/app.hpp) with its runs.csv identity columns
// and its two analyses beside training (copy_analyses.hpp).
#include <fmt/format.h>

#include "apps/copy/copy_analyses.hpp"
#include "apps/copy/copy_experiment.hpp"
#include "train/app.hpp"

namespace seqbench::apps {

int copy_main(int argc, char** argv) {
  train::AppSpec<CopyConfig, CopyExperiment> spec{
      "copy",
      "copy and adding tasks: recurrent models on synthetic long-memory problems "
      "(docs/experiments/copy.md)",
      kCopyDemoYaml, copy_memory};
  spec.identity = [](const CopyConfig& c, CopyExperiment& e, const std::string& label) {
    train::RunIdentity id =
        train::recurrent_columns(label, c.task.name, c.task.T, c.model, e.params().size(), c);
    id.push_back({"data", "synthetic"});
    return id;
  };
  // Transfer: evaluate a trained run's checkpoint on longer (or shorter) sequences.
  std::vector<int64_t> eval_T, probe_T;
  spec.add_options = [&](CLI::App& app) {
    app.add_option("--eval-T", eval_T,
                   "transfer: evaluate the checkpoint of --run-id at these T (no training); "
                   "writes transfer.csv in the run directory")
        ->check(config::whole_number(1, 10000000));
    app.add_option("--probe-memory", probe_T,
                   "memory vs T: one training step of the configured model at each T (no "
                   "training run); appends to <output.dir>/copy/memory.csv")
        ->check(config::whole_number(1, 10000000));
  };
  spec.action = [&](const CopyConfig& c, const std::string& label, const train::MemoryLimit& limit) {
    return probe_T.empty() ? -1 : copy_memory_probe(c, probe_T, label, limit);
  };
  spec.on_saved_run = [&] { return !eval_T.empty(); };
  spec.alternative = [&](const CopyConfig& c, CopyExperiment& e, const train::Checkpoint& ck) {
    return copy_transfer(c, e, ck, eval_T);
  };
  return train::run_app(argc, argv, spec);
}

}  // namespace seqbench::apps
