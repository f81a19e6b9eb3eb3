// End-to-end tests of `seqbench imagenet64` on tiny image sets the test writes itself:
// 4x4 one-channel IDX images (the MNIST stand-in's format) and 4x4 RGB Downsampled-
// ImageNet npz batches (one deflated, one stored). A few updates of a full and a
// local+routing Transformer (results files, bits/dim = loss / ln 2, identity columns),
// the npz format's token count and names, the report table, an interrupted and resumed
// run equal bit for bit to an uninterrupted one, and config errors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "cli/lm_cli_util.hpp"
#include "data/mnist.hpp"
#include "data/npz.hpp"
#include "data/zip_writer.hpp"

using namespace seqbench;
using clitest::cell;
using clitest::run;
namespace fs = std::filesystem;

#ifndef SEQBENCH_FRONT_BIN
#define SEQBENCH_FRONT_BIN ""
#endif

namespace {

const std::string kFront = SEQBENCH_FRONT_BIN;
const std::string kBin = kFront + " imagenet64";

// Image i: a diagonal gradient whose direction depends on i % 2, so the next subpixel is
// mostly predictable from the previous ones.
uint8_t pixel(int i, int r, int c, int ch) {
  const int v = (i % 2 ? r + c : r + 3 - c) * 40 + ch * 20 + (i % 3);
  return uint8_t(v);
}

void put_be32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(char((v >> shift) & 0xff));
}

void write_idx_split(const std::string& dir, const char* images, const char* labels, int n,
                     int offset) {
  std::string img, lab;
  put_be32(img, data::kIdxImagesMagic);
  put_be32(img, uint32_t(n));
  put_be32(img, 4);
  put_be32(img, 4);
  put_be32(lab, data::kIdxLabelsMagic);
  put_be32(lab, uint32_t(n));
  for (int i = 0; i < n; ++i) {
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c) img.push_back(char(pixel(i + offset, r, c, 0)));
    lab.push_back(char(i % 10));
  }
  clitest::write(dir + "/" + images, img);
  clitest::write(dir + "/" + labels, lab);
}

// 40 training and 10 test images of 4x4.
void tiny_idx(const std::string& dir) {
  fs::create_directories(dir);
  write_idx_split(dir, data::kMnistTrainImages, data::kMnistTrainLabels, 40, 0);
  write_idx_split(dir, data::kMnistTestImages, data::kMnistTestLabels, 10, 1000);
}

// n RGB images of 4x4 in the release's layout: planar rows (R plane, G plane, B plane).
std::string imagenet_npz(int n, int offset, bool deflate) {
  std::string rows;
  for (int i = 0; i < n; ++i)
    for (int ch = 0; ch < 3; ++ch)
      for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c) rows.push_back(char(pixel(i + offset, r, c, ch)));
  std::string labels;
  for (int i = 0; i < n; ++i) testutil::put_le(labels, uint64_t(1 + i % 1000), 8);
  return testutil::zip_archive(
      {{"data.npy", data::make_npy("|u1", {n, 48}, rows), deflate, 0},
       {"labels.npy", data::make_npy("<i8", {n}, labels), false, 0}});
}

// Two training batches of 12 (24 images) and val_data of 6.
void tiny_imagenet(const std::string& dir) {
  fs::create_directories(dir);
  clitest::write(dir + "/train_data_batch_1.npz", imagenet_npz(12, 0, true));
  clitest::write(dir + "/train_data_batch_2.npz", imagenet_npz(12, 12, false));
  clitest::write(dir + "/val_data.npz", imagenet_npz(6, 500, true));
}

// 32 training images (8 held out), B = 4: 8 updates per epoch; 10 updates cross an epoch.
const char* kTiny = R"(data: {format: mnist, dir: idx, name: tiny, train_images: 0, valid_images: 8,
       test_images: 0, eval_batch: 4}
model: {layers: 2, d_model: 16, heads: 2, d_ff: 32, attention: full, window: 4, clusters: 2,
        dropout: 0.1}
optim: {name: adam, lr: 0.01, clip: 1.0}
train: {batch: 4, steps: 10, log_every: 2, eval_every: 5, gradnorm_every: 5, threads: 1}
output: {dir: results}
)";

}  // namespace

TEST(Imagenet64Cli, FrontDoorIsKnown) {
  ASSERT_FALSE(kFront.empty()) << "SEQBENCH_FRONT_BIN is not defined (tests/CMakeLists.txt)";
  const std::string dir = clitest::fresh_dir("help");
  const auto r = run(kFront + " --help", dir);
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("imagenet64"), std::string::npos) << r.out;
}

TEST(Imagenet64Cli, EveryCommittedPresetResolves) {
  // Six kinds, paper and small.
  clitest::expect_presets_resolve(kBin, "imagenet64", clitest::fresh_dir("x"), 12);
}

class Imagenet64Runs : public ::testing::TestWithParam<const char*> {};

TEST_P(Imagenet64Runs, AFewUpdatesWriteResultsInBitsPerDim) {
  const std::string dir = clitest::fresh_dir("x");
  tiny_idx(dir + "/idx");
  clitest::write(dir + "/tiny.yaml", kTiny);
  const auto r = run(kBin + " --config tiny.yaml --run-id r1 --set model.attention=" + GetParam(), dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string run_dir = dir + "/results/imagenet64/r1";
  for (const char* f : {"config.yaml", "metrics.csv", "summary.json", "gradnorm.csv",
                        "checkpoint.sbck"})
    EXPECT_TRUE(fs::exists(run_dir + "/" + f)) << f;
  const auto runs = report::read_csv(dir + "/results/imagenet64/runs.csv");
  ASSERT_EQ(runs.rows.size(), 1u);
  EXPECT_EQ(cell(runs, "data"), "tiny (stand-in)");
  EXPECT_EQ(cell(runs, "task"), "image_lm");
  EXPECT_EQ(cell(runs, "model"), "transformer");
  EXPECT_EQ(cell(runs, "T"), "16");
  EXPECT_EQ(cell(runs, "image_size"), "4x4x1");
  EXPECT_EQ(cell(runs, "tokens_per_image"), "16");
  EXPECT_EQ(cell(runs, "token_order"), "raster");
  EXPECT_EQ(cell(runs, "vocab"), "256");
  EXPECT_EQ(cell(runs, "updates"), "10");
  EXPECT_EQ(cell(runs, "metric"), "bpd");
  EXPECT_EQ(cell(runs, "attention"), std::string(GetParam()) == "full" ? "full:2" : GetParam());
  EXPECT_EQ(cell(runs, "train_images"), "32");
  EXPECT_EQ(cell(runs, "valid_images"), "8");
  EXPECT_EQ(cell(runs, "test_images"), "10");
  EXPECT_EQ(cell(runs, "updates_per_epoch"), "8");
  const double loss = std::stod(cell(runs, "final_loss"));
  EXPECT_NEAR(std::stod(cell(runs, "final_metric")), loss / std::log(2.0), 1e-4);
  const double valid = std::stod(cell(runs, "valid_bpd")), test = std::stod(cell(runs, "test_bpd"));
  EXPECT_GT(test, 0.0);
  EXPECT_LT(valid, 8.0) << "10 updates should beat the uniform guess over 256 values (8 bits)";
  const auto g = report::read_csv(run_dir + "/gradnorm.csv");
  EXPECT_FALSE(g.rows.empty());

  // The report table has the run, with the paper's number for routing heads only.
  const auto rep = run(kFront + " report imagenet64 results/imagenet64/runs.csv --format csv", dir);
  ASSERT_EQ(rep.code, 0) << rep.err;
  EXPECT_NE(rep.out.find("label,attention,data,image,paper,source,ours,n,train,updates"), std::string::npos)
      << rep.out;
  EXPECT_NE(rep.out.find("tiny (stand-in)"), std::string::npos) << rep.out;
  EXPECT_EQ(rep.out.find("3.43") != std::string::npos, std::string(GetParam()) != "full") << rep.out;
}

INSTANTIATE_TEST_SUITE_P(Kinds, Imagenet64Runs, ::testing::Values("full", "local:1,routing:1"),
                         [](const auto& p) {
                           return std::string(p.param) == "full" ? std::string("full")
                                                                 : std::string("local_routing");
                         });

TEST(Imagenet64Cli, ReadsDownsampledImagenetNpzBatches) {
  const std::string dir = clitest::fresh_dir("x");
  tiny_imagenet(dir + "/inet");
  clitest::write(dir + "/tiny.yaml", kTiny);
  const auto r = run(kBin + " --config tiny.yaml --run-id n --set data.format=imagenet64 "
                            "--set data.dir=inet --set data.image_side=4 --set data.name=inet "
                            "--set data.stand_in=false --set train.steps=2 --set train.eval_every=2",
                     dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto runs = report::read_csv(dir + "/results/imagenet64/runs.csv");
  EXPECT_EQ(cell(runs, "data"), "inet (real)");
  EXPECT_EQ(cell(runs, "T"), "48");
  EXPECT_EQ(cell(runs, "image_size"), "4x4x3");
  EXPECT_EQ(cell(runs, "token_order"), "raster, channels interleaved");
  EXPECT_EQ(cell(runs, "train_images"), "16");  // 24 read, the last 8 validate
  EXPECT_EQ(cell(runs, "valid_images"), "8");
  EXPECT_EQ(cell(runs, "test_images"), "6");

  // The files' side is 4: any other data.image_side is a one-line error naming the key.
  const auto bad = run(kBin + " --config tiny.yaml --set data.format=imagenet64 "
                              "--set data.dir=inet --set data.image_side=64",
                       dir);
  EXPECT_NE(bad.code, 0);
  EXPECT_EQ(clitest::count_lines(bad.err), 1) << bad.err;
  EXPECT_NE(bad.err.find("data.image_side"), std::string::npos) << bad.err;
}

// Issue 29, item 7: the memory estimate counts an .npz at its members' inflated size.
// 20000 black images deflate to about 1.5 KB per file; loaded they take 1.1 MB each, and
// the estimate counted the 1.5 KB (a run reached 5 times its estimate).
TEST(Imagenet64Cli, TheMemoryEstimateCountsAnNpzAtItsInflatedSize) {
  const std::string dir = clitest::fresh_dir("x");
  fs::create_directories(dir + "/inet");
  const int n = 20000;
  std::string labels;
  for (int i = 0; i < n; ++i) testutil::put_le(labels, uint64_t(1), 8);
  const std::string npz = testutil::zip_archive(
      {{"data.npy", data::make_npy("|u1", {n, 48}, std::string(size_t(n) * 48, '\0')), true, 0},
       {"labels.npy", data::make_npy("<i8", {n}, labels), true, 0}});
  ASSERT_LT(npz.size(), 20000u);
  clitest::write(dir + "/inet/train_data_batch_1.npz", npz);
  clitest::write(dir + "/inet/val_data.npz", npz);
  clitest::write(dir + "/tiny.yaml", kTiny);
  const auto r = run(kBin + " --config tiny.yaml --set data.format=imagenet64 --set data.dir=inet "
                            "--set data.image_side=4 --set data.train_images=0 --dump-config",
                     dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const size_t at = r.out.find("#   images");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
  // Two files of 20000 x (48 + 8) bytes inflated: above 2 MiB.
  const size_t mib = line.find(" MiB");
  ASSERT_NE(mib, std::string::npos) << line;
  const size_t start = line.rfind(' ', mib - 1) + 1;
  EXPECT_GE(std::stod(line.substr(start, mib - start)), 2.0) << line;
}

TEST(Imagenet64Cli, InterruptedThenResumedEqualsUninterruptedBitForBit) {
  const std::string dir = clitest::fresh_dir("x");
  tiny_idx(dir + "/idx");
  clitest::write(dir + "/tiny.yaml", kTiny);
  const std::string common =
      kBin + " --config tiny.yaml --set model.heads=4 --set model.attention=local:1,routing:1,random:1,lsh:1"
             " --set model.ema_decay=0.5";
  ASSERT_EQ(run(common + " --run-id full", dir).code, 0);
  // Update 9 lies in the second epoch: the resumed run must redraw both epochs' orders.
  const auto part = run(common + " --run-id part --interrupt-at 9", dir);
  ASSERT_EQ(part.code, 130) << part.err;
  const auto rest = run(kBin + " --run-id part --resume", dir);
  ASSERT_EQ(rest.code, 0) << rest.err;
  const auto a = train::load_checkpoint(dir + "/results/imagenet64/full/checkpoint.sbck");
  const auto b = train::load_checkpoint(dir + "/results/imagenet64/part/checkpoint.sbck");
  clitest::expect_same_checkpoints(a, b, {"step", "imagenet64.model.dropout_rng",
                                          "imagenet64.model.draws", "imagenet64.cursor",
                                          "imagenet64.test_bpd"});
  bool has_centroids = false;
  for (const auto& arr : a.arrays)
    has_centroids = has_centroids || arr.name.find("centroids") != std::string::npos;
  EXPECT_TRUE(has_centroids);
  const auto ra = report::read_csv(dir + "/results/imagenet64/runs.csv");
  ASSERT_EQ(ra.rows.size(), 2u);
  EXPECT_EQ(cell(ra, "test_bpd", 0), cell(ra, "test_bpd", 1));
}

using ImBadConfig = clitest::BadSet;

class Imagenet64ConfigErrors : public ::testing::TestWithParam<ImBadConfig> {};

TEST_P(Imagenet64ConfigErrors, ExitTwoWithOneLineAndWriteNothing) {
  const ImBadConfig& bad = GetParam();
  const std::string dir = clitest::fresh_dir(bad.name);
  tiny_idx(dir + "/idx");
  clitest::write(dir + "/tiny.yaml", kTiny);
  clitest::expect_config_error(kBin + " --config tiny.yaml " + bad.set, dir, bad.must_contain);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, Imagenet64ConfigErrors,
    ::testing::Values(
        ImBadConfig{"unknown_key", "--set data.image_sid=4",
                    "unknown key 'data.image_sid' (did you mean 'data.image_side'?)"},
        ImBadConfig{"bad_kind", "--set model.attention=local:1,routng:1", "unknown kind 'routng'"},
        ImBadConfig{"head_sum", "--set model.attention=local:1,routing:2", "has 3 heads, not 2"},
        ImBadConfig{"bptt", "--set train.bptt=5", "train.bptt"},
        ImBadConfig{"no_data", "--set data.dir=nowhere", "data.dir: no images at 'nowhere'"},
        ImBadConfig{"valid_all", "--set data.valid_images=40", "data.valid_images"},
        ImBadConfig{"batch", "--set train.batch=64", "train.batch"},
        ImBadConfig{"format", "--set data.format=cifar10", "data.format"}),
    [](const auto& p) { return std::string(p.param.name); });
