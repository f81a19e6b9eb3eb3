// End-to-end tests of the estimate that `seqbench sweep --dry-run` prints and of
// `--calibrate`: the numbers from a synthetic finished run (deterministic: the files are
// written here, nothing is timed), the matching rule across directories, the "no
// estimate" message, and a real calibration and sweep leaving what the next estimate
// reads. No test asserts on how long anything took.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "cli/cli_util.hpp"
#include "report/csv.hpp"

using namespace seqbench;
using clitest::run;
namespace fs = std::filesystem;

namespace {

const std::string kFront = SEQBENCH_FRONT_BIN;
const std::string kSource = SEQBENCH_SOURCE_DIR;
const std::string kBase = "train.steps: 1000, train.eval_every: 100, task.T: 5, model.hidden: 8";
const std::string kSets = kBase + ", train.target: \"null\"";

// 2 configs x 2 seeds, 2 runs at once with 1 thread each.
std::string spec_file(const std::string& dir, const std::string& sets = kSets) {
  const std::string path = dir + "/s.yaml";
  clitest::write(path, "experiment: copy\n"
                       "configs: [" + kSource + "/configs/copy/lstm_small.yaml, " + kSource +
                           "/configs/copy/rnn.yaml]\n"
                       "set: {" + sets + "}\n"
                       "seeds: [1, 2]\n"
                       "jobs: 2\n"
                       "threads: 1\n"
                       "slurm: {cpus_per_task: 1, time: \"00:00:30\"}\n"
                       "out: " + dir + "/s\n");
  return path;
}

// 40 updates: 40 ms each after 0.1 s of warm-up, a validation of 0.2 s at 20 and at 40.
const char* kMetrics =
    "step,split,loss,acc,lr,grad_norm,elapsed_s\n"
    "10,train,1,0.1,0.001,1,0.5\n"
    "20,train,1,0.1,0.001,1,0.9\n"
    "20,valid,1,0.1,0.001,0,0.9\n"
    "30,train,1,0.1,0.001,1,1.5\n"
    "40,train,1,0.1,0.001,1,1.9\n"
    "40,valid,1,0.1,0.001,0,1.9\n";

// A finished run `id` of lstm_small under <results>/copy/, its config the one the sweep's
// runs resolve to with `edit` applied (a line replaced), its wall time 2.6 s when
// `sweep_dir` (its .sweep/logs) is given; `wall` is that file's text.
void finished_run(const std::string& dir, const std::string& results, const std::string& id,
                  const std::pair<std::string, std::string>& edit = {},
                  const std::string& wall = "2.6\n") {
  const auto dump = run(kFront + " copy --config " + kSource +
                            "/configs/copy/lstm_small.yaml --set train.steps=1000 --set "
                            "train.eval_every=100 --set task.T=5 --set model.hidden=8 "
                            "--seed 9 --dump-config",
                        dir);
  ASSERT_EQ(dump.code, 0) << dump.err;
  std::string cfg = dump.out;
  if (!edit.first.empty()) {
    const size_t at = cfg.find(edit.first);
    ASSERT_NE(at, std::string::npos) << edit.first;
    cfg.replace(at, edit.first.size(), edit.second);
  }
  fs::create_directories(results + "/copy/" + id);
  clitest::write(results + "/copy/" + id + "/config.yaml", cfg);
  clitest::write(results + "/copy/" + id + "/metrics.csv", kMetrics);
  clitest::write(results + "/copy/runs.csv",
                 "run_id,experiment,threads,status,updates,train_seconds\n" + id +
                     ",copy,1,finished,40,2.1\n");
  fs::create_directories(results + "/.sweep/logs");
  clitest::write(results + "/.sweep/logs/" + id + ".wall", wall);
}

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

}  // namespace

TEST(SweepEstimateCli, WithoutAMeasurementItSaysWhichRunsHaveNoEstimateAndHowToGetOne) {
  const std::string dir = clitest::fresh_dir("x");
  const std::string spec = spec_file(dir);
  const auto r = run(kFront + " sweep " + spec + " --dry-run", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "Estimate for the 4 runs to go")) << r.out;
  EXPECT_TRUE(has(r.out, "No estimate for 4 runs (2 configs: lstm_small, rnn)")) << r.out;
  EXPECT_TRUE(has(r.out, "seqbench sweep " + spec + " --calibrate")) << r.out;
  EXPECT_FALSE(has(r.out, "CPU time")) << "no number without a measurement:\n" << r.out;
  EXPECT_FALSE(fs::exists(dir + "/s")) << "a dry run writes nothing";
}

TEST(SweepEstimateCli, TheEstimateIsStartUpPlusUpdatesPlusValidationsFromTheSweepsOwnRuns) {
  const std::string dir = clitest::fresh_dir("x");
  const std::string spec = spec_file(dir);
  finished_run(dir, dir + "/s", "lstm_small-old");
  auto r = run(kFront + " sweep " + spec + " --dry-run", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  // 40 ms/update, 10 validations of 0.2 s, start-up 0.1 s warm-up + 0.5 s outside training:
  // 0.6 + 40 + 2 = 42.6 s per run.
  EXPECT_TRUE(has(r.out, "lstm_small     2      1000       40.0        10 x 0.2 s     0.6 s"))
      << r.out;
  EXPECT_TRUE(has(r.out, "43 s  this sweep: 1 run")) << r.out;
  EXPECT_TRUE(has(r.out, "CPU time of the 2 runs with an estimate: 0.0237 core-hours")) << r.out;
  // Both lstm_small runs at once.
  EXPECT_TRUE(has(r.out, "Wall time of the 2 runs with an estimate, local: 43 s (2 runs at once"))
      << r.out;
  EXPECT_TRUE(has(r.out, "No estimate for 2 runs (1 config: rnn)")) << r.out;
  EXPECT_FALSE(has(r.out, "On cores of their own")) << "no CPU time recorded:\n" << r.out;
  // Slurm: one task at a time on 1 core, and over the 30 s limit.
  r = run(kFront + " sweep " + spec + " --dry-run --backend slurm --slurm-cores 1", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "0.0237 core-hours allocated")) << r.out;
  EXPECT_TRUE(has(r.out, "slurm: 85 s with 1 cores (--slurm-cores): 1 task of 1 CPU")) << r.out;
  EXPECT_TRUE(has(r.out, "Over the time limit 00:00:30")) << r.out;
  // A target makes it an upper bound.
  EXPECT_FALSE(has(r.out, "Upper bound")) << r.out;
  const std::string early = spec_file(dir, kBase + ", train.target: 0.5");
  r = run(kFront + " sweep " + early + " --dry-run", dir);
  EXPECT_TRUE(has(r.out, "Upper bound: 2 runs stop early at train.target")) << r.out;
}

TEST(SweepEstimateCli, RunsElsewhereCountOnlyWithTheSameCostKeys) {
  const std::string dir = clitest::fresh_dir("x");
  const std::string spec = spec_file(dir);
  // Another seed and learning rate: the same cost.
  finished_run(dir, dir + "/elsewhere", "lstm-lr", {"lr: 0.005", "lr: 0.5"});
  auto r = run(kFront + " sweep " + spec + " --dry-run --estimate-from " + dir + "/elsewhere", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "43 s  " + dir + "/elsewhere/copy: 1 run")) << r.out;
  // Another hidden size: not the same cost, no estimate.
  fs::remove_all(dir + "/elsewhere");
  finished_run(dir, dir + "/elsewhere", "lstm-h9", {"hidden: 8", "hidden: 9"});
  r = run(kFront + " sweep " + spec + " --dry-run --estimate-from " + dir + "/elsewhere", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "No estimate for 4 runs (2 configs: lstm_small, rnn)")) << r.out;
  EXPECT_TRUE(has(r.out, dir + "/elsewhere/")) << "names where it looked:\n" << r.out;
}

TEST(SweepEstimateCli, CalibrateMeasuresEachConfigOnceAndTheSweepRecordsWallTimes) {
  const std::string dir = clitest::fresh_dir("x");
  const std::string spec = spec_file(dir, "train.steps: 20, train.eval_every: 10, task.T: 5, model.hidden: 8");
  auto r = run(kFront + " sweep " + spec + " --calibrate --calibrate-updates 6 --calibrate-seconds 0", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.err, "calibrated 2 configs, 0 had a measurement, 0 failed")) << r.err;
  const auto cal = report::read_csv(dir + "/s/.sweep/calibrate/copy/runs.csv");
  ASSERT_EQ(cal.rows.size(), 2u);
  EXPECT_EQ(cal.rows[0][size_t(cal.col("updates"))], "6");
  EXPECT_TRUE(fs::exists(dir + "/s/.sweep/calibrate/.sweep/logs/lstm_small-t1-cal.wall"));
  EXPECT_FALSE(has(r.out, "no estimate")) << r.out;
  EXPECT_TRUE(has(r.out, "calibration, 6 updates")) << r.out;
  // Measured already: nothing runs again.
  r = run(kFront + " sweep " + spec + " --calibrate", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.err, "calibrated 0 configs, 2 had a measurement")) << r.err;
  // The sweep's runs record their wall times; then nothing is left to estimate.
  ASSERT_EQ(run(kFront + " sweep " + spec + " -q", dir).code, 0);
  for (const char* id : {"lstm_small-s1", "lstm_small-s2", "rnn-s1", "rnn-s2"}) {
    std::istringstream in(clitest::slurp(dir + "/s/.sweep/logs/" + id + ".wall"));
    double wall = 0, cpu = -1;
    EXPECT_TRUE(in >> wall >> cpu) << id;  // wall seconds, CPU seconds
    EXPECT_GT(wall, 0) << id;
    EXPECT_GE(cpu, 0) << id;
  }
  r = run(kFront + " sweep " + spec + " --dry-run", dir);
  EXPECT_TRUE(has(r.out, "Estimate: nothing left to run (4 done")) << r.out;
}

TEST(SweepEstimateCli, MeasurementsThatGotHalfACoreAlsoGiveTheTimeOnCoresOfTheirOwn) {
  const std::string dir = clitest::fresh_dir("x");
  const std::string spec = spec_file(dir);
  // 2.6 s of wall time, 1.3 s of it on the CPU.
  finished_run(dir, dir + "/s", "lstm_small-old", {}, "2.6 1.3\n");
  const auto r = run(kFront + " sweep " + spec + " --dry-run", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "Wall time of the 2 runs with an estimate, local: 43 s")) << r.out;
  // 42.6 s x 0.5 per run, both at once.
  EXPECT_TRUE(has(r.out, "On cores of their own: the measurements got 50% of a core")) << r.out;
  EXPECT_TRUE(has(r.out, "CPU time 0.0118 core-hours, wall time 21 s")) << r.out;
}

// Issue 29: a dry run resolved every grid point with a process of its own, so a 10^4-point
// grid took 104 s and a 10^5-point one hung. Past a few hundred configs the estimate is
// not made (it says so), and the listing of the full 10^5 runs comes out whole.
TEST(SweepEstimateCli, ADryRunOfTheLargestGridListsEveryRunAndSkipsTheEstimate) {
  const std::string dir = clitest::fresh_dir("x");
  std::string Ts, hs;
  for (int i = 1; i <= 1000; ++i) Ts += (i > 1 ? ", " : "") + std::to_string(i);
  for (int i = 1; i <= 100; ++i) hs += (i > 1 ? ", " : "") + std::to_string(i);
  clitest::write(dir + "/big.yaml", "experiment: copy\nconfigs: [" + kSource +
                                        "/configs/copy/lstm_small.yaml]\ngrid:\n  task.T: [" + Ts +
                                        "]\n  model.hidden: [" + hs + "]\nout: " + dir + "/big\n");
  const auto r = run(kFront + " sweep big.yaml --dry-run", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "99999  pending      seqbench copy --config ")) << r.out.substr(0, 2000);
  EXPECT_TRUE(has(r.out, "lstm_small-T1000-hidden100-s1")) << r.out.substr(r.out.size() - 2000);
  EXPECT_TRUE(has(r.out, "\n100000 run(s) into " + dir + "/big/copy/")) << r.out.substr(r.out.size() - 2000);
  EXPECT_TRUE(has(r.out, "Estimate: not made: the 100000 runs to go (0 done, 0 running, 0 failed) "
                         "have 100000 distinct configs, more than the 200"))
      << r.out.substr(r.out.size() - 2000);
  EXPECT_EQ(clitest::count_lines(r.out), 100000 + 3) << r.out.substr(r.out.size() - 2000);
  EXPECT_FALSE(fs::exists(dir + "/big")) << "a dry run writes nothing";
}
