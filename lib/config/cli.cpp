#include "config/cli.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <system_error>

#include "core/check.hpp"
#include "core/memory.hpp"

namespace seqbench::config {
namespace {

// CLI11's own numeric checks print their bounds as 300-digit doubles and let "-1" or
// 2^64 wrap silently for unsigned options; this one says what is wrong in words.
CLI::Validator integer_in(uint64_t lo, uint64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& value) -> std::string {
        uint64_t parsed = 0;
        const char* end = value.data() + value.size();
        const auto [ptr, ec] = std::from_chars(value.data(), end, parsed);
        if (!value.empty() && value[0] != '-' && ec == std::errc() && ptr == end && parsed >= lo &&
            parsed <= hi)
          return "";
        return fmt::format("expected an integer in [{}, {}], got '{}'", lo, hi, value);
      },
      "");
}

}  // namespace

void add_common_options(CLI::App& app, CommonOptions& opts) {
  // One value per occurrence, so "--config a.yaml run" never swallows a positional argument.
  app.add_option("--config", opts.configs,
                 "YAML config file; repeatable, later files override earlier ones")
      ->type_name("FILE")
      ->allow_extra_args(false);
  app.add_option("--set", opts.sets,
                 "override one config key after the files, e.g. --set optim.lr=0.01; repeatable")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  app.add_option_function<uint64_t>(
         "--seed", [&opts](const uint64_t& seed) { opts.seed = seed; },
         "random seed (overrides the config's seed)")
      ->type_name("N")
      ->check(integer_in(0, std::numeric_limits<uint64_t>::max()));
  app.add_option_function<int>(
         "--threads", [&opts](const int& threads) { opts.threads = threads; },
         "OpenMP threads (default: OMP_NUM_THREADS or all cores)")
      ->type_name("N")
      ->check(integer_in(1, 4096));
  app.add_flag("--force-threads", opts.force_threads,
               "keep --threads (or train.threads) even above the number of cores this process "
               "may use (default: capped to it, with a warning)");
  app.add_option_function<std::string>(
         "--max-memory",
         [&opts](const std::string& size) { opts.max_memory = core::parse_size(size); },
         "refuse a run whose memory estimate is above SIZE, e.g. 512M, 4G, 1.5GiB or bytes "
         "(default: the memory available now, MemAvailable)")
      ->type_name("SIZE")
      ->check(CLI::Validator(
          [](std::string& value) -> std::string {
            if (core::parse_size(value)) return "";
            return fmt::format(
                "expected a size such as 512M, 4G, 1.5GiB or a number of bytes, above 0 and at "
                "most 1 EiB, got '{}'",
                value);
          },
          ""));
  app.add_option("--out", opts.out, "results root directory (default from the config)")
      ->type_name("DIR")
      ->check(CLI::Validator(
          [](std::string& dir) -> std::string {
            return dir.empty() ? "is empty; give a directory, e.g. --out results" : "";
          },
          ""));
  // --resume alone, or --resume latest: an optional value, so the flag form still works.
  CLI::Option* resume = app.add_option("--resume", opts.resume_run,
                 "continue the run <out>/<experiment>/<run-id> from its last checkpoint; "
                 "`--resume latest`: the newest run of this label (of the experiment when no "
                 "--config, --set or --demo is given) instead of --run-id")
      ->expected(0, 1)
      ->type_name("[latest]")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            return v.empty() || v == "latest" ? "" : "expected nothing or 'latest', got '" + v + "'";
          },
          ""));
  app.parse_complete_callback([&opts, resume] { opts.resume = opts.resume || resume->count() > 0; });
  app.add_option("--resume-from", opts.resume_from,
                 "with --resume: which checkpoint, latest (default) or previous (the one before "
                 "it, kept for when the latest is damaged)")
      ->check(CLI::IsMember({"latest", "previous"}))
      ->type_name("latest|previous");
  app.add_option("--run-id", opts.run_id, "name of the run's directory under the results root")
      ->type_name("ID");
  app.add_flag("-q,--quiet", opts.quiet, "no progress output; warnings and errors only");
  app.add_flag("--dump-config", opts.dump_config, "print the resolved config as YAML and exit");
  app.add_flag("--demo", opts.demo, "start from the app's embedded demo config");
}

bool parse_cli(CLI::App& app, int argc, char** argv) {
  if (!app.get_option_no_throw("--verbose"))
    app.add_flag_callback("--verbose", [] { core::set_verbose_errors(true); },
                          "errors also name the source line and the failed check (for bug reports)");
  try {
    app.parse(argc, argv);
    return true;
  } catch (const CLI::Success& e) {  // --help, --help-all, --version
    app.exit(e);
    return false;
  } catch (const CLI::ParseError& e) {
    const std::string name = app.get_name().empty()
                                 ? "seqbench"
                                 : std::filesystem::path(app.get_name()).filename().string();
    // The caller prints it (prefixed with the program's name) and exits 2.
    std::string what = e.what();
    // A missing subcommand: name the word that was given instead, and the ones there are.
    if (what.rfind("A subcommand is required", 0) == 0) {
      std::string have, given;
      for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
        have += (have.empty() ? "" : ", ") + sub->get_name();
      for (int i = 1; i < argc && given.empty(); ++i)
        if (argv[i][0] != '-') given = argv[i];
      what = given.empty() ? fmt::format("a subcommand is required (have: {})", have)
                           : fmt::format("unknown subcommand '{}' (have: {})", given, have);
    }
    // An option given twice (`--threads 2 --threads 4`): CLI11 says "--threads: At Most 1
    // required but received 2".
    const size_t at = what.find(": At Most "), got = what.find(" required but received ");
    if (at != std::string::npos && got != std::string::npos && got > at) {
      const std::string most = what.substr(at + 10, got - at - 10);
      what = fmt::format("{} given {} times; it takes {}", what.substr(0, at), what.substr(got + 23),
                         most == "1" ? "one value" : "at most " + most + " values");
    }
    std::string msg = fmt::format("{} (hint: run {} --help)", what, name);
    for (char& ch : msg)
      if (ch == '\n' || ch == '\r') ch = ' ';
    throw core::UsageError(msg);
  }
}

CLI::Validator positive_real() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || !(v > 0))
          return "expected a number > 0, got '" + s + "'";
        return {};
      },
      "NUMBER > 0");
}

CLI::Validator whole_number(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        int64_t v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < lo || v > hi)
          return fmt::format("expected a whole number in [{}, {}], got '{}'", lo, hi, s);
        return {};
      },
      fmt::format("INT in [{}, {}]", lo, hi));
}

}  // namespace seqbench::config
