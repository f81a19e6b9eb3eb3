// The command-line options every experiment binary shares, and how they feed a config.
// Typical main():
//   CLI::App app("copy task");
//   config::CommonOptions opts;
//   config::add_common_options(app, opts);
//   if (!config::parse_cli(app, argc, argv)) return core::kExitOk;   // --help
//   CopyConfig cfg;
//   config::resolve(cfg, opts, kDemoYaml);
//   if (opts.dump_config) { fmt::print("{}", config::to_yaml(cfg)); return core::kExitOk; }
// --seed, --threads, --out, --run-id, --resume and --quiet are not config keys: the app
// applies them (they win over the config, like --set). --force-threads and --max-memory
// are checks on the run, not settings of it (lib/train/memory_estimate.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/yaml_config.hpp"

namespace CLI {
class App;
class Validator;
}

namespace seqbench::config {

struct CommonOptions {
  std::vector<std::string> configs;  // --config FILE (repeatable, order kept)
  std::vector<std::string> sets;     // --set key.path=value (repeatable)
  std::optional<uint64_t> seed;      // --seed N
  std::optional<int> threads;        // --threads N (>= 1)
  bool force_threads = false;        // --force-threads: keep --threads N above the core count
  std::optional<uint64_t> max_memory;  // --max-memory SIZE in bytes (default: available memory)
  std::string out;                   // --out DIR (results root, default from config)
  bool resume = false;       // --resume (continue the run in --out/run-id from its checkpoint)
  std::string resume_run;    // --resume latest: "latest" (the newest run of the label)
  std::string resume_from;   // --resume-from latest|previous (implies --resume)
  std::string run_id;        // --run-id ID
  bool quiet = false;        // --quiet, -q
  bool dump_config = false;  // --dump-config (print resolved YAML, exit 0)
  bool demo = false;         // --demo (use the app's embedded default config)
};

void add_common_options(CLI::App& app, CommonOptions& opts);

// Applies opts.configs in order, then opts.sets in order: defaults < files < --set.
template <class Cfg>
void resolve(Cfg& cfg, const CommonOptions& opts) {
  for (const std::string& path : opts.configs) apply_yaml_file(cfg, path);
  for (const std::string& assignment : opts.sets) apply_override(cfg, assignment);
}

// As above, with the app's embedded config applied first when --demo is given:
// defaults < demo config < files < --set.
template <class Cfg>
void resolve(Cfg& cfg, const CommonOptions& opts, const std::string& demo_yaml) {
  if (opts.demo) apply_yaml_text(cfg, demo_yaml, "<embedded demo config>");
  resolve(cfg, opts);
}

// Parses argv with CLI11. Returns false after printing help (--help, --help-all) or a
// version, meaning "exit 0". On a parse error throws core::UsageError with a one-line
// message (the caller prints it once, prefixed with the program's name).
bool parse_cli(CLI::App& app, int argc, char** argv);

// Option checks with short messages (CLI11's PositiveNumber prints the whole double
// range, 309 digits, for a value that is not a number).
// A real number > 0: "expected a number > 0, got 'abc'".
CLI::Validator positive_real();
// A whole number in [lo, hi]: "expected a whole number in [1, 10000000], got 'abc'".
CLI::Validator whole_number(int64_t lo, int64_t hi);

}  // namespace seqbench::config
