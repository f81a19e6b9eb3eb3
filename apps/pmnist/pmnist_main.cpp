#include <fmt/format.h>

#include "apps/pmnist/pmnist_experiment.hpp"
#include "train/app.hpp"

namespace seqbench::apps {

int pmnist_main(int argc, char** argv) {
  train::AppSpec<PmnistConfig, PmnistExperiment> spec{
      "pmnist",
      "sequential and permuted MNIST: one pixel per step, classify the digit at the end "
      "(docs/experiments/pmnist.md)",
      kPmnistDemoYaml, pmnist_memory};
  spec.identity = [](const PmnistConfig& c, PmnistExperiment& e, const std::string& label) {
    const auto& o = e.outcome();
    const auto num = [](double v) { return fmt::format("{:.6g}", v); };
    train::RunIdentity id = train::recurrent_columns(label, c.data.permute ? "pmnist" : "smnist",
                                                     e.steps_per_image(), c.model,
                                                     e.params().size(), c);
    train::append(id, train::data_columns(c.data.name, c.data.stand_in, e.mnist().digest));
    train::append(id, {
        {"permute_seed", c.data.permute ? std::to_string(c.data.permute_seed) : ""},
        {"train_examples", std::to_string(e.n_train())},
        {"valid_examples", std::to_string(e.n_valid())},
        {"test_examples", std::to_string(e.n_test())},
        {"updates_per_epoch", std::to_string(e.updates_per_epoch())},
        {"epochs", num(e.epochs_done())},
        {"best_epoch", o.has_best ? num(double(o.best_update) / double(e.updates_per_epoch())) : ""},
        {"valid_acc", o.has_best ? num(o.best_valid_acc) : ""},
        {"test_acc", o.has_best ? num(o.test_acc) : ""},
        {"test_loss", o.has_best ? num(o.test_loss) : ""},
        {"best_test_acc", o.best_test_acc >= 0 ? num(o.best_test_acc) : ""},
    });
    return id;
  };
  return train::run_app(argc, argv, spec);
}

}  // namespace seqbench::apps
