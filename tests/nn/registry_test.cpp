// The registries (cells, agent cores, attention kinds, environments) are the one place
// that lists each family: config values, messages and lookups all come from them.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "config/yaml_config.hpp"
#include "core/check.hpp"
#include "core/param_store.hpp"
#include "nn/attention/attention.hpp"
#include "nn/registry.hpp"
#include "nn/seq_model.hpp"
#include "rl/minigrid/env.hpp"
#include "rl/policy.hpp"
#include "test_util.hpp"

using namespace seqbench;
namespace fs = std::filesystem;

namespace {

// The choices the config layer accepts for a string key, read back from the error it
// gives for a value that is not one.
std::string config_error(const std::string& assignment) {
  nn::ModelConfig m;
  return testutil::message_of([&] { config::apply_override(m, assignment); });
}

}  // namespace

TEST(CellRegistry, NamesAreUniqueAndEveryUseIsBacked) {
  std::set<std::string> seen;
  for (const auto& e : nn::cell_registry()) {
    EXPECT_TRUE(seen.insert(e.name).second) << e.name << " twice";
    EXPECT_FALSE(std::string(e.doc).empty()) << e.name;
    ASSERT_FALSE(e.backends.empty()) << e.name;
    EXPECT_EQ(e.backends.front(), "ours") << e.name;
    EXPECT_NE(e.build, nullptr) << e.name;
    // A cell the agent can use says how the agent runs it, and only those do.
    EXPECT_EQ((e.uses & nn::kAgent) != 0, e.agent != nn::AgentForm::kNone) << e.name;
  }
}

TEST(CellRegistry, EverySequenceCellBuildsRunsAndHasAPreset) {
  std::string presets;
  for (const auto& f : fs::recursive_directory_iterator(std::string(SEQBENCH_SOURCE_DIR) + "/configs"))
    if (f.path().extension() == ".yaml") {
      std::ifstream in(f.path());
      std::stringstream ss;
      ss << in.rdbuf();
      presets += ss.str();
    }
  for (const auto& name : nn::cell_names(nn::kSequenceModel)) {
    nn::ModelConfig cfg;
    cfg.cell = name;
    cfg.hidden = 4;
    core::ParamStore ps;
    auto layer = nn::make_recurrent(cfg, ps, "rnn", 3, 0);
    ps.finalize(0);
    core::Rng rng(1);
    layer->init(rng);
    core::Tensor x(core::Shape{5, 2, 3}), h(core::Shape{5, 2, 4});
    for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] = float(i % 7) * 0.1f - 0.3f;
    layer->forward(x.view(), core::ConstView(), h.view());
    for (int64_t i = 0; i < h.numel(); ++i) ASSERT_TRUE(std::isfinite(h.data()[i])) << name;
    // A sequence mixer's preset may use it as a cell or as the Transformer's mixer.
    const std::regex used("(cell|attention): *" + name + "\\b");
    EXPECT_TRUE(std::regex_search(presets, used)) << "no preset in configs/ uses cell " << name;
  }
}

TEST(CellRegistry, ConfigValuesAndMessagesComeFromTheRegistry) {
  const std::string msg = config_error("cell=lsmt");
  EXPECT_NE(msg.find("did you mean 'lstm'"), std::string::npos) << msg;
  for (const auto& name : nn::cell_names(nn::kSequenceModel))
    EXPECT_NE(msg.find(name), std::string::npos) << name << " missing from: " << msg;
  const std::string lookup = testutil::message_of([] { nn::find_cell("rel_lstmm"); });
  EXPECT_NE(lookup.find("model.cell: unknown cell 'rel_lstmm' (did you mean 'rel_lstm'?"),
            std::string::npos)
      << lookup;
  // A key only some cells read names exactly those cells.
  nn::ModelConfig cfg;
  cfg.cell = "lstm";
  cfg.nonlinearity = "relu";
  core::ParamStore ps;
  const std::string refused = testutil::message_of([&] { nn::make_recurrent(cfg, ps, "r", 2, 0); });
  const auto readers = nn::cells_reading(nn::kNonlinearity);
  ASSERT_GE(readers.size(), 2u);
  for (const auto& r : readers) EXPECT_NE(refused.find(r), std::string::npos) << refused;
  EXPECT_EQ(refused.find("momentum_lstm"), std::string::npos) << refused;
}

TEST(AgentCores, AreNoneAndTheCellsMarkedForTheAgent) {
  const auto& cores = rl::agent_core_names();
  ASSERT_FALSE(cores.empty());
  EXPECT_EQ(cores.front(), rl::kNoCore);
  const auto agent_cells = nn::cell_names(nn::kAgent);
  EXPECT_EQ(std::vector<std::string>(cores.begin() + 1, cores.end()), agent_cells);
  rl::AgentConfig a;
  a.core = "sr_lstm";  // a cell, but not one the agent runs
  core::ParamStoreT<float> ps;
  const std::string msg =
      testutil::message_of([&] { rl::make_core<float>(a, ps, "core", 8, 4); });
  EXPECT_NE(msg.find("agent.core: unknown core 'sr_lstm'"), std::string::npos) << msg;
}

TEST(AttentionRegistry, KindsParseAndSuggest) {
  for (const auto& e : nn::attention_registry())
    EXPECT_EQ(nn::parse_attention_kind(e.name), e.kind) << e.name;
  const std::string msg = testutil::message_of([] { nn::parse_attention_kind("routnig"); });
  EXPECT_NE(msg.find("did you mean 'routing'"), std::string::npos) << msg;
  for (const auto& name : nn::attention_kind_names())
    EXPECT_NE(msg.find(name), std::string::npos) << msg;
}

TEST(EnvRegistry, EveryNameMakesItsEnvironmentAndTheTableListsIt) {
  const std::string table = rl::envs_markdown();
  for (const auto& name : rl::env_names()) {
    EXPECT_EQ(rl::make_env(name, 1)->name(), name);
    EXPECT_NE(table.find("`" + name + "`"), std::string::npos) << name;
  }
}
