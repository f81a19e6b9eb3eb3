// `seqbench report curves` on real runs: two tiny copy runs that differ only in their seed
// give a figure per run (beside it) and one for their experiment directory, with the two
// seeds as one config drawn as mean and min–max.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli/cli_util.hpp"
#include "report/csv.hpp"
#include "report/gnuplot.hpp"
#include "report/svg_looks.hpp"

namespace seqbench {
namespace {

using clitest::run;
namespace fs = std::filesystem;

const std::string kFront = SEQBENCH_FRONT_BIN;

const char* kTiny = R"(task: {name: copy, T: 4, copy_len: 3, n_symbols: 4}
model: {hidden: 8}
optim: {name: adam, lr: 0.01}
train: {batch: 4, steps: 30, log_every: 5, eval_every: 10, eval_batches: 2, threads: 1}
output: {dir: results, label: tiny_lstm}
)";

TEST(CurvesCli, DrawsARunAndItsExperimentDirectoryWithSeedsAsABand) {
  ASSERT_TRUE(report::find_program("gnuplot")) << "gnuplot is not installed; run `make deps`";
  const std::string dir = clitest::fresh_dir("curves");
  clitest::write(dir + "/tiny.yaml", kTiny);
  for (const char* seed : {"1", "2"}) {
    const auto r = run(kFront + " copy --config tiny.yaml -q --run-id s" + std::string(seed) + " --set train.seed=" + seed,
                       dir);
    ASSERT_EQ(r.code, 0) << r.err;
  }
  const std::string metric = report::read_csv(dir + "/results/copy/s1/metrics.csv").columns.at(3);

  const auto one = run(kFront + " report curves results/copy/s1", dir);
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_NE(one.out.find("results/copy/s1/curves.png"), std::string::npos) << one.out;
  for (const char* f : {"curves.png", "curves.svg", "curves.gp", "curves.dat"})
    EXPECT_TRUE(fs::exists(dir + "/results/copy/s1/" + f)) << f;
  svgtest::expect_literal_and_distinct(dir + "/results/copy/s1/curves.svg",
                                       {"train", "validation", "tiny_lstm: loss (1 seed)", "tiny_lstm: " + metric});
  // Training rows every 5 updates, validation every 10: both in the data, per panel.
  const std::string dat = clitest::slurp(dir + "/results/copy/s1/curves.dat");
  EXPECT_NE(dat.find("# tiny_lstm, train loss"), std::string::npos) << dat;
  EXPECT_NE(dat.find("# tiny_lstm, validation " + metric), std::string::npos) << dat;
  EXPECT_NE(dat.find("\n30 "), std::string::npos) << "the last update is drawn\n" << dat;

  // The directory holding the experiment directory (as a sweep's is): one config, two seeds.
  const auto sweep = run(kFront + " report curves results", dir);
  ASSERT_EQ(sweep.code, 0) << sweep.err;
  EXPECT_NE(sweep.out.find("results/copy/curves.png (1 config)"), std::string::npos) << sweep.out;
  svgtest::expect_literal_and_distinct(dir + "/results/copy/curves.svg",
                                       {"train", "validation", "tiny_lstm: loss (mean and min–max of 2 seeds)"});
  EXPECT_NE(clitest::slurp(dir + "/results/copy/curves.gp").find("with filledcurves"), std::string::npos);
}

TEST(CurvesCli, ConfigsSharingALabelAreNamedByTheKeyThatDiffers) {
  // The same preset at two T (as a sweep's grid makes them): two panel rows, named by T,
  // not "tiny_lstm" and "tiny_lstm #2".
  ASSERT_TRUE(report::find_program("gnuplot")) << "gnuplot is not installed; run `make deps`";
  const std::string dir = clitest::fresh_dir("curves_grid");
  clitest::write(dir + "/tiny.yaml", kTiny);
  for (const char* T : {"4", "6"}) {
    const auto r = run(kFront + " copy --config tiny.yaml -q --run-id t" + std::string(T) + " --set task.T=" + T, dir);
    ASSERT_EQ(r.code, 0) << r.err;
  }
  const auto sweep = run(kFront + " report curves results", dir);
  ASSERT_EQ(sweep.code, 0) << sweep.err;
  EXPECT_NE(sweep.out.find("(2 configs)"), std::string::npos) << sweep.out;
  svgtest::expect_literal_and_distinct(dir + "/results/copy/curves.svg",
                                       {"train", "validation", "tiny_lstm [task.T=4]: loss (1 seed)",
                                        "tiny_lstm [task.T=6]: loss (1 seed)"});
  EXPECT_EQ(clitest::slurp(dir + "/results/copy/curves.svg").find("tiny_lstm #2"), std::string::npos);
}

TEST(CurvesCli, APathThatHoldsNoRunIsAUsageErrorOnOneLine) {
  const std::string dir = clitest::fresh_dir("bad");
  fs::create_directories(dir + "/empty");
  for (const std::string path : {"nowhere", "empty"}) {
    const auto r = run(kFront + " report curves " + path, dir);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("'" + path + "'"), std::string::npos) << r.err;
  }
  const auto none = run(kFront + " report curves", dir);
  EXPECT_EQ(none.code, 2) << none.err;
}

}  // namespace
}  // namespace seqbench
