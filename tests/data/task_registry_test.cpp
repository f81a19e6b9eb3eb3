// The task registry (data/tasks.hpp): every entry builds its task, draws a batch of the
// shape its experiment expects, and its metric is computed on that batch; a name the
// experiment does not run fails with the names it does.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "core/check.hpp"
#include "data/recall.hpp"
#include "data/synthetic.hpp"
#include "data/tasks.hpp"

using namespace seqbench;
using data::TaskFamily;
using data::TaskMetric;

namespace {

template <class F>
std::string usage_error(F&& f) {
  try {
    f();
  } catch (const core::UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(TaskRegistry, EachExperimentListsItsTasksInRegistryOrder) {
  EXPECT_EQ(data::task_names(TaskFamily::kCopy),
            (std::vector<std::string>{"copy", "denoise", "adding"}));
  EXPECT_EQ(data::task_names(TaskFamily::kRecall),
            (std::vector<std::string>{"mqar", "selective_copy", "induction", "mad_recall",
                                      "mad_fuzzy_recall", "mad_noisy_recall", "mad_selective_copy",
                                      "mad_compression", "mad_memorization"}));
  EXPECT_EQ(data::task_name_doc(TaskFamily::kCopy), "task: copy | denoise | adding");
  for (const auto& e : data::task_registry()) {
    SCOPED_TRACE(e.name);
    EXPECT_EQ(e.copy != nullptr, e.family == TaskFamily::kCopy);
    EXPECT_EQ(e.recall != nullptr, e.family == TaskFamily::kRecall);
    EXPECT_GT(std::string(e.doc).size(), 20u);
    EXPECT_NE(data::tasks_markdown().find(std::string("| `") + e.name + "` |"), std::string::npos);
  }
}

// The copy experiment's tasks: one-hot inputs (L, B, I), and either classes at every step
// scored by accuracy on the last K steps, or one target read at the last step scored by MSE.
TEST(TaskRegistry, EveryCopyTaskDrawsItsShapeAndItsMetricIsComputed) {
  for (const auto& e : data::task_registry()) {
    if (e.family != TaskFamily::kCopy) continue;
    SCOPED_TRACE(e.name);
    data::TaskConfig cfg;
    cfg.name = e.name;
    cfg.T = 12;
    cfg.copy_len = 3;
    cfg.n_symbols = 4;
    const data::SyntheticTask task(cfg);
    EXPECT_EQ(&task.entry(), &e);
    const int64_t B = e.metric == TaskMetric::kMse ? 20000 : 7;
    core::Rng rng(3);
    data::SeqBatch b;
    task.generate(rng, B, b);
    const int64_t L = task.length(), I = task.input_size(), O = task.output_size();
    ASSERT_EQ(b.L, L);
    ASSERT_EQ(b.B, B);
    ASSERT_EQ(b.x.shape()[0], L);
    ASSERT_EQ(b.x.shape()[1], B);
    ASSERT_EQ(b.x.shape()[2], I);
    ASSERT_EQ(b.labels.size(), size_t(L * B));
    if (e.metric == TaskMetric::kAccuracy) {
      EXPECT_STREQ(data::metric_name(e.metric), "acc");
      EXPECT_TRUE(data::higher_is_better(e.metric));
      EXPECT_TRUE(task.classification());
      EXPECT_EQ(L, cfg.T + 2 * cfg.copy_len);
      // The memoryless predictor (blank, then uniform over the n symbols on the K scored
      // steps) has cross-entropy K ln(n) / L: finite only if every label before the scored
      // steps is blank, and every scored label is a symbol it gives 1/n.
      const int64_t K = task.scored_steps();
      double loss = 0;
      int64_t symbols = 0;
      for (int64_t r = 0; r < L * B; ++r) {
        const int32_t y = b.labels[size_t(r)];
        ASSERT_LT(y, O);
        if (r < (L - K) * B) {
          ASSERT_EQ(y, 0) << "row " << r;
          continue;
        }
        ASSERT_GE(y, 1);
        loss += std::log(double(cfg.n_symbols));
        ++symbols;
      }
      EXPECT_EQ(symbols, K * B);
      EXPECT_NEAR(loss / double(L * B), task.baseline_loss(), 1e-12);
    } else {
      EXPECT_STREQ(data::metric_name(e.metric), "mse");
      EXPECT_FALSE(data::higher_is_better(e.metric));
      EXPECT_FALSE(task.classification());
      ASSERT_EQ(b.target.shape()[0], B);
      ASSERT_EQ(b.target.shape()[1], O);
      // Predicting 1 (the mean of a sum of two U(0,1)) scores the baseline MSE 1/6.
      double mse = 0;
      for (int64_t i = 0; i < B; ++i) mse += std::pow(double(b.target[i]) - 1.0, 2) / double(B);
      EXPECT_NEAR(mse, task.baseline_loss(), 0.01);
    }
  }
}

// The recall experiment's tasks: token ids (B N) with the scored positions masked, scored
// by accuracy; chance is a uniform guess among the tokens a scored position can hold.
TEST(TaskRegistry, EveryRecallTaskDrawsItsShapeAndItsMetricIsComputed) {
  for (const auto& e : data::task_registry()) {
    if (e.family != TaskFamily::kRecall) continue;
    SCOPED_TRACE(e.name);
    data::RecallTaskConfig cfg;
    cfg.name = e.name;
    cfg.vocab = 16;
    cfg.seq_len = 40;
    cfg.n_pairs = 4;
    cfg.n_tokens = 8;
    if (cfg.name == "mad_noisy_recall") {
      cfg.noise_vocab = 4;
      cfg.frac_noise = 0.2;
    }
    const data::RecallTask task(cfg);
    EXPECT_EQ(&task.entry(), &e);
    EXPECT_STREQ(data::metric_name(e.metric), "acc");
    const int64_t B = 2000, N = cfg.seq_len;
    core::Rng rng(5);
    data::RecallBatch b;
    task.generate(rng, B, b);
    ASSERT_EQ(b.B, B);
    ASSERT_EQ(b.N, N);
    ASSERT_EQ(b.ids.size(), size_t(B * N));
    ASSERT_EQ(b.targets.size(), size_t(B * N));
    ASSERT_EQ(b.mask.size(), size_t(B * N));
    int64_t scored = 0;
    std::set<int32_t> answers;
    for (size_t i = 0; i < b.ids.size(); ++i) {
      ASSERT_GE(b.ids[i], 0);
      ASSERT_LT(b.ids[i], cfg.vocab);
      if (b.mask[i] == 0.f) continue;
      ++scored;
      answers.insert(b.targets[i]);
    }
    if (task.scored_per_sequence() > 0)
      EXPECT_EQ(scored, task.scored_per_sequence() * B);
    else  // a count that varies: at least one a sequence, and fewer than its positions
      EXPECT_TRUE(scored >= B && scored < B * N) << scored;
    // Over 2000 sequences every possible answer occurs: as many as a uniform guess picks from.
    EXPECT_EQ(double(answers.size()), std::round(1.0 / task.chance_accuracy()));
  }
}

TEST(TaskRegistry, UnknownNamesFailListingTheExperimentsTasks) {
  EXPECT_EQ(usage_error([] { data::find_task("cpy", TaskFamily::kCopy); }),
            "task.name: unknown task 'cpy' (did you mean 'copy'?; have: copy, denoise, adding)");
  // A task of the other experiment is unknown here, and the message lists this one's.
  data::TaskConfig copy;
  copy.name = "mqar";
  const std::string copy_err = usage_error([&] { data::SyntheticTask t(copy); });
  EXPECT_NE(copy_err.find("unknown task 'mqar'"), std::string::npos) << copy_err;
  EXPECT_NE(copy_err.find("copy, denoise, adding"), std::string::npos) << copy_err;
  data::RecallTaskConfig recall;
  recall.name = "adding";
  const std::string recall_err = usage_error([&] { data::RecallTask t(recall); });
  EXPECT_NE(recall_err.find("task.name"), std::string::npos) << recall_err;
  for (const char* name : {"mqar", "selective_copy", "induction"})
    EXPECT_NE(recall_err.find(name), std::string::npos) << recall_err;
}
