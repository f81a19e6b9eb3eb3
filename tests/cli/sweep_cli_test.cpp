// End-to-end tests of `seqbench sweep`: a local sweep and its merged table, re-running,
// Ctrl-C and continuing, a failing run, the run-directory lock, and the same sweep on a
// real one-machine Slurm cluster (tools/slurm_local) giving the same numbers.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "cli/cli_util.hpp"
#include "core/fs.hpp"
#include "report/csv.hpp"

using namespace seqbench;
using clitest::run;
namespace fs = std::filesystem;

namespace {

const std::string kFront = SEQBENCH_FRONT_BIN;
const std::string kSource = SEQBENCH_SOURCE_DIR;

// 2 models x 2 seeds, a few seconds in all.
std::string tiny_spec(const std::string& dir, const std::string& name, int steps = 20) {
  const std::string path = dir + "/" + name + ".yaml";
  clitest::write(path, "experiment: copy\n"
                       "configs: [" + kSource + "/configs/copy/lstm_small.yaml, " + kSource +
                           "/configs/copy/rnn.yaml]\n"
                       "set: {train.steps: " + std::to_string(steps) +
                           ", train.eval_every: 10, task.T: 5, model.hidden: 8, train.target: 2}\n"
                       "seeds: [1, 2]\n"
                       "threads: 1\n"
                       "out: " + dir + "/" + name + "\n");
  return path;
}

// run_id -> final_metric of a merged runs.csv.
std::map<std::string, std::string> finals(const std::string& runs_csv) {
  const auto t = report::read_csv(runs_csv);
  std::map<std::string, std::string> out;
  for (size_t r = 0; r < t.rows.size(); ++r)
    out[t.rows[r][size_t(t.col("run_id"))]] = t.rows[r][size_t(t.col("final_metric"))] + " " +
                                              t.rows[r][size_t(t.col("final_loss"))];
  return out;
}

}  // namespace

TEST(SweepCli, LocalSweepMergesItsRunsAndARerunSkipsFinishedOnes) {
  const std::string dir = clitest::fresh_dir("x");
  const std::string spec = tiny_spec(dir, "s");
  auto r = run(kFront + " sweep " + spec + " --dry-run", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("lstm_small-s1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4 run(s)"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir + "/s"));  // a dry run writes nothing

  r = run(kFront + " sweep " + spec + " --jobs 2", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto first = finals(dir + "/s/copy/runs.csv");
  ASSERT_EQ(first.size(), 4u);
  for (const char* id : {"lstm_small-s1", "lstm_small-s2", "rnn-s1", "rnn-s2"})
    EXPECT_EQ(first.count(id), 1u) << id;
  r = run(kFront + " sweep status " + spec, dir);
  EXPECT_NE(r.out.find("4 run(s): 4 done, 0 running, 0 interrupted, 0 failed, 0 pending"),
            std::string::npos)
      << r.out;
  // Again: nothing runs, the table keeps one row per run.
  r = run(kFront + " sweep " + spec, dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("started 0 run(s)"), std::string::npos) << r.err;
  EXPECT_EQ(report::read_csv(dir + "/s/copy/runs.csv").rows.size(), 4u);
}

TEST(SweepCli, CtrlCCheckpointsAndTheSameCommandContinuesToTheSameNumbers) {
  const std::string dir = clitest::fresh_dir("x");
  // Long enough (3000 updates) that the runs are still training when the signal comes.
  const std::string whole = tiny_spec(dir, "whole", 3000);
  ASSERT_EQ(run(kFront + " sweep " + whole + " -q --jobs 2", dir).code, 0);
  const std::string cut = tiny_spec(dir, "cut", 3000);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl(SEQBENCH_FRONT_BIN, SEQBENCH_FRONT_BIN, "sweep", cut.c_str(), "-q", "--jobs", "2",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Interrupt once the second run has written its first validation row (both first runs
  // are then training). Waits for that event; nothing here measures time.
  const std::string metrics = dir + "/cut/copy/lstm_small-s2/metrics.csv";
  ASSERT_TRUE(clitest::wait_for([&] { return clitest::count_lines(clitest::slurp(metrics)) >= 2; },
                                [&] { return ::waitpid(pid, nullptr, WNOHANG) != 0; }))
      << "the sweep ended before its second run validated";
  ::kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  const auto st = run(kFront + " sweep status " + cut, dir);
  EXPECT_NE(st.out.find("2 interrupted"), std::string::npos) << st.out;
  EXPECT_FALSE(fs::exists(dir + "/cut/copy/runs.csv")) << "no run finished before the signal";
  ASSERT_EQ(run(kFront + " sweep " + cut + " -q", dir).code, 0);
  EXPECT_EQ(finals(dir + "/cut/copy/runs.csv"), finals(dir + "/whole/copy/runs.csv"));
}

TEST(SweepCli, AFailedRunIsReportedWithItsLastLogLineAndRetriedOnlyWhenAsked) {
  const std::string dir = clitest::fresh_dir("x");
  const std::string spec = dir + "/bad.yaml";
  clitest::write(spec, "experiment: copy\nconfigs: [" + kSource +
                           "/configs/copy/lstm_small.yaml]\nset: {train.stepz: 3}\n");
  auto r = run(kFront + " sweep " + spec + " -q", dir);
  EXPECT_EQ(r.code, 1) << r.err;
  r = run(kFront + " sweep status " + spec, dir);
  EXPECT_NE(r.out.find("failed       exit 2: seqbench copy: error: --set train.stepz=3: unknown key"),
            std::string::npos)
      << r.out;
  r = run(kFront + " sweep " + spec, dir);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("1 failed run not retried (--retry-failed"), std::string::npos) << r.err;
}

TEST(SweepCli, TwoProcessesNeverWriteOneRunDirectory) {
  const std::string dir = clitest::fresh_dir("x");
  const std::string cfg = kSource + "/configs/copy/lstm_small.yaml";
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    ::execl(SEQBENCH_FRONT_BIN, SEQBENCH_FRONT_BIN, "copy", "--config", cfg.c_str(), "--set",
            "train.steps=100000", "--set", "train.target=2", "--out", "res", "--run-id", "same",
            "-q", "--threads", "1", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ASSERT_TRUE(clitest::wait_for([&] { return fs::exists(dir + "/res/copy/same/config.yaml"); },
                                [&] { return ::waitpid(pid, nullptr, WNOHANG) != 0; }))
      << "the first run ended before writing its config";
  const auto second = run(kFront + " copy --config " + cfg + " --out res --run-id same -q", dir);
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_EQ(second.code, 2) << second.err;
  EXPECT_NE(second.err.find("is in use by another seqbench process (pid " + std::to_string(pid) + ")"),
            std::string::npos)
      << second.err;
}

// The same sweep through a real Slurm cluster on this machine (tools/slurm_local) and
// through the local backend: the merged tables must agree. Needs root and Slurm
// installed (CI installs it: tools/slurm_local install); elsewhere the test is reported
// as skipped, with the reason.
TEST(SweepCli, SlurmBackendRunsTheSweepAsAJobArrayWithTheSameNumbersAsLocal) {
  const std::string tool = kSource + "/tools/slurm_local";
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to start a one-machine Slurm cluster";
  if (std::system("command -v sbatch >/dev/null && command -v slurmctld >/dev/null && "
                  "command -v munged >/dev/null") != 0)
    GTEST_SKIP() << "Slurm is not installed here (tools/slurm_local install installs it; CI does)";
  const std::string dir = clitest::fresh_dir("x");
  const bool was_running = run(tool + " status", dir).code == 0;
  const auto started = run(tool + " start", dir);
  ASSERT_EQ(started.code, 0) << started.err;
  // Stop what this test started, whatever happens below.
  struct Stop {
    std::string cmd;
    ~Stop() {
      if (!cmd.empty()) (void)std::system(cmd.c_str());
    }
  } stop{was_running ? "" : tool + " stop >/dev/null 2>&1"};

  const std::string local = tiny_spec(dir, "local", 40);
  const std::string slurm = tiny_spec(dir, "slurm", 40);
  ASSERT_EQ(run(kFront + " sweep " + local + " -q --jobs 2", dir).code, 0);
  auto r = run(kFront + " sweep " + slurm + " --backend slurm --wait --timeout 300", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("submitted job array"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("4 of 4 run(s) done"), std::string::npos) << r.err;
  // --wait prints the local sweep's progress line, polled, and the counts at the end.
  EXPECT_NE(r.err.find(": [4/4 done, 0 running, 0 failed]"), std::string::npos) << r.err;
  const auto a = finals(dir + "/local/copy/runs.csv"), b = finals(dir + "/slurm/copy/runs.csv");
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(a, b);
  // Every task left Slurm's own output file, and a second submission has nothing to do.
  int outs = 0;
  for (const auto& e : fs::directory_iterator(dir + "/slurm/.sweep/slurm"))
    outs += e.path().extension() == ".out";
  EXPECT_EQ(outs, 4);
  r = run(kFront + " sweep " + slurm + " --backend slurm", dir);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("nothing to submit"), std::string::npos) << r.err;
}

TEST(SweepCli, RunIdsStayInsideTheResultsRoot) {
  const std::string dir = clitest::fresh_dir("x");
  fs::create_directories(dir + "/inner");
  for (const std::string flag : std::initializer_list<const char*>{"--run-id ../../x", "--run-id .", "--run-id ..",
                                 "--set output.run_id=../y", "--run-id a/b"}) {
    const auto r = run(kFront + " copy --demo --out res " + flag, dir + "/inner");
    EXPECT_EQ(r.code, 2) << flag << ": " << r.err;
    EXPECT_NE(r.err.find("cannot name a run directory"), std::string::npos) << r.err;
    EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir + "/x"));
  EXPECT_FALSE(fs::exists(dir + "/inner/res"));
  EXPECT_FALSE(fs::exists(dir + "/inner/y"));
}

// --seeds and --out: the runs get the new seeds and directory, and a Slurm array task is
// called back with both, so its index names the same run (a fake sbatch keeps the script).
TEST(SweepCli, SeedsAndOutOverrideTheFileAndReachTheSlurmTasks) {
  const std::string dir = clitest::fresh_dir("sweep_seeds");
  const std::string spec = tiny_spec(dir, "tiny", 4);
  auto r = run(kFront + " sweep " + spec + " --seeds 7,9 --out " + dir + "/other --jobs 1 -q", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto ids = finals(dir + "/other/copy/runs.csv");
  EXPECT_EQ(ids.size(), 4u);
  EXPECT_TRUE(ids.count("lstm_small-s7") && ids.count("rnn-s9")) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/tiny")) << "the file's out was used";

  std::filesystem::create_directories(dir + "/bin");
  clitest::write(dir + "/bin/sbatch", "#!/bin/sh\ncp \"$2\" \"$(dirname \"$0\")/captured.sh\"\necho 42\n");
  std::filesystem::permissions(dir + "/bin/sbatch", std::filesystem::perms::owner_all);
  r = run("PATH=" + dir + "/bin:$PATH " + kFront + " sweep " + spec + " --seeds 3 --out " + dir +
              "/slurm --backend slurm -q",
          dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string script = core::read_file(dir + "/bin/captured.sh");
  EXPECT_NE(script.find(" '--seeds' '3' '--out' '" + dir + "/slurm' --run-index"), std::string::npos) << script;
}
