// End-to-end: what a run does with files and names someone else put in its way. Nothing is
// written through a symbolic link (a run, experiment or file of a run that is one is
// refused with one line naming it, and its target is left as it was); a runs.csv row
// without its line end is kept; temporary files of killed processes are removed when the
// run starts again; labels reach CSV and Markdown neutralised.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/cli_util.hpp"
#include "report/csv.hpp"

using namespace seqbench;
using clitest::run;
namespace fs = std::filesystem;

namespace {

const std::string kCopy = SEQBENCH_COPY_BIN;
const std::string kFront = SEQBENCH_FRONT_BIN;

const char* kTiny = R"(task: {name: copy, T: 4, copy_len: 3, n_symbols: 4}
model: {hidden: 8}
optim: {name: adam, lr: 0.01}
train: {batch: 4, steps: 40, log_every: 5, eval_every: 10, eval_batches: 2, checkpoint_every: 10, threads: 1}
output: {dir: results}
)";

// The refusal: exit 1, one line on stderr naming the link.
void expect_refused(const clitest::Result& r, const std::string& link) {
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("'" + link + "' is a symbolic link"), std::string::npos) << link << "\n"
                                                                                << r.err;
}

// The pid of a process that has ended.
pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

}  // namespace

TEST(HostileFiles, ARunOrExperimentDirectoryThatIsASymlinkIsRefused) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  fs::create_directories(dir + "/outside");
  fs::create_directories(dir + "/results/copy");
  // The run directory.
  fs::create_directory_symlink(dir + "/outside", dir + "/results/copy/r");
  expect_refused(run(kCopy + " --config tiny.yaml -q --run-id r", dir), "results/copy/r");
  expect_refused(run(kCopy + " --config tiny.yaml -q --run-id r --resume", dir), "results/copy/r");
  // The experiment directory, with and without a run id.
  fs::remove_all(dir + "/results");
  fs::create_directories(dir + "/results");
  fs::create_directory_symlink(dir + "/outside", dir + "/results/copy");
  expect_refused(run(kCopy + " --config tiny.yaml -q --run-id r", dir), "results/copy");
  expect_refused(run(kCopy + " --config tiny.yaml -q", dir), "results/copy");
  expect_refused(run(kCopy + " --config tiny.yaml -q --run-id r --resume", dir), "results/copy");
  EXPECT_TRUE(fs::is_empty(dir + "/outside"));
  // The results root itself is the user's to place: a link there is followed.
  fs::remove_all(dir + "/results");
  fs::create_directory_symlink(dir + "/outside", dir + "/results");
  ASSERT_EQ(run(kCopy + " --config tiny.yaml -q --run-id r", dir).code, 0);
  EXPECT_TRUE(fs::exists(dir + "/outside/copy/r/checkpoint.sbck"));
}

TEST(HostileFiles, AFileOfARunThatIsASymlinkIsRefusedAndItsTargetKept) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  ASSERT_EQ(run(kCopy + " --config tiny.yaml -q --run-id base --interrupt-at 25", dir).code, 130);
  const std::string base = dir + "/results/copy/base";
  fs::create_directories(dir + "/outside");
  for (const std::string name :
       {".lock", "log.txt", "metrics.csv", "gradnorm.csv", "checkpoint.sbck",
        "checkpoint.prev.sbck", "summary.json", "config.yaml"}) {
    SCOPED_TRACE(name);
    // A copy of the run whose file is a link to a copy of that file outside the results.
    const std::string id = fmt::format("r{}", name[0] == '.' ? name.substr(1) : name);
    const std::string run_dir = dir + "/results/copy/" + id;
    fs::copy(base, run_dir, fs::copy_options::recursive);
    const std::string victim = dir + "/outside/" + id;
    if (name == ".lock")
      clitest::write(victim, "precious\n");
    else
      fs::copy_file(run_dir + "/" + name, victim);
    const std::string before = clitest::slurp(victim);
    fs::remove(run_dir + "/" + name);
    fs::create_symlink(victim, run_dir + "/" + name);
    const std::string shown = fmt::format("results/copy/{}/{}", id, name);
    expect_refused(run(kCopy + " -q --run-id " + id + " --resume", dir), shown);
    if (name == "checkpoint.sbck" || name == "checkpoint.prev.sbck")
      expect_refused(run(kCopy + " -q --run-id " + id + " --resume-from previous", dir), shown);
    EXPECT_EQ(clitest::slurp(victim), before);
    EXPECT_TRUE(fs::is_symlink(run_dir + "/" + name));
  }
  // A new run into a directory that holds no run yet but a linked log.
  fs::create_directories(dir + "/results/copy/fresh");
  clitest::write(dir + "/outside/log", "precious\n");
  fs::create_symlink(dir + "/outside/log", dir + "/results/copy/fresh/log.txt");
  expect_refused(run(kCopy + " --config tiny.yaml -q --run-id fresh", dir),
                 "results/copy/fresh/log.txt");
  EXPECT_EQ(clitest::slurp(dir + "/outside/log"), "precious\n");
}

TEST(HostileFiles, ALinkedRunsCsvOrItsLockIsRefusedBeforeTheRunStarts) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  ASSERT_EQ(run(kCopy + " --config tiny.yaml -q --run-id a", dir).code, 0);
  fs::create_directories(dir + "/outside");
  for (const std::string name : {"runs.csv", "runs.csv.lock"}) {
    SCOPED_TRACE(name);
    const std::string path = dir + "/results/copy/" + name, victim = dir + "/outside/" + name;
    if (fs::exists(path))
      fs::rename(path, victim);
    else
      clitest::write(victim, "precious\n");
    const std::string before = clitest::slurp(victim);
    fs::create_symlink(victim, path);
    const std::string id = fmt::format("b{}", name.size());
    expect_refused(run(kCopy + " --config tiny.yaml -q --run-id " + id, dir),
                   fmt::format("results/copy/{}", name));
    EXPECT_FALSE(fs::exists(dir + "/results/copy/" + id + "/config.yaml"))
        << "refused before it ran";
    EXPECT_EQ(clitest::slurp(victim), before);
    fs::remove(path);
    if (name == "runs.csv") fs::rename(victim, path);
  }
}

TEST(HostileFiles, ARunsCsvRowWithoutItsLineEndIsKeptByTheNextRun) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  ASSERT_EQ(run(kCopy + " --config tiny.yaml -q --run-id a", dir).code, 0);
  const std::string runs = dir + "/results/copy/runs.csv";
  std::string text = clitest::slurp(runs);
  ASSERT_EQ(text.back(), '\n');
  text.pop_back();  // a hand edit that lost the last line end
  clitest::write(runs, text);
  ASSERT_EQ(run(kCopy + " --config tiny.yaml -q --run-id b", dir).code, 0);
  const auto t = report::read_csv(runs);
  ASSERT_EQ(t.rows.size(), 2u) << clitest::slurp(runs);
  EXPECT_EQ(t.rows[0][t.col("run_id")], "a");
  EXPECT_EQ(t.rows[1][t.col("run_id")], "b");
  EXPECT_EQ(clitest::slurp(runs).substr(0, text.size()), text) << "a's row is kept as it was";
}

TEST(HostileFiles, TempFilesOfKilledProcessesAreRemovedWhenTheRunStartsAgain) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  ASSERT_EQ(run(kCopy + " --config tiny.yaml -q --run-id r --interrupt-at 25", dir).code, 130);
  const std::string exp_dir = dir + "/results/copy", run_dir = exp_dir + "/r";
  const std::string dead = std::to_string(dead_pid()), alive = std::to_string(::getpid());
  // What a kill during a checkpoint write leaves: a whole checkpoint under a temp name.
  for (const std::string& name : {"checkpoint.sbck.tmp." + dead, "summary.json.tmp." + dead})
    fs::copy_file(run_dir + "/checkpoint.sbck", run_dir + "/" + name);
  const std::vector<std::string> kept{run_dir + "/metrics.csv.tmp." + alive,    // its writer lives
                                      run_dir + "/notes.tmp." + dead + ".txt",  // another name
                                      exp_dir + "/runs.csv.tmp." + dead};       // not this run's
  for (const auto& path : kept) clitest::write(path, "x");
  const auto r = run(kCopy + " -q --run-id r --resume", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(fs::exists(run_dir + "/checkpoint.sbck.tmp." + dead));
  EXPECT_FALSE(fs::exists(run_dir + "/summary.json.tmp." + dead));
  for (const auto& path : kept) EXPECT_TRUE(fs::exists(path)) << path;
  const std::string log = clitest::slurp(run_dir + "/log.txt");
  EXPECT_NE(log.find("removed checkpoint.sbck.tmp." + dead), std::string::npos) << log;
}

TEST(HostileFiles, HostileLabelsReachRunsCsvAndCompareNeutralised) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  const std::vector<std::pair<std::string, std::string>> labels{
      {"xss", "<script>alert(1)</script>"}, {"dde", "=cmd|' /C calc'!A0"}, {"neg", "-2+3"}};
  for (const auto& [id, label] : labels) {
    // YAML single quotes: a ' inside is doubled.
    std::string yaml_label;
    for (char c : label) yaml_label += c == '\'' ? std::string("''") : std::string(1, c);
    clitest::write(dir + "/" + id + ".yaml", "output: {label: '" + yaml_label + "'}\n");
    const auto r =
        run(kCopy + " --config tiny.yaml --config " + id + ".yaml -q --run-id " + id, dir);
    ASSERT_EQ(r.code, 0) << r.err;
  }
  const std::string raw = clitest::slurp(dir + "/results/copy/runs.csv");
  EXPECT_NE(raw.find(",\"'=cmd|' /C calc'!A0\","), std::string::npos) << raw;
  EXPECT_NE(raw.find(",\"'-2+3\","), std::string::npos) << raw;
  EXPECT_NE(raw.find(",-1,-1,"), std::string::npos)
      << raw;  // no target: negative numbers as they are
  const auto runs = report::read_csv(dir + "/results/copy/runs.csv");
  for (size_t i = 0; i < labels.size(); ++i)
    EXPECT_EQ(runs.rows[i][runs.col("label")], labels[i].second);

  const auto md = run(kFront + " compare results/copy/runs.csv", dir);
  ASSERT_EQ(md.code, 0) << md.err;
  EXPECT_EQ(md.out.find("<script>"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("=cmd\\|' /C calc'!A0"), std::string::npos) << md.out;
  const auto csv = run(kFront + " compare results/copy/runs.csv --format csv --out cmp.csv", dir);
  ASSERT_EQ(csv.code, 0) << csv.err;
  const std::string cmp = clitest::slurp(dir + "/cmp.csv");
  EXPECT_NE(cmp.find("\n\"'=cmd|' /C calc'!A0\","), std::string::npos) << cmp;
  EXPECT_NE(cmp.find("\n\"'-2+3\","), std::string::npos) << cmp;
  const auto back = report::read_csv(dir + "/cmp.csv");
  ASSERT_EQ(back.rows.size(), labels.size());
  for (size_t r = 0; r < back.rows.size(); ++r) EXPECT_GE(back.number(r, "final acc"), 0.0);
}
