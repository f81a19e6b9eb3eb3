// The Trainer's loop on a fake experiment: a quadratic bowl whose "metric" is the
// distance to the optimum, so every stopping rule can be driven exactly.
#include <gtest/gtest.h>

#include <cmath>

#include "report/csv.hpp"
#include "test_util.hpp"
#include "train/trainer.hpp"

using namespace seqbench;

namespace {

class Bowl : public train::Experiment {
 public:
  explicit Bowl(int n_slots) {
    w_ = &ps_.add("w", core::Shape{2});
    ps_.finalize(n_slots);
    w_->value[0] = 3;
    w_->value[1] = -4;
  }
  core::ParamStore& params() override { return ps_; }
  train::Metrics train_step() override {
    ++calls;
    if (calls == nan_at) return {{"loss", std::nan("")}, {"dist", 0}};
    for (int i = 0; i < 2; ++i) w_->grad[i] += w_->value[i];  // L = |w|^2 / 2
    if (calls == inf_grad_at) w_->grad[1] = INFINITY;
    return {{"loss", 0.5 * sq()}, {"dist", std::sqrt(sq())}};
  }
  train::Metrics evaluate() override {
    const double d = flat ? 1.0 : std::sqrt(sq());
    return {{"loss", 0.5 * d * d}, {"dist", d}};
  }
  std::string metric() const override { return "dist"; }
  bool higher_is_better() const override { return false; }
  std::vector<double> gradnorm_probe() override { return {1.0, 2.0}; }
  void after_update() override {
    if (++after_updates == fail_at)
      throw core::UsageError("stability projection infeasible (test)");
    if (after_updates == poison_at) w_->value[0] = NAN;
  }
  size_t held_bytes() override { return 0; }
  void save_state(train::Checkpoint&) const override {}
  void load_state(const train::Checkpoint&) override {}

  double sq() const { return double(w_->value[0]) * w_->value[0] + double(w_->value[1]) * w_->value[1]; }
  core::Param* w_;
  int calls = 0, nan_at = -1, after_updates = 0, fail_at = -1, inf_grad_at = -1, poison_at = -1;
  bool flat = false;

 private:
  core::ParamStore ps_;
};

struct BowlRun {
  testutil::TempDir dir;
  train::TrainConfig tc;
  optim::OptimConfig oc;
  BowlRun() {
    tc.steps = 20;
    tc.log_every = 5;
    tc.eval_every = 2;
    oc.name = "sgd";
    oc.lr = 0.1;
    oc.clip = 0;
  }
  train::Summary run(Bowl& exp, std::function<void(train::Trainer&)> more = {}) {
    train::RunFiles files(dir.path, "bowl", "r", exp.metric(), false);
    train::Trainer t(tc, oc, exp, files, true);
    if (more) more(t);
    return t.run();
  }
};

}  // namespace

TEST(Trainer, RunsAllUpdatesLogsAndCallsAfterUpdate) {
  BowlRun s;
  s.tc.gradnorm_every = 10;
  Bowl exp(0);
  const auto sum = s.run(exp);
  EXPECT_EQ(sum.status, "finished");
  EXPECT_EQ(sum.updates, 20);
  EXPECT_EQ(exp.after_updates, 20);
  // SGD on |w|^2/2 with lr 0.1 shrinks w by 0.9 per update.
  EXPECT_NEAR(exp.w_->value[0], 3 * std::pow(0.9, 20), 1e-5);
  EXPECT_NEAR(sum.final_metric, 5 * std::pow(0.9, 20), 1e-5);
  const auto m = report::read_csv(s.dir / "bowl/r/metrics.csv");
  int train_rows = 0, valid_rows = 0;
  for (const auto& r : m.rows) (r[1] == "train" ? train_rows : valid_rows)++;
  EXPECT_EQ(train_rows, 4);
  EXPECT_EQ(valid_rows, 10);
  EXPECT_EQ(report::read_csv(s.dir / "bowl/r/gradnorm.csv").rows.size(), 3u * 2u);  // 0, 10, 20
}

TEST(Trainer, StopsAtTargetAndRecordsWhen) {
  BowlRun s;
  s.tc.target = 3.0;  // dist 5 * 0.9^k <= 3 first at k = 5, validated at update 6
  Bowl exp(0);
  const auto sum = s.run(exp);
  EXPECT_EQ(sum.status, "target_reached");
  EXPECT_EQ(sum.updates, 6);
  EXPECT_EQ(sum.updates_to_target, 6);
  EXPECT_LE(sum.final_metric, 3.0);
}

TEST(Trainer, EarlyStopsAfterPatienceValidationsWithoutImprovement) {
  BowlRun s;
  s.tc.patience = 3;
  Bowl exp(0);
  exp.flat = true;  // validation never improves after the first
  const auto sum = s.run(exp);
  EXPECT_EQ(sum.status, "early_stopped");
  EXPECT_EQ(sum.updates, 8);  // best at 2, then 4, 6, 8 are bad
  EXPECT_EQ(sum.best_step, 2);
}

TEST(Trainer, NonFiniteLossStopsWithoutApplyingTheUpdate) {
  BowlRun s;
  Bowl exp(0);
  exp.nan_at = 4;
  const auto sum = s.run(exp);
  EXPECT_EQ(sum.status, "diverged");
  EXPECT_EQ(sum.updates, 3);
  EXPECT_NEAR(exp.w_->value[0], 3 * std::pow(0.9, 3), 1e-6);
  EXPECT_NE(sum.message.find("update 4"), std::string::npos) << sum.message;
  EXPECT_FALSE(std::filesystem::exists(s.dir / "bowl/r/checkpoint.sbck"))
      << "a diverged run must not overwrite the last good checkpoint";
}

TEST(Trainer, DivergenceNamesTheFirstTensorThatIsNotFinite) {
  {  // an infinite gradient with a finite loss
    BowlRun s;
    Bowl exp(0);
    exp.inf_grad_at = 3;
    const auto sum = s.run(exp);
    EXPECT_EQ(sum.status, "diverged");
    EXPECT_EQ(sum.updates, 2);
    EXPECT_NE(sum.message.find("update 3"), std::string::npos) << sum.message;
    EXPECT_NE(sum.message.find("first non-finite: the gradient of w"), std::string::npos) << sum.message;
  }
  {  // a parameter poisoned by an update (an injected NaN): caught right after it
    BowlRun s;
    Bowl exp(0);
    exp.poison_at = 5;
    const auto sum = s.run(exp);
    EXPECT_EQ(sum.status, "diverged");
    EXPECT_NE(sum.message.find("update 5: parameter w is no longer finite"), std::string::npos) << sum.message;
  }
  {  // with the scan off, the next update's loss is where it shows, still naming w
    BowlRun s;
    s.tc.nan_check = 0;
    Bowl exp(0);
    exp.poison_at = 5;
    const auto sum = s.run(exp);
    EXPECT_EQ(sum.status, "diverged");
    EXPECT_NE(sum.message.find("update 6"), std::string::npos) << sum.message;
    EXPECT_NE(sum.message.find("first non-finite: parameter w"), std::string::npos) << sum.message;
  }
}

TEST(Trainer, AnErrorInsideAnUpdateEndsTheRunAsFailedWithASummary) {
  BowlRun s;
  Bowl exp(0);
  exp.fail_at = 5;
  const auto sum = s.run(exp);
  EXPECT_EQ(sum.status, "failed");
  EXPECT_EQ(sum.updates, 4);
  EXPECT_NE(sum.message.find("update 5 failed: stability projection infeasible"), std::string::npos)
      << sum.message;
  EXPECT_EQ(sum.best_step, 4) << "validations before the failure are kept";
  EXPECT_FALSE(std::filesystem::exists(s.dir / "bowl/r/checkpoint.sbck"));
}

TEST(Trainer, ClipsToTheConfiguredNorm) {
  BowlRun s;
  s.oc.clip = 0.5;  // |grad| = |w| = 5 > 0.5, so each step moves w by lr * 0.5
  s.tc.steps = 1;
  Bowl exp(0);
  s.run(exp);
  EXPECT_NEAR(exp.w_->value[0], 3 - 0.1 * 0.5 * 3 / 5, 1e-6);
  EXPECT_NEAR(exp.w_->value[1], -4 + 0.1 * 0.5 * 4 / 5, 1e-6);
}

TEST(Trainer, RefusesAStoreWithTooFewOptimizerSlots) {
  BowlRun s;
  s.oc.name = "adam";  // needs 2 slots
  Bowl exp(0);
  train::RunFiles files(s.dir.path, "bowl", "r", "dist", false);
  EXPECT_THROW(train::Trainer(s.tc, s.oc, exp, files, true), core::Error);
}
