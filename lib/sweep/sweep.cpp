#include "sweep/sweep.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <limits>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "config/yaml_config.hpp"
#include "core/check.hpp"
#include "core/file_lock.hpp"
#include "core/fs.hpp"
#include "sweep/slurm_script.hpp"

namespace seqbench::sweep {

namespace fs = std::filesystem;
using config::detail::Source;
using config::detail::Where;

namespace {

// A list of scalars, or one scalar as a list of one.
std::vector<std::string> scalars(const YAML::Node& node, const Source& src, const std::string& key) {
  std::vector<std::string> out;
  if (node.IsScalar()) {
    out.push_back(node.Scalar());
  } else if (node.IsSequence()) {
    for (const auto& item : node) {
      if (!item.IsScalar())
        config::detail::fail(src, item.Mark(), fmt::format("{}: expected a list of values", key));
      out.push_back(item.Scalar());
    }
  } else {
    config::detail::fail(src, node.Mark(), fmt::format("{}: expected a value or a list", key));
  }
  return out;
}

// Dotted config keys as written in a sweep: "task.T", the same paths as --set.
void check_config_key(const std::string& key, const YAML::Node& at, const Source& src) {
  static const std::regex ok(R"([A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*)");
  if (!std::regex_match(key, ok))
    config::detail::fail(src, at.Mark(),
                         fmt::format("'{}' is not a config key (expected a dotted path such as "
                                     "task.T, the same as --set)",
                                     key));
}

// As written from the current directory, else from the sweep file's directory or the
// nearest directory above it that has it (so configs/sweeps/x.yaml may name
// configs/copy/y.yaml as seen from the repository's root, wherever it is run from).
std::string find_config(const std::string& path, const std::string& spec_path) {
  if (core::file_exists(path)) return path;
  if (fs::path(path).is_absolute()) return {};
  for (fs::path dir = fs::absolute(spec_path).parent_path();; dir = dir.parent_path()) {
    if (core::file_exists((dir / path).string())) return (dir / path).lexically_normal().string();
    if (dir == dir.parent_path()) return {};
  }
}

std::string id_part(const std::string& s) {
  std::string out;
  for (char c : s)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '+' || c == '-')
               ? c
               : '_';
  return out;
}

// Whether a process holds the run lock at `lock` (train::RunFiles takes it exclusively):
// a shared lock is refused only then. A run that never started has no lock file, and
// none is created for asking.
bool lock_held(const std::string& lock) {
  return core::file_exists(lock) && !core::FileLock::try_lock(lock, core::FileLock::Mode::kShared);
}

// A run's summary.json as an object; an empty one when the file is missing, unreadable
// or not a JSON object.
nlohmann::json read_summary(const std::string& path) {
  std::string text;
  try {
    text = core::read_file(path);
  } catch (const core::Error&) {
  }
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : nlohmann::json::object();
}

// The string under key, "" when it is absent or not a string.
std::string text_of(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string last_line(const std::string& path) {
  if (!core::file_exists(path)) return {};
  std::string text;
  try {
    text = core::read_file(path);
  } catch (const core::Error&) {
    return {};
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  const size_t at = text.rfind('\n');
  return at == std::string::npos ? text : text.substr(at + 1);
}

}  // namespace

Spec load_spec(const std::string& path, const std::vector<std::string>& experiments) {
  Source src{path, true, {}};
  const YAML::Node root = config::detail::load_text(config::detail::read_config_file(path), path);
  if (!root.IsMap())
    config::detail::fail(src, root.Mark(),
                         "a sweep file is a map with experiment, configs, grid, seeds, ...");
  static const std::vector<std::string> kKeys{"experiment", "configs", "set",  "grid", "seeds",
                                              "out",        "threads", "jobs", "slurm"};
  config::detail::check_keys(root, kKeys, "", src);
  Spec s;
  s.path = path;
  s.name = fs::path(path).stem().string();
  const auto where = [&](const YAML::Node& n, const std::string& key) {
    return Where{&src, n.Mark(), key};
  };

  const YAML::Node exp = root["experiment"];
  if (!exp) config::detail::fail(src, root.Mark(), "experiment: missing (e.g. experiment: copy)");
  s.experiment = config::detail::decode_string(exp, where(exp, "experiment"));
  if (std::find(experiments.begin(), experiments.end(), s.experiment) == experiments.end())
    config::detail::fail(src, exp.Mark(),
                         fmt::format("experiment: '{}' is not one that sweeps run (have: {})",
                                     s.experiment, fmt::join(experiments, ", ")));

  const YAML::Node cfgs = root["configs"];
  if (!cfgs) config::detail::fail(src, root.Mark(), "configs: missing (one or more config files)");
  for (const auto& c : scalars(cfgs, src, "configs")) {
    const std::string found = find_config(c, path);
    if (found.empty())
      config::detail::fail(src, cfgs.Mark(),
                           fmt::format("configs: no file '{}' (relative to the current directory "
                                       "or to the sweep file)",
                                       c));
    s.configs.push_back(found);
  }
  if (s.configs.empty()) config::detail::fail(src, cfgs.Mark(), "configs: the list is empty");

  if (const YAML::Node set = root["set"]) {
    if (!set.IsMap()) config::detail::fail(src, set.Mark(), "set: expected a map of key: value");
    for (const auto& kv : set) {
      const std::string key = kv.first.Scalar();
      check_config_key(key, kv.first, src);
      // One value, or a list of plain values for a list key (`extrapolate: [2, 4]`), handed
      // on as YAML flow text: --set extrapolate=[2, 4].
      if (kv.second.IsSequence()) {
        const auto items = scalars(kv.second, src, "set." + key);
        for (const auto& item : items)
          if (item.empty() || item.find_first_of(",[]{}:#'\" \t\n") != std::string::npos)
            config::detail::fail(src, kv.second.Mark(),
                                 fmt::format("set.{}: list item '{}' must be a plain word or number", key, item));
        s.set.emplace_back(key, fmt::format("[{}]", fmt::join(items, ", ")));
        continue;
      }
      if (!kv.second.IsScalar())
        config::detail::fail(src, kv.second.Mark(),
                             fmt::format("set.{}: expected one value or a list of values", key));
      s.set.emplace_back(key, kv.second.Scalar());
    }
  }
  if (const YAML::Node grid = root["grid"]) {
    if (!grid.IsMap())
      config::detail::fail(src, grid.Mark(), "grid: expected a map of key: [values]");
    for (const auto& kv : grid) {
      const std::string key = kv.first.Scalar();
      check_config_key(key, kv.first, src);
      auto values = scalars(kv.second, src, "grid." + key);
      if (values.empty())
        config::detail::fail(src, kv.second.Mark(), fmt::format("grid.{}: no values", key));
      s.grid.emplace_back(key, std::move(values));
    }
  }
  if (const YAML::Node seeds = root["seeds"]) {
    s.seeds.clear();
    if (seeds.IsScalar()) {
      s.seeds.push_back(config::detail::decode_unsigned(seeds, where(seeds, "seeds"),
                                                        std::numeric_limits<uint64_t>::max()));
    } else if (seeds.IsSequence()) {
      for (const auto& x : seeds)
        s.seeds.push_back(config::detail::decode_unsigned(x, where(x, "seeds"),
                                                          std::numeric_limits<uint64_t>::max()));
    } else {
      config::detail::fail(src, seeds.Mark(), "seeds: expected a list of seeds, e.g. [1, 2, 3]");
    }
    if (s.seeds.empty()) config::detail::fail(src, seeds.Mark(), "seeds: the list is empty");
    if (std::set<uint64_t>(s.seeds.begin(), s.seeds.end()).size() != s.seeds.size())
      config::detail::fail(src, seeds.Mark(), "seeds: a seed is listed twice");
  }
  if (const YAML::Node out = root["out"]) s.out = config::detail::decode_string(out, where(out, "out"));
  if (s.out.empty()) s.out = "results/sweeps/" + s.name;
  if (const YAML::Node t = root["threads"])
    s.threads = config::detail::decode_signed(t, where(t, "threads"), 1, 4096);
  if (const YAML::Node j = root["jobs"]) s.jobs = config::detail::decode_signed(j, where(j, "jobs"), 1, 4096);
  if (const YAML::Node sl = root["slurm"]) {
    if (!sl.IsMap()) config::detail::fail(src, sl.Mark(), "slurm: expected a map");
    config::detail::check_keys(sl, {"partition", "time", "mem", "account", "cpus_per_task", "extra"},
                               "slurm", src);
    // Each value reaches the job script: checked against its field's character set.
    const auto text = [&](const char* field, std::string& dst) {
      const YAML::Node n = sl[field];
      if (!n) return;
      dst = config::detail::decode_string(n, where(n, std::string("slurm.") + field));
      check_slurm_value(field, dst, fmt::format("{}:{}", path, n.Mark().line + 1));
    };
    text("partition", s.slurm.partition);
    text("time", s.slurm.time);
    text("mem", s.slurm.mem);
    text("account", s.slurm.account);
    if (sl["cpus_per_task"])
      s.slurm.cpus_per_task = config::detail::decode_signed(
          sl["cpus_per_task"], where(sl["cpus_per_task"], "slurm.cpus_per_task"), 1, 4096);
    if (sl["extra"]) {
      s.slurm.extra = scalars(sl["extra"], src, "slurm.extra");
      for (const auto& e : s.slurm.extra)
        check_slurm_value("extra", e, fmt::format("{}:{}", path, sl["extra"].Mark().line + 1));
    }
  }
  return s;
}

double count_runs(const Spec& spec) {
  // In floating point: a product of list lengths saturates instead of wrapping.
  double n = double(spec.configs.size()) * double(spec.seeds.size());
  for (const auto& g : spec.grid) n *= double(g.second.size());
  return n;
}

std::vector<Run> expand(const Spec& spec) {
  // Counted before anything is built: a grid of 10^9 points is refused, not allocated.
  const double n = count_runs(spec);
  if (n > double(kMaxRuns))
    throw core::UsageError(fmt::format(
        "{}: the sweep has {:.4g} runs (configs x grid points x seeds), more than the {} one "
        "sweep may hold (hint: split it into several sweep files)",
        spec.path, n, kMaxRuns));
  // Grid points, last key fastest.
  std::vector<std::vector<std::pair<std::string, std::string>>> points{{}};
  for (const auto& [key, values] : spec.grid) {
    std::vector<std::vector<std::pair<std::string, std::string>>> next;
    for (const auto& p : points)
      for (const auto& v : values) {
        auto q = p;
        q.emplace_back(key, v);
        next.push_back(std::move(q));
      }
    points = std::move(next);
  }
  // The id names a grid key by its last part unless two keys share it.
  std::map<std::string, int> last_parts;
  const auto last_of = [](const std::string& k) {
    const size_t dot = k.rfind('.');
    return dot == std::string::npos ? k : k.substr(dot + 1);
  };
  for (const auto& g : spec.grid) ++last_parts[last_of(g.first)];

  std::vector<Run> runs;
  std::map<std::string, std::string> seen;  // id -> what made it
  for (const auto& cfg : spec.configs)
    for (const auto& p : points)
      for (uint64_t seed : spec.seeds) {
        Run r;
        r.index = runs.size();
        r.config = cfg;
        r.seed = seed;
        r.sets = spec.set;
        r.id = id_part(fs::path(cfg).stem().string());
        std::string what = cfg;
        for (const auto& [k, v] : p) {
          r.sets.emplace_back(k, v);
          const std::string name = last_parts[last_of(k)] > 1 ? k : last_of(k);
          // Two appends, not "-" + ...: g++ 12 warns (-Wrestrict) on the temporary.
          r.id += '-';
          r.id += id_part(name + v);
          what += " " + k + "=" + v;
        }
        r.id += "-s" + std::to_string(seed);
        what += fmt::format(" seed {}", seed);
        const auto [it, fresh] = seen.emplace(r.id, what);
        if (!fresh)
          throw core::UsageError(fmt::format(
              "{}: two runs would get the id '{}' ({} and {}) (hint: give the configs "
              "different file names)",
              spec.path, r.id, it->second, what));
        runs.push_back(std::move(r));
      }
  return runs;
}

std::vector<std::string> run_arguments(const Spec& spec, const Run& run, int64_t threads,
                                       bool resume, bool force_threads) {
  std::vector<std::string> a{spec.experiment, "--config", run.config};
  for (const auto& [k, v] : run.sets) {
    a.push_back("--set");
    a.push_back(k + "=" + v);
  }
  for (const std::string& x : {std::string("--seed"), std::to_string(run.seed),
                               std::string("--out"), spec.out, std::string("--run-id"), run.id,
                               std::string("--threads"), std::to_string(threads),
                               std::string("-q")})
    a.push_back(x);
  if (force_threads) a.push_back("--force-threads");
  if (resume) a.push_back("--resume");
  return a;
}

const char* state_name(State s) {
  switch (s) {
    case State::kPending: return "pending";
    case State::kRunning: return "running";
    case State::kInterrupted: return "interrupted";
    case State::kDone: return "done";
    case State::kFailed: return "failed";
  }
  return "?";
}

void override_spec(Spec& spec, const std::vector<uint64_t>& seeds, const std::string& out, bool out_given) {
  if (!seeds.empty()) {
    if (std::set<uint64_t>(seeds.begin(), seeds.end()).size() != seeds.size())
      throw core::UsageError("sweep: --seeds lists a seed twice");
    spec.seeds = seeds;
    std::string list;
    for (uint64_t s : seeds) {
      if (!list.empty()) list += ',';
      list += std::to_string(s);
    }
    spec.overrides.insert(spec.overrides.end(), {"--seeds", list});
  }
  if (out_given) {
    if (out.empty()) throw core::UsageError("sweep: --out is empty (hint: give a directory, e.g. --out results/sweeps/x)");
    spec.out = out;
    spec.overrides.insert(spec.overrides.end(), {"--out", std::filesystem::absolute(out).string()});
  }
}

std::vector<uint64_t> parse_seed_list(const std::string& list) {
  if (list.empty()) throw core::UsageError("sweep: --seeds is empty (hint: e.g. --seeds 6,7,8)");
  std::vector<uint64_t> seeds;
  size_t at = 0;
  while (true) {
    const size_t end = std::min(list.find(',', at), list.size());
    const std::string item = list.substr(at, end - at);
    uint64_t v = 0;
    const auto [stop, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || stop != item.data() + item.size() ||
        v > uint64_t(std::numeric_limits<int64_t>::max()))
      throw core::UsageError(fmt::format(
          "sweep: --seeds item {} '{}' is not a whole number >= 0 (hint: e.g. --seeds 6,7,8)",
          seeds.size() + 1, item));
    seeds.push_back(v);
    if (end == list.size()) break;
    at = end + 1;
  }
  return seeds;
}

std::string bookkeeping_dir(const Spec& spec) { return spec.out + "/.sweep"; }
std::string log_path(const Spec& spec, const Run& run) {
  return bookkeeping_dir(spec) + "/logs/" + run.id + ".log";
}
std::string exit_path(const Spec& spec, const Run& run) {
  return bookkeeping_dir(spec) + "/logs/" + run.id + ".exit";
}
std::string wall_path(const Spec& spec, const Run& run) {
  return bookkeeping_dir(spec) + "/logs/" + run.id + ".wall";
}
std::string run_dir(const Spec& spec, const Run& run) {
  return spec.out + "/" + spec.experiment + "/" + run.id;
}

std::string claim_path(const Spec& spec, const Run& run) {
  return bookkeeping_dir(spec) + "/locks/" + run.id + ".lock";
}

std::optional<core::FileLock> claim_run(const Spec& spec, const Run& run) {
  core::make_dirs(bookkeeping_dir(spec) + "/locks");
  return core::FileLock::try_lock(claim_path(spec, run));
}

RunStatus run_status(const Spec& spec, const Run& run, bool claimed) {
  RunStatus st;
  const std::string dir = run_dir(spec, run);
  st.has_checkpoint = core::file_exists(dir + "/checkpoint.sbck");
  if (lock_held(dir + "/.lock") || (!claimed && lock_held(claim_path(spec, run)))) {
    st.state = State::kRunning;
    return st;
  }
  if (core::file_exists(dir + "/summary.json")) {
    const nlohmann::json json = read_summary(dir + "/summary.json");
    const std::string status = text_of(json, "status");
    if (status == "finished" || status == "target_reached" || status == "early_stopped") {
      st.state = State::kDone;
      const auto final_metric = json.find("final_metric");
      st.detail = fmt::format("{}, {} {}", status, text_of(json, "metric"),
                              final_metric != json.end() ? final_metric->dump() : "");
      return st;
    }
    if (status == "interrupted") {
      st.state = State::kInterrupted;
      st.detail = "interrupted; continues with --resume";
      return st;
    }
    st.state = State::kFailed;
    st.detail = status.empty() ? "unreadable summary.json"
                               : fmt::format("{}: {}", status, text_of(json, "message"));
    return st;
  }
  const std::string exit_file = exit_path(spec, run);
  if (core::file_exists(exit_file)) {
    const std::string code = last_line(exit_file);
    if (code != "0" && code != "130" && code != "143") {
      st.state = State::kFailed;
      st.detail = fmt::format("exit {}: {}", code, last_line(log_path(spec, run)));
      return st;
    }
  }
  if (st.has_checkpoint) {
    st.state = State::kInterrupted;
    st.detail = "stopped without a summary; continues from its checkpoint";
  }
  return st;
}

}  // namespace seqbench::sweep
