// End-to-end tests of `seqbench minigrid`: a tiny PPO run and its files, bit-exact resume
// from the middle of a PPO update, --play with scripted actions, and config/name errors.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>

#include "cli/cli_util.hpp"
#include "report/csv.hpp"
#include "train/checkpoint.hpp"

using namespace seqbench;
using clitest::run;
namespace fs = std::filesystem;

#ifndef SEQBENCH_MINIGRID_BIN
// Set by tests/CMakeLists.txt ($<TARGET_FILE:seqbench_minigrid>); without it every test
// below fails with this message instead of silently passing.
#define SEQBENCH_MINIGRID_BIN ""
#endif

namespace {

const std::string kBin = SEQBENCH_MINIGRID_BIN;

#define REQUIRE_BIN()                                                                     \
  ASSERT_FALSE(kBin.empty()) << "SEQBENCH_MINIGRID_BIN is not defined: add "             \
                                "SEQBENCH_MINIGRID_BIN=\"$<TARGET_FILE:seqbench_minigrid>\" " \
                                "to the test target's compile definitions"

// 4 environments × 16 frames, chunks of 4, 4 chunks per minibatch, 2 epochs: 4 + 3
// minibatches per update (the odd epoch is shifted); 3 updates = 192 frames.
const char* kTiny = R"(env: {name: Empty-5x5}
agent: {core: lstm, hidden: 16}
ppo: {procs: 4, frames_per_proc: 16, recurrence: 4, batch: 16, epochs: 2, frames: 192}
train: {log_every: 7, eval_every: 7, threads: 1}
output: {dir: results}
)";

}  // namespace

TEST(MinigridCli, TinyRunWritesEveryFileWithDocumentedColumns) {
  REQUIRE_BIN();
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  const auto r = run(kBin + " --config tiny.yaml --run-id r1", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string run_dir = dir + "/results/minigrid/r1";
  for (const char* f : {"config.yaml", "metrics.csv", "ppo.csv", "summary.json", "log.txt",
                        "checkpoint.sbck", "learning_curve.dat", "learning_curve.gp"})
    EXPECT_TRUE(fs::exists(run_dir + "/" + f)) << f;
  const auto ppo = report::read_csv(run_dir + "/ppo.csv");
  EXPECT_EQ(ppo.columns,
            (std::vector<std::string>{"step", "update", "frames", "episodes", "return_mean",
                                      "length_mean", "return_count", "loss", "policy_loss",
                                      "value_loss", "entropy", "approx_kl", "clip_fraction",
                                      "grad_norm", "fps", "elapsed_s"}));
  ASSERT_EQ(ppo.rows.size(), 3u);
  for (size_t u = 0; u < 3; ++u) {
    EXPECT_EQ(ppo.rows[u][0], std::to_string(7 * (u + 1)));
    EXPECT_EQ(ppo.rows[u][2], std::to_string(64 * (u + 1)));
    const double entropy = std::stod(ppo.rows[u][ppo.col("entropy")]);
    EXPECT_GT(entropy, 0.0);
    EXPECT_LE(entropy, std::log(7.0) + 1e-9);
  }
  const auto metrics = report::read_csv(run_dir + "/metrics.csv");
  EXPECT_EQ(metrics.columns, (std::vector<std::string>{"step", "split", "loss", "return", "lr",
                                                       "grad_norm", "elapsed_s"}));
  const auto runs = report::read_csv(dir + "/results/minigrid/runs.csv");
  ASSERT_EQ(runs.rows.size(), 1u);
  EXPECT_EQ(runs.rows[0][runs.col("status")], "finished");
  EXPECT_EQ(runs.rows[0][runs.col("updates")], "21");
  EXPECT_EQ(runs.rows[0][runs.col("env")], "Empty-5x5");
  EXPECT_EQ(runs.rows[0][runs.col("core")], "lstm");
  EXPECT_EQ(runs.rows[0][runs.col("frames")], "192");
  EXPECT_EQ(runs.rows[0][runs.col("metric")], "return");
  EXPECT_NE(clitest::slurp(run_dir + "/learning_curve.gp").find("learning_curve.dat"),
            std::string::npos);

  // `seqbench report minigrid` reads runs.csv and the run's ppo.csv.
  const auto rep = run(std::string(SEQBENCH_FRONT_BIN) +
                           " report minigrid results/minigrid/runs.csv --format csv",
                       dir);
  ASSERT_EQ(rep.code, 0) << rep.err;
  const auto table = report::parse_csv(rep.out, "report");
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.columns[4], "frames to 0.9");
  const auto& row = table.rows[0];
  EXPECT_EQ(row[0], "Empty-5x5");
  EXPECT_EQ(row[3], "192");
  // The final and best returns agree with the run's summary (its runs.csv row).
  EXPECT_EQ(row[5], fmt::format("{:.3f}", std::stod(runs.rows[0][runs.col("final_metric")])));
  EXPECT_EQ(row[6], fmt::format("{:.3f}", std::stod(runs.rows[0][runs.col("best_metric")])));
  EXPECT_EQ(row[7], "—");  // Kerg et al. give no number for Empty-5x5
  EXPECT_EQ(table.columns[8], "source");
  EXPECT_EQ(row[9], "finished");
  const auto missing = run(std::string(SEQBENCH_FRONT_BIN) + " report minigrid nowhere.csv", dir);
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("no runs at 'nowhere.csv'"), std::string::npos) << missing.err;
}

TEST(MinigridCli, InterruptedInsideAnUpdateThenResumedEqualsUninterrupted) {
  REQUIRE_BIN();
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  const std::string common = kBin + " --config tiny.yaml --set agent.core=momentum_lstm";
  const auto full = run(common + " --run-id full", dir);
  ASSERT_EQ(full.code, 0) << full.err;
  const auto part = run(common + " --run-id part --interrupt-at 10", dir);  // update 2, minibatch 3
  ASSERT_EQ(part.code, 130) << part.err;
  const auto rest = run(kBin + " --out results --run-id part --resume", dir);
  ASSERT_EQ(rest.code, 0) << rest.err;
  const auto a = train::load_checkpoint(dir + "/results/minigrid/full/checkpoint.sbck");
  const auto b = train::load_checkpoint(dir + "/results/minigrid/part/checkpoint.sbck");
  ASSERT_EQ(a.arrays.size(), b.arrays.size());
  int params = 0;
  for (const auto& arr : a.arrays) {
    EXPECT_EQ(arr.data, b.array(arr.name).data) << arr.name;
    params += arr.name.rfind("core.", 0) == 0;
  }
  EXPECT_GT(params, 0) << "the recurrent core's parameters are in the checkpoint";
  // ppo.csv: the same rows apart from the clock columns.
  const auto pa = report::read_csv(dir + "/results/minigrid/full/ppo.csv");
  const auto pb = report::read_csv(dir + "/results/minigrid/part/ppo.csv");
  ASSERT_EQ(pa.rows.size(), pb.rows.size());
  for (size_t i = 0; i < pa.rows.size(); ++i)
    for (const char* c : {"step", "frames", "episodes", "return_mean", "loss", "entropy"})
      EXPECT_EQ(pa.rows[i][pa.col(c)], pb.rows[i][pb.col(c)]) << c << " row " << i;
}

TEST(MinigridCli, PlayStepsAScriptAndPrintsTheGrid) {
  REQUIRE_BIN();
  const std::string dir = clitest::fresh_dir("x");
  // Empty-5x5: the agent starts at (1, 1) facing right, the goal is at (3, 3).
  const auto r = run(kBin + " --play Empty-5x5 --actions \"forward, f,right,forward,forward,left\"", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("step 0\nWGWGWGWGWG\nWG>>    WG\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step 3: right -> reward 0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("WG    VVWG"), std::string::npos) << "facing down after the right turn";
  // Success at step 5 pays 1 - 0.9 * 5 / 100.
  EXPECT_NE(r.out.find("step 5: forward -> reward 0.955 (done)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("episode over: return 0.955 in 5 steps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(1 actions left unused)"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir + "/results")) << "--play trains nothing";
  // Keys from stdin work the same way.
  const auto k = run("printf 'f\\nleft\\nq\\n' | " + kBin + " --play Empty-5x5", dir);
  ASSERT_EQ(k.code, 0) << k.err;
  EXPECT_NE(k.out.find("step 2: left -> reward 0\n"), std::string::npos) << k.out;
}

TEST(MinigridCli, BadEnvironmentNamesAndSettingsAreUsageErrors) {
  REQUIRE_BIN();
  const std::string dir = clitest::fresh_dir("x");
  auto r = run(kBin + " --play DoorKey-5x55", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("did you mean 'DoorKey-5x5'"), std::string::npos) << r.err;
  clitest::write(dir + "/tiny.yaml", kTiny);
  r = run(kBin + " --config tiny.yaml --set env.name=DorKey-5x5", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("env.name: unknown minigrid environment 'DorKey-5x5'"), std::string::npos)
      << r.err;
  r = run(kBin + " --play Empty-5x5 --actions forward,jump", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("item 2"), std::string::npos) << r.err;
  r = run(kBin + " --actions forward", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--play"), std::string::npos) << r.err;
  r = run(kBin + " --config tiny.yaml --set train.bptt=8", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("ppo.recurrence"), std::string::npos) << r.err;
  r = run(kBin + " --config tiny.yaml --set ppo.recurrence=5", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("ppo.recurrence: 5 does not divide"), std::string::npos) << r.err;
  r = run(kBin + " --config tiny.yaml --set agent.core=gru", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("agent.core"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/results")) << "a failed config must not create results/";
}

TEST(MinigridCli, DumpConfigTurnsTheFrameBudgetIntoTrainerSteps) {
  REQUIRE_BIN();
  const std::string dir = clitest::fresh_dir("x");
  // The paper's settings: 2048 frames and 30 minibatches per PPO update; 1M frames take
  // 489 updates (the last one partly used).
  const auto r = run(kBin + " --set ppo.frames=1000000 --dump-config", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("steps: 14670"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("recurrence: 16"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("clip: 0.5"), std::string::npos) << r.out;
  // Issue 29, item 6: the steps are a closed form, not a loop over the updates (1e14
  // frames took 11 minutes), and ppo.frames has an upper bound.
  const auto big = run(kBin + " --set ppo.frames=10000000000000 --dump-config", dir);
  ASSERT_EQ(big.code, 0) << big.err;
  EXPECT_NE(big.out.find("steps: 146484375000"), std::string::npos) << big.out.substr(0, 400);
  const auto over = run(kBin + " --set ppo.frames=100000000000000 --dump-config", dir);
  EXPECT_EQ(over.code, 2) << over.err;
  EXPECT_NE(over.err.find("ppo.frames"), std::string::npos) << over.err;
}
