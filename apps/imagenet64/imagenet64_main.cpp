// `seqbench imagenet64`: the app's flow (lib/train/app.hpp) with its run ids and
// runs.csv identity columns.
#include <fmt/format.h>

#include "apps/imagenet64/imagenet64_experiment.hpp"
#include "train/app.hpp"

namespace seqbench::apps {

int imagenet64_main(int argc, char** argv) {
  train::AppSpec<Imagenet64Config, Imagenet64Experiment> spec{
      "imagenet64",
      "pixel-level autoregressive image modelling with Transformers of full, local, routing, "
      "random, SMYRF and LSH heads, bits/dim (docs/experiments/imagenet64.md)",
      kImagenet64DemoYaml, imagenet64_memory};
  spec.label = [](const Imagenet64Config& c) { return lm_attention(c.model); };
  spec.run_id_label = [](const Imagenet64Config& c) { return lm_run_label(c.model); };
  spec.identity = [](const Imagenet64Config& c, Imagenet64Experiment& e,
                     const std::string& label) {
    const auto& tr = e.train_set();
    return lm_run_identity(
        c, e, label, "image_lm",
        {
            {"image_size", fmt::format("{}x{}x{}", tr.side, tr.side, tr.channels)},
            {"tokens_per_image", std::to_string(e.tokens_per_image())},
            {"token_order", tr.channels > 1 ? "raster, channels interleaved" : "raster"},
        },
        {
            {"train_images", std::to_string(tr.count)},
            {"valid_images", std::to_string(e.valid_set().count)},
            {"test_images", std::to_string(e.test_set().count)},
        });
  };
  return train::run_app(argc, argv, spec);
}

}  // namespace seqbench::apps
