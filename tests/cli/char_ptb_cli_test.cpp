// End-to-end tests of `seqbench char_ptb` on tiny corpora the tests write themselves:
// results files, bpc = loss / ln 2, the carried state (it must matter, survive a resume
// bit-exactly, and work for every recurrent layer), the PTB format, config errors, the
// paper table.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "cli/cli_util.hpp"
#include "report/csv.hpp"
#include "train/checkpoint.hpp"

using namespace seqbench;
using clitest::run;
namespace fs = std::filesystem;

namespace {

const std::string kFront = SEQBENCH_FRONT_BIN;
const std::string kCharPtb = kFront + " char_ptb";

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// "aaab" repeated: after an 'a' the next character depends on how many a's came
// before, which a model only knows from state older than one step. The test split has
// one character ('z') that train lacks: it reads as <unk>.
void tiny_corpus(const std::string& root) {
  fs::create_directories(root + "/corpus");
  clitest::write(root + "/corpus/train.txt", repeat("aaab", 525));                // 2100
  clitest::write(root + "/corpus/valid.txt", repeat("aaab", 70));                 // 280
  clitest::write(root + "/corpus/test.txt", repeat("aaab", 70) + "z" + "a");      // 282
}

// B = 4 columns of 525 tokens, segments of 5: ceil(524 / 5) = 105 updates per epoch.
const char* kTiny = R"(data: {dir: corpus, name: tiny, eval_batch: 2, check_epochs: false}
lm: {embedding: 8, seq_len: 5}
model: {hidden: 16}
optim: {name: adam, lr: 0.02, clip: 1.0, schedule: {kind: none}}
train: {batch: 4, steps: 30, log_every: 5, eval_every: 10, gradnorm_every: 10, threads: 2}
output: {dir: results}
)";

std::string cell(const report::CsvTable& t, const char* col, size_t row = 0) {
  return t.rows[row][size_t(t.col(col))];
}

}  // namespace

TEST(CharPtbCli, WritesResultsInBitsPerCharacter) {
  const std::string dir = clitest::fresh_dir("x");
  tiny_corpus(dir);
  clitest::write(dir + "/tiny.yaml", kTiny);
  const auto r = run(kCharPtb + " --config tiny.yaml --run-id r1", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string run_dir = dir + "/results/char_ptb/r1";
  const auto metrics = report::read_csv(run_dir + "/metrics.csv");
  ASSERT_EQ(metrics.columns[3], "bpc");
  int valid_rows = 0;
  for (const auto& row : metrics.rows) {
    valid_rows += row[1] == "valid";
    const double loss = std::stod(row[2]), bpc = std::stod(row[3]);
    EXPECT_NEAR(bpc, loss / std::log(2.0), 1e-12 * bpc) << "bpc is the loss in bits";
  }
  EXPECT_EQ(valid_rows, 3);
  // Probes at 0, 10, 20, 30, each over one segment of 5 steps.
  EXPECT_EQ(report::read_csv(run_dir + "/gradnorm.csv").rows.size(), 4u * 5u);

  const auto runs = report::read_csv(dir + "/results/char_ptb/runs.csv");
  ASSERT_EQ(runs.rows.size(), 1u);
  EXPECT_EQ(cell(runs, "metric"), "bpc");
  EXPECT_EQ(cell(runs, "data"), "tiny (stand-in)");
  EXPECT_EQ(cell(runs, "task"), "char_lm");
  EXPECT_EQ(cell(runs, "vocab"), "3");  // a, b and <unk>
  EXPECT_EQ(cell(runs, "train_tokens"), "2100");
  EXPECT_EQ(cell(runs, "valid_tokens"), "280");
  EXPECT_EQ(cell(runs, "test_tokens"), "282");
  EXPECT_EQ(cell(runs, "updates_per_epoch"), "105");
  EXPECT_NEAR(std::stod(cell(runs, "epochs")), 30.0 / 105.0, 1e-5);
  EXPECT_EQ(cell(runs, "carry_state"), "true");
  EXPECT_EQ(cell(runs, "valid_bpc"), cell(runs, "best_metric"));
  const double test_bpc = std::stod(cell(runs, "test_bpc"));
  EXPECT_GT(test_bpc, 0.0);
  EXPECT_LT(test_bpc, 10.0);
  // Before training a model is near uniform over 3 symbols (log2 3 = 1.58 bits); the
  // log's first validation shows whether the test was measured with it.
  const std::string log = clitest::slurp(run_dir + "/log.txt");
  EXPECT_NE(log.find("test_bpc"), std::string::npos) << log;
}

TEST(CharPtbCli, CarryingTheStateAcrossSegmentsIsWhatLetsTheModelCount) {
  const std::string dir = clitest::fresh_dir("x");
  tiny_corpus(dir);
  clitest::write(dir + "/tiny.yaml", kTiny);
  const std::string common =
      kCharPtb + " --config tiny.yaml -q --set train.steps=420 --set train.eval_every=105 "
                 "--set train.gradnorm_every=0";
  ASSERT_EQ(run(common + " --run-id carry", dir).code, 0);
  ASSERT_EQ(run(common + " --run-id reset --set lm.carry_state=false", dir).code, 0);
  const auto runs = report::read_csv(dir + "/results/char_ptb/runs.csv");
  ASSERT_EQ(runs.rows.size(), 2u);
  const double carry = std::stod(cell(runs, "valid_bpc", 0));
  const double reset = std::stod(cell(runs, "valid_bpc", 1));
  // With a carried state the sequence is deterministic (0 bits). Without it, the first
  // two steps of every 5-step segment cannot know the phase of "aaab": even a perfect
  // model pays (3/4 H(1/3) + 1/2 * 1 bit) / 5 = 0.238 bits per character.
  EXPECT_LT(carry, 0.1);
  EXPECT_GT(reset, 0.2);
}

TEST(CharPtbCli, InterruptedThenResumedEqualsUninterruptedBitForBitIncludingTheState) {
  const std::string dir = clitest::fresh_dir("x");
  tiny_corpus(dir);
  clitest::write(dir + "/tiny.yaml", kTiny);
  ASSERT_EQ(run(kCharPtb + " --config tiny.yaml -q --run-id full", dir).code, 0);
  ASSERT_EQ(run(kCharPtb + " --config tiny.yaml -q --run-id part --interrupt-at 13", dir).code, 130);
  const auto mid = train::load_checkpoint(dir + "/results/char_ptb/part/checkpoint.sbck");
  EXPECT_TRUE(mid.has_array("char_ptb.state")) << "mid-epoch the carried state is saved";
  const auto rest = run(kCharPtb + " --run-id part --resume -q", dir);
  ASSERT_EQ(rest.code, 0) << rest.err;
  const auto a = train::load_checkpoint(dir + "/results/char_ptb/full/checkpoint.sbck");
  const auto b = train::load_checkpoint(dir + "/results/char_ptb/part/checkpoint.sbck");
  ASSERT_EQ(a.arrays.size(), b.arrays.size());
  for (size_t i = 0; i < a.arrays.size(); ++i) {
    EXPECT_EQ(a.arrays[i].name, b.arrays[i].name);
    EXPECT_EQ(a.arrays[i].data, b.arrays[i].data) << a.arrays[i].name << " differs";
  }
  const auto runs = report::read_csv(dir + "/results/char_ptb/runs.csv");
  ASSERT_EQ(runs.rows.size(), 2u);
  for (const char* c : {"valid_bpc", "test_bpc", "final_loss", "epochs"})
    EXPECT_EQ(cell(runs, c, 0), cell(runs, c, 1)) << c;
}

class CharPtbCells : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(CharPtbCells, EveryLayerCarriesItsStateThroughTheBinary) {
  const auto [cell_name, backend] = GetParam();
  const std::string dir = clitest::fresh_dir(std::string(cell_name) + "_" + backend);
  tiny_corpus(dir);
  clitest::write(dir + "/tiny.yaml", kTiny);
  const auto r = run(kCharPtb + " --config tiny.yaml -q --run-id c --set train.steps=10 " +
                         "--set model.nu=2 --set model.rho=2 --set model.cell=" + cell_name +
                         " --set model.backend=" + backend,
                     dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto runs = report::read_csv(dir + "/results/char_ptb/runs.csv");
  EXPECT_EQ(cell(runs, "model"), cell_name);
  EXPECT_EQ(cell(runs, "status"), "finished");
  const auto ck = train::load_checkpoint(dir + "/results/char_ptb/c/checkpoint.sbck");
  ASSERT_TRUE(ck.has_array("char_ptb.state"));
  double norm = 0;
  for (float v : ck.array("char_ptb.state").data) norm += double(v) * double(v);
  EXPECT_GT(norm, 0.0) << "the carried state is the layer's final state, not zeros";
}

INSTANTIATE_TEST_SUITE_P(
    Layers, CharPtbCells,
    ::testing::Values(std::pair{"lstm", "ours"}, std::pair{"lstm", "onednn"},
                      std::pair{"rel_lstm", "ours"}, std::pair{"momentum_lstm", "ours"},
                      std::pair{"stable_lstm", "ours"}, std::pair{"sab", "ours"},
                      std::pair{"gla", "ours"}, std::pair{"mamba", "ours"},
                      std::pair{"mlstm", "ours"}, std::pair{"slstm", "ours"}),
    [](const auto& p) { return std::string(p.param.first) + "_" + p.param.second; });

TEST(CharPtbCli, ReadsThePtbCharFormatAsRealData) {
  const std::string dir = clitest::fresh_dir("x");
  fs::create_directories(dir + "/ptb");
  const std::string lines = repeat("a b _ c a\nb _ a c\n", 40);
  for (const char* split : {"train", "valid", "test"})
    clitest::write(dir + "/ptb/ptb.char." + std::string(split) + ".txt", lines);
  clitest::write(dir + "/tiny.yaml", kTiny);
  const auto r = run(kCharPtb + " --config tiny.yaml -q --set data.dir=ptb --set data.format=ptb_char "
                                "--set data.name=ptb --set data.stand_in=false --set train.steps=5",
                     dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto runs = report::read_csv(dir + "/results/char_ptb/runs.csv");
  EXPECT_EQ(cell(runs, "data"), "ptb (real)");
  EXPECT_EQ(cell(runs, "vocab"), "5");  // a b _ c <eos>
}

TEST(CharPtbCli, ConfigAndDataMistakesAreOneLineErrorsThatWriteNothing) {
  const std::string dir = clitest::fresh_dir("x");
  tiny_corpus(dir);
  clitest::write(dir + "/tiny.yaml", kTiny);
  struct Case {
    std::string set;
    int code;
    std::string must_contain;
  };
  const Case cases[] = {
      {"--set data.dir=nowhere", 2, "data.dir: no corpus at 'nowhere'"},
      {"--set train.batch=2000", 2, "train.batch: 2000 columns"},
      {"--set data.eval_batch=200", 2, "data.eval_batch: 200 columns"},
      {"--set data.check_epochs=true", 2, "train.eval_every: 10 is not a whole number of epochs"},
      {"--set lm.seq_len=0", 2, "lm.seq_len"},
      // 4 columns of 525 characters: a segment has at most 524 inputs (the audit's case was
      // lm.seq_len: 1000000 on a 10 KB corpus, run and recorded as T = 1000000).
      {"--set lm.seq_len=525", 2,
       "lm.seq_len: 525 is longer than a training segment can be: 4 columns (train.batch) of "
       "2100 training tokens hold at most 524 inputs each"},
      {"--set lm.seq_len=1000000", 2, "lm.seq_len: 1000000"},
      {"--set data.format=ptb_char", 1, "ptb.char.train.txt"},
  };
  for (const auto& c : cases) {
    const auto r = run(kCharPtb + " --config tiny.yaml " + c.set, dir);
    EXPECT_EQ(r.code, c.code) << c.set << ": " << r.err;
    EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(c.must_contain), std::string::npos) << c.set << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(dir + "/results"));
}

// Miller & Hardt's Figure 2 probe on a saved run. Both LSTM backends start from the same
// weights; after one update with a negligible step their input gradients must agree,
// which checks each backend's dx against the other's.
TEST(CharPtbCli, InputGradientProbeOfASavedRunAgreesAcrossBackends) {
  const std::string dir = clitest::fresh_dir("x");
  tiny_corpus(dir);
  clitest::write(dir + "/tiny.yaml", kTiny);
  std::vector<std::vector<double>> norms;
  for (const char* backend : {"ours", "onednn"}) {
    const std::string id = backend;
    const auto t = run(kCharPtb + " --config tiny.yaml -q --run-id " + id +
                           " --set train.steps=1 --set optim.lr=1e-9 --set model.backend=" + id,
                       dir);
    ASSERT_EQ(t.code, 0) << t.err;
    const auto r =
        run(kCharPtb + " --run-id " + id + " --probe-input-grad 6 --probe-windows 3", dir);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("3 windows x 2 columns"), std::string::npos) << r.out;
    const auto csv = report::read_csv(dir + "/results/char_ptb/" + id + "/inputgrad.csv");
    ASSERT_EQ(csv.columns, (std::vector<std::string>{"step", "t", "distance", "norm"}));
    ASSERT_EQ(csv.rows.size(), 6u);
    std::vector<double> by_distance(6, -1.0);
    for (size_t i = 0; i < 6; ++i) {
      EXPECT_EQ(cell(csv, "step", i), "1");
      EXPECT_EQ(std::stoi(cell(csv, "t", i)) + std::stoi(cell(csv, "distance", i)), 5);
      const double v = std::stod(cell(csv, "norm", i));
      EXPECT_TRUE(v > 0 && std::isfinite(v)) << v;
      by_distance[size_t(std::stoi(cell(csv, "distance", i)))] = v;
    }
    norms.push_back(by_distance);
  }
  for (size_t i = 0; i < 6; ++i)
    EXPECT_NEAR(norms[1][i], norms[0][i], 1e-4 * norms[0][i]) << "distance " << i;
  // Windows longer than a validation column: a usage error, nothing written.
  const auto bad = run(kCharPtb + " --run-id ours --probe-input-grad 500", dir);
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_EQ(clitest::count_lines(bad.err), 1) << bad.err;
  EXPECT_NE(bad.err.find("do not fit"), std::string::npos) << bad.err;
}

TEST(CharPtbCli, EveryCommittedPresetResolvesAndTheDemoIsTheSmallLstm) {
  const std::string dir = clitest::fresh_dir("x");
  int n = 0;
  for (const auto& e :
       fs::directory_iterator(std::string(SEQBENCH_SOURCE_DIR) + "/configs/char_ptb")) {
    if (e.path().extension() != ".yaml") continue;
    ++n;
    const auto r = run(kCharPtb + " --config '" + e.path().string() + "' --dump-config", dir);
    EXPECT_EQ(r.code, 0) << e.path() << ": " << r.err;
  }
  // 4 char-level and 4 word-level models, paper and small, and xLSTM's two small mixers
  EXPECT_EQ(n, 18);
  const auto r = run(kCharPtb + " --demo --dump-config", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("label: lstm-small"), std::string::npos) << r.out;
}

// Needs `seqbench report char_ptb`: char_ptb's entry in apps/experiments.cpp.
TEST(CharPtbReport, PrintsThePaperTableWithRecalledNumbersMarked) {
  const std::string dir = clitest::fresh_dir("x");
  tiny_corpus(dir);
  clitest::write(dir + "/tiny.yaml", kTiny);
  for (const char* c : {"lstm", "stable_lstm", "rel_lstm"})
    ASSERT_EQ(run(kCharPtb + " --config tiny.yaml -q --set train.steps=10 --set model.nu=2 "
                             "--set model.rho=2 --set model.cell=" + std::string(c),
                  dir)
                  .code,
              0);
  // A word-level run: its row reports perplexity beside Miller & Hardt's Wikitext-2 number.
  fs::create_directories(dir + "/words");
  for (const char* split : {"train", "valid", "test"})
    clitest::write(dir + "/words/" + split + ".txt", repeat("the cat sat on the mat\n", 40));
  ASSERT_EQ(run(kCharPtb + " --config tiny.yaml -q --set train.steps=10 --set data.dir=words "
                           "--set data.level=word --set data.min_count=1 --set model.cell=rnn",
                dir)
                .code,
            0);
  const auto r = run(kFront + " report char_ptb results/char_ptb/runs.csv", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s : {"| label", "paper", "ours", "1.4 (unchecked)", "1.9 (unchecked)", "unchecked; Table 1",
                        "tiny (stand-in)", "stand-in", "146.7 (unchecked)"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  const auto csv = run(kFront + " report char_ptb results/char_ptb/runs.csv --format csv", dir);
  ASSERT_EQ(csv.code, 0) << csv.err;
  const auto t = report::parse_csv(csv.out, "stdout");
  ASSERT_EQ(t.rows.size(), 4u);
  EXPECT_EQ(cell(t, "model", 2), "rel_lstm");
  EXPECT_EQ(cell(t, "paper", 2), "—");
  EXPECT_EQ(cell(t, "n", 0), "1");
  EXPECT_EQ(cell(t, "metric", 0), "BPC");
  EXPECT_EQ(cell(t, "task", 3), "word_lm");
  EXPECT_EQ(cell(t, "metric", 3), "ppl");
  const auto runs = report::read_csv(dir + "/results/char_ptb/runs.csv");
  const double bits = std::stod(cell(runs, "test_bpc", 3));
  EXPECT_NEAR(std::stod(cell(t, "ours", 3)), std::exp2(bits), 0.05 + 1e-3 * std::exp2(bits));
}
