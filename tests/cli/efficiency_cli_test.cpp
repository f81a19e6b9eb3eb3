// A run's efficiency in summary.json and its final table: LSTM-equivalent GFLOP/s and the
// fraction of the cached sgemm peak (train/efficiency.hpp). The peak is a fake one placed
// in a temporary cache; nothing is measured (SEQBENCH_SGEMM_PEAK=cached) and no speed is
// asserted.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <iterator>
#include <nlohmann/json.hpp>

#include "backend/gemm.hpp"
#include "cli/cli_util.hpp"
#include "train/efficiency.hpp"

using namespace seqbench;
using clitest::run;

namespace {

const std::string kCopy = SEQBENCH_COPY_BIN;

// One thread, so that the run's key is the same on any machine.
const char* kTiny = R"(task: {name: copy, T: 4, copy_len: 3, n_symbols: 4}
model: {hidden: 8}
optim: {name: adam, lr: 0.01}
train: {batch: 4, steps: 10, log_every: 5, eval_every: 10, eval_batches: 1, threads: 1}
output: {dir: results}
)";

nlohmann::ordered_json summary_of(const std::string& dir, const std::string& id) {
  return nlohmann::ordered_json::parse(clitest::slurp(dir + "/results/copy/" + id + "/summary.json"));
}

}  // namespace

TEST(EfficiencyCli, SummaryHasGflopsAndTheFractionOfACachedPeak) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  // The peak the child will look up: this machine's key at 1 thread with oneDNN's sgemm.
  backend::set_gemm_impl(backend::GemmImpl::OneDnn);
  const auto placed = train::cached_sgemm_peak(dir + "/cache", train::peak_key(1),
                                               train::PeakMode::kAuto, [] { return 0.5; });
  ASSERT_DOUBLE_EQ(placed.gflops, 0.5);
  const std::string env = "env SEQBENCH_SGEMM_PEAK=cached SEQBENCH_CACHE_DIR=" + dir + "/cache ";
  const auto r = run(env + kCopy + " --config tiny.yaml --run-id with", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = summary_of(dir, "with");
  // L = T + 2 copy_len = 10 steps of B = 4 one-hot inputs of I = n_symbols + 2 = 6, H = 8:
  // 6 * 10 * 4 * 32 * 14 flop.
  ASSERT_TRUE(j["lstm_gflop_per_update"].is_number()) << j.dump(2);
  EXPECT_DOUBLE_EQ(j["lstm_gflop_per_update"].get<double>(), 6.0 * 10 * 4 * 32 * 14 / 1e9);
  ASSERT_TRUE(j["step_ms"].is_number() && j["gflops"].is_number()) << j.dump(2);
  EXPECT_GT(j["step_ms"].get<double>(), 0.0);
  EXPECT_NEAR(j["gflops"].get<double>(),
              j["lstm_gflop_per_update"].get<double>() / (j["step_ms"].get<double>() / 1e3), 1e-9);
  EXPECT_DOUBLE_EQ(j["sgemm_peak_gflops"].get<double>(), 0.5);
  EXPECT_NEAR(j["pct_sgemm_peak"].get<double>(), 100 * j["gflops"].get<double>() / 0.5, 1e-9);
  // The efficiency keys come after the runs.csv columns, the message last.
  EXPECT_EQ(std::prev(j.end()).key(), "message");
  EXPECT_NE(r.out.find("GFLOP/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("% sgemm peak"), std::string::npos) << r.out;
  // Nothing was measured: the placed file is as it was, and no note on stderr.
  EXPECT_EQ(r.err.find("sgemm peak"), std::string::npos) << r.err;
  // runs.csv keeps its columns.
  EXPECT_EQ(clitest::slurp(dir + "/results/copy/runs.csv").find("gflops"), std::string::npos);
}

TEST(EfficiencyCli, WithoutAPeakTheKeysAreNullAndTheTableHasNoPercent) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  const std::string env = "env SEQBENCH_SGEMM_PEAK=cached SEQBENCH_CACHE_DIR=" + dir + "/empty ";
  auto r = run(env + kCopy + " --config tiny.yaml --run-id none", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = summary_of(dir, "none");
  EXPECT_TRUE(j["gflops"].is_number()) << j.dump(2);  // the count needs no peak
  EXPECT_TRUE(j["sgemm_peak_gflops"].is_null()) << j.dump(2);
  EXPECT_TRUE(j["pct_sgemm_peak"].is_null()) << j.dump(2);
  EXPECT_NE(r.out.find("GFLOP/s"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("% sgemm peak"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/empty")) << "cached mode never writes";
  // A cell the count is not defined for: every efficiency key but the time is null.
  r = run(env + kCopy + " --config tiny.yaml --set model.cell=rnn --run-id rnn", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  j = summary_of(dir, "rnn");
  EXPECT_TRUE(j["step_ms"].is_number()) << j.dump(2);
  for (const char* k : {"lstm_gflop_per_update", "gflops", "sgemm_peak_gflops", "pct_sgemm_peak"})
    EXPECT_TRUE(j[k].is_null()) << k << ": " << j.dump(2);
  EXPECT_EQ(r.out.find("GFLOP/s"), std::string::npos) << r.out;
}

TEST(EfficiencyCli, ABadModeIsOneLineBeforeAnythingIsWritten) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  const auto r = run("env SEQBENCH_SGEMM_PEAK=yes " + kCopy + " --config tiny.yaml", dir);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("SEQBENCH_SGEMM_PEAK='yes' is not auto, cached or off"), std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/results"));
}
