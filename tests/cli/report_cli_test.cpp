// End-to-end: the commands that read results (compare, report gradnorm) on real runs,
// and the stability analysis.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli/cli_util.hpp"
#include "report/csv.hpp"

using namespace seqbench;
using clitest::run;
namespace fs = std::filesystem;

namespace {
const std::string kFront = SEQBENCH_FRONT_BIN;
const char* kTiny = R"(task: {name: copy, T: 4, copy_len: 3, n_symbols: 4}
model: {hidden: 8}
optim: {name: adam, lr: 0.01}
train: {batch: 4, steps: 20, log_every: 5, eval_every: 10, eval_batches: 2, gradnorm_every: 10}
)";
}  // namespace

TEST(ReportCli, CompareAndGradnormOnRealRuns) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  for (const char* cell : {"lstm", "rnn"})
    for (const char* seed : {"1", "2"})
      ASSERT_EQ(run(kFront + " copy --config tiny.yaml -q --seed " + seed + " --set model.cell=" +
                        cell + " --set output.label=" + cell,
                    dir)
                    .code,
                0);
  auto r = run(kFront + " compare results/copy/runs.csv --format csv --out cmp.csv", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto cmp = report::read_csv(dir + "/cmp.csv");
  ASSERT_EQ(cmp.rows.size(), 2u);  // two labels, two seeds each
  EXPECT_EQ(cmp.rows[0][cmp.col("n")], "2");
  r = run(kFront + " compare results/copy/runs.csv", dir);
  EXPECT_NE(r.out.find("| label"), std::string::npos) << r.out;
  EXPECT_EQ(run(kFront + " compare nosuch.csv", dir).code, 1);

  r = run(kFront + " report gradnorm results/copy --out plots", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto curves = report::read_csv(dir + "/plots/gradnorm_distance.csv");
  EXPECT_EQ(curves.rows.size(), 4u * 10u);  // 4 runs, L = 10 steps each, last probe
  EXPECT_TRUE(fs::exists(dir + "/plots/gradnorm_distance.gp"));
  // gnuplot-nox is part of make deps; when it ran there is a PNG, else a one-line note.
  if (!fs::exists(dir + "/plots/gradnorm_distance.png")) {
    EXPECT_NE(r.err.find("skipped"), std::string::npos) << r.err;
  }
}

TEST(StabilityCli, TruncationWritesTheGapTableAndTheFittedRate) {
  const std::string dir = clitest::fresh_dir("x");
  const auto r = run(kFront + " stability truncation --lambda 0.8 --T 40 --k-max 30 --instances 3", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("fitted log-rate"), std::string::npos) << r.out;
  const auto t = report::read_csv(dir + "/results/stability/truncation-l0.8.csv");
  EXPECT_EQ(t.rows.size(), 30u);
  EXPECT_EQ(run(kFront + " stability truncation --lambda 1.5", dir).code, 2);
  EXPECT_EQ(run(kFront + " stability truncation --T 10 --k-max 10", dir).code, 2);
}

TEST(StabilityCli, WeightsWritesTheGapPerKAndStep) {
  const std::string dir = clitest::fresh_dir("x");
  const auto r = run(kFront + " stability weights --steps 20 --k 2 8", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto t = report::read_csv(dir + "/results/stability/weight-gap-l0.8.csv");
  EXPECT_EQ(t.columns, (std::vector<std::string>{"k", "step", "gap"}));
  EXPECT_EQ(t.rows.size(), 2u * 3u);  // steps 0, 10, 20 for each k
  EXPECT_EQ(run(kFront + " stability weights --k 0", dir).code, 2);
}
