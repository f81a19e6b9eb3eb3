// Two checkpoint generations: a run keeps the checkpoint before its latest one, a damaged
// latest checkpoint is refused with a hint, and `--resume-from previous` continues from the
// older one to exactly the numbers of an uninterrupted run.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/cli_util.hpp"
#include "report/csv.hpp"
#include "train/checkpoint.hpp"

using namespace seqbench;
using clitest::run;
namespace fs = std::filesystem;

namespace {

const std::string kCopy = SEQBENCH_COPY_BIN;

const char* kTiny = R"(task: {name: copy, T: 4, copy_len: 3, n_symbols: 4}
model: {hidden: 8}
optim: {name: adam, lr: 0.01}
train: {batch: 4, steps: 40, log_every: 5, eval_every: 10, eval_batches: 2, checkpoint_every: 10, threads: 1}
output: {dir: results}
)";

// Flips one bit in the middle of a file (in the parameter data of a checkpoint).
void flip_a_bit(const std::string& path) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(0, std::ios::end);
  const std::streamoff middle = f.tellg() - std::streamoff(64);
  f.seekg(middle);
  char c = 0;
  f.read(&c, 1);
  c = char(c ^ 0x10);
  f.seekp(middle);
  f.write(&c, 1);
}

}  // namespace

TEST(CheckpointGenerations, ADamagedLatestCheckpointFallsBackToThePreviousOneOnRequest) {
  const std::string dir = clitest::fresh_dir("gen");
  clitest::write(dir + "/tiny.yaml", kTiny);
  ASSERT_EQ(run(kCopy + " --config tiny.yaml -q --run-id full", dir).code, 0);
  // Checkpoints at 10 and 20, then Ctrl-C after update 25 writes one at 25.
  ASSERT_EQ(run(kCopy + " --config tiny.yaml -q --run-id part --interrupt-at 25", dir).code, 130);
  const std::string run_dir = dir + "/results/copy/part";
  EXPECT_EQ(train::load_checkpoint(run_dir + "/checkpoint.sbck").get_string("step"), "25");
  EXPECT_EQ(train::load_checkpoint(run_dir + "/checkpoint.prev.sbck").get_string("step"), "20");

  flip_a_bit(run_dir + "/checkpoint.sbck");
  const std::string metrics_before = clitest::slurp(run_dir + "/metrics.csv");
  const auto refused = run(kCopy + " -q --run-id part --resume", dir);
  EXPECT_EQ(refused.code, 1) << refused.err;
  EXPECT_EQ(clitest::count_lines(refused.err), 1) << refused.err;
  for (const char* s : {"checkpoint.sbck", "damaged", "--resume-from previous"})
    EXPECT_NE(refused.err.find(s), std::string::npos) << s << "\n" << refused.err;
  // One hint, not the loader's and the resume's both (issue 29, item 12).
  const size_t hint = refused.err.find("(hint: ");
  EXPECT_NE(hint, std::string::npos) << refused.err;
  EXPECT_EQ(refused.err.find("(hint: ", hint + 1), std::string::npos) << refused.err;
  EXPECT_EQ(clitest::slurp(run_dir + "/metrics.csv"), metrics_before) << "a refused resume touches nothing";

  const auto resumed = run(kCopy + " -q --run-id part --resume-from previous", dir);
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  // From update 20 to the end: the same parameters and metrics as the uninterrupted run.
  const auto a = train::load_checkpoint(dir + "/results/copy/full/checkpoint.sbck");
  const auto b = train::load_checkpoint(run_dir + "/checkpoint.sbck");
  ASSERT_EQ(a.arrays.size(), b.arrays.size());
  for (size_t i = 0; i < a.arrays.size(); ++i) EXPECT_EQ(a.arrays[i].data, b.arrays[i].data) << a.arrays[i].name;
  const auto ma = report::read_csv(dir + "/results/copy/full/metrics.csv");
  const auto mb = report::read_csv(run_dir + "/metrics.csv");
  ASSERT_EQ(ma.rows.size(), mb.rows.size());
  for (size_t i = 0; i < ma.rows.size(); ++i)
    for (int c = 0; c < 6; ++c) EXPECT_EQ(ma.rows[i][c], mb.rows[i][c]) << "row " << i;
  // The damaged file is gone from both generations.
  EXPECT_NO_THROW(train::load_checkpoint(run_dir + "/checkpoint.prev.sbck"));

  const auto none = run(kCopy + " -q --run-id full2 --resume-from previous", dir);
  EXPECT_EQ(none.code, 2) << none.err;
}

namespace {

// The checkpoint files in a run directory, each of which must be a file of its own (one
// name): a second name would share every bit flip with it.
void expect_two_separate_checkpoints(const std::string& run_dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(run_dir)) {
    const std::string name = e.path().filename().string();
    if (name.find("sbck") != std::string::npos) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"checkpoint.prev.sbck", "checkpoint.sbck"}));
  struct stat latest {};
  struct stat previous {};
  ASSERT_EQ(::lstat((run_dir + "/checkpoint.sbck").c_str(), &latest), 0);
  ASSERT_EQ(::lstat((run_dir + "/checkpoint.prev.sbck").c_str(), &previous), 0);
  EXPECT_EQ(latest.st_nlink, 1u);
  EXPECT_EQ(previous.st_nlink, 1u);
  EXPECT_NE(latest.st_ino, previous.st_ino);
}

}  // namespace

TEST(CheckpointGenerations, ThePreviousCheckpointIsAlwaysAFileOfItsOwn) {
  const std::string dir = clitest::fresh_dir("gen");
  clitest::write(dir + "/tiny.yaml", kTiny);
  ASSERT_EQ(run(kCopy + " --config tiny.yaml -q --run-id part --interrupt-at 25", dir).code, 130);
  const std::string run_dir = dir + "/results/copy/part";
  expect_two_separate_checkpoints(run_dir);
  // Falling back to the previous checkpoint (20), then writing one more (21): the first
  // checkpoint after the fallback, where the previous one had been the latest's second name.
  flip_a_bit(run_dir + "/checkpoint.sbck");
  ASSERT_EQ(run(kCopy + " -q --run-id part --resume-from previous --interrupt-at 21", dir).code,
            130);
  expect_two_separate_checkpoints(run_dir);
  EXPECT_EQ(train::load_checkpoint(run_dir + "/checkpoint.sbck").get_string("step"), "21");
  EXPECT_EQ(train::load_checkpoint(run_dir + "/checkpoint.prev.sbck").get_string("step"), "20");
  ASSERT_EQ(run(kCopy + " -q --run-id part --resume", dir).code, 0);
  expect_two_separate_checkpoints(run_dir);
}
