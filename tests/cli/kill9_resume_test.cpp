// kill -9 at seeded random points of a short copy run, then --resume: the run ends with
// exactly the parameters and metrics of an uninterrupted one. Nothing is flushed on
// SIGKILL, so this checks that what is on disk at any moment is enough to continue.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "cli/cli_util.hpp"
#include "report/csv.hpp"
#include "train/checkpoint.hpp"

using namespace seqbench;
using clitest::run;
namespace fs = std::filesystem;

namespace {

const std::string kCopy = SEQBENCH_COPY_BIN;

const char* kRun = R"(task: {name: copy, T: 4, copy_len: 3, n_symbols: 4}
model: {hidden: 8}
optim: {name: adam, lr: 0.01}
train: {batch: 4, steps: 400, log_every: 5, eval_every: 50, eval_batches: 2, checkpoint_every: 20, threads: 1}
output: {dir: results}
)";

// Starts the run in the background and returns its pid.
pid_t start(const std::string& dir, const std::string& id) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(127);
    ::freopen("/dev/null", "w", stdout);
    ::freopen("/dev/null", "w", stderr);
    ::execl(kCopy.c_str(), kCopy.c_str(), "--config", "run.yaml", "-q", "--run-id", id.c_str(), nullptr);
    ::_exit(127);
  }
  return pid;
}

int metrics_rows(const std::string& path) {
  return fs::exists(path) ? clitest::count_lines(clitest::slurp(path)) - 1 : 0;
}

}  // namespace

TEST(Kill9, ResumeAfterSigkillAtRandomPointsEqualsAnUninterruptedRun) {
  const std::string dir = clitest::fresh_dir("kill9");
  clitest::write(dir + "/run.yaml", kRun);
  ASSERT_EQ(run(kCopy + " --config run.yaml -q --run-id full", dir).code, 0);
  const auto full = train::load_checkpoint(dir + "/results/copy/full/checkpoint.sbck");
  const auto full_metrics = report::read_csv(dir + "/results/copy/full/metrics.csv");

  std::mt19937 rng(20261125);
  for (int trial = 0; trial < 3; ++trial) {
    // A metrics.csv row every 5 updates, a checkpoint every 20: row 6 and later come after
    // the first checkpoint, and the run has 80 rows in all.
    const int kill_at = std::uniform_int_distribution<int>(6, 70)(rng);
    std::string id = "k";
    id += std::to_string(trial);
    const std::string metrics = dir + "/results/copy/" + id + "/metrics.csv";
    const pid_t pid = start(dir, id);
    // Wait for the chosen point: an event (a row written), not a time.
    ASSERT_TRUE(clitest::wait_for([&] { return metrics_rows(metrics) >= kill_at; },
                                  [&] { return ::waitpid(pid, nullptr, WNOHANG) != 0; }))
        << "the run ended before row " << kill_at;
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "trial " << trial;
    ASSERT_FALSE(fs::exists(dir + "/results/copy/" + id + "/summary.json")) << "it was killed mid-run";
    ASSERT_TRUE(fs::exists(dir + "/results/copy/" + id + "/checkpoint.sbck")) << "trial " << trial;
    const auto r = run(kCopy + " -q --run-id " + id + " --resume", dir);
    ASSERT_EQ(r.code, 0) << "trial " << trial << " (killed at metrics row " << kill_at << "): " << r.err;
    const auto b = train::load_checkpoint(dir + "/results/copy/" + id + "/checkpoint.sbck");
    ASSERT_EQ(full.arrays.size(), b.arrays.size());
    for (size_t i = 0; i < full.arrays.size(); ++i)
      EXPECT_EQ(full.arrays[i].data, b.arrays[i].data) << "trial " << trial << ": " << full.arrays[i].name;
    const auto m = report::read_csv(metrics);
    ASSERT_EQ(m.rows.size(), full_metrics.rows.size()) << "trial " << trial;
    for (size_t i = 0; i < m.rows.size(); ++i)
      for (int c = 0; c < 6; ++c) EXPECT_EQ(m.rows[i][c], full_metrics.rows[i][c]) << "trial " << trial << " row " << i;
  }
}
