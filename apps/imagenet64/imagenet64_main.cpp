#include <fmt/format.h>

#include "apps/imagenet64/imagenet64_experiment.hpp"
#include "train/app.hpp"

namespace seqbench::apps {

int imagenet64_main(int argc, char** argv) {
  train::AppSpec<Imagenet64Config, Imagenet64Experiment> spec;
  spec.name = "imagenet64";
  spec.description =
      "pixel-level autoregressive image modelling with Transformers of full, local, routing, "
      "random, SMYRF and LSH heads, bits/dim (docs/experiments/imagenet64.md)";
  spec.demo_yaml = kImagenet64DemoYaml;
  // Run ids after the head groups, shell-friendly: "local:2,routing:2" -> "local2-routing2".
  spec.label = [](const Imagenet64Config& c) {
    std::string id;
    for (char ch : nn::head_groups_str(nn::parse_head_groups(c.model.attention, c.model.heads)))
      if (ch == ',') id += '-';
      else if (ch != ':') id += ch;
    return id;
  };
  spec.identity = [](const Imagenet64Config& c, Imagenet64Experiment& e) {
    const std::string attention = nn::head_groups_str(nn::parse_head_groups(c.model.attention,
                                                                            c.model.heads));
    const std::string label = c.output.label.empty() ? attention : c.output.label;
    const auto& o = e.outcome();
    const auto& tr = e.train_set();
    const auto num = [](double v) { return fmt::format("{:.6g}", v); };
    return train::RunIdentity{
        {"label", label},
        {"task", "image_lm"},
        {"T", std::to_string(e.tokens_per_image())},
        {"model", "transformer"},
        {"backend", "ours"},
        {"hidden", std::to_string(c.model.d_model)},
        {"params", std::to_string(e.params().size())},
        {"batch", std::to_string(c.train.batch)},
        {"optimizer", c.optim.name},
        {"lr", fmt::format("{}", c.optim.lr)},
        {"bptt", std::to_string(c.train.bptt)},
        {"seed", std::to_string(c.train.seed)},
        {"threads", std::to_string(core::num_threads())},
        {"gemm", c.train.gemm},
        {"data", fmt::format("{} ({})", c.data.name, c.data.stand_in ? "stand-in" : "real")},
        {"image_size", fmt::format("{}x{}x{}", tr.side, tr.side, tr.channels)},
        {"tokens_per_image", std::to_string(e.tokens_per_image())},
        {"token_order", tr.channels > 1 ? "raster, channels interleaved" : "raster"},
        {"attention", attention},
        {"layers_attention", e.model().describe()},
        {"layers", std::to_string(c.model.layers)},
        {"heads", std::to_string(c.model.heads)},
        {"window", std::to_string(c.model.window)},
        {"clusters", std::to_string(c.model.clusters)},
        {"rounds", std::to_string(c.model.rounds)},
        {"routing_layers", std::to_string(c.model.routing_layers)},
        {"vocab", std::to_string(Imagenet64Experiment::kVocab)},
        {"train_images", std::to_string(tr.count)},
        {"valid_images", std::to_string(e.valid_set().count)},
        {"test_images", std::to_string(e.test_set().count)},
        {"updates_per_epoch", std::to_string(e.updates_per_epoch())},
        {"epochs", num(e.epochs_done())},
        {"best_epoch",
         o.has_best ? num(double(o.best_update) / double(e.updates_per_epoch())) : ""},
        {"valid_bpd", o.has_best ? num(o.best_valid) : ""},
        {"test_bpd", o.has_best ? num(o.test) : ""},
    };
  };
  return train::run_app(argc, argv, spec);
}

}  // namespace seqbench::apps
