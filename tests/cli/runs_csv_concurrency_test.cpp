// runs.csv under concurrency: many processes that finish at the same moment each add
// exactly one whole row to the experiment's runs.csv (appends are serialised by
// runs.csv.lock), so the table reads back with one row per run and no torn line.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "cli/cli_util.hpp"
#include "report/csv.hpp"

using namespace seqbench;
using clitest::run;

TEST(RunsCsvConcurrency, ManyProcessesAtOnceEachAddOneWholeRow) {
  const std::string dir = clitest::fresh_dir("many");
  const std::string bin = SEQBENCH_STABILITY_BIN;
  const std::string preset = std::string(SEQBENCH_SOURCE_DIR) + "/configs/stability/truncation_small.yaml";
  constexpr int kRuns = 16;
  // All started together in the background by one shell (in a subshell, so that every
  // one of them runs in the test's directory), then waited for.
  std::string cmd = "( ";
  for (int i = 0; i < kRuns; ++i)
    cmd += bin + " --config " + preset + " --set truncation.instances=1 -q --run-id r" + std::to_string(i) +
           " --seed " + std::to_string(i + 1) + " >/dev/null 2>>errors.txt & ";
  cmd += "wait )";
  const auto r = run(cmd, dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(clitest::slurp(dir + "/errors.txt").find("error"), std::string::npos)
      << clitest::slurp(dir + "/errors.txt");
  const report::CsvTable t = report::read_csv(dir + "/results/stability/runs.csv");  // a torn row throws
  ASSERT_EQ(t.rows.size(), size_t(kRuns));
  std::set<std::string> ids;
  for (const auto& row : t.rows) {
    EXPECT_EQ(row.size(), t.columns.size());
    ids.insert(row[size_t(t.col("run_id"))]);
  }
  EXPECT_EQ(ids.size(), size_t(kRuns)) << "each run once";
}
