#include "sweep/live.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/file_lock.hpp"
#include "core/fs.hpp"
#include "test_util.hpp"

using namespace seqbench;
using testutil::TempDir;

namespace {

const char* kHeader = "step,split,loss,acc,lr,grad_norm,elapsed_s\n";

void write_run(const std::string& dir, const std::string& config, const std::string& metrics) {
  core::make_dirs(dir);
  core::write_file_atomic(dir + "/config.yaml", config);
  core::write_file_atomic(dir + "/metrics.csv", metrics);
}

}  // namespace

TEST(Live, ProgressReadsTheLastCompleteRowAndTheBudget) {
  TempDir dir;
  // The row being written ("40,tr") is not read; a validation row counts like any other.
  write_run(dir / "r", "train:\n  steps: 100\n  target: 0.99\n",
            std::string(kHeader) + "10,train,1,0,0.1,1,1\n30,valid,1,0,0.1,1,3\n40,tr");
  const sweep::RunProgress p = sweep::run_progress(dir / "r");
  EXPECT_EQ(p.step, 30);
  EXPECT_EQ(p.total, 100);
  EXPECT_DOUBLE_EQ(p.elapsed_s, 3);
  EXPECT_TRUE(p.may_stop_early);
  EXPECT_DOUBLE_EQ(p.rate(), 10);
  EXPECT_DOUBLE_EQ(*p.eta_s(), 7);
  EXPECT_EQ(sweep::progress_text(p), "update 30/100, 10/s, ETA 7.0 s (to target or 100 updates)");
  // A long file: only its two ends are read, the header and the last row.
  std::string rows = kHeader;
  for (int s = 1; s <= 5000; ++s) rows += std::to_string(s) + ",train,1,0,0.1,1," + std::to_string(s) + "\n";
  write_run(dir / "long", "train: {steps: 10000}\n", rows);
  EXPECT_EQ(sweep::run_progress(dir / "long").step, 5000);
  // Nothing yet, or no such run: nothing known.
  write_run(dir / "new", "train: {steps: 10}\n", kHeader);
  EXPECT_EQ(sweep::progress_text(sweep::run_progress(dir / "new")), "starting");
  EXPECT_FALSE(sweep::run_progress(dir / "nosuch").eta_s().has_value());
}

TEST(Live, SweepEtaAddsRunningEtasAndTheDoneRunsMeanForEachRunToGo) {
  TempDir dir;
  sweep::Spec spec;
  spec.out = dir.path;
  spec.experiment = "copy";
  std::vector<sweep::Run> runs(4);
  const char* ids[] = {"a", "b", "c", "d"};
  for (size_t i = 0; i < runs.size(); ++i) runs[i].id = ids[i];
  // a, b done in 10 s and 20 s of training; c running, 7 s to go; d pending.
  for (const auto& [id, secs] : {std::pair{"a", 10}, std::pair{"b", 20}}) {
    write_run(dir / ("copy/" + std::string(id)), "train: {steps: 10}\n", kHeader);
    core::write_file_atomic(dir / ("copy/" + std::string(id) + "/summary.json"),
                            "{\"status\": \"finished\", \"train_seconds\": " + std::to_string(secs) + "}");
  }
  write_run(dir / "copy/c", "train: {steps: 100}\n", std::string(kHeader) + "30,train,1,0,0.1,1,3\n");
  const core::FileLock held(dir / "copy/c/.lock");
  sweep::SweepProgress p = sweep::sweep_progress(spec, runs, 1);
  EXPECT_EQ(p.done, 2);
  EXPECT_EQ(p.running, 1);
  EXPECT_EQ(p.to_go, 1);
  ASSERT_TRUE(p.eta_s.has_value());
  EXPECT_DOUBLE_EQ(*p.eta_s, 7 + 15);  // one at a time
  p = sweep::sweep_progress(spec, runs, 4);
  EXPECT_DOUBLE_EQ(*p.eta_s, 7);  // never less than the running run's own ETA
  EXPECT_EQ(sweep::progress_line(p),
            "[2/4 done, 1 running, 0 failed] c update 30/100, 10/s, ETA 7.0 s; sweep ETA 7.0 s");
  // A running run without a rate yet counts as a whole run of the done runs' mean.
  write_run(dir / "copy/c", "train: {steps: 100}\n", kHeader);
  p = sweep::sweep_progress(spec, runs, 1);
  ASSERT_TRUE(p.eta_s.has_value());
  EXPECT_DOUBLE_EQ(*p.eta_s, 15 + 15);
  EXPECT_EQ(sweep::progress_line(p), "[2/4 done, 1 running, 0 failed] c starting; sweep ETA 30 s");
  // With nothing done and no rate: not known yet.
  std::filesystem::remove_all(dir / "copy/a");
  std::filesystem::remove_all(dir / "copy/b");
  p = sweep::sweep_progress(spec, runs, 1);
  EXPECT_FALSE(p.eta_s.has_value());
  EXPECT_EQ(sweep::progress_line(p), "[0/4 done, 1 running, 0 failed] c starting; sweep ETA not known yet");
}
