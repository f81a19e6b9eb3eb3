// End-to-end tests of the copy experiment's binaries: config errors, results files,
// interruption and bit-exact resume, the front door.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli/cli_util.hpp"
#include "optim/projection.hpp"
#include "report/csv.hpp"
#include "train/checkpoint.hpp"

using namespace seqbench;
using clitest::run;
namespace fs = std::filesystem;

namespace {

const std::string kCopy = SEQBENCH_COPY_BIN;
const std::string kFront = SEQBENCH_FRONT_BIN;

const char* kTiny = R"(task: {name: copy, T: 4, copy_len: 3, n_symbols: 4}
model: {hidden: 8}
optim: {name: adam, lr: 0.01}
train: {batch: 4, steps: 30, log_every: 5, eval_every: 10, eval_batches: 2, gradnorm_every: 10, threads: 2}
output: {dir: results}
)";

std::string only_run_dir(const std::string& root) {
  std::string found;
  int n = 0;
  for (const auto& e : fs::directory_iterator(root + "/results/copy"))
    if (e.is_directory()) found = e.path().string(), ++n;
  EXPECT_EQ(n, 1);
  return found;
}

}  // namespace

struct BadConfig {
  const char* name;
  const char* yaml;
  int line;
  const char* must_contain;
};

void PrintTo(const BadConfig& b, std::ostream* os) { *os << b.name; }

class CopyConfigErrors : public ::testing::TestWithParam<BadConfig> {};

TEST_P(CopyConfigErrors, ExitTwoWithOneLineNamingKeyAndLineAndWriteNothing) {
  const BadConfig& bad = GetParam();
  const std::string dir = clitest::fresh_dir(bad.name);
  clitest::write(dir + "/bad.yaml", bad.yaml);
  const auto r = run(kCopy + " --config bad.yaml", dir);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("bad.yaml:" + std::to_string(bad.line)), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(bad.must_contain), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/results")) << "a failed config must not create results/";
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, CopyConfigErrors,
    ::testing::Values(
        BadConfig{"unknown_key", "task: {T: 5}\noptim:\n  lrr: 0.1\n", 3,
                  "unknown key 'optim.lrr' (did you mean 'optim.lr'?)"},
        BadConfig{"wrong_type", "train:\n  batch: many\n", 2, "train.batch: expected an integer"},
        BadConfig{"bad_value", "model:\n  hidden: 8\n  backend: cudnn\n", 3, "model.backend"},
        BadConfig{"out_of_range", "optim:\n  lr: -1\n", 2, "optim.lr: must be > 0"},
        BadConfig{"malformed", "task:\n  T: [1, 2\n", 3, "malformed YAML"}),
    [](const auto& p) { return std::string(p.param.name); });

TEST(CopyCli, MissingConfigFileAndBadOptionAreUsageErrors) {
  const std::string dir = clitest::fresh_dir("x");
  auto r = run(kCopy + " --config nope.yaml", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("nope.yaml"), std::string::npos) << r.err;
  r = run(kCopy + " --bogus", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  r = run(kCopy + " --demo --set model.backend=onednn --set train.bptt=3", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("model.backend: ours"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/results"));
}

TEST(CopyCli, DumpConfigShowsResolvedValuesLaterSourcesWin) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/a.yaml", "model: {hidden: 16}\ntrain: {steps: 7}\n");
  clitest::write(dir + "/b.yaml", "model: {hidden: 32}\n");
  const auto r = run(kCopy + " --config a.yaml --config b.yaml --set train.batch=3 --dump-config", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("hidden: 32"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("steps: 7"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("batch: 3"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir + "/results"));
}

TEST(CopyCli, WritesEveryResultsFileWithDocumentedColumns) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  const auto r = run(kCopy + " --config tiny.yaml --run-id r1", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string run_dir = dir + "/results/copy/r1";
  for (const char* f : {"config.yaml", "metrics.csv", "summary.json", "gradnorm.csv", "log.txt",
                        "checkpoint.sbck"})
    EXPECT_TRUE(fs::exists(run_dir + "/" + f)) << f;
  const auto metrics = report::read_csv(run_dir + "/metrics.csv");
  EXPECT_EQ(metrics.columns, (std::vector<std::string>{"step", "split", "loss", "acc", "lr",
                                                       "grad_norm", "elapsed_s"}));
  int train_rows = 0, valid_rows = 0;
  for (const auto& row : metrics.rows) (row[1] == "train" ? train_rows : valid_rows)++;
  EXPECT_EQ(train_rows, 6);  // every 5 of 30 updates
  EXPECT_EQ(valid_rows, 3);  // every 10
  const auto grad = report::read_csv(run_dir + "/gradnorm.csv");
  EXPECT_EQ(grad.columns, (std::vector<std::string>{"step", "t", "distance", "norm"}));
  // Probes at steps 0, 10, 20, 30, each covering all L = T + 2 copy_len = 10 steps.
  EXPECT_EQ(grad.rows.size(), 4u * 10u);
  EXPECT_EQ(grad.rows[0][2], "9");  // t = 0 is 9 steps before the last output
  EXPECT_GT(std::stod(grad.rows[9][3]), 0.0);
  const auto runs = report::read_csv(dir + "/results/copy/runs.csv");
  ASSERT_EQ(runs.rows.size(), 1u);
  for (const char* c : {"run_id", "experiment", "label", "task", "T", "model", "backend", "hidden",
                        "params", "status", "updates", "metric", "final_metric", "best_metric",
                        "train_seconds", "ms_per_update", "peak_rss_mb", "data"})
    EXPECT_TRUE(runs.has(c)) << c;
  EXPECT_EQ(runs.rows[0][runs.col("status")], "finished");
  EXPECT_EQ(runs.rows[0][runs.col("updates")], "30");
  EXPECT_EQ(runs.rows[0][runs.col("data")], "synthetic");
  const std::string summary = clitest::slurp(run_dir + "/summary.json");
  EXPECT_NE(summary.find("\"status\": \"finished\""), std::string::npos) << summary;
  EXPECT_NE(r.out.find("| label"), std::string::npos) << "Markdown summary table on stdout";
  // The same run id again is refused without --resume, and nothing is overwritten.
  const auto again = run(kCopy + " --config tiny.yaml --run-id r1", dir);
  EXPECT_EQ(again.code, 2);  // a usage mistake
  EXPECT_NE(again.err.find("--resume"), std::string::npos) << again.err;
  EXPECT_EQ(report::read_csv(dir + "/results/copy/runs.csv").rows.size(), 1u);
}

class CopyResume : public ::testing::TestWithParam<const char*> {};

TEST_P(CopyResume, InterruptedThenResumedEqualsUninterruptedBitForBit) {
  const std::string dir = clitest::fresh_dir(GetParam());
  clitest::write(dir + "/tiny.yaml", kTiny);
  const std::string common =
      kCopy + " --config tiny.yaml --set model.backend=" + GetParam() + " --set optim.name=rmsprop --set optim.momentum=0.5";
  auto full = run(common + " --run-id full", dir);
  ASSERT_EQ(full.code, 0) << full.err;
  auto part = run(common + " --run-id part --interrupt-at 17", dir);
  ASSERT_EQ(part.code, 130) << part.err;
  EXPECT_NE(part.err.find("--resume"), std::string::npos) << part.err;
  EXPECT_EQ(report::read_csv(dir + "/results/copy/runs.csv").rows.size(), 1u)
      << "an interrupted run is not a finished run";
  auto rest = run(kCopy + " --run-id part --resume", dir);
  ASSERT_EQ(rest.code, 0) << rest.err;

  const auto a = train::load_checkpoint(dir + "/results/copy/full/checkpoint.sbck");
  const auto b = train::load_checkpoint(dir + "/results/copy/part/checkpoint.sbck");
  ASSERT_EQ(a.arrays.size(), b.arrays.size());
  for (size_t i = 0; i < a.arrays.size(); ++i) {
    EXPECT_EQ(a.arrays[i].name, b.arrays[i].name);
    EXPECT_EQ(a.arrays[i].data, b.arrays[i].data) << a.arrays[i].name << " differs";
  }
  EXPECT_EQ(a.get_string("step"), "30");
  EXPECT_EQ(b.get_string("step"), "30");
  // The metrics of both runs agree row by row (except wall-clock), with no duplicates.
  const auto ma = report::read_csv(dir + "/results/copy/full/metrics.csv");
  const auto mb = report::read_csv(dir + "/results/copy/part/metrics.csv");
  ASSERT_EQ(ma.rows.size(), mb.rows.size());
  for (size_t i = 0; i < ma.rows.size(); ++i)
    for (int c = 0; c < 6; ++c) EXPECT_EQ(ma.rows[i][c], mb.rows[i][c]) << "row " << i;
  EXPECT_EQ(report::read_csv(dir + "/results/copy/runs.csv").rows.size(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Backends, CopyResume, ::testing::Values("ours", "onednn"));

TEST(FrontDoor, DispatchesToTheExperimentAndRejectsUnknownOnes) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  auto r = run(kFront + " copy --config tiny.yaml --set train.steps=5 -q", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(only_run_dir(dir).empty());
  r = run(kFront + " kopy", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown experiment 'kopy' (have: copy"), std::string::npos) << r.err;
  r = run(kFront, dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("usage"), std::string::npos);
}

TEST(CopyCli, DivergenceStopsWithOneLineErrorAndKeepsWhatWasWritten) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  // Plain SGD with an absurd step and no clipping overflows within a few updates.
  const auto r = run(kCopy + " --config tiny.yaml --run-id boom --set optim.name=sgd "
                             "--set optim.lr=3e38 --set optim.clip=0",
                     dir);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("error: training diverged at update"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("hint: lower optim.lr"), std::string::npos) << r.err;
  // It names the first tensor that went non-finite (here the forward pass overflows on
  // huge but finite weights, so the loss).
  EXPECT_NE(r.err.find("first non-finite: the loss"), std::string::npos) << r.err;
  const std::string run_dir = dir + "/results/copy/boom";
  EXPECT_TRUE(fs::exists(run_dir + "/config.yaml"));
  EXPECT_NE(clitest::slurp(run_dir + "/summary.json").find("\"status\": \"diverged\""),
            std::string::npos);
  const auto runs = report::read_csv(dir + "/results/copy/runs.csv");
  ASSERT_EQ(runs.rows.size(), 1u);
  EXPECT_EQ(runs.rows[0][runs.col("status")], "diverged");
  // It diverged before its first validation: no final or best value (never a 0 that
  // reads like a result), no promise of a checkpoint that was never written, and the
  // message once.
  EXPECT_EQ(runs.rows[0][runs.col("final_metric")], "nan");
  EXPECT_EQ(runs.rows[0][runs.col("best_metric")], "nan");
  const std::string summary = clitest::slurp(run_dir + "/summary.json");
  EXPECT_NE(summary.find("\"final_metric\": null"), std::string::npos) << summary;
  EXPECT_FALSE(fs::exists(run_dir + "/checkpoint.sbck"));
  EXPECT_NE(r.err.find("no checkpoint had been written yet"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("last checkpoint is untouched"), std::string::npos) << r.err;
  size_t times = 0;
  for (size_t at = r.err.find("training diverged"); at != std::string::npos;
       at = r.err.find("training diverged", at + 1))
    ++times;
  EXPECT_EQ(times, 1u) << r.err;
}

TEST(CopyCli, ThreadsBeyondFourPerCoreAndNumericRunIdsAreHandled) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  // Without --force-threads the count is capped to the cores (tests/cli/memory_cli_test.cpp);
  // forced, more than 4 per core is still refused.
  auto r = run(kCopy + " --config tiny.yaml --threads 4096 --force-threads", dir);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("train.threads: 4096 is more than 4 per core"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir + "/results"));
  // A run id that reads as a number stays a string in summary.json.
  r = run(kCopy + " --config tiny.yaml --run-id nan -q", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(clitest::slurp(dir + "/results/copy/nan/summary.json").find("\"run_id\": \"nan\""),
            std::string::npos);
}

TEST(CopyCli, ResumeFromCorruptOrMissingCheckpointFailsNamingTheFile) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  ASSERT_EQ(run(kCopy + " --config tiny.yaml --run-id r --interrupt-at 3", dir).code, 130);
  const std::string ck = dir + "/results/copy/r/checkpoint.sbck";
  const std::string bytes = clitest::slurp(ck);
  clitest::write(ck, bytes.substr(0, bytes.size() / 2));
  auto r = run(kCopy + " --run-id r --resume", dir);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("checkpoint.sbck"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
  fs::remove(ck);
  r = run(kCopy + " --run-id r --resume", dir);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("checkpoint.sbck"), std::string::npos) << r.err;
  r = run(kCopy + " --run-id nosuch --resume", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no run at"), std::string::npos) << r.err;
}

TEST(CopyCli, AResumeThatWouldChangeTheRunIsRefusedAndTouchesNothing) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  ASSERT_EQ(run(kCopy + " --config tiny.yaml --run-id r --interrupt-at 3", dir).code, 130);
  const std::string rd = dir + "/results/copy/r/";
  const std::string config = clitest::slurp(rd + "config.yaml"),
                    metrics = clitest::slurp(rd + "metrics.csv"),
                    gradnorm = clitest::slurp(rd + "gradnorm.csv");
  for (const std::string& change : std::vector<std::string>{
           "--set model.hidden=64", "--seed 9", "--set task.T=10", "--set optim.lr=0.5"}) {
    const auto r = run(kCopy + " --run-id r --resume " + change, dir);
    EXPECT_EQ(r.code, 2) << change << ": " << r.err;
    EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("a resumed run continues as it was"), std::string::npos) << r.err;
    EXPECT_EQ(clitest::slurp(rd + "config.yaml"), config) << change;
    EXPECT_EQ(clitest::slurp(rd + "metrics.csv"), metrics) << change;
    EXPECT_EQ(clitest::slurp(rd + "gradnorm.csv"), gradnorm) << change;
  }
  EXPECT_NE(run(kCopy + " --run-id r --resume --set model.hidden=64", dir).err.find("model.hidden"),
            std::string::npos);
  // The plain resume still works afterwards.
  ASSERT_EQ(run(kCopy + " --run-id r --resume -q", dir).code, 0);
  EXPECT_EQ(report::read_csv(dir + "/results/copy/runs.csv").rows.size(), 1u);
  // Extending the finished run replaces its runs.csv row instead of adding one.
  const auto more = run(kCopy + " --run-id r --resume -q --set train.steps=40", dir);
  ASSERT_EQ(more.code, 0) << more.err;
  const auto runs = report::read_csv(dir + "/results/copy/runs.csv");
  ASSERT_EQ(runs.rows.size(), 1u);
  EXPECT_EQ(runs.rows[0][runs.col("updates")], "40");
}

// Issue 29, item 5: the checkpoint holds the config it was written with, so a config.yaml
// edited by hand (task.T and the seed here) is refused naming both keys, and nothing of
// the run changes.
TEST(CopyCli, AResumeRefusesAConfigYamlEditedAfterTheCheckpoint) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  ASSERT_EQ(run(kCopy + " --config tiny.yaml --run-id r --interrupt-at 3", dir).code, 130);
  const std::string rd = dir + "/results/copy/r/";
  const std::string config = clitest::slurp(rd + "config.yaml"),
                    metrics = clitest::slurp(rd + "metrics.csv");
  std::string edited = config;
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"  T: 4\n", "  T: 5\n"}, {"  seed: 1\n", "  seed: 7\n"}}) {
    const size_t at = edited.find(from);
    ASSERT_NE(at, std::string::npos) << from << " not in\n" << config;
    edited.replace(at, from.size(), to);
  }
  clitest::write(rd + "config.yaml", edited);
  const auto r = run(kCopy + " --run-id r --resume", dir);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("differs from the one its checkpoint"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("task.T 4 -> 5"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("train.seed 1 -> 7"), std::string::npos) << r.err;
  EXPECT_EQ(clitest::slurp(rd + "metrics.csv"), metrics);
  EXPECT_EQ(clitest::slurp(rd + "config.yaml"), edited);
  // Put back, it resumes.
  clitest::write(rd + "config.yaml", config);
  EXPECT_EQ(run(kCopy + " --run-id r --resume -q", dir).code, 0);
}

// Issue 29, item 4: a checkpoint edited to step -5 (its checksum recomputed, as a careful
// editor would) is refused before the resume cuts metrics.csv and gradnorm.csv.
TEST(CopyCli, AResumeChecksTheRestoredCountersBeforeTouchingAnyFile) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  ASSERT_EQ(run(kCopy + " --config tiny.yaml --run-id r --interrupt-at 12", dir).code, 130);
  const std::string rd = dir + "/results/copy/r/";
  const std::string metrics = clitest::slurp(rd + "metrics.csv"),
                    gradnorm = clitest::slurp(rd + "gradnorm.csv");
  ASSERT_GT(clitest::count_lines(metrics), 1);
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"step", "-5"}, {"optimizer_steps", "-1"}, {"best_step", "99"}, {"elapsed_s", "-3"}}) {
    train::Checkpoint ck = train::load_checkpoint(rd + "checkpoint.sbck");
    for (auto& [k, v] : ck.meta)
      if (k == key) v = value;
    train::save_checkpoint(dir + "/edited.sbck", ck);
    fs::copy_file(rd + "checkpoint.sbck", dir + "/good.sbck", fs::copy_options::overwrite_existing);
    fs::copy_file(dir + "/edited.sbck", rd + "checkpoint.sbck", fs::copy_options::overwrite_existing);
    const auto r = run(kCopy + " --run-id r --resume", dir);
    EXPECT_EQ(r.code, 1) << key << ": " << r.err;
    EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(key + " is "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("damaged or edited"), std::string::npos) << r.err;
    EXPECT_EQ(clitest::slurp(rd + "metrics.csv"), metrics) << key;
    EXPECT_EQ(clitest::slurp(rd + "gradnorm.csv"), gradnorm) << key;
    fs::copy_file(dir + "/good.sbck", rd + "checkpoint.sbck", fs::copy_options::overwrite_existing);
  }
  EXPECT_EQ(run(kCopy + " --run-id r --resume -q", dir).code, 0);
}

// Issue 29, item 12: an empty --out is an error, not ignored; the "Continue with" line
// quotes a directory with a space, so that it can be pasted as it is.
TEST(CopyCli, AnEmptyOutIsRefusedAndTheContinueLineQuotesPaths) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  auto r = run(kCopy + " --config tiny.yaml --out ''", dir);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--out"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/results"));
  r = run(kCopy + " --config tiny.yaml --out 'my results' --run-id r --interrupt-at 3", dir);
  ASSERT_EQ(r.code, 130) << r.err;
  const std::string line = "seqbench copy --out 'my results' --run-id r --resume";
  const size_t at = r.err.find(line);
  ASSERT_NE(at, std::string::npos) << r.err;
  // The line as printed, with this build's binary in place of "seqbench copy", continues.
  r = run(kCopy + r.err.substr(at + 13, line.size() - 13) + " -q", dir);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir + "/my results/copy/r/summary.json"));
}

TEST(CopyCli, AddingTaskRunsAndReportsMse) {
  const std::string dir = clitest::fresh_dir("x");
  const auto r = run(kCopy + " --demo --run-id add --set task.name=adding --set task.T=8 "
                             "--set train.steps=20 --set train.eval_every=10 --set train.target=null "
                             "--set model.hidden=8 -q",
                     dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto metrics = report::read_csv(dir + "/results/copy/add/metrics.csv");
  EXPECT_EQ(metrics.columns[3], "mse");
  const auto runs = report::read_csv(dir + "/results/copy/runs.csv");
  EXPECT_EQ(runs.rows[0][runs.col("metric")], "mse");
  const double mse = std::stod(runs.rows[0][runs.col("final_metric")]);
  EXPECT_GT(mse, 0.0);
  EXPECT_LT(mse, 5.0);
  // Adding probes look at the last output only: gradnorm rows cover all T = 8 steps.
  const auto grad = report::read_csv(dir + "/results/copy/add/gradnorm.csv");
  EXPECT_EQ(grad.rows.size() % 8, 0u);
}

class CopyCells : public ::testing::TestWithParam<const char*> {};

TEST_P(CopyCells, EveryCellTrainsThroughTheBinary) {
  const std::string dir = clitest::fresh_dir(GetParam());
  clitest::write(dir + "/tiny.yaml", kTiny);
  const std::string cell = GetParam();
  const auto r = run(kCopy + " --config tiny.yaml --run-id c --set train.steps=10 --set model.cell=" +
                         cell,
                     dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto runs = report::read_csv(dir + "/results/copy/runs.csv");
  EXPECT_EQ(runs.rows[0][runs.col("model")], cell);
  EXPECT_EQ(runs.rows[0][runs.col("status")], "finished");
  const auto grad = report::read_csv(dir + "/results/copy/c/gradnorm.csv");
  EXPECT_EQ(grad.rows.size(), 2u * 10u);  // probes at 0 and 10 over L = 10 steps
}

INSTANTIATE_TEST_SUITE_P(Cells, CopyCells,
                         ::testing::Values("lstm", "rnn", "momentum_lstm", "adam_lstm",
                                           "rmsprop_lstm", "sr_lstm", "momentum_rnn", "stable_rnn",
                                           "stable_lstm", "mem_rnn", "rel_rnn", "rel_lstm", "sab"));

TEST(CopyCli, StableRnnStaysInsideTheSpectralBall) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  for (const char* cell : {"rnn", "stable_rnn"}) {
    const auto r = run(kCopy + " --config tiny.yaml --run-id " + cell + " --set model.cell=" + cell +
                           " --set model.stable_lambda=0.5 --set optim.lr=0.05 -q",
                       dir);
    ASSERT_EQ(r.code, 0) << r.err;
    const auto ck = train::load_checkpoint(dir + "/results/copy/" + cell + "/checkpoint.sbck");
    const auto& w = ck.array("rnn.w_h");
    const double norm = optim::spectral_norm(w.data.data(), w.shape[0], w.shape[1]);
    if (std::string(cell) == "stable_rnn")
      EXPECT_LE(norm, 0.5 + 1e-5);
    else
      EXPECT_GT(norm, 0.5) << "the unprojected RNN would leave the ball (the test can fail)";
  }
}

TEST(CopyCli, CellOptionCombinationsThatCannotRunAreUsageErrors) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  auto r = run(kCopy + " --config tiny.yaml --set model.cell=rnn --set model.backend=onednn", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("model.backend: ours"), std::string::npos) << r.err;
  r = run(kCopy + " --config tiny.yaml --set model.init=momentum_paper", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("model.init"), std::string::npos) << r.err;
  r = run(kCopy + " --config tiny.yaml --set model.cell=gru", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("model.cell"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/results"));
  r = run(kCopy + " --config tiny.yaml --set model.cell=momentum_lstm --set model.init=momentum_paper "
                  "--set train.steps=3 -q",
          dir);
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST(CopyCli, TransferEvaluatesTheCheckpointAtOtherLengths) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  ASSERT_EQ(run(kCopy + " --config tiny.yaml --run-id t -q", dir).code, 0);
  const auto r = run(kCopy + " --run-id t --eval-T 4 9", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("| eval_T"), std::string::npos) << r.out;
  const auto tr = report::read_csv(dir + "/results/copy/t/transfer.csv");
  ASSERT_EQ(tr.rows.size(), 2u);
  EXPECT_EQ(tr.rows[0][tr.col("trained_T")], "4");
  EXPECT_EQ(tr.rows[1][tr.col("eval_T")], "9");
  // At the trained length the checkpoint reproduces the run's last validation exactly
  // (same parameters, same validation batches), so the checkpoint was really loaded.
  const auto runs = report::read_csv(dir + "/results/copy/runs.csv");
  const double final_loss = std::stod(runs.rows[0][runs.col("final_loss")]);
  EXPECT_NEAR(std::stod(tr.rows[0][tr.col("loss")]), final_loss, 1e-5 * final_loss);
  EXPECT_NEAR(std::stod(tr.rows[0][tr.col("acc")]),
              std::stod(runs.rows[0][runs.col("final_metric")]), 1e-5);
  EXPECT_EQ(report::read_csv(dir + "/results/copy/runs.csv").rows.size(), 1u) << "no training";
  EXPECT_EQ(run(kCopy + " --eval-T 9", dir).code, 2) << "needs --run-id";
}

TEST(CopyCli, EveryCommittedPresetResolves) {
  const std::string dir = clitest::fresh_dir("x");
  int n = 0;
  for (const auto& e : fs::directory_iterator(std::string(SEQBENCH_SOURCE_DIR) + "/configs/copy")) {
    if (e.path().extension() != ".yaml") continue;
    ++n;
    const auto r = run(kCopy + " --config '" + e.path().string() + "' --dump-config", dir);
    EXPECT_EQ(r.code, 0) << e.path() << ": " << r.err;
  }
  EXPECT_GE(n, 14);
}

TEST(CopyCli, ProbeMemoryRecordsHeldBytesGrowingWithT) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  const auto r = run(kCopy + " --config tiny.yaml --probe-memory 40 10 20", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto m = report::read_csv(dir + "/results/copy/memory.csv");
  ASSERT_EQ(m.rows.size(), 3u);
  std::vector<double> held;
  for (const auto& row : m.rows) held.push_back(std::stod(row[m.col("held_mb")]));
  EXPECT_EQ(m.rows[0][m.col("T")], "10");  // sorted
  EXPECT_LT(held[0], held[1]);
  EXPECT_LT(held[1], held[2]);
  // BPTT state is linear in the sequence length L = T + 6: (40+6)/(10+6) within 10%.
  EXPECT_NEAR(held[2] / held[0], 46.0 / 16.0, 0.1 * 46.0 / 16.0);
  EXPECT_FALSE(fs::exists(dir + "/results/copy/runs.csv")) << "no training run";
}

// Issue 29: the probe ignored --max-memory (at T = 10^7 it reached 19 GB of RSS). Every T
// is checked before the first step: one line naming the T, nothing written.
TEST(CopyCli, ProbeMemoryRefusesATAboveTheMemoryLimit) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  auto r = run(kCopy + " --config tiny.yaml --probe-memory 10 200000 --max-memory 50M", dir);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("seqbench copy: error: --probe-memory 200000: memory estimate"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("limit of 50.0 MiB (--max-memory)"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/results")) << "nothing is written for a refused probe";
  // Below the limit it runs.
  r = run(kCopy + " --config tiny.yaml --probe-memory 10 --max-memory 50M", dir);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(report::read_csv(dir + "/results/copy/memory.csv").rows.size(), 1u);
}

TEST(CopyCli, AKeyThatDoesNothingForTheChosenCellIsAUsageError) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  auto r = run(kCopy + " --config tiny.yaml --set model.recurrent_init=henaff", dir);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("model.recurrent_init: 'henaff' applies only to the rnn and stable_rnn "
                       "cells, and model.cell is 'lstm'"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir + "/results"));
  // For an rnn the same key is used, and the run goes ahead.
  r = run(kCopy + " --config tiny.yaml --set model.cell=rnn --set model.recurrent_init=henaff "
                  "--set train.steps=2 -q",
          dir);
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST(CopyCli, ANumberOptionGivenTextSaysWhatItExpects) {
  const std::string dir = clitest::fresh_dir("x");
  const auto r = run(kCopy + " --demo --eval-T abc", dir);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--eval-T: expected a whole number in [1, 10000000], got 'abc'"),
            std::string::npos)
      << r.err;
  EXPECT_LT(r.err.size(), 200u) << r.err;
}

TEST(CopyCli, SizesThatCannotFitAreUsageErrorsNamingTheKey) {
  const std::string dir = clitest::fresh_dir("x");
  for (const std::string& set : std::vector<std::string>{
           "model.hidden=10000000", "task.T=2000000000", "task.copy_len=2000000000",
           "train.batch=2000000000", "train.eval_batches=2000000000"}) {
    const auto r = run(kCopy + " --demo --set " + set, dir);
    EXPECT_EQ(r.code, 2) << set << ": " << r.err;
    EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(set.substr(0, set.find('=')) + ": must be in ["), std::string::npos)
        << r.err;
  }
  EXPECT_FALSE(fs::exists(dir + "/results"));
}
