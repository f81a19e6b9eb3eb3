// End-to-end tests of `seqbench stability` (apps/stability/): a config-driven analysis
// writes a run directory like every experiment (config.yaml, summary.json, the gap table,
// the figure as PNG and SVG, one runs.csv row), a run id that holds a run is refused,
// config mistakes are one-line usage errors, the fitted rate of the gradient gap matches
// log λ, the old subcommands still work, and `seqbench sweep` runs it.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <regex>

#include "cli/lm_cli_util.hpp"
#include "report/csv.hpp"
#include "report/plots.hpp"

using namespace seqbench;
using clitest::cell;
using clitest::run;
namespace fs = std::filesystem;

namespace {

const std::string kBin = SEQBENCH_STABILITY_BIN;
const std::string kFront = SEQBENCH_FRONT_BIN;
const std::string kPresets = std::string(SEQBENCH_SOURCE_DIR) + "/configs/stability/";

// "key": <number> of a summary.json (NaN when absent or not a number).
double json_number(const std::string& json, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + key + "\": ([-0-9.eE+]+)"))) return NAN;
  return std::stod(m[1].str());
}

// The figure <stem>.png and <stem>.svg of a run: drawn and non-empty when gnuplot is
// installed (make deps installs gnuplot-nox), else the run said why not on stderr.
void expect_figure(const std::string& run_dir, const std::string& stem, const std::string& err) {
  EXPECT_GT(fs::file_size(run_dir + "/" + stem + ".gp"), 0u);
  if (!report::find_program("gnuplot")) {
    EXPECT_NE(err.find("figure skipped"), std::string::npos) << err;
    return;
  }
  for (const char* ext : {".png", ".svg"}) {
    const std::string f = run_dir + "/" + stem + ext;
    ASSERT_TRUE(fs::exists(f)) << f << "\n" << err;
    EXPECT_GT(fs::file_size(f), 1000u) << f;
  }
  EXPECT_EQ(clitest::slurp(run_dir + "/" + stem + ".png").substr(1, 3), "PNG");
  EXPECT_NE(clitest::slurp(run_dir + "/" + stem + ".svg").find("<svg"), std::string::npos);
}

}  // namespace

TEST(StabilityRun, TruncationWritesARunDirectoryAndOneRunsCsvRow) {
  const std::string dir = clitest::fresh_dir("x");
  const auto r = run(kBin + " --config " + kPresets + "truncation_small.yaml --run-id r1 -q", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "");  // -q
  const std::string run_dir = dir + "/results/stability/r1";
  for (const char* f : {"config.yaml", "summary.json", "truncation.csv", "log.txt"})
    EXPECT_TRUE(fs::exists(run_dir + "/" + f)) << f;
  // No training curve: the training experiments' files are not there.
  EXPECT_FALSE(fs::exists(run_dir + "/metrics.csv"));
  EXPECT_FALSE(fs::exists(run_dir + "/gradnorm.csv"));
  expect_figure(run_dir, "truncation", r.err);

  // The resolved config, read back the same way by --config.
  const std::string yaml = clitest::slurp(run_dir + "/config.yaml");
  EXPECT_NE(yaml.find("analysis: truncation"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("run_id: r1"), std::string::npos) << yaml;
  EXPECT_EQ(run(kBin + " --config results/stability/r1/config.yaml --dump-config", dir).code, 0);

  const auto t = report::read_csv(run_dir + "/truncation.csv");
  EXPECT_EQ(t.columns, (std::vector<std::string>{"k", "gap", "bound_k_lambda_k"}));
  ASSERT_EQ(t.rows.size(), 30u);  // k = 1 .. k_max
  EXPECT_NEAR(t.number(9, "bound_k_lambda_k"), 10 * std::pow(0.8, 10), 1e-12);
  // The gap shrinks with k.
  EXPECT_LT(t.number(29, "gap"), t.number(0, "gap") * 1e-2);

  const std::string summary = clitest::slurp(run_dir + "/summary.json");
  EXPECT_NE(summary.find("\"status\": \"finished\""), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"experiment\": \"stability\""), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"metric\": \"rate_ratio\""), std::string::npos) << summary;
  const double rate = json_number(summary, "fitted_log_rate");
  const double log_lambda = json_number(summary, "log_lambda");
  EXPECT_NEAR(log_lambda, std::log(0.8), 1e-5);
  EXPECT_NEAR(json_number(summary, "rate_ratio"), rate / log_lambda, 1e-4);

  const auto runs = report::read_csv(dir + "/results/stability/runs.csv");
  ASSERT_EQ(runs.rows.size(), 1u);
  EXPECT_EQ(cell(runs, "run_id"), "r1");
  EXPECT_EQ(cell(runs, "experiment"), "stability");
  EXPECT_EQ(cell(runs, "analysis"), "truncation");
  EXPECT_EQ(cell(runs, "label"), "truncation-l0.8");
  EXPECT_EQ(cell(runs, "lambda"), "0.8");
  EXPECT_EQ(cell(runs, "status"), "finished");
  EXPECT_EQ(cell(runs, "k"), "1-30");
}

// Lemma 2: the gap decays like k λ^k. The fit over the upper half of k must find log λ
// within 20% (tests/analysis/truncation_test.cpp asserts the same of the library).
TEST(StabilityRun, FittedRateMatchesLogLambda) {
  const std::string dir = clitest::fresh_dir("x");
  for (const char* lambda : {"0.5", "0.8"}) {
    const std::string id = std::string("l") + lambda;
    const auto r = run(kBin + " --config " + kPresets + "truncation.yaml --set lambda=" + lambda +
                           " --set truncation.T=60 --set truncation.k_max=40 --set "
                           "truncation.instances=8 --run-id " +
                           id + " -q",
                       dir);
    ASSERT_EQ(r.code, 0) << r.err;
  }
  const auto runs = report::read_csv(dir + "/results/stability/runs.csv");
  ASSERT_EQ(runs.rows.size(), 2u);
  for (size_t i = 0; i < runs.rows.size(); ++i) {
    const double lambda = runs.number(i, "lambda");
    EXPECT_NEAR(runs.number(i, "log_lambda"), std::log(lambda), 1e-5);
    EXPECT_NEAR(runs.number(i, "rate_ratio"), 1.0, 0.2) << "lambda " << lambda;
    EXPECT_NEAR(runs.number(i, "final_metric"), runs.number(i, "rate_ratio"), 1e-12);
  }
}

TEST(StabilityRun, WeightsWritesTheGapPerKAndStepAndTheFinalGaps) {
  const std::string dir = clitest::fresh_dir("x");
  const auto r = run(kFront + " stability --config " + kPresets +
                         "weights_small.yaml --set weights.steps=20 --run-id w1",
                     dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("weight gap after 20 steps"), std::string::npos) << r.out;
  const std::string run_dir = dir + "/results/stability/w1";
  const auto t = report::read_csv(run_dir + "/weight_gap.csv");
  EXPECT_EQ(t.columns, (std::vector<std::string>{"k", "step", "gap"}));
  EXPECT_EQ(t.rows.size(), 4u * 3u);  // k in {2, 4, 8, 16} x steps 0, 10, 20
  expect_figure(run_dir, "weight_gap", r.err);
  const std::string summary = clitest::slurp(run_dir + "/summary.json");
  EXPECT_NE(summary.find("\"analysis\": \"weights\""), std::string::npos) << summary;
  // One "k:gap" per window, the last step's.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(summary, m, std::regex("\"final_gaps\": \"([^\"]*)\""))) << summary;
  EXPECT_TRUE(std::regex_match(m[1].str(), std::regex("2:[0-9.e-]+ 4:[0-9.e-]+ 8:[0-9.e-]+ "
                                                      "16:[0-9.e-]+")))
      << m[1].str();
  EXPECT_LT(json_number(summary, "fitted_log_rate"), 0.0) << summary;
  const auto runs = report::read_csv(dir + "/results/stability/runs.csv");
  ASSERT_EQ(runs.rows.size(), 1u);
  EXPECT_EQ(cell(runs, "analysis"), "weights");
  EXPECT_EQ(cell(runs, "updates"), "20");
}

TEST(StabilityRun, ARunIdThatHoldsARunIsRefused) {
  const std::string dir = clitest::fresh_dir("x");
  const std::string cmd = kBin + " --config " + kPresets + "truncation_small.yaml --run-id same -q";
  ASSERT_EQ(run(cmd, dir).code, 0);
  const std::string before = clitest::slurp(dir + "/results/stability/same/summary.json");
  const auto r = run(cmd + " --set lambda=0.5", dir);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("already holds a run"), std::string::npos) << r.err;
  // The first run is untouched, and still the only row.
  EXPECT_EQ(clitest::slurp(dir + "/results/stability/same/summary.json"), before);
  EXPECT_EQ(report::read_csv(dir + "/results/stability/runs.csv").rows.size(), 1u);
  EXPECT_NE(clitest::slurp(dir + "/results/stability/same/config.yaml").find("lambda: 0.8"),
            std::string::npos);
}

// Config mistakes: exit 2, one line naming the key (and the file and line), nothing written.
TEST(StabilityRun, ConfigMistakesAreOneLineUsageErrors) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/bad.yaml", "analysis: truncation\ntruncation: {T: 40, k_maxx: 3}\n");
  clitest::expect_config_error(kBin + " --config bad.yaml", dir,
                               "bad.yaml:2: unknown key 'truncation.k_maxx' (did you mean "
                               "'truncation.k_max'?)");
  clitest::expect_config_error(kBin + " --config " + kPresets + "truncation.yaml --set lambdaa=0.5",
                               dir, "unknown key 'lambdaa'");
  clitest::expect_config_error(kBin + " --set lambda=1.5", dir, "lambda: must be in");
  clitest::expect_config_error(kBin + " --set analysis=gradients", dir,
                               "analysis: must be one of truncation, weights");
  clitest::expect_config_error(kBin + " --set truncation.T=20 --set truncation.k_max=20", dir,
                               "truncation.k_max: 20 must be below truncation.T = 20");
  clitest::expect_config_error(kBin + " --set analysis=weights --set weights.ks=[]", dir,
                               "weights.ks: the list is empty");
  clitest::expect_config_error(kBin + " --set weights.ks=[2,0]", dir, "weights.ks[1]");
  clitest::expect_config_error(kBin + " --run-id a/b", dir, "--run-id");
  clitest::expect_config_error(kBin + " --resume --run-id r1", dir, "no checkpoint");
}

TEST(StabilityRun, EveryPresetResolvesAndDemoIsTheSmallTruncation) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::expect_presets_resolve(kBin, "stability", dir, 4);
  const auto r = run(kBin + " --demo --dump-config", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("k_max: 30"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir + "/results"));
}

// The old subcommands build the same config, now with a run directory, and still write
// their old files beside the runs.
TEST(StabilityRun, OldSubcommandsAreShortcutsThatAlsoWriteARunDirectory) {
  const std::string dir = clitest::fresh_dir("x");
  auto r = run(kFront +
                   " stability truncation --lambda 0.8 --T 40 --k-max 30 --instances 3 "
                   "--run-id t1",
               dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("fitted log-rate"), std::string::npos) << r.out;
  EXPECT_EQ(report::read_csv(dir + "/results/stability/truncation-l0.8.csv").rows.size(), 30u);
  EXPECT_EQ(clitest::slurp(dir + "/results/stability/t1/truncation.csv"),
            clitest::slurp(dir + "/results/stability/truncation-l0.8.csv"));
  // The same analysis from a config gives the same table.
  r = run(kBin +
              " --set truncation.T=40 --set truncation.k_max=30 --set truncation.instances=3 "
              "--run-id t2 -q",
          dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(clitest::slurp(dir + "/results/stability/t2/truncation.csv"),
            clitest::slurp(dir + "/results/stability/t1/truncation.csv"));

  r = run(kBin + " weights --steps 20 --k 2 8 --seed 3 -q", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(report::read_csv(dir + "/results/stability/weight-gap-l0.8.csv").rows.size(), 2u * 3u);
  const auto runs = report::read_csv(dir + "/results/stability/runs.csv");
  ASSERT_EQ(runs.rows.size(), 3u);
  // The default run id: <analysis>-l<λ>-<date>-<time>-s<seed>.
  EXPECT_TRUE(
      std::regex_match(cell(runs, "run_id", 2), std::regex("weights-l0\\.8-[0-9]{8}-[0-9]{6}-s3")))
      << cell(runs, "run_id", 2);
  EXPECT_EQ(cell(runs, "k", 2), "2 8");
  EXPECT_EQ(run(kBin + " truncation --T 10 --k-max 10", dir).code, 2);
  EXPECT_EQ(run(kBin + " weights --k 0", dir).code, 2);
}

// `seqbench sweep` runs stability like any experiment: 2 seeds, 2 runs, 2 rows.
TEST(StabilityRun, ATinySweepFinishesWithOneRowPerRun) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/s.yaml",
                 "experiment: stability\n"
                 "configs: [" +
                     kPresets +
                     "truncation_small.yaml]\n"
                     "set: {truncation.instances: 2}\n"
                     "grid: {lambda: [0.7]}\n"
                     "seeds: [1, 2]\n"
                     "threads: 1\n"
                     "out: " +
                     dir + "/s\n");
  auto r = run(kFront + " sweep s.yaml --jobs 2", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto runs = report::read_csv(dir + "/s/stability/runs.csv");
  ASSERT_EQ(runs.rows.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(cell(runs, "status", i), "finished");
    EXPECT_EQ(cell(runs, "lambda", i), "0.7");
    EXPECT_EQ(cell(runs, "threads", i), "1");
  }
  EXPECT_TRUE(fs::exists(dir + "/s/stability/truncation_small-lambda0.7-s1/summary.json"));
  EXPECT_TRUE(fs::exists(dir + "/s/stability/truncation_small-lambda0.7-s2/summary.json"));
  r = run(kFront + " sweep status s.yaml", dir);
  EXPECT_NE(r.out.find("2 run(s): 2 done"), std::string::npos) << r.out;
}
