// PPO (lib/rl/ppo): GAE against a hand computation, the loss and its gradient, per-episode
// memory resets (the official code's reset-everything bug is absent), the epoch/chunk
// schedule, seeding and an exact save/load of the training state.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/state.hpp"
#include "gradcheck.hpp"
#include "rl/minigrid/envs.hpp"
#include "rl/ppo.hpp"
#include "test_util.hpp"

using namespace seqbench;

TEST(Gae, MatchesHandComputation) {
  // F = 3 steps, P = 2 environments; environment 1's episode ends after step 0 (mask 0 at
  // step 1), and environment 0's after the last step (next_mask 0).
  const double g = 0.9, l = 0.5;
  const std::vector<double> r{1, 0, 0, 2, 3, 1};           // (t, p)
  const std::vector<double> v{0.5, 0.2, 0.4, 0.1, 0.3, 0.6};
  const std::vector<double> m{1, 1, 1, 0, 1, 1};
  const std::vector<double> nv{0.7, 0.8}, nm{0, 1};
  std::vector<double> adv(6), ret(6);
  rl::compute_gae<double>(3, 2, r.data(), v.data(), m.data(), nv.data(), nm.data(), g, l,
                          adv.data(), ret.data());
  // Environment 0: t = 2 -> δ = 3 + 0.9·0.7·0 − 0.3 = 2.7, A = 2.7
  //                t = 1 -> δ = 0 + 0.9·0.3·1 − 0.4 = −0.13, A = −0.13 + 0.45·2.7 = 1.085
  //                t = 0 -> δ = 1 + 0.9·0.4 − 0.5 = 0.86,   A = 0.86 + 0.45·1.085 = 1.34825
  // Environment 1: t = 2 -> δ = 1 + 0.9·0.8·1 − 0.6 = 1.12, A = 1.12
  //                t = 1 -> δ = 2 + 0.9·0.6 − 0.1 = 2.44,   A = 2.44 + 0.45·1.12 = 2.944
  //                t = 0 -> mask at t = 1 is 0: δ = 0 − 0.2 = −0.2, A = −0.2
  const std::vector<double> want{1.34825, -0.2, 1.085, 2.944, 2.7, 1.12};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_NEAR(adv[i], want[i], 1e-12) << i;
    EXPECT_NEAR(ret[i], v[i] + want[i], 1e-12) << i;
  }
}

TEST(PpoLoss, KnownValuesAtTheStart) {
  // Uniform policy, the action's old log-probability equal to the new: ratio 1.
  const int64_t A = 7;
  std::vector<double> logits(A, 0.0), dlogits(A);
  const double old_logp = -std::log(7.0), v = 0.5, v_old = 0.5, adv = 2.0, ret = 1.5;
  const int32_t a = 3;
  double dv = 0;
  const rl::PpoLoss out = rl::ppo_loss<double>(1, A, logits.data(), &v, &a, &old_logp, &v_old,
                                               &adv, &ret, 0.2, 0.01, 0.5, dlogits.data(), &dv);
  EXPECT_NEAR(out.policy_loss, -2.0, 1e-12);
  EXPECT_NEAR(out.entropy, std::log(7.0), 1e-12);
  EXPECT_NEAR(out.value_loss, 1.0, 1e-12);
  EXPECT_NEAR(out.loss, -2.0 - 0.01 * std::log(7.0) + 0.5, 1e-12);
  EXPECT_NEAR(out.approx_kl, 0.0, 1e-12);
  EXPECT_EQ(out.clip_fraction, 0.0);
  // d/dz_j of −A log π(a) at the uniform policy: −A (1[j = a] − 1/7); the entropy's
  // gradient vanishes at its maximum.
  for (int64_t j = 0; j < A; ++j) EXPECT_NEAR(dlogits[size_t(j)], -2.0 * ((j == a) - 1.0 / 7), 1e-12);
  EXPECT_NEAR(dv, 0.5 * 2.0 * (0.5 - 1.5), 1e-12);
}

TEST(PpoLoss, GradientMatchesFiniteDifferencesOnEveryBranch) {
  const int64_t n = 8, A = 7;
  core::Rng rng(11);
  std::vector<double> logits(size_t(n * A)), values(n), old_logp(n), old_v(n), adv(n), ret(n);
  std::vector<int32_t> act(n);
  gradcheck::fill_normal(rng, logits.data(), n * A);
  for (int64_t i = 0; i < n; ++i) {
    act[size_t(i)] = static_cast<int32_t>(rng.randint(A));
    std::vector<double> lp(A);
    rl::log_softmax<double>(1, A, logits.data() + i * A, lp.data());
    // Ratios spread inside and well outside the clip range 1 ± 0.2.
    const double ratios[] = {1.0, 1.1, 0.85, 1.6, 0.5, 1.05, 2.0, 0.3};
    old_logp[size_t(i)] = lp[size_t(act[size_t(i)])] - std::log(ratios[i]);
    adv[size_t(i)] = (i % 2 ? 1.0 : -1.0) * (0.5 + rng.uniform());
    old_v[size_t(i)] = rng.normal();
    values[size_t(i)] = old_v[size_t(i)] + (i % 3 == 0 ? 0.05 : (i % 3 == 1 ? 0.6 : -0.7));
    ret[size_t(i)] = rng.normal();
  }
  std::vector<double> dlogits(logits.size()), dvalues(n);
  auto f = [&] {
    return rl::ppo_loss<double>(n, A, logits.data(), values.data(), act.data(), old_logp.data(),
                                old_v.data(), adv.data(), ret.data(), 0.2, 0.01, 0.5, nullptr,
                                nullptr)
        .loss;
  };
  const rl::PpoLoss out =
      rl::ppo_loss<double>(n, A, logits.data(), values.data(), act.data(), old_logp.data(),
                           old_v.data(), adv.data(), ret.data(), 0.2, 0.01, 0.5, dlogits.data(),
                           dvalues.data());
  EXPECT_GT(out.clip_fraction, 0.4);
  gradcheck::expect_gradient("dlogits", logits.data(), dlogits.data(), n * A, f);
  gradcheck::expect_gradient("dvalues", values.data(), dvalues.data(), n, f);
}

// ---------------------------------------------------------------------------------------

namespace {

// Empty-5x5 whose episode ends (terminated, reward 0) after `k` steps.
class EndsAfter : public rl::EmptyEnv {
 public:
  explicit EndsAfter(int k) : rl::EmptyEnv("Empty-5x5", 5, 0), k_(k) {}
  rl::StepResult step(rl::Action a) override {
    rl::StepResult r = rl::EmptyEnv::step(a);
    if (step_count() >= k_) r.done = r.terminated = true;
    return r;
  }

 private:
  int k_;
};

rl::AgentConfig lstm_agent(int64_t hidden = 16) {
  rl::AgentConfig a;
  a.core = "lstm";
  a.hidden = hidden;
  return a;
}

rl::PpoConfig small_ppo() {
  rl::PpoConfig c;
  c.procs = 3;
  c.frames_per_proc = 8;
  c.recurrence = 4;
  c.batch = 8;
  c.epochs = 2;
  return c;
}

std::vector<std::unique_ptr<rl::Env>> envs_of(const std::string& name, int64_t n) {
  std::vector<std::unique_ptr<rl::Env>> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(rl::make_env(name, 0));
  return v;
}

struct Agent {
  core::ParamStore ps;
  std::unique_ptr<rl::Policy> policy;
  Agent(const rl::AgentConfig& a, int64_t window, uint64_t seed) {
    policy = std::make_unique<rl::Policy>(ps, a, false, window);
    ps.finalize(0);
    core::Rng rng(seed);
    policy->init(rng);
  }
};

}  // namespace

TEST(PpoMemory, AnEpisodeEndInOneEnvironmentLeavesTheOthersMemoryIntact) {
  rl::PpoConfig cfg = small_ppo();
  cfg.frames_per_proc = 4;
  cfg.batch = 4;
  Agent a(lstm_agent(), cfg.recurrence, 1), b(lstm_agent(), cfg.recurrence, 1);
  std::vector<std::unique_ptr<rl::Env>> with_end;
  with_end.push_back(rl::make_env("Empty-5x5", 0));
  with_end.push_back(std::make_unique<EndsAfter>(2));  // ends after step 1 of the rollout
  with_end.push_back(rl::make_env("Empty-5x5", 0));
  rl::Ppo pa(cfg, std::move(with_end), *a.policy, 5);
  rl::Ppo pb(cfg, envs_of("Empty-5x5", 3), *b.policy, 5);
  pa.collect();
  pb.collect();
  const int64_t P = 3, M = a.policy->memory_size();
  // Masks: only environment 1 at step 2.
  for (int64_t t = 0; t < 4; ++t)
    for (int64_t p = 0; p < P; ++p)
      EXPECT_EQ(pa.rollout_mask()[size_t(t * P + p)], (t == 2 && p == 1) ? 0.f : 1.f) << t << "," << p;
  // Memories before steps 2 and 3 and after the last: environments 0 and 2 are exactly
  // what they are in the run where nothing ended, and not a fresh memory.
  const auto row = [&](const std::vector<float>& v, int64_t t, int64_t p) {
    return std::vector<float>(v.begin() + (t * P + p) * M, v.begin() + (t * P + p + 1) * M);
  };
  for (int64_t t : {2, 3})
    for (int64_t p : {0, 2}) {
      EXPECT_EQ(row(pa.rollout_memory(), t, p), row(pb.rollout_memory(), t, p)) << t << "," << p;
      double norm = 0;
      for (float x : row(pa.rollout_memory(), t, p)) norm += std::abs(x);
      EXPECT_GT(norm, 0.0);
    }
  for (int64_t p : {0, 2})
    EXPECT_EQ(std::vector<float>(pa.memory().begin() + p * M, pa.memory().begin() + (p + 1) * M),
              std::vector<float>(pb.memory().begin() + p * M, pb.memory().begin() + (p + 1) * M));
  // Environment 1 restarted: its memory after step 2 is the memory of a fresh start, which
  // differs from the run where it went on.
  EXPECT_NE(row(pa.rollout_memory(), 3, 1), row(pb.rollout_memory(), 3, 1));
  EXPECT_EQ(pa.episodes(), 2);  // it ended again after step 3
  EXPECT_EQ(pb.episodes(), 0);
}

TEST(PpoSchedule, MinibatchesPerUpdateAlternateShiftedEpochs) {
  rl::PpoConfig cfg;  // the paper's settings: 16 × 128 frames, batch 256, recurrence 16
  Agent a(lstm_agent(8), cfg.recurrence, 1);
  rl::Ppo ppo(cfg, envs_of("Empty-5x5", 16), *a.policy, 1);
  // 128 chunks of 16 frames: 8 minibatches; shifted epochs drop each environment's last
  // chunk: 112 chunks, 7 minibatches. Epochs alternate 0, 1, 0, 1.
  EXPECT_EQ(ppo.minibatches_in_update(0), 8 + 7 + 8 + 7);
  rl::AgentConfig rel = lstm_agent(8);
  rel.core = "rel_lstm";
  Agent r(rel, cfg.recurrence, 1);
  rl::Ppo rppo(cfg, envs_of("Empty-5x5", 16), *r.policy, 1);
  EXPECT_EQ(rppo.minibatches_in_update(0), 32) << "rel_lstm trains on aligned chunks only";

  rl::PpoConfig small = small_ppo();  // 3 × 8 frames, chunks of 4: 6, shifted 3; 2 per batch
  Agent s(lstm_agent(), small.recurrence, 1);
  rl::Ppo sp(small, envs_of("Empty-5x5", 3), *s.policy, 1);
  ASSERT_EQ(sp.minibatches_in_update(0), 3 + 2);
  for (int u = 0; u < 2; ++u)
    for (int64_t k = 0; k < 5; ++k) {
      s.ps.zero_grad();
      const rl::Ppo::Step st = sp.train_minibatch();
      EXPECT_EQ(st.collected, k == 0);
      EXPECT_EQ(st.update_done, k == 4);
      EXPECT_TRUE(std::isfinite(st.loss.loss));
    }
  EXPECT_EQ(sp.rollouts(), 2);
  EXPECT_EQ(sp.frames(), 2 * 3 * 8);
  EXPECT_EQ(sp.update_stats().minibatches, 5);
}

TEST(PpoConfig, RejectsSettingsItCannotRun) {
  rl::PpoConfig c;
  c.recurrence = 5;  // does not divide 128
  EXPECT_THROW(rl::check_rules(c, true), core::UsageError);
  c = rl::PpoConfig{};
  c.batch = 250;
  EXPECT_THROW(rl::check_rules(c, true), core::UsageError);
  c = rl::PpoConfig{};
  EXPECT_THROW(rl::check_rules(c, false), core::UsageError);  // recurrence 16 without memory
  c.recurrence = 1;
  EXPECT_NO_THROW(rl::check_rules(c, false));
}

namespace {

// Runs `steps` minibatches with plain SGD steps (so parameters change) and returns the
// parameters.
std::vector<float> train(rl::Ppo& ppo, core::ParamStore& ps, int64_t steps) {
  for (int64_t k = 0; k < steps; ++k) {
    ps.zero_grad();
    ppo.train_minibatch();
    for (int64_t i = 0; i < ps.size(); ++i) ps.values()[size_t(i)] -= 0.05f * ps.grads()[size_t(i)];
  }
  return std::vector<float>(ps.values().begin(), ps.values().end());
}

}  // namespace

TEST(PpoSeed, SameSeedSameRunOtherSeedOtherRun) {
  const rl::PpoConfig cfg = small_ppo();
  std::vector<std::vector<float>> out;
  for (uint64_t seed : {3, 3, 4}) {
    Agent a(lstm_agent(), cfg.recurrence, 1);
    rl::Ppo ppo(cfg, envs_of("DoorKey-5x5", 3), *a.policy, seed);
    out.push_back(train(ppo, a.ps, 7));
  }
  EXPECT_EQ(out[0], out[1]);
  EXPECT_NE(out[0], out[2]);
}

class PpoResume : public ::testing::TestWithParam<int64_t> {};

// Saving in the middle of an update (or between updates) and loading into a fresh agent
// continues exactly: episodes in progress are rebuilt from their seeds and actions.
TEST_P(PpoResume, SaveLoadContinuesBitForBit) {
  const rl::PpoConfig cfg = small_ppo();  // 5 minibatches per update
  const int64_t cut = GetParam(), total = 12;
  Agent a(lstm_agent(), cfg.recurrence, 1);
  rl::Ppo pa(cfg, envs_of("DoorKey-5x5", 3), *a.policy, 9);
  const std::vector<float> full = train(pa, a.ps, total);

  Agent b(lstm_agent(), cfg.recurrence, 1);
  rl::Ppo pb(cfg, envs_of("DoorKey-5x5", 3), *b.policy, 9);
  train(pb, b.ps, cut);
  core::State st;
  pb.save_state(st.scope("ppo"));
  const std::vector<float> params(b.ps.values().begin(), b.ps.values().end());

  Agent c(lstm_agent(), cfg.recurrence, 2);  // other initial parameters, overwritten below
  rl::Ppo pc(cfg, envs_of("DoorKey-5x5", 3), *c.policy, 77);
  std::copy(params.begin(), params.end(), c.ps.values().begin());
  pc.load_state(st.scope("ppo"));
  EXPECT_EQ(pc.frames(), pb.frames());
  const std::vector<float> resumed = train(pc, c.ps, total - cut);
  EXPECT_EQ(resumed, full);
  EXPECT_EQ(pc.episodes(), pa.episodes());
  EXPECT_EQ(pc.recent_episodes().mean_return, pa.recent_episodes().mean_return);
}

INSTANTIATE_TEST_SUITE_P(Cuts, PpoResume, ::testing::Values(2, 5, 8));

// The state names what it holds under the caller's scope, and a state written with other
// settings (fewer environments here) is refused naming the entry and both shapes.
TEST(PpoState, WritesUnderItsScopeAndRefusesOtherSettings) {
  rl::PpoConfig cfg = small_ppo();
  Agent a(lstm_agent(), cfg.recurrence, 1);
  rl::Ppo pa(cfg, envs_of("DoorKey-5x5", 3), *a.policy, 9);
  train(pa, a.ps, 2);  // mid-update: the rollout is saved too
  core::State st("run/checkpoint.sbck");
  pa.save_state(st.scope("ppo"));
  for (const auto& [k, v] : st.meta) EXPECT_EQ(k.rfind("ppo.", 0), 0u) << k;
  for (const auto& x : st.arrays) EXPECT_EQ(x.name.rfind("ppo.", 0), 0u) << x.name;
  EXPECT_TRUE(st.has("ppo.env2.rng"));
  EXPECT_TRUE(st.has_array("ppo.rollout.value"));

  cfg.procs = 2;
  Agent b(lstm_agent(), cfg.recurrence, 1);
  rl::Ppo pb(cfg, envs_of("DoorKey-5x5", 2), *b.policy, 9);
  const std::string m = testutil::message_of([&] { pb.load_state(st.scope("ppo")); });
  EXPECT_NE(m.find("'run/checkpoint.sbck'"), std::string::npos) << m;
  EXPECT_NE(m.find("'ppo.memory'"), std::string::npos) << m;
  const int64_t M = a.policy->memory_size();
  EXPECT_NE(m.find(core::Shape{3 * M}.str()), std::string::npos) << m;
  EXPECT_NE(m.find(core::Shape{2 * M}.str()), std::string::npos) << m;
}

TEST(PpoEvaluate, SameEpisodesEveryCallAndParametersUntouched) {
  Agent a(lstm_agent(), 4, 1);
  const std::vector<float> before(a.ps.values().begin(), a.ps.values().end());
  const rl::EvalResult r1 = rl::evaluate_policy(*a.policy, "Empty-5x5", 3, 5, 42, 4);
  const rl::EvalResult r2 = rl::evaluate_policy(*a.policy, "Empty-5x5", 3, 5, 42, 4);
  EXPECT_EQ(r1.episodes, 5);
  EXPECT_EQ(r1.mean_return, r2.mean_return);
  EXPECT_EQ(r1.mean_length, r2.mean_length);
  EXPECT_GT(r1.mean_length, 0.0);
  EXPECT_LE(r1.mean_length, 100.0);  // Empty-5x5 stops at 4·5² steps
  EXPECT_EQ(before, std::vector<float>(a.ps.values().begin(), a.ps.values().end()));
}
