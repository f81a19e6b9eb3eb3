// `seqbench wikitext103`: the app's flow (lib/train/app.hpp) with its run ids and
// runs.csv identity columns.

#include "apps/wikitext103/wikitext103_experiment.hpp"
#include "train/app.hpp"

namespace seqbench::apps {

int wikitext103_main(int argc, char** argv) {
  train::AppSpec<Wikitext103Config, Wikitext103Experiment> spec{
      "wikitext103",
      "word-level language modelling with Transformers of full, local, routing, random, SMYRF "
      "and LSH heads, perplexity (docs/experiments/wikitext103.md)",
      kWikitext103DemoYaml, wikitext103_memory};
  spec.label = [](const Wikitext103Config& c) { return lm_attention(c.model); };
  spec.run_id_label = [](const Wikitext103Config& c) { return lm_run_label(c.model); };
  spec.identity = [](const Wikitext103Config& c, Wikitext103Experiment& e,
                     const std::string& label) {
    return lm_run_identity(c, e, label, "word_lm", {},
                           {
                               {"train_tokens", std::to_string(e.train_stream().tokens_used())},
                               {"valid_tokens", std::to_string(e.valid_stream().tokens_used())},
                               {"test_tokens", std::to_string(e.test_stream().tokens_used())},
                           });
  };
  return train::run_app(argc, argv, spec);
}

}  // namespace seqbench::apps
