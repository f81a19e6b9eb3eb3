#include "sweep/sweep.hpp"

#include <gtest/gtest.h>

#include <string>

#include "apps/experiments.hpp"
#include "core/check.hpp"
#include "core/file_lock.hpp"
#include "core/fs.hpp"
#include "test_util.hpp"

#include <filesystem>

using namespace seqbench;
using testutil::message_of;
using testutil::TempDir;

namespace {

const std::vector<std::string> kExps{"copy", "pmnist"};

std::string write_spec(const TempDir& dir, const std::string& body) {
  core::write_file_atomic(dir / "a.yaml", "task: {T: 5}\n");
  core::write_file_atomic(dir / "b.yaml", "task: {T: 5}\n");
  core::write_file_atomic(dir / "spec.yaml", body);
  return dir / "spec.yaml";
}

}  // namespace

TEST(Sweep, ExpandsConfigsGridAndSeedsWithReadableIds) {
  TempDir dir;
  // Config paths relative to the spec's directory are found there.
  const auto spec = sweep::load_spec(write_spec(dir, R"(experiment: copy
configs: [a.yaml, b.yaml]
set: {train.steps: 10}
grid: {task.T: [10, 20], optim.lr: [0.01]}
seeds: [1, 2]
)"),
                                     kExps);
  EXPECT_EQ(spec.out, "results/sweeps/spec");
  const auto runs = sweep::expand(spec);
  ASSERT_EQ(runs.size(), 2u * 2u * 1u * 2u);
  EXPECT_EQ(runs[0].id, "a-T10-lr0.01-s1");
  EXPECT_EQ(runs[1].id, "a-T10-lr0.01-s2");
  EXPECT_EQ(runs[2].id, "a-T20-lr0.01-s1");
  EXPECT_EQ(runs[7].id, "b-T20-lr0.01-s2");
  for (size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].index, i);
  // spec.set first, then the grid point, so the grid wins on the command line.
  const auto args = sweep::run_arguments(spec, runs[2], 3, false);
  const std::vector<std::string> want{"copy", "--config", dir / "a.yaml", "--set",
                                      "train.steps=10", "--set", "task.T=20", "--set",
                                      "optim.lr=0.01", "--seed", "1", "--out",
                                      "results/sweeps/spec", "--run-id", "a-T20-lr0.01-s1",
                                      "--threads", "3", "-q"};
  EXPECT_EQ(args, want);
  EXPECT_EQ(sweep::run_arguments(spec, runs[2], 3, true).back(), "--resume");
  // A list value in `set` goes on as YAML flow text.
  const auto listed = sweep::load_spec(
      write_spec(dir, "experiment: copy\nconfigs: [a.yaml]\nset: {extrapolate: [2, 4, 8]}\n"), kExps);
  const auto largs = sweep::run_arguments(listed, sweep::expand(listed)[0], 1, false);
  EXPECT_NE(std::find(largs.begin(), largs.end(), "extrapolate=[2, 4, 8]"), largs.end());
}

TEST(Sweep, SeedsAndOutFromTheCommandLineReplaceTheFilesAndAreHandedOn) {
  TempDir dir;
  auto spec = sweep::load_spec(write_spec(dir, "experiment: copy\nconfigs: [a.yaml]\nseeds: [1, 2]\nout: x\n"), kExps);
  sweep::override_spec(spec, {7, 9}, dir / "elsewhere", true);
  const auto runs = sweep::expand(spec);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].id, "a-s7");
  EXPECT_EQ(runs[1].id, "a-s9");
  EXPECT_EQ(spec.out, dir / "elsewhere");
  // What a Slurm array task is given, so that its run index names the same run.
  EXPECT_EQ(spec.overrides, (std::vector<std::string>{"--seeds", "7,9", "--out", dir / "elsewhere"}));
  // Nothing given: the file's values, nothing to hand on.
  auto plain = sweep::load_spec(dir / "spec.yaml", kExps);
  sweep::override_spec(plain, {}, "", false);
  EXPECT_EQ(plain.seeds, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(plain.out, "x");
  EXPECT_TRUE(plain.overrides.empty());
  EXPECT_NE(message_of([&] { sweep::override_spec(plain, {3, 3}, "", false); }).find("a seed twice"),
            std::string::npos);
  EXPECT_NE(message_of([&] { sweep::override_spec(plain, {}, "", true); }).find("--out is empty"), std::string::npos);
  // --seeds as typed: every item a whole number, none empty, the list not empty.
  EXPECT_EQ(sweep::parse_seed_list("6,7,8"), (std::vector<uint64_t>{6, 7, 8}));
  EXPECT_EQ(sweep::parse_seed_list("0"), (std::vector<uint64_t>{0}));
  EXPECT_NE(message_of([] { sweep::parse_seed_list(""); }).find("--seeds is empty"), std::string::npos);
  EXPECT_NE(message_of([] { sweep::parse_seed_list("1,,2"); }).find("item 2 ''"), std::string::npos);
  EXPECT_NE(message_of([] { sweep::parse_seed_list("x"); }).find("item 1 'x'"), std::string::npos);
  EXPECT_NE(message_of([] { sweep::parse_seed_list("1,-2"); }).find("item 2 '-2'"), std::string::npos);
  EXPECT_NE(message_of([] { sweep::parse_seed_list("3,"); }).find("item 2 ''"), std::string::npos);
}

TEST(Sweep, SharedLastKeyPartsUseTheWholeKeyAndOddCharactersAreReplaced) {
  TempDir dir;
  const auto spec = sweep::load_spec(write_spec(dir, R"(experiment: copy
configs: [a.yaml]
grid: {model.init: ["x/y"], optim.init: [z]}
)"),
                                     kExps);
  const auto runs = sweep::expand(spec);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].id, "a-model.initx_y-optim.initz-s1");
}

TEST(Sweep, SpecMistakesNameFileLineAndKey) {
  TempDir dir;
  const auto msg = [&](const std::string& body) {
    return message_of([&] { sweep::load_spec(write_spec(dir, body), kExps); });
  };
  EXPECT_NE(msg("experiment: copy\nconfig: [a.yaml]\n").find("spec.yaml:2: unknown key 'config' (did you mean 'configs'?)"),
            std::string::npos);
  EXPECT_NE(msg("experiment: cpy\nconfigs: [a.yaml]\n").find("'cpy' is not one that sweeps run (have: copy, pmnist)"),
            std::string::npos);
  EXPECT_NE(msg("experiment: copy\nconfigs: [nope_sweep_test.yaml]\n").find("configs: no file 'nope_sweep_test.yaml'"),
            std::string::npos);
  EXPECT_NE(msg("experiment: copy\nconfigs: [a.yaml]\ngrid: {task.T: []}\n").find("grid.task.T: no values"),
            std::string::npos);
  EXPECT_NE(msg("experiment: copy\nconfigs: [a.yaml]\nseeds: [1, 1]\n").find("listed twice"),
            std::string::npos);
  EXPECT_NE(msg("experiment: copy\nconfigs: [a.yaml]\nset: {'a b': 1}\n").find("is not a config key"),
            std::string::npos);
  EXPECT_NE(msg("experiment: copy\nconfigs: [a.yaml]\nslurm: {partitoin: x}\n").find("did you mean 'slurm.partition'"),
            std::string::npos)
      << msg("experiment: copy\nconfigs: [a.yaml]\nslurm: {partitoin: x}\n");
  // A list in `set` is for list keys of plain values; anything else is named.
  EXPECT_NE(msg("experiment: copy\nconfigs: [a.yaml]\nset: {extrapolate: [2, 'x,y']}\n")
                .find("set.extrapolate: list item 'x,y' must be a plain word or number"),
            std::string::npos);
  EXPECT_NE(msg("experiment: copy\nconfigs: [a.yaml]\nset: {extrapolate: {a: 1}}\n")
                .find("set.extrapolate: expected one value or a list of values"),
            std::string::npos);
  // Two configs with one stem would share ids.
  core::make_dirs(dir / "sub");
  core::write_file_atomic(dir / "sub/a.yaml", "{}\n");
  const auto spec = sweep::load_spec(write_spec(dir, "experiment: copy\nconfigs: [a.yaml, sub/a.yaml]\n"), kExps);
  EXPECT_NE(message_of([&] { sweep::expand(spec); }).find("two runs would get the id 'a-s1'"),
            std::string::npos);
}

TEST(Sweep, StatusReadsTheRunsFiles) {
  TempDir dir;
  auto spec = sweep::load_spec(write_spec(dir, "experiment: copy\nconfigs: [a.yaml]\n"), kExps);
  spec.out = dir / "out";
  const auto run = sweep::expand(spec).at(0);
  EXPECT_EQ(sweep::run_status(spec, run).state, sweep::State::kPending);
  const std::string rd = sweep::run_dir(spec, run);
  core::make_dirs(rd);
  core::write_file_atomic(rd + "/checkpoint.sbck", "x");
  EXPECT_EQ(sweep::run_status(spec, run).state, sweep::State::kInterrupted);
  core::write_file_atomic(rd + "/summary.json", "{\n  \"status\": \"diverged\",\n  \"message\": \"NaN loss\"\n}\n");
  auto st = sweep::run_status(spec, run);
  EXPECT_EQ(st.state, sweep::State::kFailed);
  EXPECT_EQ(st.detail, "diverged: NaN loss");
  // The message is read as JSON: escaped quotes and backslashes come back as written.
  core::write_file_atomic(rd + "/summary.json",
                          "{\"status\": \"failed\", \"message\": \"no file \\\"a\\\\b\\\"\"}\n");
  EXPECT_EQ(sweep::run_status(spec, run).detail, "failed: no file \"a\\b\"");
  core::write_file_atomic(rd + "/summary.json",
                          "{\n  \"status\": \"finished\",\n  \"metric\": \"acc\",\n  \"final_metric\": 0.5\n}\n");
  st = sweep::run_status(spec, run);
  EXPECT_EQ(st.state, sweep::State::kDone);
  EXPECT_EQ(st.detail, "finished, acc 0.5");
  // A config mistake leaves no summary, only the sweep's exit file and log.
  std::filesystem::remove_all(rd);
  core::make_dirs(sweep::bookkeeping_dir(spec) + "/logs");
  core::write_file_atomic(sweep::exit_path(spec, run), "2\n");
  core::write_file_atomic(sweep::log_path(spec, run), "# cmd\nerror: unknown key\n");
  st = sweep::run_status(spec, run);
  EXPECT_EQ(st.state, sweep::State::kFailed);
  EXPECT_EQ(st.detail, "exit 2: error: unknown key");
}

// Issue 29, item 12: jobs: 0 was accepted (the lower bound of a whole number was not
// checked above zero), and so was a negative one.
TEST(Sweep, JobsAndThreadsBelowOneAreRefusedNamingTheKey) {
  for (const char* line : {"jobs: 0", "jobs: -3", "threads: 0", "slurm: {cpus_per_task: 0}"}) {
    TempDir dir;
    const std::string m = message_of([&] {
      sweep::load_spec(write_spec(dir, std::string("experiment: copy\nconfigs: [a.yaml]\n") + line + "\n"),
                       kExps);
    });
    EXPECT_NE(m.find("an integer in [1, 4096]"), std::string::npos) << line << ": " << m;
  }
}

// Issue 29, item 6: a grid of 10^9 points is counted and refused, never built (building
// it took 3.6 GB before bad_alloc).
TEST(Sweep, AGridTooLargeIsRefusedBeforeItIsExpanded) {
  TempDir dir;
  std::string values = "[";
  for (int i = 0; i < 1000; ++i) values += (i ? "," : "") + std::to_string(i);
  values += "]";
  const auto spec = sweep::load_spec(
      write_spec(dir, "experiment: copy\nconfigs: [a.yaml]\ngrid: {task.T: " + values +
                          ", model.hidden: " + values + ", optim.lr: " + values + "}\n"),
      kExps);
  EXPECT_EQ(sweep::count_runs(spec), 1e9);
  const std::string m = message_of([&] { sweep::expand(spec); });
  EXPECT_NE(m.find("the sweep has 1e+09 runs (configs x grid points x seeds), more than the 100000"),
            std::string::npos)
      << m;
  auto small = spec;
  small.grid.resize(1);
  EXPECT_EQ(sweep::expand(small).size(), 1000u);
}

// Issue 29, item 3: a claim another sweep holds makes the run running for everyone else;
// the holder reads the state under it.
TEST(Sweep, AClaimedRunIsRunningToOthersAndOnlyOneClaimIsGranted) {
  TempDir dir;
  auto spec = sweep::load_spec(write_spec(dir, "experiment: copy\nconfigs: [a.yaml]\n"), kExps);
  spec.out = dir / "out";
  const auto run = sweep::expand(spec).at(0);
  {
    auto claim = sweep::claim_run(spec, run);
    ASSERT_TRUE(claim.has_value());
    EXPECT_FALSE(sweep::claim_run(spec, run).has_value()) << "a second claim was granted";
    EXPECT_EQ(sweep::run_status(spec, run).state, sweep::State::kRunning);
    EXPECT_EQ(sweep::run_status(spec, run, /*claimed=*/true).state, sweep::State::kPending);
  }
  EXPECT_EQ(sweep::run_status(spec, run).state, sweep::State::kPending);
  EXPECT_TRUE(sweep::claim_run(spec, run).has_value());
}

TEST(Sweep, EveryCommittedSweepFileLoadsAndExpands) {
  int n = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(
           std::string(SEQBENCH_SOURCE_DIR) + "/configs")) {
    if (e.path().extension() != ".yaml") continue;
    const std::string text = core::read_file(e.path().string());
    if (text.find("\nexperiment:") == std::string::npos && text.rfind("experiment:", 0) != 0) continue;
    const auto spec = sweep::load_spec(e.path().string(), apps::sweepable_experiments());
    EXPECT_FALSE(sweep::expand(spec).empty()) << e.path();
    ++n;
  }
  EXPECT_GE(n, 1);
}
