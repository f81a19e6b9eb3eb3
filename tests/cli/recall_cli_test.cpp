// End-to-end tests of `seqbench recall`: both model families train from a config and write
// runs.csv with the figure's columns (model, width, state_bytes), a trained run evaluates at
// other lengths (--eval-T), and the sections of the family not in use are refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <vector>

#include "apps/recall/recall_experiment.hpp"
#include "cli/cli_util.hpp"
#include "nn/registry.hpp"
#include "report/csv.hpp"

using namespace seqbench;
using clitest::run;
namespace fs = std::filesystem;

namespace {

const std::string kFront = SEQBENCH_FRONT_BIN;

const char* kTask = R"(task: {name: mqar, vocab: 24, seq_len: 16, n_pairs: 2}
optim: {name: adam, lr: 0.01}
train: {batch: 4, steps: 6, log_every: 3, eval_every: 3, eval_batches: 1, threads: 1}
output: {dir: results}
)";

std::string only_run_dir(const std::string& root) {
  std::string found;
  for (const auto& e : fs::directory_iterator(root + "/results/recall"))
    if (e.is_directory()) found = e.path().string();
  return found;
}

}  // namespace

TEST(RecallCli, MixerStackTrainsAndReportsItsStateSize) {
  const std::string dir = clitest::fresh_dir("mixer");
  clitest::write(dir + "/c.yaml", std::string(kTask) +
                                      "family: transformer\n"
                                      "model: {layers: 2, d_model: 8, heads: 1, d_ff: 8, "
                                      "attention: gla, mixer: {heads: 2, chunk: 4}, "
                                      "positions: none}\n");
  const auto r = run(kFront + " recall --config c.yaml", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto runs = report::read_csv(dir + "/results/recall/runs.csv");
  ASSERT_EQ(runs.rows.size(), 1u);
  EXPECT_EQ(runs.rows[0][size_t(runs.col("model"))], "gla");
  EXPECT_EQ(runs.rows[0][size_t(runs.col("family"))], "transformer");
  // Two layers of gla's state: heads (2) x d^2 (4^2) floats each, and the short
  // convolution's buffer (model.mixer.short_conv, default 4): the last 3 projections of
  // q, k and v, 3 x 3 x 8 floats.
  EXPECT_EQ(runs.number(0, "state_bytes"), 2 * (2 * 16 + 3 * 3 * 8) * 4.0);
  // Length extrapolation of the saved run (no positions table, so any length).
  const std::string id = fs::path(only_run_dir(dir)).filename();
  const auto t = run(kFront + " recall --config c.yaml --run-id " + id + " --eval-T 16 40", dir);
  ASSERT_EQ(t.code, 0) << t.err;
  const auto transfer = report::read_csv(only_run_dir(dir) + "/transfer.csv");
  ASSERT_EQ(transfer.rows.size(), 2u);
  EXPECT_EQ(transfer.number(1, "eval_T"), 40);
  const double acc = transfer.number(1, "acc");
  EXPECT_GE(acc, 0.0);
  EXPECT_LE(acc, 1.0);
}

TEST(RecallCli, ExtrapolateEvaluatesAtMultiplesOfTheLengthWhenTheRunEnds) {
  const std::string dir = clitest::fresh_dir("extrapolate");
  const std::string model = "family: transformer\nmodel: {layers: 1, d_model: 8, heads: 1, d_ff: 8, attention: gla, "
                            "mixer: {heads: 2, chunk: 4}, positions: ";
  clitest::write(dir + "/c.yaml", std::string(kTask) + model + "none}\nextrapolate: [2, 3]\n");
  const auto r = run(kFront + " recall --config c.yaml", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto transfer = report::read_csv(only_run_dir(dir) + "/transfer.csv");
  ASSERT_EQ(transfer.rows.size(), 2u);
  EXPECT_EQ(transfer.number(0, "trained_T"), 16);
  EXPECT_EQ(transfer.number(0, "eval_T"), 32);
  EXPECT_EQ(transfer.number(1, "eval_T"), 48);
  EXPECT_EQ(transfer.number(1, "step"), 6);
  // A learned position table stops at the training length: refused before the run, in one line.
  const std::string learned = clitest::fresh_dir("extrapolate_learned");
  clitest::write(learned + "/c.yaml", std::string(kTask) + model + "learned}\nextrapolate: [2]\n");
  const auto refused = run(kFront + " recall --config c.yaml", learned);
  EXPECT_EQ(refused.code, 2) << refused.err;
  EXPECT_EQ(clitest::count_lines(refused.err), 1) << refused.err;
  EXPECT_NE(refused.err.find("extrapolate: 2 x task.seq_len = 32 is beyond the 16 positions"), std::string::npos)
      << refused.err;
  EXPECT_FALSE(fs::exists(learned + "/results/recall/runs.csv"));
}

TEST(RecallCli, RecurrentFamilyCountsTheAttendedMemory) {
  const std::string dir = clitest::fresh_dir("rel");
  clitest::write(dir + "/c.yaml", std::string(kTask) +
                                      "family: recurrent\nembedding: 8\n"
                                      "rnn: {cell: rel_lstm, hidden: 8, nu: 3, rho: 2}\n");
  const auto r = run(kFront + " recall --config c.yaml", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto runs = report::read_csv(dir + "/results/recall/runs.csv");
  ASSERT_EQ(runs.rows.size(), 1u);
  EXPECT_EQ(runs.rows[0][size_t(runs.col("model"))], "rel_lstm(nu=3,rho=2)");
  // rel_lstm's step state (h, c and the attention summary: 3 H) and nu + rho = 5 states.
  EXPECT_EQ(runs.number(0, "state_bytes"), (3 * 8 + 5 * 8) * 4.0);
}

TEST(RecallCli, TheOtherFamilysSectionIsRefused) {
  const std::string dir = clitest::fresh_dir("refuse");
  clitest::write(dir + "/c.yaml", std::string(kTask) + "family: transformer\nrnn: {cell: lstm, hidden: 9}\n");
  const auto r = run(kFront + " recall --config c.yaml", dir);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("rnn is set, but family is 'transformer'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/results/recall/runs.csv"));
}

TEST(RecallStateBytes, AttentionKeepsItsKeysAndLocalForgets) {
  apps::RecallConfig c;
  c.model.layers = 2;
  c.model.d_model = 16;
  c.model.heads = 2;
  c.model.attention = "full";
  EXPECT_EQ(apps::recall_state_bytes(c, 100), 2 * 2 * 100 * 16 * 4.0);
  c.model.attention = "local";
  c.model.window = 10;
  EXPECT_EQ(apps::recall_state_bytes(c, 100), 2 * 2 * 20 * 16 * 4.0);
  // A mixer stack: deltanet's H d² per layer, plus its short convolution's buffer unless
  // model.mixer.short_conv is 0.
  c.model.attention = "deltanet";
  c.model.mixer.heads = 2;
  EXPECT_EQ(apps::recall_state_bytes(c, 100), 2 * (2 * 8 * 8 + 3 * 3 * 16) * 4.0);
  c.model.mixer.short_conv = 0;
  EXPECT_EQ(apps::recall_state_bytes(c, 100), 2 * (2 * 8 * 8) * 4.0);
  c.family = "recurrent";
  c.rnn.cell = "mem_rnn";
  c.rnn.hidden = 8;
  EXPECT_EQ(apps::recall_state_bytes(c, 100), (2 * 8 + 100 * 8) * 4.0);
}

// Every preset resolves, alone and with each task overlay, and every sequence mixer's
// preset (configs/recall/<mixer>_small.yaml) trains a few updates on each of the three tasks.
TEST(RecallCli, EveryPresetRunsOnEveryTask) {
  const std::string root = SEQBENCH_SOURCE_DIR;
  const std::string dir = clitest::fresh_dir("presets");
  const std::vector<std::string> overlays{"", root + "/configs/recall/tasks/selective_copy.yaml",
                                          root + "/configs/recall/tasks/induction.yaml"};
  const std::vector<std::string> mad{"mad_recall",         "mad_fuzzy_recall",
                                     "mad_noisy_recall",   "mad_selective_copy",
                                     "mad_compression",    "mad_memorization"};
  const auto with = [&](const std::string& preset, const std::string& overlay) {
    return " --config " + preset + (overlay.empty() ? "" : " --config " + overlay);
  };
  int presets = 0;
  for (const auto& e : fs::directory_iterator(root + "/configs/recall"))
    if (e.path().extension() == ".yaml") {
      ++presets;
      for (const auto& o : overlays) {
        const auto d = run(kFront + " recall" + with(e.path().string(), o) + " --dump-config", dir);
        EXPECT_EQ(d.code, 0) << e.path() << " + " << o << ": " << d.err;
      }
      for (const auto& t : mad) {
        const std::string o = root + "/configs/recall/tasks/" + t + ".yaml";
        const auto d = run(kFront + " recall" + with(e.path().string(), o) + " --dump-config", dir);
        EXPECT_EQ(d.code, 0) << e.path() << " + " << o << ": " << d.err;
      }
    }
  EXPECT_GE(presets, 15);
  const std::string small =
      " -q --set train.steps=2 --set train.batch=2 --set train.eval_every=2 "
      "--set train.eval_batches=1 --set train.threads=1 --set task.seq_len=24 --out results";
  for (const auto& m : nn::mixer_names())
    for (const auto& o : overlays) {
      const std::string preset = root + "/configs/recall/" + m + "_small.yaml";
      const auto r = run(kFront + " recall" + with(preset, o) + small, dir);
      EXPECT_EQ(r.code, 0) << preset << " + " << o << ": " << r.err;
    }
  const auto runs = report::read_csv(dir + "/results/recall/runs.csv");
  EXPECT_EQ(runs.rows.size(), 3 * nn::mixer_names().size()) << "every mixer on three tasks";
  std::set<std::string> tasks;
  for (size_t i = 0; i < runs.rows.size(); ++i) tasks.insert(runs.rows[i][size_t(runs.col("task"))]);
  EXPECT_EQ(tasks, (std::set<std::string>{"mqar", "selective_copy", "induction"}));
  // MAD's six tasks at their own lengths, on one mixer preset, from a small fixed set.
  const std::string mad_small =
      " -q --set train.steps=2 --set train.batch=2 --set train.eval_every=2 "
      "--set train.eval_batches=1 --set train.threads=1 --set task.train_examples=4 --out mad";
  for (const auto& t : mad) {
    const std::string o = root + "/configs/recall/tasks/" + t + ".yaml";
    const auto r = run(kFront + " recall" + with(root + "/configs/recall/lru_small.yaml", o) + mad_small, dir);
    EXPECT_EQ(r.code, 0) << t << ": " << r.err;
  }
  const auto mad_runs = report::read_csv(dir + "/mad/recall/runs.csv");
  std::set<std::string> mad_tasks;
  for (size_t i = 0; i < mad_runs.rows.size(); ++i)
    mad_tasks.insert(mad_runs.rows[i][size_t(mad_runs.col("task"))]);
  EXPECT_EQ(mad_tasks, std::set<std::string>(mad.begin(), mad.end()));
}

// task.train_examples: training batches come from a fixed set of that many sequences, and
// MAD's recall tasks train on every next token (evaluation scores the recalled values).
TEST(RecallExperiment, FixedTrainingSetAndMadTrainingTargets) {
  const auto rows_seen = [](int64_t train_examples) {
    apps::RecallConfig c;
    c.task.name = "mad_recall";
    c.task.vocab = 16;
    c.task.seq_len = 16;
    c.task.train_examples = train_examples;
    c.model.d_model = 8;
    c.model.d_ff = 8;
    c.train.batch = 8;
    apps::RecallExperiment e(c);
    e.init();
    std::set<std::vector<int32_t>> seen;
    for (int step = 0; step < 5; ++step) {
      e.train_step();
      const data::RecallBatch& b = e.last_batch();
      EXPECT_EQ(b.B, 8);
      for (int64_t r = 0; r < b.B; ++r) {
        const auto* ids = b.ids.data() + r * b.N;
        seen.insert(std::vector<int32_t>(ids, ids + b.N));
        for (int64_t t = 0; t < b.N; ++t)
          EXPECT_EQ(b.mask[size_t(r * b.N + t)], t + 1 < b.N ? 1.f : 0.f) << "every next token";
      }
    }
    return seen.size();
  };
  EXPECT_EQ(rows_seen(3), 3u) << "40 rows drawn from a set of 3";
  EXPECT_EQ(rows_seen(0), 40u) << "fresh sequences every update";
}
