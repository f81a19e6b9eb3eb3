// End-to-end tests of the loop a user lives in (README, "Five-minute tour"): finding
// presets (`list presets`), watching a sweep ([k/N done] lines, `sweep status` of a running
// run), listing runs (`seqbench runs`), continuing the newest run (`--resume latest`),
// comparing with spread (`compare`, its CSV read by pandas, `--by` a config key) and
// `seqbench --version`; and that an unknown option is one line and exit 2 everywhere.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/cli_util.hpp"
#include "core/fs.hpp"
#include "report/csv.hpp"

using namespace seqbench;
using clitest::run;
namespace fs = std::filesystem;

namespace {

const std::string kFront = SEQBENCH_FRONT_BIN;
const std::string kSource = SEQBENCH_SOURCE_DIR;

// A copy run of 20 updates in well under a second.
const char* kTiny = R"(task: {name: copy, T: 4, copy_len: 3, n_symbols: 4}
model: {hidden: 8}
optim: {name: adam, lr: 0.01}
train: {batch: 4, steps: 20, log_every: 5, eval_every: 10, eval_batches: 2, threads: 1}
)";

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

// The line of `text` that contains `what` ("" when none does).
std::string line_with(const std::string& text, const std::string& what) {
  const size_t at = text.find(what);
  if (at == std::string::npos) return "";
  const size_t start = text.rfind('\n', at);
  const size_t end = text.find('\n', at);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     (end == std::string::npos ? text.size() : end) - (start == std::string::npos ? 0 : start + 1));
}

// The trimmed cells of a Markdown table line ("| a  | b |" -> {"a", "b"}).
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> out;
  size_t at = line.find('|');
  while (at != std::string::npos) {
    const size_t next = line.find('|', at + 1);
    if (next == std::string::npos) break;
    std::string c = line.substr(at + 1, next - at - 1);
    c.erase(0, c.find_first_not_of(' '));
    c.erase(c.find_last_not_of(' ') + 1);
    out.push_back(c);
    at = next;
  }
  return out;
}

}  // namespace

TEST(LoopCli, VersionNamesCommitBuildAndLibraries) {
  const std::string dir = clitest::fresh_dir("v");
  const auto r = run(kFront + " --version", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s : {"seqbench 0.", "(commit ", "build: ", "oneDNN ", "OpenBLAS "})
    EXPECT_TRUE(contains(r.out, s)) << s << "\n" << r.out;
  // The ISA oneDNN dispatches to, and a cap lowers it (an AVX2 machine's table differs).
  EXPECT_TRUE(contains(r.out, " (ISA ")) << r.out;
  EXPECT_FALSE(contains(r.out, "(ISA unknown)")) << r.out;
  const auto capped = run("env ONEDNN_MAX_CPU_ISA=SSE41 " + kFront + " --version", dir);
  EXPECT_TRUE(contains(capped.out, " (ISA sse41)")) << capped.out;
  EXPECT_TRUE(contains(r.out, "native (-march=") || contains(r.out, ", portable")) << r.out;
  EXPECT_FALSE(contains(r.out, "commit unknown")) << r.out;  // built from a git checkout
  // The help shows the loop and the new commands.
  const auto help = run(kFront + " --help", dir);
  for (const char* s : {"list presets", "seqbench runs", "seqbench compare", "--version"})
    EXPECT_TRUE(contains(help.out, s)) << s << "\n" << help.out;
}

TEST(LoopCli, UnknownOptionsAreOneLineAndExit2) {
  const std::string dir = clitest::fresh_dir("opts");
  clitest::write(dir + "/s.yaml", "experiment: copy\nconfigs: [" + kSource +
                                      "/configs/copy/lstm_small.yaml]\nout: " + dir + "/s\n");
  for (const std::string cmd :
       {"sweep s.yaml --nosuch", "sweep status s.yaml --nosuch", "sweep s.yaml --jobs zero",
        "list --nosuch", "list presets --nosuch", "runs --nosuch", "compare x.csv --nosuch",
        "copy --nosuch", "copy --resume maybe"}) {
    const auto r = run(kFront + " " + cmd, dir);
    EXPECT_EQ(r.code, 2) << cmd << "\n" << r.err;
    EXPECT_EQ(clitest::count_lines(r.err), 1) << cmd << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, "error: ")) << cmd << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << cmd << "\n" << r.out;
  }
  const auto r = run(kFront + " sweep s.yaml --nosuch", dir);
  EXPECT_TRUE(contains(r.err, "seqbench sweep: error:") && contains(r.err, "--nosuch")) << r.err;
  // A subcommand that does not exist is named, with the ones that do.
  const auto sub = run(kFront + " report bogus", dir);
  EXPECT_EQ(sub.code, 2) << sub.err;
  EXPECT_TRUE(contains(sub.err, "unknown subcommand 'bogus' (have: gradnorm, curves")) << sub.err;
  // An option given twice is named in our words, not CLI11's "At Most 1 required".
  const auto twice = run(kFront + " copy --demo --threads 1 --threads 2 --dump-config", dir);
  EXPECT_EQ(twice.code, 2) << twice.err;
  EXPECT_EQ(clitest::count_lines(twice.err), 1) << twice.err;
  EXPECT_TRUE(contains(twice.err, "seqbench copy: error: --threads given 2 times; it takes one value"))
      << twice.err;
  EXPECT_FALSE(contains(twice.err, "At Most")) << twice.err;
}

// What a command prints must reach its reader: stdout on a full device is an error.
TEST(LoopCli, AFailedWriteToStandardOutputIsAnError) {
  const std::string dir = clitest::fresh_dir("full");
  // In a subshell, so that the helper's own redirection of stdout comes first.
  auto r = run("(" + kFront + " copy --demo --dump-config > /dev/full)", dir);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_TRUE(contains(r.err, "seqbench copy: error: cannot write to standard output")) << r.err;
  r = run("(" + kFront + " copy --demo --dump-config > /dev/null)", dir);
  EXPECT_EQ(r.code, 0) << r.err;
  // The same through an experiment's own binary, and for `--version`.
  for (const std::string& cmd : {std::string(SEQBENCH_COPY_BIN) + " --demo --dump-config",
                                 std::string(SEQBENCH_STABILITY_BIN) + " --demo --dump-config",
                                 kFront + " --version"}) {
    r = run("(" + cmd + " > /dev/full)", dir);
    EXPECT_EQ(r.code, 1) << cmd << "\n" << r.err;
    EXPECT_EQ(clitest::count_lines(r.err), 1) << cmd << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, "error: cannot write to standard output")) << cmd << "\n" << r.err;
  }
}

TEST(LoopCli, ListPresetsGivesPurposeAndStatedTime) {
  const std::string dir = clitest::fresh_dir("presets");
  // The real presets, from the checkout.
  auto r = run(kFront + " list presets copy --configs " + kSource + "/configs", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "| lstm_small | Copy task at T = 5 (sequence length 25): a small LSTM "
                              "learns to recall 10 symbols. |"))
      << r.out;
  EXPECT_FALSE(contains(r.out, "## recall")) << r.out;
  EXPECT_TRUE(contains(line_with(r.out, "| lstm |"), "Takes hours on 2 cores")) << r.out;
  // Made-up presets: the first sentence (a period inside parentheses does not end it), the
  // time the comment states, none where it states none.
  fs::create_directories(dir + "/configs/recall");
  clitest::write(dir + "/configs/recall/a.yaml",
                 "# MQAR with a model (Smith et al. 2020) that\n# recalls. Second sentence, about "
                 "3 minutes on 2 cores.\ntask: {name: mqar}\n");
  clitest::write(dir + "/configs/recall/b.yaml", "task: {name: mqar}\n");
  r = run(kFront + " list presets --configs configs", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "| a | MQAR with a model (Smith et al. 2020) that recalls. | about 3 "
                              "minutes on 2 cores |"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "| b |  | — |")) << r.out;
  r = run(kFront + " list presets recall --configs configs --format json", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "\"time\": \"about 3 minutes on 2 cores\"")) << r.out;
  r = run(kFront + " list presets recal --configs configs", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "did you mean 'recall'")) << r.err;
  r = run(kFront + " list presets", dir + "/configs");  // no configs/ here
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "no presets at 'configs'")) << r.err;
}

TEST(LoopCli, ListPresetsEstimateGivesTheTimeOfARunFromFinishedRuns) {
  const std::string dir = clitest::fresh_dir("presets_estimate");
  fs::create_directories(dir + "/configs/copy");
  clitest::write(dir + "/configs/copy/tiny.yaml", "# A tiny copy run.\n" + std::string(kTiny));
  std::string wider = kTiny;
  wider.replace(wider.find("hidden: 8"), 9, "hidden: 16");
  clitest::write(dir + "/configs/copy/wider.yaml", "# The same, wider.\n" + wider);
  // Nothing finished yet: no time, and it says so.
  auto r = run(kFront + " list presets copy --configs configs --estimate --from measured", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "| one run here, 1 thread |")) << r.out;
  EXPECT_EQ(cells_of(line_with(r.out, "| tiny |")).back(), "not measured yet") << r.out;
  // One finished run of tiny, with another budget (cost-free) and seed: tiny gets a time.
  const auto t = run(kFront + " copy --config configs/copy/tiny.yaml --set train.steps=30 --seed 4 --out measured -q",
                     dir);
  ASSERT_EQ(t.code, 0) << t.err;
  r = run(kFront + " list presets copy --configs configs --estimate --from measured", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string tiny = cells_of(line_with(r.out, "| tiny |")).back();
  EXPECT_TRUE(contains(tiny, " s (1 run)")) << r.out;
  // wider differs from tiny's run in one cost key, which it names.
  EXPECT_EQ(cells_of(line_with(r.out, "| wider |")).back(), "not measured yet (finished runs differ in model.hidden)")
      << r.out;
  r = run(kFront + " list presets copy --configs configs --estimate --from measured --format json", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "\"time_measured_here\": \"" + tiny + "\"")) << r.out;
  // --from alone is a usage error.
  r = run(kFront + " list presets copy --configs configs --from measured", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--from goes with --estimate")) << r.err;
}

TEST(LoopCli, RunsListsStatesAndResumeLatestContinuesTheNewest) {
  const std::string dir = clitest::fresh_dir("runs");
  clitest::write(dir + "/tiny.yaml", kTiny);
  ASSERT_EQ(run(kFront + " copy --config tiny.yaml -q --run-id done-one", dir).code, 0);
  // An interrupted run of another label, then `--resume latest` of that label finds it.
  auto r = run(kFront + " copy --config tiny.yaml -q --set output.label=rnnx --set model.cell=rnn "
                        "--interrupt-at 10",
               dir);
  ASSERT_EQ(r.code, 130) << r.err;
  r = run(kFront + " runs copy", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  // run_id, label, state, updates, final metric, age
  const auto done = cells_of(line_with(r.out, "| done-one ")), stopped = cells_of(line_with(r.out, "| rnnx-"));
  ASSERT_EQ(done.size(), 6u) << r.out;
  ASSERT_EQ(stopped.size(), 6u) << r.out;
  EXPECT_EQ(done[1], "lstm");
  EXPECT_EQ(done[2], "done");
  EXPECT_EQ(done[3], "20");
  EXPECT_EQ(done[4].rfind("acc ", 0), 0u) << done[4];
  EXPECT_EQ(stopped[1], "rnnx");
  EXPECT_EQ(stopped[2], "interrupted");
  EXPECT_EQ(stopped[3], "10");
  EXPECT_LT(r.out.find("| rnnx-"), r.out.find("| done-one ")) << r.out;  // newest first

  r = run(kFront + " copy --config tiny.yaml --set output.label=rnnx --set model.cell=rnn "
                   "--resume latest -q",
          dir);
  ASSERT_EQ(r.code, 0) << r.err;
  r = run(kFront + " runs copy --format csv", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto t = report::parse_csv(r.out, "runs");
  ASSERT_EQ(t.rows.size(), 2u) << r.out;  // continued, not a new run
  for (size_t i = 0; i < t.rows.size(); ++i) {
    EXPECT_EQ(t.rows[i][size_t(t.col("state"))], "done") << r.out;
    EXPECT_EQ(t.rows[i][size_t(t.col("updates"))], "20") << r.out;
  }
  // Nothing of that label, and --run-id with latest, are usage errors.
  r = run(kFront + " copy --config tiny.yaml --set output.label=gru --resume latest", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "no run labelled 'gru' in 'results/copy'")) << r.err;
  r = run(kFront + " copy --resume latest --run-id done-one", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  r = run(kFront + " runs nosuch", dir);
  EXPECT_EQ(r.code, 2);
  r = run(kFront + " runs --out elsewhere", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "'elsewhere'")) << r.err;
}

TEST(LoopCli, SweepPrintsProgressAndStatusShowsARunningRunsUpdateAndEta) {
  const std::string dir = clitest::fresh_dir("watch");
  clitest::write(dir + "/tiny.yaml", kTiny);
  clitest::write(dir + "/s.yaml", "experiment: copy\nconfigs: [tiny.yaml]\nseeds: [1, 2]\nthreads: 1\nout: " +
                                      dir + "/s\n");
  auto r = run(kFront + " sweep s.yaml --jobs 1 --progress-every 0", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  // After each run ends: the counts, and while runs are left, the sweep's ETA.
  EXPECT_TRUE(contains(line_with(r.err, "[1/2 done, 0 running, 0 failed]"), "; sweep ETA ")) << r.err;
  EXPECT_TRUE(contains(r.err, "[2/2 done, 0 running, 0 failed]")) << r.err;
  EXPECT_FALSE(contains(r.err, "\r")) << r.err;

  // A run in progress, as its files show it: a lock held, config.yaml, metrics.csv rows.
  clitest::write(dir + "/p.yaml", "experiment: copy\nconfigs: [tiny.yaml]\nseeds: [1, 2]\nout: " + dir + "/p\n");
  const std::string run_dir = dir + "/p/copy/tiny-s1";
  fs::create_directories(run_dir);
  clitest::write(run_dir + "/config.yaml", "train:\n  steps: 100\n  target: ~\n");
  clitest::write(run_dir + "/metrics.csv",
                 "step,split,loss,acc,lr,grad_norm,elapsed_s\n20,train,0.5,0.5,0.01,1,2\n30,train,0.4,"
                 "0.6,0.01,1,3\n31,tra");  // a row still being written is not read
  // The holder and its `sleep` in a process group of their own, killed together below, with
  // no copy of the test's output (ctest waits for every writer of it to end).
  const pid_t holder = ::fork();
  ASSERT_GE(holder, 0);
  if (holder == 0) {
    ::setpgid(0, 0);
    std::freopen("/dev/null", "w", stdout);
    std::freopen("/dev/null", "w", stderr);
    ::execlp("flock", "flock", (run_dir + "/.lock").c_str(), "sleep", "600", (char*)nullptr);
    ::_exit(127);
  }
  ::setpgid(holder, holder);
  ASSERT_TRUE(clitest::wait_for(
      [&] { return run("flock -n " + run_dir + "/.lock true", dir).code != 0; },
      [&] { return ::waitpid(holder, nullptr, WNOHANG) == holder; }));
  r = run(kFront + " sweep status p.yaml", dir);
  const auto listed = run(kFront + " runs copy --out p", dir);
  ::kill(-holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);
  ASSERT_EQ(r.code, 0) << r.err;
  // 30 of 100 updates at 10 per second: 7 s to go.
  EXPECT_TRUE(contains(line_with(r.out, "tiny-s1"), "running      update 30/100, 10/s, ETA 7.0 s")) << r.out;
  EXPECT_TRUE(contains(r.out, "sweep ETA: ")) << r.out;
  const auto cells = cells_of(line_with(listed.out, "| tiny-s1 "));
  ASSERT_EQ(cells.size(), 6u) << listed.out << listed.err;
  EXPECT_EQ(cells[2], "running");
  EXPECT_EQ(cells[3], "update 30/100, 10/s, ETA 7.0 s");
}

TEST(LoopCli, CompareShowsSpreadAndItsCsvLoadsInPandasWithNumericColumns) {
  const std::string dir = clitest::fresh_dir("cmp");
  clitest::write(dir + "/tiny.yaml", kTiny);
  // lstm: 3 seeds (sd); rnn: 2 seeds (min-max), at two sequence lengths (T 4 and 5).
  for (const std::string seed : {"1", "2", "3"})
    ASSERT_EQ(run(kFront + " copy --config tiny.yaml -q --seed " + seed, dir).code, 0);
  for (const std::string T : {"4", "5"})
    ASSERT_EQ(run(kFront + " copy --config tiny.yaml -q --set model.cell=rnn --set task.T=" + T, dir).code, 0);
  auto r = run(kFront + " compare results/copy/runs.csv", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  // label, model, task, T, data, n, final acc, best acc, updates, updates_to_target,
  // seconds_to_target, ms_per_update, peak_rss_mb: mean ± sd over three seeds where they
  // differ (the time per update), the value alone where they agree (20 updates each).
  const auto lstm = cells_of(line_with(r.out, "| lstm "));
  ASSERT_EQ(lstm.size(), 13u) << r.out;
  EXPECT_EQ(lstm[5], "3") << r.out;
  EXPECT_TRUE(contains(lstm[11], " ± ")) << r.out;
  EXPECT_EQ(lstm[8], "20") << r.out;
  // The rnn runs differ in task.T, so each is its own row of one.
  EXPECT_TRUE(contains(r.out, "| rnn [task.T=4] ")) << r.out;

  r = run(kFront + " compare results/copy/runs.csv --by model.cell --format csv --out cmp.csv", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto t = report::read_csv(dir + "/cmp.csv");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.columns[0], "model.cell");
  for (const auto& row : t.rows)
    for (const auto& cell : row) EXPECT_EQ(cell.find("—"), std::string::npos) << cell;
  // pandas reads every numeric column as numbers. python3-pandas is part of make deps, for
  // Debian's python3 (not whichever python3 comes first on PATH): a missing pandas fails
  // this test.
  clitest::write(dir + "/check.py", R"(import sys
import pandas as pd
df = pd.read_csv("cmp.csv")
text = {"model.cell", "model", "task", "T", "data"}  # what a row is, as text
bad = [c for c in df.columns if c not in text and df[c].dtype.kind not in "if"]
assert not bad, "not numeric: %s" % bad
assert {"final acc sd", "final acc min", "final acc max", "n_target", "updates_to_target"} <= set(df.columns)
lstm = df[df["model.cell"] == "lstm"].iloc[0]
assert lstm["n"] == 3 and lstm["final acc sd"] >= 0 and lstm["final acc min"] <= lstm["final acc max"]
rnn = df[df["model.cell"] == "rnn"].iloc[0]
assert rnn["n"] == 2 and str(rnn["T"]) == "4/5", rnn["T"]
assert rnn["final acc min"] <= rnn["final acc"] <= rnn["final acc max"]
print("ok")
)");
  r = run("/usr/bin/python3 check.py", dir);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "ok\n") << r.err;

  r = run(kFront + " compare results/copy/runs.csv --by task.Q", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_TRUE(contains(r.err, "keys that vary: ") && contains(r.err, "task.T")) << r.err;
}
