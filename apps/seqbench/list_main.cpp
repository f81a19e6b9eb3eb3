// `seqbench list [--format md|json] [FAMILY]`: what the registries hold. Markdown (the
// default) is the tables of docs/models.md (tests/cli/list_cli_test.cpp checks the docs
// are current); JSON is for scripts (tools/bench/run.sh reads the cells, mixers and
// attention kinds to bench from it): one object holding a list per family, each entry
// {"name": ...} with the family's other fields (a doc line, a cell's uses and backends).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/text.hpp"
#include "data/tasks.hpp"
#include "nn/attention/attention.hpp"
#include "nn/registry.hpp"
#include "rl/minigrid/env.hpp"
#include "rl/policy.hpp"

namespace seqbench::apps {

namespace {

using Json = nlohmann::ordered_json;

std::string core_how(const std::string& name) {
  if (name == rl::kNoCore) return "no memory: the image embedding goes straight to the heads";
  const auto& cell = nn::find_cell(name, nn::kAgent, "agent.core");
  return cell.agent == nn::AgentForm::kWindowedAttentive
             ? "over a replay window of ppo.recurrence steps (attention state)"
             : "step by step, its state as the agent's memory";
}

std::string cores_markdown() {
  std::string out = "| agent.core | how the agent runs it |\n|---|---|\n";
  for (const auto& name : rl::agent_core_names())
    out += fmt::format("| `{}` | {} |\n", name, core_how(name));
  return out;
}

Json cells_json() {
  Json out = Json::array();
  for (const auto& c : nn::cell_registry()) {
    out.push_back({{"name", c.name},
                   {"doc", c.doc},
                   {"uses", nn::use_names(c.uses)},
                   {"backends", c.backends},
                   {"mixer", c.mixer != nullptr}});
  }
  return out;
}

Json mixers_json() {
  Json out = Json::array();
  for (const auto& name : nn::mixer_names()) out.push_back({{"name", name}, {"doc", nn::find_mixer(name)->doc}});
  return out;
}

Json cores_json() {
  Json out = Json::array();
  for (const auto& name : rl::agent_core_names()) out.push_back({{"name", name}, {"doc", core_how(name)}});
  return out;
}

Json attention_json() {
  Json out = Json::array();
  for (const auto& a : nn::attention_registry())
    out.push_back({{"name", a.name}, {"doc", a.doc}, {"content", a.content}});
  return out;
}

Json envs_json() {
  Json out = Json::array();
  for (const auto& name : rl::env_names()) out.push_back({{"name", name}});
  return out;
}

Json tasks_json() {
  Json out = Json::array();
  for (const auto& t : data::task_registry())
    out.push_back({{"name", t.name},
                   {"doc", t.doc},
                   {"experiment", t.family == data::TaskFamily::kCopy ? "copy" : "recall"},
                   {"keys", t.keys},
                   {"metric", data::metric_name(t.metric)}});
  return out;
}

struct Family {
  const char* name;
  const char* title;
  std::string (*markdown)();  // null: JSON only (the mixers are rows of the cells' table)
  Json (*json)();
};

const Family kFamilies[] = {
    {"cells", "Recurrent cells (`model.cell`)", nn::cells_markdown, cells_json},
    {"cores", "MiniGrid agent cores (`agent.core`)", cores_markdown, cores_json},
    {"attention", "Attention kinds (`attention.kind`, `model.attention`)", nn::attention_markdown,
     attention_json},
    {"envs", "MiniGrid environments (`env.name`)", rl::envs_markdown, envs_json},
    {"tasks", "Synthetic tasks (`task.name`)", data::tasks_markdown, tasks_json},
    {"mixers", "Sequence mixers (`model.cell`, `model.attention`)", nullptr, mixers_json},
};

int fail(const std::string& msg) {
  fmt::print(stderr, "seqbench list: error: {}\n", msg);
  return 2;
}

}  // namespace

int list_main(int argc, char** argv) {
  std::vector<std::string> names;
  for (const auto& f : kFamilies) names.push_back(f.name);
  const std::string usage =
      fmt::format("usage: seqbench list [--format md|json] [{}]\n", core::join(names, "|"));
  std::string format = "md", only;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      fmt::print("{}", usage);
      return 0;
    }
    if (arg == "--format" && i + 1 < argc) {
      format = argv[++i];
    } else if (arg.rfind("--format=", 0) == 0) {
      format = arg.substr(9);
    } else if (arg.empty() || arg[0] == '-' || !only.empty()) {
      fmt::print(stderr, "{}", usage);
      return 2;
    } else {
      only = arg;
    }
  }
  if (format != "md" && format != "json")
    return fail(fmt::format("--format: '{}' is not md or json", format));
  if (!only.empty() && std::find(names.begin(), names.end(), only) == names.end())
    return fail(core::unknown_name("family", only, names));

  if (format == "json") {
    Json out = Json::object();
    for (const auto& f : kFamilies)
      if (only.empty() || only == f.name) out[f.name] = f.json();
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  for (const auto& f : kFamilies) {
    if (!only.empty() && only != f.name) continue;
    if (!f.markdown) {
      if (only.empty()) continue;  // the default output is docs/models.md's tables
      return fail(fmt::format("{} has no table of its own: they are rows of `seqbench list "
                              "cells` (hint: seqbench list --format json {})",
                              f.name, f.name));
    }
    fmt::print("## {}\n\n{}\n", f.title, f.markdown());
  }
  return 0;
}

}  // namespace seqbench::apps
