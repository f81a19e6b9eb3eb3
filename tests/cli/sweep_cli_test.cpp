// End-to-end tests of `seqbench sweep`: a local sweep and its merged table, re-running,
// Ctrl-C and continuing, a failing run, the run-directory lock, and the same sweep on a
// real one-machine Slurm cluster (tools/slurm_local) giving the same numbers.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdio>
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

// A run that resolves (--dump-config) but fails when it starts: its corpus is not there.
// Even under -q the sweep says which run failed and where its log is (issue 29: it exited
// 1 saying nothing).
TEST(SweepCli, AFailedRunIsReportedWithItsLastLogLineAndRetriedOnlyWhenAsked) {
  const std::string dir = clitest::fresh_dir("x");
  const std::string spec = dir + "/bad.yaml";
  clitest::write(spec, "experiment: char_ptb\nconfigs: [" + kSource +
                           "/configs/char_ptb/lstm_small.yaml]\nset: {data.dir: nowhere}\n");
  auto r = run(kFront + " sweep " + spec + " -q", dir);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("seqbench sweep: error: 1 of 1 run failed: lstm_small-s1 (exit 2; log "),
            std::string::npos)
      << r.err;
  r = run(kFront + " sweep status " + spec, dir);
  EXPECT_NE(r.out.find("failed       exit 2: seqbench char_ptb: error: data.dir: no corpus at 'nowhere'"),
            std::string::npos)
      << r.out;
  r = run(kFront + " sweep " + spec, dir);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("1 failed run not retried (--retry-failed"), std::string::npos) << r.err;
}

// Issue 29: a misspelt key in `set`, a device as a config and a second YAML document in a
// `set` value made every run fail, and under -q the sweep exited 1 saying nothing. The
// configs are now checked before any run starts: one line, exit 2, nothing written.
TEST(SweepCli, AConfigThatCannotResolveStopsTheSweepBeforeAnyRunStarts) {
  const std::string dir = clitest::fresh_dir("x");
  const std::string cfg = kSource + "/configs/copy/lstm_small.yaml";
  struct Case {
    std::string configs, set, must_contain;
  };
  const Case cases[] = {
      {cfg, "{train.stepz: 3}", "run lstm_small-T3-s1 would fail: --set train.stepz=3: unknown key"},
      {cfg + ", /dev/zero", "{train.steps: 3}", "run zero-T3-s1 would fail: "},
      {cfg, "{train.steps: \"5\\n---\\n7\"}", "run lstm_small-T3-s1 would fail: --set train.steps="},
  };
  for (const Case& c : cases) {
    clitest::write(dir + "/bad.yaml", "experiment: copy\nconfigs: [" + c.configs + "]\nset: " +
                                          c.set + "\ngrid: {task.T: [3, 4]}\nout: out\n");
    const auto r = run(kFront + " sweep bad.yaml -q", dir);
    EXPECT_EQ(r.code, 2) << c.set << "\n" << r.err;
    EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("seqbench sweep: error: bad.yaml: " + c.must_contain), std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(dir + "/out")) << c.set << ": nothing runs, nothing is written";
  }
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
  // One machine has one such cluster: two checkouts' suites running this test at once
  // would start and stop it under each other, so the test holds a lock while it uses it.
  const int lock_fd = ::open("/var/tmp/seqbench-slurm-test.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  ASSERT_GE(lock_fd, 0);
  ASSERT_EQ(::flock(lock_fd, LOCK_EX), 0);
  struct Unlock {
    int fd;
    ~Unlock() { ::close(fd); }
  } unlock{lock_fd};
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
  clitest::write(dir + "/bin/sbatch",
                 "#!/bin/sh\nfor a; do last=$a; done\ncp \"$last\" \"$(dirname \"$0\")/captured.sh\"\necho 42\n");
  std::filesystem::permissions(dir + "/bin/sbatch", std::filesystem::perms::owner_all);
  r = run("PATH=" + dir + "/bin:$PATH " + kFront + " sweep " + spec + " --seeds 3 --out " + dir +
              "/slurm --backend slurm -q",
          dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string script = core::read_file(dir + "/bin/captured.sh");
  EXPECT_NE(script.find(" '--seeds' '3' '--out' '" + dir + "/slurm' --run-index"), std::string::npos) << script;
}

namespace {

// A stand-in for sbatch that keeps its arguments (one per line) and the script, then runs
// the script's array task 0 the way Slurm would: in the --chdir directory, with
// SLURM_ARRAY_TASK_ID set.
void fake_sbatch(const std::string& bin) {
  fs::create_directories(bin);
  clitest::write(bin + "/sbatch",
                 "#!/bin/sh\n"
                 "d=$(dirname \"$0\")\n"
                 "for a; do printf '%s\\n' \"$a\" >>\"$d/args.txt\"; last=$a; done\n"
                 "cp \"$last\" \"$d/captured.sh\"\n"
                 "for a; do case \"$a\" in --chdir=*) cd \"${a#--chdir=}\" || exit 1;; esac; done\n"
                 "SLURM_ARRAY_TASK_ID=0 bash \"$last\" >\"$d/task0.out\" 2>&1 || exit 1\n"
                 "echo 42\n");
  fs::permissions(bin + "/sbatch", fs::perms::owner_all);
}

}  // namespace

// Issue 29, item 1: a line break (or a space, a quote, $(...)) in a Slurm value never
// reaches the job script; the script of a sweep whose paths hold spaces and quotes still
// runs its task.
TEST(SweepCli, HostileSlurmValuesAreRefusedAndTheJobScriptCannotBeInjected) {
  const std::string dir = clitest::fresh_dir("x");
  fake_sbatch(dir + "/bin");
  const std::string path = "PATH=" + dir + "/bin:$PATH ";
  const std::string cfg = kSource + "/configs/copy/lstm_small.yaml";
  const auto spec_with = [&](const std::string& name, const std::string& slurm) {
    const std::string p = dir + "/" + name + ".yaml";
    clitest::write(p, "experiment: copy\nconfigs: [" + cfg +
                          "]\nset: {train.steps: 3, task.T: 5, model.hidden: 8}\nthreads: 1\n"
                          "out: \"" + dir + "/o u t's\"\nslurm: " + slurm + "\n");
    return p;
  };
  const std::vector<std::string> bad_files{
      "{partition: \"gpu\\necho pwned\"}", "{time: \"1:00 --wrap=id\"}",
      "{mem: \"4G;id\"}", "{account: \"lab\\tx\"}", "{extra: [\"--qos=a\\n#SBATCH -p x\"]}",
      "{extra: [\"--comment=$(id)\"]}", "{extra: \"--qos=a --wrap=id\"}"};
  for (size_t i = 0; i < bad_files.size(); ++i) {
    const auto r = run(path + kFront + " sweep " + spec_with("bad" + std::to_string(i), bad_files[i]) +
                           " --backend slurm",
                       dir);
    EXPECT_EQ(r.code, 2) << bad_files[i] << ": " << r.err;
    EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("slurm."), std::string::npos) << r.err;
  }
  const std::string good = spec_with("good", "{partition: debug, time: \"00:10:00\", mem: 1G}");
  for (const std::string opt : {"--partition 'gpu\necho pwned'", "--time '1:00 --wrap=id'",
                                "--mem '$(id)'", "--account 'a b'"}) {
    const auto r = run(path + kFront + " sweep " + good + " --backend slurm " + opt, dir);
    EXPECT_EQ(r.code, 2) << opt << ": " << r.err;
    EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(opt.substr(0, opt.find(' ')) + ": slurm."), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir + "/bin/captured.sh")) << "sbatch was called";
  EXPECT_FALSE(fs::exists(dir + "/o u t's/.sweep/slurm")) << "a script was written";

  // Valid values; the sweep directory holds a space and a quote, the working directory a
  // space (clitest::run cannot cd into one with a quote).
  fs::create_directories(dir + "/w d");
  auto r = run(path + kFront + " sweep " + good + " --backend slurm --account lab_1", dir + "/w d");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string script = clitest::slurp(dir + "/bin/captured.sh");
  int lines = 0;
  for (size_t at = 0; at < script.size();) {
    const size_t end = script.find('\n', at);
    const std::string line = script.substr(at, end - at);
    EXPECT_TRUE(line.rfind("#!/bin/bash", 0) == 0 || line.rfind("#SBATCH --", 0) == 0 ||
                line.rfind("exec '", 0) == 0)
        << line;
    if (line.rfind("#SBATCH", 0) == 0) {
      EXPECT_EQ(line.find(' ', 8), std::string::npos) << line;
    }
    ++lines;
    at = end + 1;
  }
  EXPECT_EQ(lines, 9) << script;
  EXPECT_NE(script.find("#SBATCH --partition=debug\n#SBATCH --time=00:10:00\n#SBATCH --mem=1G\n"
                        "#SBATCH --account=lab_1\n"),
            std::string::npos)
      << script;
  const std::string args = clitest::slurp(dir + "/bin/args.txt");
  EXPECT_NE(args.find("--output=" + dir + "/o u t's/.sweep/slurm/%A_%a.out\n"), std::string::npos)
      << args;
  EXPECT_NE(args.find("--chdir=" + dir + "/w d\n"), std::string::npos) << args;
  // The task ran through the quoted command line into the directory with the quote.
  EXPECT_TRUE(fs::exists(dir + "/o u t's/copy/lstm_small-s1/summary.json"))
      << clitest::slurp(dir + "/bin/task0.out");
}

// Issue 29, item 3: two sweeps started together on one directory, five times. Each run is
// started once (one command line in its sweep log), both sweeps succeed, the merged table
// has each run once, and nothing was moved aside.
TEST(SweepCli, TwoSweepsOnOneDirectoryRunEachRunOnceAndMoveNothing) {
  const std::string dir = clitest::fresh_dir("x");
  for (int round = 0; round < 5; ++round) {
    const std::string name = "twice" + std::to_string(round);
    const std::string spec = tiny_spec(dir, name, 3);
    pid_t pids[2];
    for (int k = 0; k < 2; ++k) {
      const std::string err = dir + "/" + name + "." + std::to_string(k) + ".err";
      pids[k] = ::fork();
      if (pids[k] == 0) {
        if (::chdir(dir.c_str()) != 0 || !std::freopen(err.c_str(), "w", stderr)) ::_exit(126);
        ::execl(SEQBENCH_FRONT_BIN, SEQBENCH_FRONT_BIN, "sweep", spec.c_str(), "-q", "--jobs", "2",
                static_cast<char*>(nullptr));
        ::_exit(127);
      }
    }
    for (int k = 0; k < 2; ++k) {
      int status = 0;
      ASSERT_EQ(::waitpid(pids[k], &status, 0), pids[k]);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
          << "round " << round << ", sweep " << k << ": "
          << clitest::slurp(dir + "/" + name + "." + std::to_string(k) + ".err");
    }
    const std::string out = dir + "/" + name;
    const auto t = report::read_csv(out + "/copy/runs.csv");
    std::map<std::string, int> rows;
    for (const auto& row : t.rows) ++rows[row[size_t(t.col("run_id"))]];
    EXPECT_EQ(rows.size(), 4u) << "round " << round;
    for (const char* id : {"lstm_small-s1", "lstm_small-s2", "rnn-s1", "rnn-s2"}) {
      EXPECT_EQ(rows[id], 1) << "round " << round << ": " << id;
      const std::string log = clitest::slurp(out + "/.sweep/logs/" + std::string(id) + ".log");
      int starts = 0;
      for (size_t at = 0; (at = log.find("# /", at)) != std::string::npos; ++at)
        starts += at == 0 || log[at - 1] == '\n';
      EXPECT_EQ(starts, 1) << "round " << round << ": " << id << " started " << starts << " times\n"
                           << log;
    }
    EXPECT_FALSE(fs::exists(out + "/.sweep/stale")) << "round " << round << ": a run was moved aside";
  }
}

// The same for Slurm array tasks of two arrays: each is `seqbench sweep SPEC --run-index
// K` in the foreground. Two tasks for one run, started together three times: both exit
// 0, the run is started once.
TEST(SweepCli, TwoArrayTasksForOneRunStartItOnce) {
  const std::string dir = clitest::fresh_dir("x");
  for (int round = 0; round < 3; ++round) {
    const std::string name = "task" + std::to_string(round);
    const std::string spec = tiny_spec(dir, name, 3);
    pid_t pids[2];
    for (int k = 0; k < 2; ++k) {
      pids[k] = ::fork();
      if (pids[k] == 0) {
        if (::chdir(dir.c_str()) != 0 || !std::freopen("/dev/null", "w", stderr)) ::_exit(126);
        ::execl(SEQBENCH_FRONT_BIN, SEQBENCH_FRONT_BIN, "sweep", spec.c_str(), "--run-index", "0",
                "--threads", "1", static_cast<char*>(nullptr));
        ::_exit(127);
      }
    }
    for (int k = 0; k < 2; ++k) {
      int status = 0;
      ASSERT_EQ(::waitpid(pids[k], &status, 0), pids[k]);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "round " << round << ", task " << k;
    }
    const std::string log = clitest::slurp(dir + "/" + name + "/.sweep/logs/lstm_small-s1.log");
    int starts = 0;
    for (size_t at = 0; (at = log.find("# /", at)) != std::string::npos; ++at)
      starts += at == 0 || log[at - 1] == '\n';
    EXPECT_EQ(starts, 1) << "round " << round << "\n" << log;
    EXPECT_TRUE(fs::exists(dir + "/" + name + "/copy/lstm_small-s1/summary.json")) << "round " << round;
    EXPECT_FALSE(fs::exists(dir + "/" + name + "/.sweep/stale")) << "round " << round;
  }
}
