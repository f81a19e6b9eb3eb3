// The table of experiments (apps/experiments.cpp) against the real front door: every entry
// is reachable through every path it declares, and refused by the paths it does not:
// `seqbench <name> --help`, `seqbench sweep` (sweepable or not), each of its report
// tables, and the attention analyses' load_trained_run (LM runs only). A new entry is
// checked here without touching this file.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "apps/experiments.hpp"
#include "cli/cli_util.hpp"
#include "core/check.hpp"

using namespace seqbench;
using clitest::run;
namespace fs = std::filesystem;

namespace {

const std::string kFront = SEQBENCH_FRONT_BIN;

// The message of what fn() throws, or "" when it returns.
template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ExperimentTable, EveryExperimentIsListedAndAnswersItsOwnHelp) {
  const std::string dir = clitest::fresh_dir("help");
  ASSERT_FALSE(apps::experiments().empty());
  const auto usage = run(kFront + " --help", dir);
  ASSERT_EQ(usage.code, 0) << usage.err;
  for (const auto& e : apps::experiments()) {
    const std::string name = e.name;
    EXPECT_NE(usage.out.find("  " + name + " "), std::string::npos) << name << "\n" << usage.out;
    EXPECT_NE(usage.out.find(e.help), std::string::npos) << name;
    const auto r = run(kFront + " " + name + " --help", dir);
    EXPECT_EQ(r.code, 0) << name << ": " << r.err;
    // The experiment's own help (its command name and the common options), not the
    // front door's usage.
    EXPECT_NE(r.out.find("seqbench " + name), std::string::npos) << name << "\n" << r.out;
    EXPECT_NE(r.out.find("--config"), std::string::npos) << name << "\n" << r.out;
    EXPECT_EQ(r.out.find("seqbench <experiment>"), std::string::npos) << name;
  }
  const auto bad = run(kFront + " no_such_experiment --help", dir);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("unknown experiment 'no_such_experiment'"), std::string::npos) << bad.err;
}

// A sweep file naming each experiment: a dry run lists its run for a sweepable one, and a
// non-sweepable one is refused by the spec loader naming the key.
TEST(ExperimentTable, SweepRunsExactlyTheSweepableExperiments) {
  const std::string dir = clitest::fresh_dir("sweep");
  clitest::write(dir + "/c.yaml", "{}\n");
  int sweepable = 0;
  for (const auto& e : apps::experiments()) {
    const std::string name = e.name;
    clitest::write(dir + "/s.yaml", "experiment: " + name + "\nconfigs: [c.yaml]\nout: " + dir +
                                        "/sw\n");
    const auto r = run(kFront + " sweep s.yaml --dry-run", dir);
    if (e.sweepable) {
      ++sweepable;
      EXPECT_EQ(r.code, 0) << name << ": " << r.err;
      EXPECT_NE(r.out.find("seqbench " + name + " --config"), std::string::npos)
          << name << "\n" << r.out;
    } else {
      EXPECT_EQ(r.code, 2) << name;
      EXPECT_NE(r.err.find("experiment: '" + name + "' is not one that sweeps run"),
                std::string::npos)
          << name << ": " << r.err;
    }
  }
  EXPECT_GT(sweepable, 0);
  EXPECT_EQ(size_t(sweepable), apps::sweepable_experiments().size());
  EXPECT_FALSE(fs::exists(dir + "/sw"));  // a dry run writes nothing
}

// Each declared table is a subcommand of `seqbench report` that reads the experiment's
// runs.csv (here a missing one: the error names the path and the experiment to train).
TEST(ExperimentTable, EveryReportTableIsASubcommandReadingItsExperimentsRuns) {
  const std::string dir = clitest::fresh_dir("report");
  const auto help = run(kFront + " report --help", dir);
  ASSERT_EQ(help.code, 0) << help.err;
  int tables = 0;
  for (const auto& e : apps::experiments())
    for (const auto& t : e.tables) {
      ++tables;
      const std::string name = e.name;
      EXPECT_NE(help.out.find(t.what), std::string::npos) << t.name << "\n" << help.out;
      auto r = run(kFront + " report " + t.name, dir);
      EXPECT_EQ(r.code, 2) << t.name;
      EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
      EXPECT_NE(r.err.find("no runs at 'results/" + name + "/runs.csv'"), std::string::npos)
          << t.name << ": " << r.err;
      EXPECT_NE(r.err.find("`seqbench " + name + " --config configs/" + name + "/"),
                std::string::npos)
          << t.name << ": " << r.err;
      r = run(kFront + " report " + t.name + " elsewhere/runs.csv --format csv", dir);
      EXPECT_NE(r.err.find("no runs at 'elsewhere/runs.csv'"), std::string::npos) << r.err;
    }
  EXPECT_GT(tables, 0);
}

// load_trained_run (`seqbench report attention ...`): a run directory of every experiment
// without a trained LM is refused naming that experiment; an LM experiment's run goes on
// to its config, where this one (not an LM config) fails on its own key.
TEST(ExperimentTable, AttentionAnalysesReadOnlyTrainedLmRuns) {
  const std::string dir = clitest::fresh_dir("lm");
  int lms = 0, others = 0;
  for (const auto& e : apps::experiments()) {
    const std::string name = e.name, run_dir = dir + "/results/" + name + "/r1";
    fs::create_directories(run_dir);
    clitest::write(run_dir + "/config.yaml", "model: {cell: lstm}\n");
    clitest::write(run_dir + "/checkpoint.sbck", "x");
    const std::string err =
        error_of([&] { apps::load_trained_run(run_dir + "/", "attention approx"); });
    ASSERT_FALSE(err.empty()) << name;
    if (e.load_lm_run) {
      ++lms;
      EXPECT_EQ(err.find("is a run of"), std::string::npos) << name << ": " << err;
      EXPECT_NE(err.find(run_dir + "/config.yaml"), std::string::npos) << name << ": " << err;
      EXPECT_NE(err.find("model.cell"), std::string::npos) << name << ": " << err;
    } else {
      ++others;
      EXPECT_NE(err.find("attention approx: '" + run_dir + "' is a run of the " + name +
                         " experiment"),
                std::string::npos)
          << err;
      for (const auto& lm : apps::experiments()) {
        if (lm.load_lm_run) {
          EXPECT_NE(err.find(lm.name), std::string::npos) << err;
        }
      }
    }
  }
  EXPECT_GT(lms, 0);
  EXPECT_GT(others, 0);
  // Without config.yaml and checkpoint.sbck there is no run to read.
  const std::string err = error_of([&] { apps::load_trained_run(dir + "/nothing", "attention jsd"); });
  EXPECT_NE(err.find("attention jsd: no trained run at '" + dir + "/nothing'"), std::string::npos)
      << err;
}
