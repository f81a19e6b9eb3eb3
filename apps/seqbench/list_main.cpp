// `seqbench list [--format md|json] [FAMILY]`: what the registries hold, and `seqbench
// list presets [EXPERIMENT]`: the preset files under configs/, each with the purpose and
// time its leading comment states. Markdown (the
// default) is the tables of docs/models.md (tests/cli/list_cli_test.cpp checks the docs
// are current); JSON is for scripts (tools/bench/run.sh reads the cells, mixers and
// attention kinds to bench from it): one object holding a list per family, each entry
// {"name": ...} with the family's other fields (a doc line, a cell's uses and backends).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "apps/experiments.hpp"
#include "apps/seqbench/sweep_backend.hpp"
#include "sweep/estimate.hpp"
#include "sweep/sweep.hpp"
#include "core/check.hpp"
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

// A preset file: configs/<experiment>/<name>.yaml.
struct Preset {
  std::string experiment, name, path, purpose, time;
  std::string measured;  // --estimate: the time one run takes here, from finished runs
};

// The comment lines at the top of a YAML file, joined with spaces ("# " removed).
std::string leading_comment(const std::string& path) {
  std::ifstream in(path);
  std::string line, out;
  while (std::getline(in, line)) {
    const std::string t = core::trim(line);
    if (t.empty() && out.empty()) continue;
    if (t.empty() || t[0] != '#') break;
    out += (out.empty() ? "" : " ") + core::trim(t.substr(1));
  }
  return out;
}

// The comment's first sentence: up to the first ". " outside parentheses (so "(Kerg et al.
// 2020)" stays whole).
std::string first_sentence(const std::string& text) {
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    depth += text[i] == '(' ? 1 : text[i] == ')' ? -1 : 0;
    if (text[i] == '.' && depth <= 0 && (i + 1 == text.size() || text[i + 1] == ' '))
      return text.substr(0, i + 1);
  }
  return text;
}

// The clause of the comment that states a duration ("about a minute on 2 cores", "Takes
// hours on 2 cores", "minutes here"): the first run of text between ". " ; : , ( ) with a
// number, an article or "takes", "in", "about" before seconds, minutes, hours or days (so
// "Second sentence" is none), or such a unit before "here"; "" when there is none.
std::string stated_time(const std::string& text) {
  static const std::regex kTime(
      R"((?:(?!\.(\s|$))[^;:,()])*(\b(\d+(\.\d+)?|a|an|few|several|takes?|in|about)\s+(seconds?|minutes?|hours?|days?)\b|\b(seconds?|minutes?|hours?|days?) here\b)(?:(?!\.(\s|$))[^;:,()])*)",
      std::regex::icase);
  std::smatch m;
  if (!std::regex_search(text, m, kTime)) return "";
  return core::trim(m.str());
}

// At most about `width` characters, cut at a space ("..." marks the cut).
std::string shortened(const std::string& text, size_t width) {
  if (text.size() <= width) return text;
  const size_t cut = text.rfind(' ', width);
  return text.substr(0, cut == std::string::npos || cut < width / 2 ? width : cut) + " ...";
}

std::vector<Preset> find_presets(const std::string& root, const std::string& only) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(root))
    throw core::UsageError(fmt::format(
        "no presets at '{}' (hint: run from the seqbench checkout, or give --configs DIR)", root));
  std::vector<std::string> names;
  for (const auto& e : experiments()) names.push_back(e.name);
  if (!only.empty() && !find_experiment(only))
    throw core::UsageError(core::unknown_name("experiment", only, names));
  std::vector<Preset> out;
  for (const auto& e : experiments()) {
    if (!only.empty() && only != e.name) continue;
    const fs::path dir = fs::path(root) / e.name;
    if (!fs::is_directory(dir)) continue;
    std::vector<fs::path> files;
    for (const auto& f : fs::directory_iterator(dir))
      if (f.is_regular_file() && f.path().extension() == ".yaml") files.push_back(f.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      const std::string comment = leading_comment(f.string());
      out.push_back({e.name, f.stem().string(), f.string(), shortened(first_sentence(comment), 110),
                     shortened(stated_time(comment), 80), ""});
    }
  }
  return out;
}

// --estimate: what one run of each preset takes at one thread, from the finished runs of
// this build under `search` (the estimate of `seqbench sweep --dry-run`, docs/sweeps.md).
void add_estimates(std::vector<Preset>& presets, const std::vector<std::string>& search) {
  std::map<std::string, std::vector<size_t>> by_experiment;
  for (size_t i = 0; i < presets.size(); ++i) by_experiment[presets[i].experiment].push_back(i);
  for (const auto& [experiment, members] : by_experiment) {
    sweep::Spec spec;
    spec.path = "list presets";
    spec.name = "presets";
    spec.experiment = experiment;
    spec.out = "results/.list-presets-unused";  // read only: nothing runs, nothing is written
    for (size_t i : members) spec.configs.push_back(presets[i].path);
    const std::vector<sweep::Run> runs = sweep::expand(spec);
    const std::vector<ConfigEstimate> est = estimate_configs(spec, runs, 1, search);
    for (size_t k = 0; k < members.size(); ++k) {
      const ConfigEstimate& e = est[k];
      presets[members[k]].measured =
          e.seconds ? fmt::format("{}{} ({} run{})", e.may_stop_early ? "at most " : "",
                                  sweep::format_duration(*e.seconds), e.measured_runs,
                                  e.measured_runs == 1 ? "" : "s")
                    : e.resolves ? (e.near_miss.empty()
                                        ? std::string("not measured yet")
                                        : fmt::format("not measured yet (finished runs differ in {})",
                                                      fmt::join(e.near_miss, ", ")))
                                 : "does not resolve: " + e.why_not;
    }
  }
}

int presets_main(const std::string& root, const std::string& only, const std::string& format,
                 const std::vector<std::string>& search) {
  std::vector<Preset> presets = find_presets(root, only);
  const bool estimate = !search.empty();
  if (estimate) add_estimates(presets, search);
  if (format == "json") {
    Json out = Json::array();
    for (const auto& p : presets) {
      out.push_back({{"experiment", p.experiment},
                     {"name", p.name},
                     {"path", p.path},
                     {"purpose", p.purpose},
                     {"time", p.time}});
      if (estimate) out.back()["time_measured_here"] = p.measured;
    }
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  std::string current;
  for (const auto& p : presets) {
    if (p.experiment != current) {
      current = p.experiment;
      fmt::print("{}## {} (`seqbench {} --config {}/{}/NAME.yaml`)\n\n| preset | purpose | time (as "
                 "the file states it) |{}\n|---|---|---|{}\n",
                 current == presets.front().experiment ? "" : "\n", current, current, root, current,
                 estimate ? " one run here, 1 thread |" : "", estimate ? "---|" : "");
    }
    const auto cell = [](std::string text) {
      for (size_t at = text.find('|'); at != std::string::npos; at = text.find('|', at + 2))
        text.replace(at, 1, "\\|");
      return text;
    };
    fmt::print("| {} | {} | {} |{}\n", p.name, cell(p.purpose), p.time.empty() ? "—" : cell(p.time),
               estimate ? " " + cell(p.measured) + " |" : "");
  }
  if (presets.empty()) fmt::print(stderr, "seqbench list: no presets under {}/\n", root);
  return 0;
}

}  // namespace

int list_main(int argc, char** argv) {
  std::vector<std::string> names;
  for (const auto& f : kFamilies) names.push_back(f.name);
  const std::string usage = fmt::format(
      "usage: seqbench list [--format md|json] [{}]\n"
      "       seqbench list presets [EXPERIMENT] [--format md|json] [--configs DIR] [--estimate [--from DIR]]\n"
      "         the preset files (default DIR: configs), each with the first sentence of its\n"
      "         leading comment and the time the comment states, if it states one; --estimate\n"
      "         adds what one run takes here at 1 thread, from the finished runs of this build\n"
      "         under --from (default results; repeatable), as `sweep --dry-run` estimates\n",
      core::join(names, "|"));
  std::string format = "md", only, configs = "configs", experiment, from;
  bool estimate = false;
  std::vector<std::string> search;
  const bool presets = argc > 1 && std::string(argv[1]) == "presets";
  for (int i = presets ? 2 : 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      fmt::print("{}", usage);
      return 0;
    }
    if (presets && arg == "--estimate") {
      estimate = true;
      continue;
    }
    std::string* value = arg == "--format"               ? &format
                         : arg == "--configs" && presets ? &configs
                         : arg == "--from" && presets    ? &from
                                                         : nullptr;
    if (value && i + 1 < argc) {
      *value = argv[++i];
      if (value == &from) search.push_back(from);
    } else if (arg.rfind("--format=", 0) == 0) {
      format = arg.substr(9);
    } else if (value || (!arg.empty() && arg[0] == '-')) {
      return fail(fmt::format("{}: {} (hint: seqbench list --help)", arg,
                              value ? "needs a value" : "unknown option"));
    } else if (!(presets ? experiment : only).empty()) {
      return fail(fmt::format("'{}': one {} at most (hint: seqbench list --help)", arg,
                              presets ? "experiment" : "family"));
    } else {
      (presets ? experiment : only) = arg;
    }
  }
  if (format != "md" && format != "json")
    return fail(fmt::format("--format: '{}' is not md or json", format));
  if (presets) {
    try {
      if (!search.empty() && !estimate) return fail("--from goes with --estimate (hint: seqbench list --help)");
      if (estimate && search.empty()) search.push_back("results");
      return presets_main(configs, experiment, format, estimate ? search : std::vector<std::string>{});
    } catch (const core::Error& e) {
      return fail(e.what());
    }
  }
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
