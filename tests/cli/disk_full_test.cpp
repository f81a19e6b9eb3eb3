// A disk that fills up during a run: the run stops with a one-line "disk full" error and
// exit 1, and loses nothing it had already written (config, every complete metrics row,
// the last good checkpoint, no temporary files left). After space is freed, --resume ends
// with exactly the parameters of an uninterrupted run.
//
// The disk is a small tmpfs mounted for the test, so it needs root (mount(2)); elsewhere
// the tests skip and say why. The sizes are chosen so that the failure point follows
// from what the run writes, not from timing: see each test.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "cli/cli_util.hpp"
#include "report/csv.hpp"
#include "train/checkpoint.hpp"

using namespace seqbench;
using clitest::run;
namespace fs = std::filesystem;

namespace {

const std::string kCopy = SEQBENCH_COPY_BIN;

// A tmpfs of a given size at `dir`, unmounted when the test ends whatever its outcome.
class Tmpfs {
 public:
  Tmpfs(std::string dir, uint64_t bytes) : dir_(std::move(dir)) {
    fs::create_directories(dir_);
    const std::string opts = "size=" + std::to_string(bytes);
    if (::mount("tmpfs", dir_.c_str(), "tmpfs", 0, opts.c_str()) == 0)
      mounted_ = true;
    else
      error_ = std::strerror(errno);
  }
  ~Tmpfs() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  Tmpfs(const Tmpfs&) = delete;
  Tmpfs& operator=(const Tmpfs&) = delete;

  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }
  // Grows (or shrinks) the file system in place: "space freed".
  bool resize(uint64_t bytes) {
    const std::string opts = "size=" + std::to_string(bytes);
    return ::mount("tmpfs", dir_.c_str(), "tmpfs", MS_REMOUNT, opts.c_str()) == 0;
  }

 private:
  std::string dir_, error_;
  bool mounted_ = false;
};

#define SKIP_UNLESS_MOUNTED(t)                                                           \
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount a small tmpfs (a full disk)"; \
  if (!(t).mounted()) GTEST_SKIP() << "cannot mount a tmpfs here: " << (t).error()

std::set<std::string> names_in(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

// Every line of a CSV file has as many fields as its header and ends with a newline.
void expect_whole_rows(const std::string& path) {
  const std::string text = clitest::slurp(path);
  ASSERT_FALSE(text.empty()) << path;
  EXPECT_EQ(text.back(), '\n') << path << " ends inside a row";
  const auto table = report::read_csv(path);
  for (size_t i = 0; i < table.rows.size(); ++i)
    EXPECT_EQ(table.rows[i].size(), table.columns.size()) << path << " row " << i;
}

// The hint says --resume only where a checkpoint is there to continue from.
void expect_one_line_disk_full(const clitest::Result& r, const std::string& file,
                               const std::string& run_dir) {
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("disk full"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(fs::exists(run_dir + "/checkpoint.sbck") ? "then continue the run with --resume"
                                                                 : "then start the run again"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(file), std::string::npos) << r.err;
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
}

}  // namespace

// Checkpoints of ~1 MB every 10 updates on a disk with room for one and a half: the first
// is written, the second cannot be (the previous generation is kept until the new one is
// complete), so the run fails while writing the checkpoint at update 20.
TEST(DiskFull, DuringACheckpointKeepsThePreviousOneAndResumesExactly) {
  const std::string dir = clitest::fresh_dir("ckpt");
  clitest::write(dir + "/run.yaml", R"(task: {name: copy, T: 4, copy_len: 3, n_symbols: 4}
model: {hidden: 200}
optim: {name: adam, lr: 0.01}
train: {batch: 2, steps: 30, log_every: 5, eval_every: 0, eval_batches: 1, checkpoint_every: 10, threads: 1}
)");
  // The uninterrupted run, on the ordinary disk: the reference and the checkpoint's size.
  ASSERT_EQ(run(kCopy + " --config run.yaml -q --out ref --run-id r", dir).code, 0);
  const auto full = train::load_checkpoint(dir + "/ref/copy/r/checkpoint.sbck");
  const uint64_t ckpt_bytes = fs::file_size(dir + "/ref/copy/r/checkpoint.sbck");
  ASSERT_GT(ckpt_bytes, 512u * 1024) << "the checkpoint must dominate the run's other files";

  Tmpfs disk(dir + "/disk", ckpt_bytes * 3 / 2);
  SKIP_UNLESS_MOUNTED(disk);
  const std::string run_dir = dir + "/disk/copy/r";
  const auto r = run(kCopy + " --config run.yaml -q --out disk --run-id r", dir);
  expect_one_line_disk_full(r, "checkpoint", run_dir);
  EXPECT_NE(r.err.find("--resume"), std::string::npos) << r.err;
  // What was written before is intact: config, whole metrics rows, the step-10 checkpoint.
  std::string ref_config = clitest::slurp(dir + "/ref/copy/r/config.yaml");
  ref_config.replace(ref_config.find("  dir: ref\n"), 11, "  dir: disk\n");
  EXPECT_EQ(clitest::slurp(run_dir + "/config.yaml"), ref_config);
  expect_whole_rows(run_dir + "/metrics.csv");
  const auto kept = train::load_checkpoint(run_dir + "/checkpoint.sbck");
  EXPECT_EQ(kept.get_int("step"), 10);
  for (const auto& name : names_in(run_dir))
    EXPECT_EQ(name.find(".tmp"), std::string::npos) << "left behind: " << name;

  // Space freed: the run continues from update 10 and ends where the reference did.
  ASSERT_TRUE(disk.resize(ckpt_bytes * 4));
  const auto resumed = run(kCopy + " -q --out disk --run-id r --resume", dir);
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  const auto b = train::load_checkpoint(run_dir + "/checkpoint.sbck");
  ASSERT_EQ(full.arrays.size(), b.arrays.size());
  for (size_t i = 0; i < full.arrays.size(); ++i)
    EXPECT_EQ(full.arrays[i].data, b.arrays[i].data) << full.arrays[i].name;
  expect_whole_rows(run_dir + "/metrics.csv");
  EXPECT_EQ(report::read_csv(run_dir + "/metrics.csv").rows.size(),
            report::read_csv(dir + "/ref/copy/r/metrics.csv").rows.size());
}

// A tiny model logging every update on a 64 KiB disk: metrics.csv and log.txt grow by a
// row and a line per update, and the first of them to need a new page when none is left
// meets the full disk, long before the end of the run. Both must end on a whole row.
TEST(DiskFull, DuringAMetricsAppendKeepsWholeRows) {
  const std::string dir = clitest::fresh_dir("metrics");
  clitest::write(dir + "/run.yaml", R"(task: {name: copy, T: 4, copy_len: 3, n_symbols: 4}
model: {hidden: 4}
optim: {name: adam, lr: 0.01}
train: {batch: 2, steps: 5000, log_every: 1, eval_every: 0, eval_batches: 1, threads: 1}
)");
  Tmpfs disk(dir + "/disk", 64 * 1024);
  SKIP_UNLESS_MOUNTED(disk);
  const std::string run_dir = dir + "/disk/copy/r";
  const auto r = run(kCopy + " --config run.yaml -q --out disk --run-id r", dir);
  const bool in_metrics = r.err.find("metrics.csv") != std::string::npos;
  expect_one_line_disk_full(r, in_metrics ? "metrics.csv" : "log.txt", run_dir);
  expect_whole_rows(run_dir + "/metrics.csv");
  const std::string log = clitest::slurp(run_dir + "/log.txt");
  EXPECT_TRUE(log.empty() || log.back() == '\n') << "log.txt ends inside a line";
  const auto rows = report::read_csv(run_dir + "/metrics.csv").rows.size();
  EXPECT_GT(rows, 100u) << "the disk filled up before the run got going";
  EXPECT_LT(rows, 5000u) << "the disk never filled up";
  for (const auto& name : names_in(run_dir))
    EXPECT_EQ(name.find(".tmp"), std::string::npos) << "left behind: " << name;
}

// Issue 29, item 7: a file-size limit (ulimit -f) is a full disk too. Without handling,
// the kernel's SIGXFSZ killed the run mid-checkpoint (exit 153) and left the temporary
// file; now the write fails with EFBIG, reported in one line, and the temporary file is
// gone. The first checkpoint is the write that fails, so there is nothing to resume: the
// hint says to start again (it said --resume, which then failed). No root needed: the
// limit is the shell's ulimit.
TEST(DiskFull, AFileSizeLimitIsReportedLikeAFullDiskAndLeavesNoTemporaryFile) {
  const std::string dir = clitest::fresh_dir("x");
  // Parameters, gradients' slots: a checkpoint of about 3 MiB, above the 1 MiB limit
  // (`ulimit -f` counts 512-byte blocks in sh, 1024-byte ones in bash: 1 or 2 MiB).
  const auto r = run("ulimit -f 2048; exec " + kCopy +
                         " --demo --run-id big --set model.hidden=256 --set train.steps=4 "
                         "--set train.checkpoint_every=2 --set train.eval_every=2 -q --threads 1",
                     dir);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("file size limit reached"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("then start the run again: it wrote no checkpoint to resume from (remove '"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("--resume"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/results/copy/big/checkpoint.sbck"));
  for (const auto& e : fs::directory_iterator(dir + "/results/copy/big"))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
  // What the hint says works: the directory removed, the run starts again and finishes.
  fs::remove_all(dir + "/results/copy/big");
  const auto again = run(kCopy + " --demo --run-id big --set model.hidden=256 --set train.steps=4 "
                                 "--set train.checkpoint_every=2 --set train.eval_every=2 -q --threads 1",
                         dir);
  EXPECT_EQ(again.code, 0) << again.err;
}

// The other side: a small checkpoint every 5 updates, and a metrics row and a log line
// every update, so that metrics.csv or log.txt reaches the limit (16 to 32 KiB) long after
// the first checkpoint. The hint says --resume, and the resume then finishes the run.
TEST(DiskFull, AFileSizeLimitAfterACheckpointSuggestsResumeAndTheResumeFinishes) {
  const std::string dir = clitest::fresh_dir("x");
  const std::string flags =
      " --demo --run-id r --set model.hidden=8 --set train.steps=1500 --set train.log_every=1 "
      "--set train.checkpoint_every=5 --set train.eval_every=0 --set train.gradnorm_every=0 "
      "-q --threads 1";
  const auto r = run("ulimit -f 32; exec " + kCopy + flags, dir);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("file size limit reached"), std::string::npos) << r.err;
  ASSERT_TRUE(fs::exists(dir + "/results/copy/r/checkpoint.sbck")) << r.err;
  EXPECT_NE(r.err.find("then continue the run with --resume"), std::string::npos) << r.err;
  const auto resumed = run(kCopy + " --out results --run-id r --resume -q --threads 1", dir);
  EXPECT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_TRUE(fs::exists(dir + "/results/copy/r/summary.json"));
}
