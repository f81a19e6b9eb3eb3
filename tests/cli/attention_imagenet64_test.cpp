// `seqbench report attention approx|jsd` on imagenet64 runs (apps/wikitext103/attention_*,
// the run read by load_trained_run, apps/experiments.cpp): tiny 4x4 one-channel IDX
// images (the MNIST stand-in's format), so one image is a sequence of N = 16 subpixels and
// a validation batch is data.eval_batch = 4 images. The same checks as the wikitext103
// tests (tests/cli/wikitext103_cli_test.cpp): at w = 16 = N every sparse kind must
// reproduce the model's own full attention, and every mean JSD lies in [0, ln 2].
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "cli/lm_cli_util.hpp"
#include "data/mnist.hpp"
#include "report/csv.hpp"

using namespace seqbench;
using clitest::cell;
using clitest::run;
namespace fs = std::filesystem;

namespace {

const std::string kFront = SEQBENCH_FRONT_BIN;
const std::string kTrain = kFront + " imagenet64";

void put_be32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(char((v >> shift) & 0xff));
}

// n 4x4 images: a diagonal gradient whose direction depends on the image's parity.
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
      for (int c = 0; c < 4; ++c)
        img.push_back(char(((i + offset) % 2 ? r + c : r + 3 - c) * 40 + (i + offset) % 3));
    lab.push_back(char(i % 10));
  }
  clitest::write(dir + "/" + images, img);
  clitest::write(dir + "/" + labels, lab);
}

// 40 training images (8 held out for validation: 2 batches of 4) and 10 test images, and
// the config of a tiny Transformer on them.
void tiny_setup(const std::string& dir) {
  fs::create_directories(dir + "/idx");
  write_idx_split(dir + "/idx", data::kMnistTrainImages, data::kMnistTrainLabels, 40, 0);
  write_idx_split(dir + "/idx", data::kMnistTestImages, data::kMnistTestLabels, 10, 1000);
  clitest::write(dir + "/tiny.yaml",
                 R"(data: {format: mnist, dir: idx, name: tiny, train_images: 0, valid_images: 8,
       test_images: 0, eval_batch: 4}
model: {layers: 2, d_model: 16, heads: 2, d_ff: 32, attention: full, window: 4, clusters: 2,
        dropout: 0.1}
optim: {name: adam, lr: 0.01, clip: 1.0}
train: {batch: 4, steps: 6, log_every: 2, eval_every: 6, threads: 1}
output: {dir: results}
)");
}

}  // namespace

TEST(AttentionImagenet64, ApproxReproducesTheModelsFullAttentionAtTheWholeImage) {
  const std::string dir = clitest::fresh_dir("x");
  tiny_setup(dir);
  ASSERT_EQ(run(kTrain + " --config tiny.yaml --run-id r1 -q", dir).code, 0);
  auto r = run(kFront +
                   " report attention approx results/imagenet64/r1 --windows 2,4,16 "
                   "--segments 5 --out approx",
               dir);
  ASSERT_EQ(r.code, 0) << r.err;
  // --segments beyond the run's 2 validation batches uses those 2.
  EXPECT_NE(r.out.find("2 validation batches of 4 images of 16 subpixels"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("data tiny (stand-in)"), std::string::npos) << r.out;
  const auto t = report::read_csv(dir + "/approx/attention_approx.csv");
  ASSERT_EQ(t.rows.size(), 3u * 5u * 3u);  // (2 layers + all) x 5 kinds x 3 windows
  int exact = 0;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const double e = t.number(i, "rel_error"), w = t.number(i, "window");
    EXPECT_TRUE(std::isfinite(e) && e >= 0) << i;
    EXPECT_LE(t.number(i, "mean_keys"), 2 * w + 1) << cell(t, "kind", i) << " w=" << w;
    if (cell(t, "window", i) == "16") {
      // One block, cluster or bucket holds the whole image: the model's own output.
      EXPECT_LT(e, 1e-5) << cell(t, "kind", i) << " layer " << cell(t, "layer", i);
      EXPECT_NEAR(t.number(i, "mean_keys"), 8.5, 1e-9) << cell(t, "kind", i);
      ++exact;
    }
    if (cell(t, "window", i) == "2" && cell(t, "kind", i) == "local") {
      EXPECT_GT(e, 1e-3) << i;
    }
  }
  EXPECT_EQ(exact, 15);

  // A run without full heads: the hint names the imagenet64 preset.
  ASSERT_EQ(
      run(kTrain + " --config tiny.yaml --run-id loc -q --set model.attention=local", dir).code, 0);
  r = run(kFront + " report attention approx results/imagenet64/loc", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("no full heads"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("configs/imagenet64/full_small.yaml"), std::string::npos) << r.err;
}

TEST(AttentionImagenet64, JsdPerPairTypeWithinBounds) {
  const std::string dir = clitest::fresh_dir("x");
  tiny_setup(dir);
  ASSERT_EQ(run(kTrain + " --config tiny.yaml --run-id r1 -q --set model.heads=4 "
                         "--set model.attention=local:2,routing:2",
                dir)
                .code,
            0);
  auto r = run(kFront + " report attention jsd results/imagenet64/r1/ --out jsd", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("local-routing"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 validation batches of 4 images of 16 subpixels"), std::string::npos)
      << r.out;
  const auto t = report::read_csv(dir + "/jsd/attention_jsd.csv");
  ASSERT_EQ(t.rows.size(), 3u * 3u);  // (2 layers + all) x 3 pair types
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const double j = t.number(i, "mean_jsd");
    EXPECT_GE(j, 0.0) << i;
    EXPECT_LE(j, std::log(2.0) + 1e-9) << i;
    // 2 batches x 4 images x 16 queries, times the pairs of that type per layer.
    const double pairs = cell(t, "pair", i) == "local-routing" ? 4 : 1;
    EXPECT_EQ(t.number(i, "count"), (cell(t, "layer", i) == "all" ? 2 : 1) * 128 * pairs) << i;
  }

  // A run kept outside results/imagenet64/ is known by its config (data.image_side).
  fs::create_directories(dir + "/kept");
  fs::copy(dir + "/results/imagenet64/r1", dir + "/kept/r1");
  r = run(kFront + " report attention jsd kept/r1 --segments 1 --out jsd_kept", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("1 validation batch of 4 images"), std::string::npos) << r.out;

  // One kind per layer: nothing to compare; the hint names the imagenet64 preset.
  ASSERT_EQ(run(kTrain + " --config tiny.yaml --run-id full -q", dir).code, 0);
  r = run(kFront + " report attention jsd results/imagenet64/full", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("no layer mixing head kinds"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("configs/imagenet64/routing_small.yaml"), std::string::npos) << r.err;
}

// A run of an experiment without a Transformer is named as such, for both analyses.
TEST(AttentionImagenet64, ARunOfAnotherExperimentIsNamed) {
  const std::string dir = clitest::fresh_dir("x");
  fs::create_directories(dir + "/results/char_ptb/r1");
  clitest::write(dir + "/results/char_ptb/r1/config.yaml", "model: {cell: lstm}\n");
  clitest::write(dir + "/results/char_ptb/r1/checkpoint.sbck", "x");
  for (const char* what : {"jsd", "approx"}) {
    const auto r = run(kFront + " report attention " + what + " results/char_ptb/r1", dir);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("is a run of the char_ptb experiment; this analysis reads wikitext103 "
                         "and imagenet64 runs"),
              std::string::npos)
        << r.err;
  }
}

TEST(AttentionImagenet64, SwapEvaluatesTheTrainedModelWithOtherHeads) {
  const std::string dir = clitest::fresh_dir("x");
  tiny_setup(dir);
  // w = 16 = N: local attention sees every key, so swapped in it must give full's loss.
  ASSERT_EQ(run(kTrain + " --config tiny.yaml --run-id full -q --set model.window=16", dir).code, 0);
  auto r = run(kFront + " report attention swap results/imagenet64/full --kinds local smyrf --out sw", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto t = report::read_csv(dir + "/sw/attention_swap.csv");
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(cell(t, "kind", 0), "full");
  EXPECT_EQ(cell(t, "kind", 1), "local");
  EXPECT_EQ(cell(t, "attention", 2), "smyrf");
  EXPECT_NEAR(t.number(1, "valid_loss"), t.number(0, "valid_loss"), 1e-5);
  EXPECT_DOUBLE_EQ(t.number(0, "ratio_to_full"), 1.0);
  EXPECT_TRUE(std::isfinite(t.number(2, "valid_loss")));

  // Nothing to swap in a model without full heads: one line, exit 2.
  ASSERT_EQ(run(kTrain + " --config tiny.yaml --run-id loc -q --set model.attention=local", dir).code, 0);
  r = run(kFront + " report attention swap results/imagenet64/loc", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("no full heads to replace"), std::string::npos) << r.err;
}
