#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "core/check.hpp"
#include "core/param_store.hpp"
#include "optim/optim_config.hpp"
#include "optim/optimizer.hpp"
#include "optim/schedule.hpp"

using namespace seqbench;
using optim::LrSchedule;
using optim::OptimConfig;

namespace {

// The 3-step scenario: two scalar parameters "a", "b" starting at (1, -2) and fixed
// gradients per step (not a function of p, so the numbers can be followed by hand).
// The expected values were worked out from the formulas in optimizer.hpp in double and
// agree to all 17 digits with torch.optim 2.11 run in float64 on the same scenario.
constexpr std::array<std::array<double, 2>, 3> kGrads{{{0.5, -1.0}, {0.25, 2.0}, {-1.0, 0.5}}};
using Trajectory = std::array<std::array<double, 2>, 3>;  // p after steps 1, 2, 3

template <class T>
void expect_trajectory(const OptimConfig& cfg, const Trajectory& want, double tol) {
  core::ParamStoreT<T> ps;
  ps.add("a", core::Shape{1});
  ps.add("b", core::Shape{1});
  auto opt = optim::make_optimizer<T>(cfg);
  ps.finalize(opt->n_slots());
  ps.get("a").value[0] = T(1);
  ps.get("b").value[0] = T(-2);
  for (int s = 0; s < 3; ++s) {
    ps.get("a").grad[0] = T(kGrads[s][0]);
    ps.get("b").grad[0] = T(kGrads[s][1]);
    opt->step(ps, cfg.lr);
    EXPECT_NEAR(ps.get("a").value[0], want[s][0], tol) << cfg.name << " step " << s + 1;
    EXPECT_NEAR(ps.get("b").value[0], want[s][1], tol) << cfg.name << " step " << s + 1;
    // The stored gradient is untouched (weight decay goes into a temporary).
    EXPECT_EQ(ps.get("a").grad[0], T(kGrads[s][0]));
  }
  EXPECT_EQ(opt->steps(), 3);
}

void expect_both(const OptimConfig& cfg, const Trajectory& want) {
  expect_trajectory<double>(cfg, want, 1e-12);
  expect_trajectory<float>(cfg, want, 2e-6);
}

OptimConfig sgd_cfg(double momentum, bool nesterov, double wd) {
  OptimConfig c;
  c.name = "sgd";
  c.lr = 0.1;
  c.momentum = momentum;
  c.nesterov = nesterov;
  c.weight_decay = wd;
  return c;
}

}  // namespace

// ---- SGD ----------------------------------------------------------------------------

TEST(Sgd, PlainThreeSteps) {
  // p -= 0.1 g: (1, -2) -> (0.95, -1.9) -> (0.925, -2.1) -> (1.025, -2.15)
  expect_both(sgd_cfg(0, false, 0), {{{0.95, -1.9}, {0.925, -2.1}, {1.025, -2.15}}});
}

TEST(Sgd, MomentumThreeSteps) {
  // buf1 = g1 = (0.5, -1)                     p1 = (0.95, -1.9)
  // buf2 = 0.9 buf1 + g2 = (0.7, 1.1)          p2 = (0.88, -2.01)
  // buf3 = 0.9 buf2 + g3 = (-0.37, 1.49)       p3 = (0.917, -2.159)
  expect_both(sgd_cfg(0.9, false, 0), {{{0.95, -1.9}, {0.88, -2.01}, {0.917, -2.159}}});
}

TEST(Sgd, NesterovThreeSteps) {
  // step d = g + 0.9 buf with the same bufs as above:
  // d1 = (0.95, -1.9)      p1 = (0.905, -1.81)
  // d2 = (0.88, 2.99)      p2 = (0.817, -2.109)
  // d3 = (-1.333, 1.841)   p3 = (0.9503, -2.2931)
  expect_both(sgd_cfg(0.9, true, 0), {{{0.905, -1.81}, {0.817, -2.109}, {0.9503, -2.2931}}});
}

TEST(Sgd, WeightDecayThreeSteps) {
  // d = g + 0.1 p:  d1 = (0.6, -1.2)           p1 = (0.94, -1.88)
  //                 d2 = (0.344, 1.812)        p2 = (0.9056, -2.0612)
  //                 d3 = (-0.90944, 0.29388)   p3 = (0.996544, -2.090588)
  expect_both(sgd_cfg(0, false, 0.1), {{{0.94, -1.88}, {0.9056, -2.0612}, {0.996544, -2.090588}}});
}

TEST(Sgd, NesterovWithWeightDecayThreeSteps) {
  // d1 = (0.6, -1.2), buf1 = d1, step = d1 + 0.9 buf1 = (1.14, -2.28)  p1 = (0.886, -1.772)
  expect_both(sgd_cfg(0.9, true, 0.1),
              {{{0.886, -1.772}, {0.773066, -2.021132}, {0.877211146, -2.137897292}}});
}

// ---- RMSprop ------------------------------------------------------------------------

namespace {
OptimConfig rms_cfg(double momentum, double wd) {
  OptimConfig c;
  c.name = "rmsprop";
  c.lr = 0.01;
  c.alpha = 0.99;
  c.eps = 1e-8;
  c.momentum = momentum;
  c.weight_decay = wd;
  return c;
}
}  // namespace

TEST(RmsProp, ThreeSteps) {
  // Step 1 by hand: sq = 0.01 g^2, so sqrt(sq) = 0.1 |g| and
  // p_a = 1 - 0.01 * 0.5 / (0.05 + 1e-8) = 0.900000019999996,
  // p_b = -2 + 0.01 * 1 / (0.1 + 1e-8)   = -1.900000009999999.
  // Step 2, a: sq = 0.99 * 0.0025 + 0.01 * 0.0625 = 0.0031, p -= 0.01 * 0.25 / sqrt(0.0031).
  expect_both(rms_cfg(0, 0), {{{0.90000001999999601, -1.900000009999999},
                               {0.85509870255781695, -1.989532302199152},
                               {0.94257266160713249, -2.0114796538632551}}});
}

TEST(RmsProp, MomentumThreeSteps) {
  // Step 1 equals plain RMSprop (buf = g / (sqrt(sq) + eps)); step 2 adds 0.9 buf1.
  expect_both(rms_cfg(0.9, 0), {{{0.90000001999999601, -1.900000009999999},
                                 {0.76509872055781347, -1.8995323111991513},
                                 {0.73116151010916475, -1.9210587339424916}}});
}

TEST(RmsProp, WeightDecayThreeSteps) {
  // Step 1: d = g + 0.1 p = (0.6, -1.2); p -= 0.01 d / (0.1 |d| + eps).
  expect_both(rms_cfg(0, 0.1), {{{0.90000001666666396, -1.9000000083333326},
                                 {0.85051111035901028, -1.9834739838055073},
                                 {0.93062161942524346, -1.9973210559244479}}});
}

// ---- Adam ---------------------------------------------------------------------------

namespace {
OptimConfig adam_cfg(double wd) {
  OptimConfig c;
  c.name = "adam";
  c.lr = 0.1;
  c.beta1 = 0.9;
  c.beta2 = 0.999;
  c.eps = 1e-8;
  c.weight_decay = wd;
  return c;
}
}  // namespace

TEST(Adam, ThreeStepsWithBiasCorrection) {
  // Step 1: m/(1-0.9) = g and v/(1-0.999) = g^2, so p -= 0.1 g / (|g| + 1e-8):
  //   p_a = 1 - 0.1 * 0.5 / 0.50000001 = 0.900000002, p_b = -1.900000001.
  // Step 2, a: m = 0.9*0.05 + 0.1*0.25 = 0.07, v = 0.999*0.00025 + 0.001*0.0625 = 0.00031225,
  //   p -= 0.1/(1 - 0.9^2) * m / (sqrt(v)/sqrt(1 - 0.999^2) + 1e-8) = 0.80678204047746238.
  expect_both(adam_cfg(0), {{{0.90000000199999997, -1.900000001},
                             {0.80678204047746238, -1.9366103534720749},
                             {0.82741774288541148, -1.9781754731467738}}});
}

TEST(Adam, WeightDecayThreeSteps) {
  expect_both(adam_cfg(0.1), {{{0.9000000016666666, -1.9000000008333333},
                               {0.80500976586131989, -1.9250178784643248},
                               {0.81209826077867719, -1.9531272706914879}}});
}

TEST(Adam, SetStepsContinuesBiasCorrectionExactly) {
  // What --resume does: values, slots and steps() restored into a fresh optimizer.
  OptimConfig cfg = adam_cfg(0);
  core::ParamStoreT<double> a, b;
  a.add("w", core::Shape{2});
  b.add("w", core::Shape{2});
  auto oa = optim::make_optimizer<double>(cfg);
  auto ob = optim::make_optimizer<double>(cfg);
  a.finalize(oa->n_slots());
  b.finalize(ob->n_slots());
  a.values()[0] = 1;
  a.values()[1] = -2;
  for (int s = 0; s < 2; ++s) {
    a.grads()[0] = kGrads[s][0];
    a.grads()[1] = kGrads[s][1];
    oa->step(a, cfg.lr);
  }
  for (int i = 0; i < 2; ++i) {
    b.values()[i] = a.values()[i];
    b.slot(0)[i] = a.slot(0)[i];
    b.slot(1)[i] = a.slot(1)[i];
  }
  ob->set_steps(oa->steps());
  for (auto* ps : {&a, &b}) {
    ps->grads()[0] = kGrads[2][0];
    ps->grads()[1] = kGrads[2][1];
  }
  oa->step(a, cfg.lr);
  ob->step(b, cfg.lr);
  EXPECT_EQ(b.values()[0], a.values()[0]);
  EXPECT_EQ(b.values()[1], a.values()[1]);
  EXPECT_DOUBLE_EQ(a.values()[0], 0.82741774288541148);
  EXPECT_THROW(ob->set_steps(-1), core::Error);
}

// ---- factory, slots, config checks --------------------------------------------------

TEST(MakeOptimizer, NamesAndSlotCounts) {
  struct Case {
    const char* name;
    double momentum;
    bool nesterov;
    int slots;
  };
  for (const Case& c :
       {Case{"sgd", 0, false, 0}, Case{"sgd", 0.9, false, 1}, Case{"sgd", 0.9, true, 1},
        Case{"rmsprop", 0, false, 1}, Case{"rmsprop", 0.5, false, 2}, Case{"adam", 0, false, 2}}) {
    OptimConfig cfg;
    cfg.name = c.name;
    cfg.momentum = c.momentum;
    cfg.nesterov = c.nesterov;
    auto f = optim::make_optimizer<float>(cfg);
    auto d = optim::make_optimizer<double>(cfg);
    EXPECT_EQ(f->name(), c.name);
    EXPECT_EQ(d->name(), c.name);
    EXPECT_EQ(f->n_slots(), c.slots) << c.name << " momentum " << c.momentum;
    EXPECT_EQ(f->steps(), 0);
  }
  // The defaults are the paper's copy/pMNIST setting.
  EXPECT_EQ(optim::make_optimizer<float>(OptimConfig{})->name(), "rmsprop");
}

TEST(MakeOptimizer, AcceptsEdgeValuesOfEveryRange) {
  OptimConfig cfg;
  cfg.alpha = 0;
  cfg.momentum = 0.999;
  cfg.eps = 1e-30;
  cfg.clip = 0;
  cfg.weight_decay = 0;
  cfg.schedule.kind = "plateau";
  cfg.schedule.patience = 0;
  cfg.schedule.factor = 1;
  cfg.schedule.gamma = 1;
  cfg.schedule.step_size = 1;
  cfg.schedule.min_lr = cfg.lr;
  EXPECT_NO_THROW(optim::make_optimizer<float>(cfg));
  EXPECT_NO_THROW(LrSchedule{cfg});
  cfg.name = "adam";
  cfg.momentum = 0;
  cfg.beta1 = 0;
  cfg.beta2 = 0;
  EXPECT_NO_THROW(optim::make_optimizer<double>(cfg));
}

TEST(MakeOptimizer, RejectsBadConfigsWithUsageErrorNamingTheKey) {
  struct Case {
    void (*edit)(OptimConfig&);
    const char* key;
  };
  const Case cases[] = {
      {[](OptimConfig& c) { c.name = "adamw"; }, "optim.name"},
      {[](OptimConfig& c) { c.lr = 0; }, "optim.lr"},
      {[](OptimConfig& c) { c.momentum = 1; }, "optim.momentum"},
      {[](OptimConfig& c) { c.alpha = 1; }, "optim.alpha"},
      {[](OptimConfig& c) { c.beta2 = -0.1; }, "optim.beta2"},
      {[](OptimConfig& c) { c.eps = 0; }, "optim.eps"},
      {[](OptimConfig& c) { c.weight_decay = -1; }, "optim.weight_decay"},
      {[](OptimConfig& c) { c.clip = -1; }, "optim.clip"},
      {[](OptimConfig& c) { c.nesterov = true; }, "optim.nesterov"},                  // rmsprop
      {[](OptimConfig& c) { c.name = "sgd", c.nesterov = true; }, "optim.nesterov"},  // μ = 0
      {[](OptimConfig& c) { c.name = "adam", c.momentum = 0.9; }, "optim.momentum"},
      {[](OptimConfig& c) { c.schedule.kind = "cosine"; }, "optim.schedule.kind"},
      {[](OptimConfig& c) { c.schedule.step_size = 0; }, "optim.schedule.step_size"},
      {[](OptimConfig& c) { c.schedule.gamma = 0; }, "optim.schedule.gamma"},
      {[](OptimConfig& c) { c.schedule.patience = -1; }, "optim.schedule.patience"},
      {[](OptimConfig& c) { c.schedule.factor = 1.5; }, "optim.schedule.factor"},
      {[](OptimConfig& c) { c.schedule.min_lr = 1.0; }, "optim.schedule.min_lr"},
  };
  for (const Case& c : cases) {
    OptimConfig cfg;
    c.edit(cfg);
    try {
      optim::make_optimizer<float>(cfg);
      ADD_FAILURE() << "accepted a bad " << c.key;
    } catch (const core::UsageError& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find(c.key), std::string::npos) << msg;
      EXPECT_NE(msg.find("hint"), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      EXPECT_EQ(e.exit_code(), core::kExitUsage);
    }
    EXPECT_THROW(LrSchedule{cfg}, core::UsageError) << c.key;
  }
}

TEST(Optimizer, StepRefusesAStoreWithTooFewSlots) {
  OptimConfig cfg;  // rmsprop: one slot
  auto opt = optim::make_optimizer<float>(cfg);
  core::ParamStore ps;
  ps.add("w", core::Shape{3});
  ps.finalize(0);
  EXPECT_THROW(opt->step(ps, cfg.lr), core::Error);
  core::ParamStore unfinalized;
  unfinalized.add("w", core::Shape{3});
  EXPECT_THROW(opt->step(unfinalized, cfg.lr), core::Error);
  EXPECT_EQ(opt->steps(), 0);
}

namespace {
// A visitor of the shape the config layer uses; it accepts any constraint type.
struct KeyRecorder {
  std::string prefix;
  std::vector<std::string> seen;
  template <class K, class F, class C>
  void operator()(const K& key, F&, const char* help, const C&) {
    EXPECT_GT(std::string(help).size(), 5u) << key;
    seen.push_back(prefix + key);
  }
  template <class K, class S>
  void operator()(const K& key, S& nested, const char* help) {
    EXPECT_GT(std::string(help).size(), 5u) << key;
    KeyRecorder inner{prefix + key + ".", {}};
    nested.visit(inner);
    seen.insert(seen.end(), inner.seen.begin(), inner.seen.end());
  }
};
}  // namespace

TEST(OptimConfig, VisitListsEveryKeyOnceWithHelp) {
  OptimConfig cfg;
  KeyRecorder keys;
  cfg.visit(keys);
  const std::vector<std::string> want = {"name",
                                         "lr",
                                         "momentum",
                                         "nesterov",
                                         "alpha",
                                         "beta1",
                                         "beta2",
                                         "eps",
                                         "weight_decay",
                                         "clip",
                                         "schedule.kind",
                                         "schedule.step_size",
                                         "schedule.gamma",
                                         "schedule.patience",
                                         "schedule.factor",
                                         "schedule.min_lr"};
  EXPECT_EQ(keys.seen, want);
}

// ---- clipping -----------------------------------------------------------------------

namespace {
template <class T>
void fill_grads(core::ParamStoreT<T>& ps, std::vector<double> g) {
  for (size_t i = 0; i < g.size(); ++i) ps.grads()[i] = T(g[i]);
}
}  // namespace

TEST(Clip, ScalesToMaxNormAndReturnsTheNormBefore) {
  core::ParamStoreT<double> ps;
  ps.add("a", core::Shape{1});
  ps.add("b", core::Shape{1});
  ps.finalize(0);
  fill_grads(ps, {3, 4});  // norm 5 across two parameters
  EXPECT_DOUBLE_EQ(optim::grad_norm(ps), 5.0);
  EXPECT_DOUBLE_EQ(optim::clip_grad_norm(ps, 1.0), 5.0);
  EXPECT_NEAR(optim::grad_norm(ps), 1.0, 1e-15);
  EXPECT_NEAR(ps.grads()[0], 0.6, 1e-15);  // direction kept
  EXPECT_NEAR(ps.grads()[1], 0.8, 1e-15);
}

TEST(Clip, FloatStoreIsClippedToo) {
  core::ParamStore ps;
  ps.add("w", core::Shape{2, 2});
  ps.finalize(0);
  fill_grads(ps, {1, 1, 1, 1});  // norm 2
  EXPECT_DOUBLE_EQ(optim::clip_grad_norm(ps, 0.5), 2.0);
  EXPECT_NEAR(optim::grad_norm(ps), 0.5, 1e-7);
}

TEST(Clip, NoOpAtOrBelowTheThresholdAndWhenOff) {
  core::ParamStoreT<double> ps;
  ps.add("w", core::Shape{2});
  ps.finalize(0);
  for (double max_norm : {10.0, 5.0, 0.0}) {  // above, equal, off
    fill_grads(ps, {3, 4});
    EXPECT_DOUBLE_EQ(optim::clip_grad_norm(ps, max_norm), 5.0);
    EXPECT_EQ(ps.grads()[0], 3.0) << max_norm;
    EXPECT_EQ(ps.grads()[1], 4.0) << max_norm;
  }
  EXPECT_THROW(optim::clip_grad_norm(ps, -1.0), core::Error);
}

TEST(Clip, NonFiniteNormIsReturnedAndGradientsLeftAlone) {
  core::ParamStoreT<double> ps;
  ps.add("w", core::Shape{2});
  ps.finalize(0);
  fill_grads(ps, {std::numeric_limits<double>::quiet_NaN(), 4});
  EXPECT_TRUE(std::isnan(optim::clip_grad_norm(ps, 1.0)));
  EXPECT_EQ(ps.grads()[1], 4.0);
  fill_grads(ps, {std::numeric_limits<double>::infinity(), 4});
  EXPECT_TRUE(std::isinf(optim::clip_grad_norm(ps, 1.0)));
  EXPECT_EQ(ps.grads()[1], 4.0);
}

// ---- schedules ----------------------------------------------------------------------

TEST(LrSchedule, NoneIsConstantAndIgnoresEvals) {
  OptimConfig cfg;
  cfg.lr = 0.01;
  LrSchedule s(cfg);
  for (int i = 0; i < 20; ++i) s.on_eval(1.0, false);  // never improves
  EXPECT_EQ(s.lr(0), 0.01);
  EXPECT_EQ(s.lr(1000000), 0.01);
  EXPECT_EQ(s.state().scale, 1.0);
}

TEST(LrSchedule, StepDecaysExactlyAtMultiplesOfStepSize) {
  OptimConfig cfg;
  cfg.lr = 1.0;
  cfg.schedule.kind = "step";
  cfg.schedule.step_size = 10;
  cfg.schedule.gamma = 0.5;
  LrSchedule s(cfg);
  EXPECT_EQ(s.lr(0), 1.0);
  EXPECT_EQ(s.lr(9), 1.0);
  EXPECT_EQ(s.lr(10), 0.5);
  EXPECT_EQ(s.lr(19), 0.5);
  EXPECT_EQ(s.lr(20), 0.25);
  EXPECT_EQ(s.lr(35), 0.125);
  EXPECT_THROW(s.lr(-1), core::Error);

  cfg.schedule.min_lr = 0.3;  // floor
  LrSchedule f(cfg);
  EXPECT_EQ(f.lr(10), 0.5);
  EXPECT_EQ(f.lr(20), 0.3);
  EXPECT_EQ(f.lr(1000), 0.3);
}

namespace {
OptimConfig plateau_cfg(int64_t patience, double factor, double min_lr) {
  OptimConfig cfg;
  cfg.lr = 1.0;
  cfg.schedule.kind = "plateau";
  cfg.schedule.patience = patience;
  cfg.schedule.factor = factor;
  cfg.schedule.min_lr = min_lr;
  return cfg;
}
}  // namespace

TEST(LrSchedule, PlateauDecaysOnTheBadEvalAfterPatience) {
  LrSchedule s(plateau_cfg(2, 0.5, 0));
  s.on_eval(1.0, false);  // first: best
  s.on_eval(1.0, false);  // equal is not better: bad 1
  s.on_eval(1.5, false);  // bad 2 = patience, still tolerated
  EXPECT_EQ(s.lr(100), 1.0);
  EXPECT_EQ(s.state().bad, 2);
  s.on_eval(2.0, false);  // bad 3 > patience: decay, count restarts
  EXPECT_EQ(s.lr(100), 0.5);
  EXPECT_EQ(s.state().bad, 0);
  s.on_eval(0.9, false);  // improvement: new best
  EXPECT_EQ(s.state().best, 0.9);
  s.on_eval(1.0, false);
  s.on_eval(1.0, false);
  s.on_eval(0.95, false);  // still worse than 0.9: third bad in a row
  EXPECT_EQ(s.lr(0), 0.25);
}

TEST(LrSchedule, PlateauHigherIsBetterAndPatienceZero) {
  LrSchedule s(plateau_cfg(0, 0.25, 0));
  s.on_eval(0.5, true);
  s.on_eval(0.6, true);  // better accuracy: no decay
  EXPECT_EQ(s.lr(0), 1.0);
  s.on_eval(0.55, true);  // patience 0: every bad eval decays (÷4, the word-LM recipe)
  EXPECT_EQ(s.lr(0), 0.25);
  s.on_eval(0.6, true);  // equal: bad
  EXPECT_EQ(s.lr(0), 0.0625);
}

TEST(LrSchedule, PlateauRespectsMinLr) {
  LrSchedule s(plateau_cfg(0, 0.1, 0.05));
  s.on_eval(1.0, false);
  s.on_eval(2.0, false);
  EXPECT_DOUBLE_EQ(s.lr(0), 0.1);
  s.on_eval(2.0, false);
  EXPECT_DOUBLE_EQ(s.lr(0), 0.05);
  s.on_eval(2.0, false);
  EXPECT_DOUBLE_EQ(s.lr(0), 0.05);
  EXPECT_DOUBLE_EQ(s.state().scale, 0.05);  // clamped, not 0.001
}

TEST(LrSchedule, PlateauNanCountsAsBad) {
  LrSchedule s(plateau_cfg(0, 0.5, 0));
  s.on_eval(std::numeric_limits<double>::quiet_NaN(), false);
  EXPECT_FALSE(s.state().has_best);
  EXPECT_EQ(s.lr(0), 0.5);
  s.on_eval(3.0, false);
  s.on_eval(std::numeric_limits<double>::quiet_NaN(), false);
  EXPECT_EQ(s.state().best, 3.0);
  EXPECT_EQ(s.lr(0), 0.25);
}

TEST(LrSchedule, StateRoundTripsIntoAFreshSchedule) {
  const OptimConfig cfg = plateau_cfg(1, 0.5, 0);
  LrSchedule a(cfg);
  for (double m : {1.0, 0.8, 0.9, 0.85, 0.9}) a.on_eval(m, false);
  const LrSchedule::State st = a.state();
  EXPECT_EQ(st.scale, 0.5);
  EXPECT_EQ(st.best, 0.8);
  EXPECT_TRUE(st.has_best);
  EXPECT_EQ(st.bad, 1);

  LrSchedule b(cfg);
  b.set_state(st);
  EXPECT_EQ(b.lr(7), a.lr(7));
  // The restored bad count matters: one more bad eval decays both.
  a.on_eval(0.9, false);
  b.on_eval(0.9, false);
  EXPECT_EQ(a.lr(0), 0.25);
  EXPECT_EQ(b.lr(0), 0.25);
  EXPECT_EQ(b.state().bad, a.state().bad);

  LrSchedule::State bad_state;
  bad_state.scale = 2.0;
  EXPECT_THROW(b.set_state(bad_state), core::Error);
}

// ---- convergence --------------------------------------------------------------------

namespace {
// f(p) = 1/2 sum_i c_i (p_i - t_i)^2 with curvatures 0.1 .. 10 (condition number 100).
double quadratic_run(const OptimConfig& cfg, int steps) {
  const int n = 8;
  core::ParamStoreT<double> ps;
  ps.add("w", core::Shape{n});
  auto opt = optim::make_optimizer<double>(cfg);
  ps.finalize(opt->n_slots());
  auto curv = [](int i) { return std::pow(10.0, -1.0 + 2.0 * i / 7.0); };
  auto target = [](int i) { return 0.5 * i - 1.5; };
  auto loss = [&] {
    double f = 0;
    for (int i = 0; i < n; ++i) f += 0.5 * curv(i) * std::pow(ps.values()[i] - target(i), 2);
    return f;
  };
  const double f0 = loss();
  LrSchedule sched(cfg);
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < n; ++i) ps.grads()[i] = curv(i) * (ps.values()[i] - target(i));
    optim::clip_grad_norm(ps, cfg.clip);
    opt->step(ps, sched.lr(s));
  }
  return loss() / f0;
}
}  // namespace

// Each run prints its final loss ratio against the 1e-6 bound: the margin docs/testing.md
// records for the learning tests.
static double report_ratio(const char* what, double ratio) {
  std::printf("[ margin   ] %s: loss ratio %.3g (bound 1e-6)\n", what, ratio);
  return ratio;
}

TEST(Convergence, AdamAndRmsPropMinimiseAQuadratic) {
  OptimConfig adam;
  adam.name = "adam";
  adam.lr = 0.05;
  adam.clip = 0;
  adam.schedule.kind = "step";
  adam.schedule.step_size = 500;
  adam.schedule.gamma = 0.1;
  EXPECT_LT(report_ratio("adam", quadratic_run(adam, 1500)), 1e-6);

  OptimConfig rms;  // defaults: rmsprop, alpha 0.99, clip 1
  rms.lr = 0.01;
  rms.schedule = adam.schedule;
  EXPECT_LT(report_ratio("rmsprop", quadratic_run(rms, 1500)), 1e-6);

  rms.momentum = 0.9;
  rms.lr = 0.002;
  EXPECT_LT(report_ratio("rmsprop + momentum", quadratic_run(rms, 1500)), 1e-6);
}
