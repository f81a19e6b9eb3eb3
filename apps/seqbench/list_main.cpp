// `seqbench list [cells|cores|attention|envs|tasks]`: what the registries hold, as the Markdown
// tables of docs/models.md (tests/cli/list_cli_test.cpp checks the docs are current).
#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "core/text.hpp"
#include "data/tasks.hpp"
#include "nn/attention/attention.hpp"
#include "nn/registry.hpp"
#include "rl/minigrid/env.hpp"
#include "rl/policy.hpp"

namespace seqbench::apps {

namespace {

std::string cores_markdown() {
  std::string out = "| agent.core | how the agent runs it |\n|---|---|\n";
  for (const auto& name : rl::agent_core_names()) {
    if (name == rl::kNoCore) {
      out += fmt::format("| `{}` | no memory: the image embedding goes straight to the heads |\n",
                         name);
      continue;
    }
    const auto& cell = nn::find_cell(name, nn::kAgent, "agent.core");
    const char* how = cell.agent == nn::AgentForm::kWindowedAttentive
                          ? "over a replay window of ppo.recurrence steps (attention state)"
                          : "step by step, its state as the agent's memory";
    out += fmt::format("| `{}` | {} |\n", name, how);
  }
  return out;
}

struct Family {
  const char* name;
  const char* title;
  std::string (*table)();
};

const Family kFamilies[] = {
    {"cells", "Recurrent cells (`model.cell`)", nn::cells_markdown},
    {"cores", "MiniGrid agent cores (`agent.core`)", cores_markdown},
    {"attention", "Attention kinds (`attention.kind`, `model.attention`)", nn::attention_markdown},
    {"envs", "MiniGrid environments (`env.name`)", rl::envs_markdown},
    {"tasks", "Synthetic tasks (`task.name`)", data::tasks_markdown},
};

}  // namespace

int list_main(int argc, char** argv) {
  std::vector<std::string> names;
  for (const auto& f : kFamilies) names.push_back(f.name);
  if (argc > 2 || (argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h"))) {
    fmt::print(argc > 2 ? stderr : stdout, "usage: seqbench list [{}]\n", core::join(names, "|"));
    return argc > 2 ? 2 : 0;
  }
  const std::string only = argc == 2 ? argv[1] : "";
  bool found = only.empty();
  for (const auto& f : kFamilies) {
    if (!only.empty() && only != f.name) continue;
    found = true;
    fmt::print("## {}\n\n{}\n", f.title, f.table());
  }
  if (!found) {
    fmt::print(stderr, "seqbench list: error: {}\n", core::unknown_name("family", only, names));
    return 2;
  }
  return 0;
}

}  // namespace seqbench::apps
