// The arithmetic of a sweep's estimate (lib/sweep/estimate.hpp) on synthetic files: what a
// finished run measured, the matching rule, the cost of a planned run and the wall time
// of runs N at a time. Nothing here is timed.
#include "sweep/estimate.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "core/fs.hpp"
#include "test_util.hpp"

using namespace seqbench;
using testutil::TempDir;

namespace {

// 40 updates: 10 updates of 40 ms after 0.1 s of warm-up, a validation of 0.2 s at 20 and
// at 40 (the last, which ends at train_seconds 2.1).
const char* kMetrics =
    "step,split,loss,acc,lr,grad_norm,elapsed_s\n"
    "10,train,1,0.1,0.001,1,0.5\n"
    "20,train,1,0.1,0.001,1,0.9\n"
    "20,valid,1,0.1,0.001,0,0.9\n"
    "30,train,1,0.1,0.001,1,1.5\n"
    "40,train,1,0.1,0.001,1,1.9\n"
    "40,valid,1,0.1,0.001,0,1.9\n";

const char* kConfig =
    "task:\n  name: copy\n  T: 100\nmodel:\n  cell: lstm\n  hidden: 128\n"
    "optim:\n  name: rmsprop\n  lr: 0.001\n"
    "train:\n  seed: 1\n  threads: 1\n  batch: 10\n  steps: 1000\n  eval_every: 100\n"
    "  eval_batches: 20\n  target: null\n  patience: 0\n"
    "output:\n  dir: results\n  run_id: x\n  label: lstm\n";

sweep::FlatConfig with(const std::string& key, const std::string& value) {
  sweep::FlatConfig c = sweep::flatten_config(kConfig, "test");
  c[key] = value;
  return c;
}

sweep::Measurement at(const std::string& key, int64_t threads, int rank, double train_ms) {
  sweep::Measurement m;
  m.cost_key = key;
  m.threads = threads;
  m.rank = rank;
  m.train_ms = train_ms;
  m.valid_s = 1;
  m.start_s = 2;
  m.start_known = true;
  return m;
}

}  // namespace

TEST(Estimate, ValidationsFollowTheTrainersRule) {
  EXPECT_EQ(sweep::validations(1000, 500), 2);
  EXPECT_EQ(sweep::validations(1001, 500), 3);  // every 500 and one at the end
  EXPECT_EQ(sweep::validations(10, 0), 1);      // only at the end
  EXPECT_EQ(sweep::validations(0, 100), 0);
}

TEST(Estimate, AFinishedRunsRowsGiveTheSteadyRateValidationAndStartUp) {
  const sweep::Measurement m = sweep::measure(kMetrics, 40, 2.1, 2.6);
  EXPECT_NEAR(m.valid_s, 0.2, 1e-9);
  // (1.9 - 0.5 - one validation) / 30 updates.
  EXPECT_NEAR(m.train_ms, 40.0, 1e-9);
  // Warm-up (0.5 - 10 x 40 ms) + outside training (2.6 - 2.1).
  EXPECT_NEAR(m.start_s, 0.6, 1e-9);
  EXPECT_TRUE(m.start_known);
  const sweep::Measurement no_wall = sweep::measure(kMetrics, 40, 2.1, std::nullopt);
  EXPECT_NEAR(no_wall.start_s, 0.1, 1e-9);
  EXPECT_FALSE(no_wall.start_known);
  // A run without a validation at its last update measures nothing.
  EXPECT_THROW(sweep::measure("step,split,loss,acc,lr,grad_norm,elapsed_s\n10,train,1,1,1,1,1\n",
                              10, 1.0, std::nullopt),
               core::Error);
}

TEST(Estimate, ARunCostsStartUpPlusUpdatesPlusValidations) {
  sweep::Measurement m = sweep::measure(kMetrics, 40, 2.1, 2.6);
  m.cost_key = sweep::cost_key(sweep::flatten_config(kConfig, "test"));
  m.threads = 1;
  const sweep::Plan plan = sweep::plan_of(sweep::flatten_config(kConfig, "test"));
  EXPECT_TRUE(plan.training);
  EXPECT_EQ(plan.updates, 1000);
  EXPECT_EQ(plan.eval_every, 100);
  EXPECT_FALSE(plan.may_stop_early);
  const sweep::RunEstimate e = sweep::estimate_run(plan, 1, {m});
  ASSERT_TRUE(e.ok);
  EXPECT_EQ(e.validations, 10);
  // 0.6 + 1000 x 40 ms + 10 x 0.2 s.
  EXPECT_NEAR(e.seconds, 42.6, 1e-9);
  EXPECT_TRUE(sweep::plan_of(with("train.target", "0.99")).may_stop_early);
  EXPECT_TRUE(sweep::plan_of(with("train.patience", "3")).may_stop_early);
}

TEST(Estimate, TheMatchingRuleIgnoresOnlyKeysThatDoNotChangeTheCostOfAnUpdate) {
  const std::string base = sweep::cost_key(sweep::flatten_config(kConfig, "test"));
  for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"train.seed", "7"}, {"train.threads", "4"}, {"train.steps", "5"},
           {"train.eval_every", "7"}, {"train.target", "0.5"}, {"optim.lr", "0.1"},
           {"optim.name", "adam"}, {"output.label", "other"}, {"train.log_every", "3"}})
    EXPECT_EQ(sweep::cost_key(with(k, v)), base) << k;
  for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"task.T", "200"}, {"model.hidden", "64"}, {"model.cell", "rel_lstm"},
           {"train.batch", "20"}, {"train.eval_batches", "5"}, {"train.bptt", "10"},
           {"model.attention", "local:2"}})
    EXPECT_NE(sweep::cost_key(with(k, v)), base) << k;
}

TEST(Estimate, ARunThatMissesByOneCostKeyIsNamedByThatKey) {
  const std::string want = sweep::cost_key(with("train.gemm", "auto"));
  const auto measured = [](const std::string& key) {
    sweep::Measurement m;
    m.cost_key = key;
    return m;
  };
  // One run made with the old default (train.gemm onednn), one at another T and batch
  // (two keys: not a near miss), one with the same cost key (a match, not a miss).
  const std::vector<sweep::Measurement> ms{measured(sweep::cost_key(with("train.gemm", "onednn"))),
                                           measured(sweep::cost_key(with("train.batch", "20")) + "task.T=7\n"),
                                           measured(want)};
  EXPECT_EQ(sweep::near_miss_keys(want, ms), (std::set<std::string>{"train.gemm"}));
  // A key one side lacks (a key added since the run) is a near miss too.
  std::string without = want;
  const size_t at = without.find("train.gemm=");
  without.erase(at, without.find('\n', at) + 1 - at);
  EXPECT_EQ(sweep::near_miss_keys(want, {measured(without)}), (std::set<std::string>{"train.gemm"}));
  EXPECT_TRUE(sweep::near_miss_keys(want, {measured(want)}).empty());
}

TEST(Estimate, MeasurementsWithTheMostThreadsUpToTheRunsThenTheBestRankStandForIt) {
  sweep::Plan plan;
  plan.cost_key = "k";
  plan.updates = 1000;
  plan.eval_every = 0;
  // Another config and more threads than the run gets never count.
  EXPECT_FALSE(sweep::estimate_run(plan, 1, {at("other", 1, 0, 5), at("k", 2, 0, 5)}).ok);
  // Fewer threads count (an upper bound), the most of them first; then rank; then median.
  const std::vector<sweep::Measurement> ms{at("k", 1, 0, 50), at("k", 2, 2, 30),
                                           at("k", 2, 1, 20), at("k", 2, 1, 40),
                                           at("k", 2, 1, 10), at("k", 4, 0, 1)};
  const sweep::RunEstimate e = sweep::estimate_run(plan, 2, ms);
  ASSERT_TRUE(e.ok);
  EXPECT_EQ(e.measured_threads, 2);
  EXPECT_EQ(e.used.size(), 3u);
  EXPECT_DOUBLE_EQ(e.train_ms, 20);  // median of 20, 40, 10
  EXPECT_DOUBLE_EQ(e.seconds, 2 + 1000 * 0.020 + 1 * 1);
  const sweep::RunEstimate one = sweep::estimate_run(plan, 1, ms);
  ASSERT_TRUE(one.ok);
  EXPECT_EQ(one.measured_threads, 1);
  EXPECT_DOUBLE_EQ(one.train_ms, 50);
}

TEST(Estimate, RunsNAtATimeEndWithTheLastSlotToFree) {
  EXPECT_DOUBLE_EQ(sweep::makespan({3, 1, 1, 1}, 2), 3);
  EXPECT_DOUBLE_EQ(sweep::makespan({1, 1, 1}, 1), 3);
  EXPECT_DOUBLE_EQ(sweep::makespan({2, 2, 2}, 2), 4);
  EXPECT_DOUBLE_EQ(sweep::makespan({2, 2, 2}, 64), 2);
  EXPECT_DOUBLE_EQ(sweep::makespan({}, 2), 0);
}

TEST(Estimate, SlurmTimeLimitsAndDurationsRead) {
  EXPECT_EQ(sweep::parse_slurm_time("7-00:00:00"), 7 * 86400.0);
  EXPECT_EQ(sweep::parse_slurm_time("02:00:00"), 7200.0);
  EXPECT_EQ(sweep::parse_slurm_time("30"), 1800.0);
  EXPECT_EQ(sweep::parse_slurm_time("10:30"), 630.0);
  EXPECT_EQ(sweep::parse_slurm_time("1-12"), 36 * 3600.0);
  EXPECT_FALSE(sweep::parse_slurm_time("").has_value());
  EXPECT_FALSE(sweep::parse_slurm_time("two hours").has_value());
  EXPECT_EQ(sweep::format_duration(4.26), "4.3 s");
  EXPECT_EQ(sweep::format_duration(42.6), "43 s");
  EXPECT_EQ(sweep::format_duration(750), "12.5 min");
  EXPECT_EQ(sweep::format_duration(3 * 3600), "3.0 h");
  EXPECT_EQ(sweep::format_duration(5 * 86400), "5.0 days (120 h)");
}

TEST(Estimate, FinishedRunsAreReadFromRunsCsvTheirDirectoriesAndTheSweepsWallTimes) {
  TempDir dir;
  const std::string exp = dir / "copy";
  core::make_dirs(exp + "/a-s1");
  core::make_dirs(exp + "/b-s1");
  core::make_dirs(dir / ".sweep/logs");
  core::write_file_atomic(exp + "/runs.csv",
                          "run_id,experiment,threads,status,updates,train_seconds\n"
                          "a-s1,copy,1,finished,40,2.1\n"
                          "b-s1,copy,1,diverged,3,0.1\n"
                          "gone-s1,copy,1,finished,40,2.1\n");
  for (const char* id : {"a-s1", "b-s1"}) {
    core::write_file_atomic(exp + "/" + id + "/config.yaml", kConfig);
    core::write_file_atomic(exp + "/" + id + "/metrics.csv", kMetrics);
  }
  core::write_file_atomic(dir / ".sweep/logs/a-s1.wall", "2.6 1.3\n");
  const auto ms = sweep::read_measurements(exp + "/runs.csv", "here", 0);
  // b diverged; gone has no directory.
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].run_dir, exp + "/a-s1");
  EXPECT_EQ(ms[0].source, "here");
  EXPECT_EQ(ms[0].threads, 1);
  EXPECT_NEAR(ms[0].train_ms, 40, 1e-9);
  EXPECT_NEAR(ms[0].start_s, 0.6, 1e-9);
  EXPECT_TRUE(ms[0].start_known);
  // 1.3 s of CPU in 2.6 s on one thread: half a core.
  EXPECT_TRUE(ms[0].share_known);
  EXPECT_NEAR(ms[0].cpu_share, 0.5, 1e-9);
  EXPECT_EQ(ms[0].cost_key, sweep::cost_key(sweep::flatten_config(kConfig, "test")));
  EXPECT_TRUE(sweep::read_measurements(dir / "none/runs.csv", "x", 0).empty());
}
