// End-to-end tests of `seqbench pmnist` on tiny IDX files the tests write themselves
// (4x4 images, so T = 16): results files and their columns, test accuracy taken at the
// best validation, epochs, config errors, bit-exact resume, the paper table.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <regex>

#include "cli/cli_util.hpp"
#include "data/checksum.hpp"
#include "report/csv.hpp"
#include "train/checkpoint.hpp"

using namespace seqbench;
using clitest::run;
namespace fs = std::filesystem;

namespace {

const std::string kFront = SEQBENCH_FRONT_BIN;
const std::string kPmnist = kFront + " pmnist";

void put_u32(std::string& s, uint32_t v) {
  for (int k = 3; k >= 0; --k) s.push_back(char((v >> (8 * k)) & 0xff));
}

// n images of 4x4: the label's pixel is bright, the others dim noise, so the data is
// learnable but not trivially constant.
void write_idx(const std::string& dir, const std::string& images, const std::string& labels, int n,
               uint32_t seed, int side = 4) {
  std::string img, lab;
  put_u32(img, 0x803);
  put_u32(img, uint32_t(n));
  put_u32(img, uint32_t(side));
  put_u32(img, uint32_t(side));
  put_u32(lab, 0x801);
  put_u32(lab, uint32_t(n));
  uint32_t x = seed;
  for (int i = 0; i < n; ++i) {
    const int label = i % 10;
    for (int p = 0; p < side * side; ++p) {
      x = x * 1664525u + 1013904223u;
      img.push_back(char(p == label ? 255 : (x >> 24) % 100));
    }
    lab.push_back(char(label));
  }
  std::ofstream(dir + "/" + images, std::ios::binary) << img;
  std::ofstream(dir + "/" + labels, std::ios::binary) << lab;
}

// 60 training images (the last 20 are validation), 20 test images.
std::string tiny_mnist(const std::string& root, int side = 4) {
  const std::string dir = root + "/mnist";
  fs::create_directories(dir);
  write_idx(dir, "train-images-idx3-ubyte", "train-labels-idx1-ubyte", 60, 1, side);
  write_idx(dir, "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", 20, 2, side);
  return dir;
}

// 40 training examples / batch 10 = 4 updates per epoch; 3 epochs.
const char* kTiny = R"(data: {dir: mnist, valid_examples: 20}
model: {hidden: 8}
optim: {name: adam, lr: 0.01}
train: {batch: 10, steps: 12, log_every: 2, eval_every: 4, gradnorm_every: 4, threads: 2}
output: {dir: results}
)";

std::string cell(const report::CsvTable& t, const char* col, size_t row = 0) {
  return t.rows[row][size_t(t.col(col))];
}

}  // namespace

TEST(PmnistCli, WritesResultsWithEpochsAndTheTestAccuracyOfTheBestValidation) {
  const std::string dir = clitest::fresh_dir("x");
  tiny_mnist(dir);
  clitest::write(dir + "/tiny.yaml", kTiny);
  const auto r = run(kPmnist + " --config tiny.yaml --run-id r1", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string run_dir = dir + "/results/pmnist/r1";
  const auto metrics = report::read_csv(run_dir + "/metrics.csv");
  EXPECT_EQ(metrics.columns[3], "acc");
  int valid_rows = 0;
  for (const auto& row : metrics.rows) valid_rows += row[1] == "valid";
  EXPECT_EQ(valid_rows, 3);  // one per epoch
  // Probes at 0, 4, 8, 12 over T = 16 pixel steps.
  EXPECT_EQ(report::read_csv(run_dir + "/gradnorm.csv").rows.size(), 4u * 16u);

  const auto runs = report::read_csv(dir + "/results/pmnist/runs.csv");
  ASSERT_EQ(runs.rows.size(), 1u);
  EXPECT_EQ(cell(runs, "task"), "pmnist");
  EXPECT_EQ(cell(runs, "T"), "16");
  EXPECT_EQ(cell(runs, "data"), "mnist (real)");
  EXPECT_EQ(cell(runs, "train_examples"), "40");
  EXPECT_EQ(cell(runs, "valid_examples"), "20");
  EXPECT_EQ(cell(runs, "test_examples"), "20");
  EXPECT_EQ(cell(runs, "updates_per_epoch"), "4");
  EXPECT_EQ(cell(runs, "epochs"), "3");
  EXPECT_EQ(cell(runs, "best_test_acc"), "") << "not measured without data.test_every_eval";
  EXPECT_EQ(cell(runs, "valid_acc"), cell(runs, "best_metric"));
  EXPECT_DOUBLE_EQ(std::stod(cell(runs, "best_epoch")) * 4, std::stod(cell(runs, "best_step")));

  // The log's last "(best)" validation line carries the test accuracy the run reports.
  const std::string log = clitest::slurp(run_dir + "/log.txt");
  const std::regex best_line(R"(valid step (\d+) .* test_acc ([0-9.e-]+) \(best\))");
  std::string last_step, last_acc;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), best_line);
       it != std::sregex_iterator(); ++it)
    last_step = (*it)[1], last_acc = (*it)[2];
  ASSERT_FALSE(last_acc.empty()) << log;
  EXPECT_EQ(last_step, cell(runs, "best_step"));
  EXPECT_NEAR(std::stod(last_acc), std::stod(cell(runs, "test_acc")), 5e-4);
  // Validations that are not the best do not test.
  const std::regex plain_line(R"(valid step \d+ loss \S+ acc \S+\n)");
  const auto not_best = std::distance(std::sregex_iterator(log.begin(), log.end(), plain_line),
                                      std::sregex_iterator());
  const auto bests = std::distance(std::sregex_iterator(log.begin(), log.end(), best_line),
                                   std::sregex_iterator());
  EXPECT_EQ(not_best + bests, 3) << log;
}

TEST(PmnistCli, BestTestAccuracyOverValidationsIsAtLeastTheOneAtBestValidation) {
  const std::string dir = clitest::fresh_dir("x");
  tiny_mnist(dir);
  clitest::write(dir + "/tiny.yaml", kTiny);
  // Also a cap: 20 training examples are 2 updates per epoch, so eval_every 4 is 2 epochs.
  const auto r = run(kPmnist + " --config tiny.yaml --run-id r --set data.test_every_eval=true "
                               "--set data.permute=false --set data.name=fashion --set "
                               "data.stand_in=true --set data.train_examples=20 -q",
                     dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto runs = report::read_csv(dir + "/results/pmnist/runs.csv");
  EXPECT_EQ(cell(runs, "task"), "smnist");
  EXPECT_EQ(cell(runs, "permute_seed"), "");
  EXPECT_EQ(cell(runs, "data"), "fashion (stand-in)");
  EXPECT_EQ(cell(runs, "train_examples"), "20");
  EXPECT_EQ(cell(runs, "epochs"), "6");
  ASSERT_FALSE(cell(runs, "best_test_acc").empty());
  EXPECT_GE(std::stod(cell(runs, "best_test_acc")), std::stod(cell(runs, "test_acc")));
  // Every validation line now carries a test accuracy.
  const std::string log = clitest::slurp(dir + "/results/pmnist/r/log.txt");
  const std::regex tested(R"(valid step \d+ .* test_acc )");
  EXPECT_EQ(std::distance(std::sregex_iterator(log.begin(), log.end(), tested),
                          std::sregex_iterator()),
            3);
}

TEST(PmnistCli, PermutationChangesTheRunAndTheSameConfigRepeatsExactly) {
  const std::string dir = clitest::fresh_dir("x");
  tiny_mnist(dir);
  clitest::write(dir + "/tiny.yaml", kTiny);
  for (const char* id : {"p1", "p2"})
    ASSERT_EQ(run(kPmnist + " --config tiny.yaml -q --run-id " + id, dir).code, 0);
  ASSERT_EQ(run(kPmnist + " --config tiny.yaml -q --run-id s --set data.permute=false", dir).code, 0);
  ASSERT_EQ(run(kPmnist + " --config tiny.yaml -q --run-id q --set data.permute_seed=7", dir).code, 0);
  const auto runs = report::read_csv(dir + "/results/pmnist/runs.csv");
  ASSERT_EQ(runs.rows.size(), 4u);
  const auto loss = [&](size_t i) { return cell(runs, "final_loss", i); };
  EXPECT_EQ(loss(0), loss(1)) << "same seed, same permutation: identical runs";
  EXPECT_NE(loss(0), loss(2)) << "pixel order must matter";
  EXPECT_NE(loss(0), loss(3)) << "another permutation_seed is another permutation";
}

TEST(PmnistCli, ConfigAndDataMistakesAreOneLineErrorsThatWriteNothing) {
  const std::string dir = clitest::fresh_dir("x");
  tiny_mnist(dir);
  clitest::write(dir + "/tiny.yaml", kTiny);
  struct Case {
    std::string set;
    int code;
    std::string must_contain;
  };
  const Case cases[] = {
      {"--set data.dir=nowhere", 2, "data.dir: no MNIST at 'nowhere'"},
      {"--set train.eval_every=3", 2, "train.eval_every: 3 is not a whole number of epochs"},
      {"--set data.valid_examples=60", 2, "data.valid_examples"},
      {"--set train.batch=50", 2, "train.batch: 50 is more than the 40 training examples"},
      {"--set data.permute=maybe", 2, "data.permute"},
  };
  for (const auto& c : cases) {
    const auto r = run(kPmnist + " --config tiny.yaml " + c.set, dir);
    EXPECT_EQ(r.code, c.code) << c.set << ": " << r.err;
    EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(c.must_contain), std::string::npos) << c.set << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(dir + "/results"));
  // check_epochs off: any interval is accepted.
  EXPECT_EQ(run(kPmnist + " --config tiny.yaml -q --set train.eval_every=3 --set "
                          "data.check_epochs=false",
                dir)
                .code,
            0);
  // A truncated IDX file is a data error (exit 1) naming the file.
  const std::string img = dir + "/mnist/t10k-images-idx3-ubyte";
  const std::string bytes = clitest::slurp(img);
  clitest::write(img, bytes.substr(0, bytes.size() - 5));
  const auto r = run(kPmnist + " --config tiny.yaml", dir);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("t10k-images-idx3-ubyte"), std::string::npos) << r.err;
  // Issue 29, item 12: a header claiming 2^31 images of 2^16 x 2^16 pixels is the loader's
  // data error naming the file, not a memory estimate (exit 2) sized by its numbers.
  clitest::write(img, bytes);
  const std::string train = dir + "/mnist/train-images-idx3-ubyte";
  std::string header = clitest::slurp(train);
  for (int at : {4, 8, 12}) header[size_t(at)] = at == 4 ? '\x7f' : '\x01';
  clitest::write(train, header);
  const auto h = run(kPmnist + " --config tiny.yaml", dir);
  EXPECT_EQ(h.code, 1) << h.err;
  EXPECT_EQ(clitest::count_lines(h.err), 1) << h.err;
  EXPECT_NE(h.err.find("train-images-idx3-ubyte"), std::string::npos) << h.err;
  EXPECT_EQ(h.err.find("memory estimate"), std::string::npos) << h.err;
}

TEST(PmnistCli, InterruptedThenResumedEqualsUninterruptedBitForBit) {
  const std::string dir = clitest::fresh_dir("x");
  tiny_mnist(dir);
  clitest::write(dir + "/tiny.yaml", kTiny);
  // Interrupted mid-epoch (update 6 of 12), after a best validation at 4.
  ASSERT_EQ(run(kPmnist + " --config tiny.yaml -q --run-id full", dir).code, 0);
  ASSERT_EQ(run(kPmnist + " --config tiny.yaml -q --run-id part --interrupt-at 6", dir).code, 130);
  const auto rest = run(kPmnist + " --run-id part --resume -q", dir);
  ASSERT_EQ(rest.code, 0) << rest.err;
  const auto a = train::load_checkpoint(dir + "/results/pmnist/full/checkpoint.sbck");
  const auto b = train::load_checkpoint(dir + "/results/pmnist/part/checkpoint.sbck");
  ASSERT_EQ(a.arrays.size(), b.arrays.size());
  for (size_t i = 0; i < a.arrays.size(); ++i)
    EXPECT_EQ(a.arrays[i].data, b.arrays[i].data) << a.arrays[i].name << " differs";
  const auto runs = report::read_csv(dir + "/results/pmnist/runs.csv");
  ASSERT_EQ(runs.rows.size(), 2u);
  for (const char* c : {"epochs", "best_epoch", "valid_acc", "test_acc", "test_loss", "final_loss"})
    EXPECT_EQ(cell(runs, c, 0), cell(runs, c, 1)) << c;
}

// A real SIGTERM (what timeout(1) and schedulers send) in the middle of training, at
// several moments: the run finishes its update, writes the checkpoint, exits 130 and
// resumes. Full-size images (T = 784) keep most of the time in oneDNN's LSTM kernels,
// where a signal handler running on the compute thread's stack used to corrupt the heap.
TEST(PmnistCli, RealSigtermMidTrainingCheckpointsAndResumes) {
  const std::string dir = clitest::fresh_dir("x");
  tiny_mnist(dir, 28);
  clitest::write(dir + "/long.yaml", R"(data: {dir: mnist, valid_examples: 20}
model: {hidden: 32}
train: {batch: 10, steps: 100000, log_every: 1, eval_every: 4, threads: 1}
output: {dir: results}
)");
  int k = 0;
  for (const char* delay : {"0.4", "0.7", "1.0", "1.3", "1.6", "1.9"}) {
    const std::string id = "sig" + std::to_string(k++);
    // Wait for the first update, then for `delay` more seconds, and send SIGTERM.
    const auto r = run("(" + kPmnist + " --config long.yaml --run-id " + id +
                           " & p=$!; until grep -qs train results/pmnist/" + id +
                           "/metrics.csv; do sleep 0.05; done; sleep " + delay +
                           "; kill -TERM $p; wait $p)",
                       dir);
    EXPECT_EQ(r.code, 130) << "delay " << delay << ": " << r.err;
    EXPECT_NE(r.err.find("checkpoint written"), std::string::npos) << r.err;
    EXPECT_TRUE(fs::exists(dir + "/results/pmnist/" + id + "/checkpoint.sbck"));
  }
  const auto again = run(kPmnist + " --run-id sig0 --resume -q --set train.steps=60", dir);
  EXPECT_EQ(again.code, 0) << again.err;
}

TEST(PmnistCli, EveryCommittedPresetResolvesAndTheDemoIsTheSmallLstm) {
  const std::string dir = clitest::fresh_dir("x");
  int n = 0;
  for (const auto& e : fs::directory_iterator(std::string(SEQBENCH_SOURCE_DIR) + "/configs/pmnist")) {
    if (e.path().extension() != ".yaml") continue;
    ++n;
    const auto r = run(kPmnist + " --config '" + e.path().string() + "' --dump-config", dir);
    EXPECT_EQ(r.code, 0) << e.path() << ": " << r.err;
  }
  EXPECT_EQ(n, 18);  // 7 models, paper and small, the three 20-epoch LSTM-128 budgets, and the μ = 0 control
  const auto r = run(kPmnist + " --demo --dump-config", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("label: lstm-small"), std::string::npos) << r.out;
}

// Needs `seqbench report pmnist`: pmnist's entry in apps/experiments.cpp.
TEST(PmnistReport, PrintsThePaperTableWithRecalledNumbersMarked) {
  const std::string dir = clitest::fresh_dir("x");
  tiny_mnist(dir);
  clitest::write(dir + "/tiny.yaml", kTiny);
  for (const char* seed : {"1", "2"})
    ASSERT_EQ(run(kPmnist + " --config tiny.yaml -q --set model.hidden=256 --seed " + seed, dir).code, 0);
  ASSERT_EQ(run(kPmnist + " --config tiny.yaml -q --set model.cell=rel_lstm --set model.nu=2 "
                          "--set model.rho=2 --set output.label=rel",
                dir)
                .code,
            0);
  const auto r = run(kFront + " report pmnist results/pmnist/runs.csv", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s : {"| label", "paper", "ours", "epochs", "≈92.3 (unchecked)", "unchecked; Table 1", "mnist (real)", "rel_lstm"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  const auto csv = run(kFront + " report pmnist results/pmnist/runs.csv --format csv", dir);
  ASSERT_EQ(csv.code, 0) << csv.err;
  const auto t = report::parse_csv(csv.out, "stdout");
  ASSERT_EQ(t.rows.size(), 2u);  // two seeds of lstm form one row
  EXPECT_EQ(cell(t, "n", 0), "2");
  EXPECT_EQ(cell(t, "hidden", 0), "256");
  EXPECT_NE(cell(t, "ours", 0).find("±"), std::string::npos);
  EXPECT_EQ(cell(t, "paper", 1), "—");
  EXPECT_EQ(cell(t, "epochs", 1), "3");
  const auto missing = run(kFront + " report pmnist nope.csv", dir);
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("nope.csv"), std::string::npos) << missing.err;
}

TEST(PmnistCli, RecordsTheDataChecksumAndRefusesADamagedFile) {
  const std::string dir = clitest::fresh_dir("x");
  const std::string mnist = tiny_mnist(dir);
  clitest::write(dir + "/tiny.yaml", kTiny);
  const char* files[] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                         "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};
  // Without SHA256SUMS: hashed and recorded, not verified.
  auto r = run(kPmnist + " --config tiny.yaml -q --run-id a", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  // With the checksums recorded, as tools/fetch_data leaves them: verified, same value.
  std::string sums;
  for (const char* f : files) sums += data::sha256_file(mnist + "/" + f) + "  " + f + "\n";
  clitest::write(mnist + "/SHA256SUMS", sums);
  r = run(kPmnist + " --config tiny.yaml -q --run-id b", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto runs = report::read_csv(dir + "/results/pmnist/runs.csv");
  ASSERT_EQ(runs.rows.size(), 2u);
  std::vector<std::string> listing;
  for (const char* f : files) listing.push_back(data::sha256_file(mnist + "/" + f) + "  " + f + "\n");
  std::sort(listing.begin(), listing.end(), [](const std::string& a, const std::string& b) {
    return a.substr(66) < b.substr(66);
  });
  std::string joined;
  for (const auto& l : listing) joined += l;
  EXPECT_EQ(cell(runs, "data_sha256", 0), data::sha256_hex(joined));
  EXPECT_EQ(cell(runs, "data_verified", 0), "false");
  EXPECT_EQ(cell(runs, "data_sha256", 1), cell(runs, "data_sha256", 0));
  EXPECT_EQ(cell(runs, "data_verified", 1), "true");
  const std::string summary = clitest::slurp(dir + "/results/pmnist/b/summary.json");
  EXPECT_NE(summary.find("\"data_sha256\": \"" + data::sha256_hex(joined) + "\""),
            std::string::npos)
      << summary;
  // Issue 29, item 12: a JSON boolean, not the string "false" (truthy in Python and JS).
  EXPECT_NE(summary.find("\"data_verified\": true"), std::string::npos) << summary;
  EXPECT_NE(clitest::slurp(dir + "/results/pmnist/a/summary.json").find("\"data_verified\": false"),
            std::string::npos);
  // One flipped byte: a one-line data error naming the file, before anything is written.
  const std::string img = mnist + "/t10k-labels-idx1-ubyte";
  std::string bytes = clitest::slurp(img);
  bytes.back() ^= 1;
  clitest::write(img, bytes);
  r = run(kPmnist + " --config tiny.yaml --run-id c", dir);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("t10k-labels-idx1-ubyte' has sha256"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/results/pmnist/c"));
}
