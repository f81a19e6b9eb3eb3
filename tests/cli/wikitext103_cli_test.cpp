// End-to-end tests of the wikitext103 experiment's binary on a tiny word corpus the test
// writes itself: a few updates of a full and a routing Transformer (results files,
// perplexity = exp(loss), the identity columns), the real Wikitext file names, an
// interrupted and resumed run equal bit for bit to an uninterrupted one (dropout,
// routing centroids, random draws and a trained relative-position table included), the
// attention analyses (also on a model with relative positions), and config errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "cli/lm_cli_util.hpp"

using namespace seqbench;
using clitest::cell;
using clitest::run;
namespace fs = std::filesystem;

#ifndef SEQBENCH_WIKITEXT103_BIN
// The build defines it (tests/CMakeLists.txt) as the seqbench_wikitext103 binary.
#define SEQBENCH_WIKITEXT103_BIN ""
#endif

namespace {

const std::string kBin = SEQBENCH_WIKITEXT103_BIN;

// Sentences over 12 words in a fixed rhythm, so that the next word is often
// predictable; the test split has a word ("zebra") that train lacks: it reads as <unk>
// (in the Wikitext format the files hold <unk> already).
std::string sentences(int n, uint64_t seed) {
  const char* words[] = {"the", "cat", "dog", "sat", "ran", "on", "a", "mat", "log", "and", "then", "slept"};
  std::string out;
  uint64_t x = seed;
  for (int i = 0; i < n; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const int a = int((x >> 33) % 2), b = int((x >> 40) % 2), c = int((x >> 50) % 2);
    out += fmt::format("the {} {} on a {} and then {}\n", words[1 + a], words[3 + b],
                       words[7 + c], words[11 - c]);
  }
  return out;
}

void tiny_corpus(const std::string& root, const std::string& sub, bool wikitext) {
  fs::create_directories(root + "/" + sub);
  const auto name = [&](const char* split) {
    return root + "/" + sub + "/" + (wikitext ? fmt::format("wiki.{}.tokens", split)
                                              : fmt::format("{}.txt", split));
  };
  // Wikitext's vocabulary is closed and its files carry <unk> themselves.
  const std::string rare = wikitext ? "<unk>" : "zebra";
  clitest::write(name("train"), sentences(300, 1) + (wikitext ? "<unk>\n" : ""));  // 3000 words
  clitest::write(name("valid"), sentences(40, 2));                                  // 400
  clitest::write(name("test"), sentences(39, 3) + "the " + rare + " sat on a log\n");
}

// B = 4 columns of 750 words, sequences of 16: 47 updates per epoch.
const char* kTiny = R"(data: {dir: corpus, name: tiny, min_count: 1, eval_batch: 2}
lm: {seq_len: 16}
model: {layers: 2, d_model: 16, heads: 2, d_ff: 32, attention: full, window: 4, clusters: 2,
        dropout: 0.1}
optim: {name: adam, lr: 0.01, clip: 1.0}
train: {batch: 4, steps: 8, log_every: 2, eval_every: 4, gradnorm_every: 4, threads: 1}
output: {dir: results}
)";

}  // namespace

TEST(Wikitext103Cli, BinaryIsKnown) {
  ASSERT_FALSE(kBin.empty())
      << "SEQBENCH_WIKITEXT103_BIN is not defined: tests/CMakeLists.txt must define it as "
         "$<TARGET_FILE:seqbench_wikitext103>";
  EXPECT_TRUE(fs::exists(kBin)) << kBin;
}

TEST(Wikitext103Cli, EveryCommittedPresetResolves) {
  // Six kinds, paper and small, and the routing / random "_only" ablation pair.
  clitest::expect_presets_resolve(kBin, "wikitext103", clitest::fresh_dir("x"), 14);
}

class Wikitext103Runs : public ::testing::TestWithParam<const char*> {};

TEST_P(Wikitext103Runs, AFewUpdatesWriteResultsInPerplexity) {
  ASSERT_FALSE(kBin.empty()) << "SEQBENCH_WIKITEXT103_BIN is not defined";
  const std::string dir = clitest::fresh_dir("x");
  tiny_corpus(dir, "corpus", false);
  clitest::write(dir + "/tiny.yaml", kTiny);
  const auto r = run(kBin + " --config tiny.yaml --run-id r1 --set model.attention=" + GetParam(), dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string run_dir = dir + "/results/wikitext103/r1";
  for (const char* f : {"config.yaml", "metrics.csv", "summary.json", "gradnorm.csv",
                        "checkpoint.sbck"})
    EXPECT_TRUE(fs::exists(run_dir + "/" + f)) << f;
  const auto runs = report::read_csv(dir + "/results/wikitext103/runs.csv");
  ASSERT_EQ(runs.rows.size(), 1u);
  EXPECT_EQ(cell(runs, "data"), "tiny (stand-in)");
  EXPECT_EQ(cell(runs, "task"), "word_lm");
  EXPECT_EQ(cell(runs, "model"), "transformer");
  EXPECT_EQ(cell(runs, "T"), "16");
  EXPECT_EQ(cell(runs, "updates"), "8");
  EXPECT_EQ(cell(runs, "metric"), "ppl");
  EXPECT_EQ(cell(runs, "attention"), std::string(GetParam()) == "full" ? "full:2" : GetParam());
  EXPECT_EQ(cell(runs, "vocab"), "14");  // 12 words, <eos>, <unk>
  EXPECT_EQ(cell(runs, "updates_per_epoch"), "47");
  const double ppl = std::stod(cell(runs, "test_ppl")), loss = std::stod(cell(runs, "final_loss"));
  const double valid = std::stod(cell(runs, "valid_ppl"));
  EXPECT_GT(ppl, 1.0);
  EXPECT_LT(valid, 14.0) << "8 updates should beat the uniform guess over 14 words";
  EXPECT_NEAR(std::stod(cell(runs, "final_metric")), std::exp(loss), 1e-3 * std::exp(loss));
  // The gradient probe has one norm per position of the sequence.
  const auto g = report::read_csv(run_dir + "/gradnorm.csv");
  EXPECT_FALSE(g.rows.empty());
}

// deltanet: a sequence mixer in place of attention in every block.
INSTANTIATE_TEST_SUITE_P(Kinds, Wikitext103Runs,
                         ::testing::Values("full", "local:1,routing:1", "deltanet"),
                         [](const auto& p) {
                           std::string s = p.param;
                           for (char& c : s)
                             if (c == ':' || c == ',') c = '_';
                           return s;
                         });

TEST(Wikitext103Cli, ReadsTheWikitextFileNames) {
  ASSERT_FALSE(kBin.empty()) << "SEQBENCH_WIKITEXT103_BIN is not defined";
  const std::string dir = clitest::fresh_dir("x");
  tiny_corpus(dir, "wt", true);
  clitest::write(dir + "/tiny.yaml", kTiny);
  const auto r = run(kBin + " --config tiny.yaml --run-id w --set data.format=wikitext "
                            "--set data.dir=wt --set data.name=wt --set data.stand_in=false "
                            "--set train.steps=2 --set train.eval_every=2",
                     dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto runs = report::read_csv(dir + "/results/wikitext103/runs.csv");
  EXPECT_EQ(cell(runs, "data"), "wt (real)");
}

TEST(Wikitext103Cli, InterruptedThenResumedEqualsUninterruptedBitForBit) {
  ASSERT_FALSE(kBin.empty()) << "SEQBENCH_WIKITEXT103_BIN is not defined";
  const std::string dir = clitest::fresh_dir("x");
  tiny_corpus(dir, "corpus", false);
  clitest::write(dir + "/tiny.yaml", kTiny);
  const std::string common =
      kBin + " --config tiny.yaml --set model.heads=4 --set model.attention=local:1,routing:1,random:1,lsh:1"
             " --set model.ema_decay=0.5 --set model.relative_positions=8";
  ASSERT_EQ(run(common + " --run-id full", dir).code, 0);
  const auto part = run(common + " --run-id part --interrupt-at 5", dir);
  ASSERT_EQ(part.code, 130) << part.err;
  const auto rest = run(kBin + " --run-id part --resume", dir);
  ASSERT_EQ(rest.code, 0) << rest.err;
  const auto a = train::load_checkpoint(dir + "/results/wikitext103/full/checkpoint.sbck");
  const auto b = train::load_checkpoint(dir + "/results/wikitext103/part/checkpoint.sbck");
  clitest::expect_same_checkpoints(a, b, {"step", "wikitext103.model.dropout_rng",
                                          "wikitext103.model.draws", "wikitext103.cursor",
                                          "wikitext103.test_ppl"});
  bool has_centroids = false, has_relpos = false;
  for (const auto& arr : a.arrays) {
    has_centroids = has_centroids || arr.name.find("centroids") != std::string::npos;
    if (arr.name.ends_with(".attn.relpos")) {
      has_relpos = true;  // trained away from its zero init
      EXPECT_TRUE(std::any_of(arr.data.begin(), arr.data.end(), [](float x) { return x != 0.0f; }));
    }
  }
  EXPECT_TRUE(has_centroids);
  EXPECT_TRUE(has_relpos);
  const auto ra = report::read_csv(dir + "/results/wikitext103/runs.csv");
  ASSERT_EQ(ra.rows.size(), 2u);
  EXPECT_EQ(cell(ra, "test_ppl", 0), cell(ra, "test_ppl", 1));
}

using WtBadConfig = clitest::BadSet;

class Wikitext103ConfigErrors : public ::testing::TestWithParam<WtBadConfig> {};

TEST_P(Wikitext103ConfigErrors, ExitTwoWithOneLineAndWriteNothing) {
  ASSERT_FALSE(kBin.empty()) << "SEQBENCH_WIKITEXT103_BIN is not defined";
  const WtBadConfig& bad = GetParam();
  const std::string dir = clitest::fresh_dir(bad.name);
  tiny_corpus(dir, "corpus", false);
  clitest::write(dir + "/tiny.yaml", kTiny);
  clitest::expect_config_error(kBin + " --config tiny.yaml " + bad.set, dir, bad.must_contain);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, Wikitext103ConfigErrors,
    ::testing::Values(
        WtBadConfig{"unknown_key", "--set model.atention=full",
                  "unknown key 'model.atention' (did you mean 'model.attention'?)"},
        WtBadConfig{"bad_kind", "--set model.attention=local:1,routng:1", "unknown kind 'routng'"},
        WtBadConfig{"head_sum", "--set model.attention=local:1,routing:2", "has 3 heads, not 2"},
        WtBadConfig{"heads_divide", "--set model.heads=3 --set model.attention=full",
                  "model.heads"},
        WtBadConfig{"lsh_buckets", "--set model.attention=lsh --set model.clusters=3",
                  "model.clusters"},
        WtBadConfig{"bptt", "--set train.bptt=5", "train.bptt"},
        WtBadConfig{"no_data", "--set data.dir=nowhere", "data.dir: no corpus at 'nowhere'"},
        WtBadConfig{"too_short", "--set data.eval_batch=400", "data.eval_batch"},
        WtBadConfig{"seq_len_above_a_column", "--set lm.seq_len=1000",
                  "lm.seq_len: 1000 is longer than a training segment can be"},
        WtBadConfig{"format", "--set data.format=ptb_char", "data.format"},
        WtBadConfig{"relative_positions", "--set model.relative_positions=-1",
                  "model.relative_positions"}),
    [](const auto& p) { return std::string(p.param.name); });

// `seqbench report attention approx` (apps/wikitext103/attention_approx.*) on a tiny
// trained full-attention run. At w = 16 = N every kind's structure covers the sequence
// (one block, one cluster, one bucket), so each must reproduce the model's own full
// attention output: this checks that the captured q, k, v and o belong together. At
// w = 2 local attention drops keys and must differ.
TEST(Wikitext103Approx, SparseKindsAgainstTheModelsFullAttention) {
  ASSERT_FALSE(kBin.empty()) << "SEQBENCH_WIKITEXT103_BIN is not defined";
  const std::string front = SEQBENCH_FRONT_BIN;
  const std::string dir = clitest::fresh_dir("x");
  tiny_corpus(dir, "corpus", false);
  clitest::write(dir + "/tiny.yaml", kTiny);
  ASSERT_EQ(run(kBin + " --config tiny.yaml --run-id r1 -q", dir).code, 0);
  auto r = run(front + " report attention approx results/wikitext103/r1 --windows 2,4,16 "
                       "--segments 2 --out approx",
               dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("| kind"), std::string::npos) << r.out;
  for (const char* f : {"attention_approx.csv", "attention_approx.md", "attention_approx.dat",
                        "attention_approx.gp"})
    EXPECT_TRUE(fs::exists(dir + "/approx/" + std::string(f))) << f;
  const auto t = report::read_csv(dir + "/approx/attention_approx.csv");
  ASSERT_EQ(t.rows.size(), 3u * 5u * 3u);  // (2 layers + all) x 5 kinds x 3 windows
  int exact = 0;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const double e = t.number(i, "rel_error");
    EXPECT_TRUE(std::isfinite(e) && e >= 0) << i;
    // The budget: at most 2w keys per query (+ itself for smyrf and routing).
    const double keys = t.number(i, "mean_keys"), w = t.number(i, "window");
    EXPECT_LE(keys, 2 * w + 1) << cell(t, "kind", i) << " w=" << w;
    if (cell(t, "window", i) == "16") {
      EXPECT_LT(e, 1e-5) << cell(t, "kind", i) << " layer " << cell(t, "layer", i);
      EXPECT_NEAR(keys, 8.5, 1e-9) << cell(t, "kind", i);  // query t sees keys 0..t: mean 17/2
      ++exact;
    }
    if (cell(t, "window", i) == "2" && cell(t, "kind", i) == "local") {
      EXPECT_GT(e, 1e-3) << i;
    }
  }
  EXPECT_EQ(exact, 15);

  // With a relative-position bias, the kinds run with the model's own table: at w = 16
  // they still reproduce its full attention.
  ASSERT_EQ(run(kBin + " --config tiny.yaml --run-id rp -q --set model.relative_positions=6",
                dir)
                .code,
            0);
  r = run(front + " report attention approx results/wikitext103/rp --windows 16 --segments 2 "
                  "--out approx_rp",
          dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto trp = report::read_csv(dir + "/approx_rp/attention_approx.csv");
  ASSERT_EQ(trp.rows.size(), 3u * 5u);
  for (size_t i = 0; i < trp.rows.size(); ++i)
    EXPECT_LT(trp.number(i, "rel_error"), 1e-5) << cell(trp, "kind", i);

  // Errors: a run without full heads, no run at all.
  ASSERT_EQ(run(kBin + " --config tiny.yaml --run-id r2 -q --set model.attention=local", dir).code,
            0);
  r = run(front + " report attention approx results/wikitext103/r2", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("no full heads"), std::string::npos) << r.err;
  r = run(front + " report attention approx results/wikitext103/none", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no trained run at"), std::string::npos) << r.err;
}

// `seqbench report attention jsd` (apps/wikitext103/attention_jsd.*) on a tiny trained
// model with 2 local and 2 routing heads per layer. The command itself checks that the
// attention matrices it recovers reproduce each core's output (P V == o), so a run that
// succeeds has read the right distributions; every mean JSD lies in [0, ln 2].
TEST(Wikitext103Jsd, MeanDivergencePerPairTypeWithinBounds) {
  ASSERT_FALSE(kBin.empty()) << "SEQBENCH_WIKITEXT103_BIN is not defined";
  const std::string front = SEQBENCH_FRONT_BIN;
  const std::string dir = clitest::fresh_dir("x");
  tiny_corpus(dir, "corpus", false);
  clitest::write(dir + "/tiny.yaml", kTiny);
  ASSERT_EQ(run(kBin + " --config tiny.yaml --run-id r1 -q --set model.heads=4 "
                       "--set model.attention=local:2,routing:2",
                dir)
                .code,
            0);
  auto r = run(front + " report attention jsd results/wikitext103/r1 --segments 2 --out jsd", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("local-routing"), std::string::npos) << r.out;
  const auto t = report::read_csv(dir + "/jsd/attention_jsd.csv");
  ASSERT_EQ(t.rows.size(), 3u * 3u);  // (2 layers + all) x {local-local, local-routing, routing-routing}
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const double j = t.number(i, "mean_jsd");
    EXPECT_GE(j, 0.0) << i;
    EXPECT_LE(j, std::log(2.0) + 1e-9) << i;
    // 2 segments x 2 columns x 16 queries, times the pairs of that type per layer.
    const double pairs = cell(t, "pair", i) == "local-routing" ? 4 : 1;
    EXPECT_EQ(t.number(i, "count"), (cell(t, "layer", i) == "all" ? 2 : 1) * 64 * pairs) << i;
  }

  // With a relative-position bias the recovered matrices include it (the command checks
  // P V == o for every core).
  ASSERT_EQ(run(kBin + " --config tiny.yaml --run-id rp -q --set model.heads=4 "
                       "--set model.attention=local:2,routing:2 --set model.relative_positions=6",
                dir)
                .code,
            0);
  r = run(front + " report attention jsd results/wikitext103/rp --segments 2 --out jsd_rp", dir);
  ASSERT_EQ(r.code, 0) << r.err;

  // A model with one kind per layer has nothing to compare.
  ASSERT_EQ(run(kBin + " --config tiny.yaml --run-id r2 -q", dir).code, 0);
  r = run(front + " report attention jsd results/wikitext103/r2", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("no layer mixing head kinds"), std::string::npos) << r.err;
}

TEST(Wikitext103Cli, AttentionAnalysesNameARunOfAnotherExperiment) {
  const std::string dir = clitest::fresh_dir("x");
  std::filesystem::create_directories(dir + "/results/char_ptb/r1");
  clitest::write(dir + "/results/char_ptb/r1/config.yaml", "model: {cell: lstm}\n");
  clitest::write(dir + "/results/char_ptb/r1/checkpoint.sbck", "x");
  const std::string front = SEQBENCH_FRONT_BIN;
  for (const char* what : {"jsd", "approx"}) {
    const auto r = run(front + " report attention " + what + " results/char_ptb/r1", dir);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("is a run of the char_ptb experiment"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("unknown key"), std::string::npos) << r.err;
  }
}
