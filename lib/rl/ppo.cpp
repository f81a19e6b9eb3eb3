#include "rl/ppo.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "config/check.hpp"
#include "core/check.hpp"

namespace seqbench::rl {

namespace {

// Independent random streams derived from the PPO seed.
enum Stream : uint64_t { kSample = 2000, kShuffle = 2001, kEnvBase = 1000, kEvalEnvBase = 3000,
                         kEvalSample = 4000 };

constexpr int64_t kA = kNumActions;
constexpr int64_t kI = kImageSize;
constexpr int64_t kQ = kMissionSize;

}  // namespace

void check_rules(const PpoConfig& cfg, bool recurrent) {
  config::check(cfg, "ppo");
  const auto bad = [](const std::string& msg) { throw core::UsageError(msg); };
  if (!recurrent && cfg.recurrence != 1)
    bad(fmt::format("ppo.recurrence: {} needs a recurrent core; without memory (agent.core: "
                    "none) set ppo.recurrence: 1",
                    cfg.recurrence));
  if (cfg.frames_per_proc % cfg.recurrence != 0)
    bad(fmt::format("ppo.recurrence: {} does not divide ppo.frames_per_proc = {} (hint: chunks "
                    "must tile each environment's rollout)",
                    cfg.recurrence, cfg.frames_per_proc));
  if (cfg.batch % cfg.recurrence != 0)
    bad(fmt::format("ppo.batch: {} is not a multiple of ppo.recurrence = {} (a minibatch holds "
                    "whole chunks)",
                    cfg.batch, cfg.recurrence));
}

template <class T>
void compute_gae(int64_t F, int64_t P, const T* rewards, const T* values, const T* masks,
                 const T* next_value, const T* next_mask, double gamma, double lambda,
                 T* advantages, T* returns) {
  for (int64_t t = F - 1; t >= 0; --t)
    for (int64_t p = 0; p < P; ++p) {
      const int64_t i = t * P + p;
      const bool last = t == F - 1;
      const double nm = last ? double(next_mask[p]) : double(masks[i + P]);
      const double nv = last ? double(next_value[p]) : double(values[i + P]);
      const double na = last ? 0.0 : double(advantages[i + P]);
      const double delta = double(rewards[i]) + gamma * nv * nm - double(values[i]);
      advantages[i] = static_cast<T>(delta + gamma * lambda * na * nm);
      returns[i] = static_cast<T>(double(values[i]) + double(advantages[i]));
    }
}

template <class T>
PpoLoss ppo_loss(int64_t n, int64_t A, const T* logits, const T* values, const int32_t* actions,
                 const T* old_logp, const T* old_values, const T* advantages, const T* returns,
                 double clip_eps, double entropy_coef, double value_coef, T* dlogits, T* dvalues) {
  SB_CHECK(n > 0 && A > 0 && A <= 64, "ppo_loss: n={} A={}", n, A);
  PpoLoss out;
  const double inv_n = 1.0 / double(n);
  T lp[64];
  for (int64_t r = 0; r < n; ++r) {
    log_softmax<T>(1, A, logits + r * A, lp);
    const int32_t a = actions[r];
    SB_CHECK(a >= 0 && a < A, "ppo_loss: action {} of frame {} outside [0, {})", a, r, A);
    double ent = 0;
    for (int64_t j = 0; j < A; ++j) ent -= std::exp(double(lp[j])) * double(lp[j]);
    const double adv = double(advantages[r]);
    const double ratio = std::exp(double(lp[a]) - double(old_logp[r]));
    const double clipped = std::clamp(ratio, 1.0 - clip_eps, 1.0 + clip_eps);
    const double s1 = ratio * adv, s2 = clipped * adv;
    const double pol = -std::min(s1, s2);
    const double v = double(values[r]), v_old = double(old_values[r]), ret = double(returns[r]);
    const double dv_raw = v - v_old;
    const double v_clip = v_old + std::clamp(dv_raw, -clip_eps, clip_eps);
    const double l1 = (v - ret) * (v - ret), l2 = (v_clip - ret) * (v_clip - ret);
    const double vl = std::max(l1, l2);
    out.policy_loss += pol * inv_n;
    out.value_loss += vl * inv_n;
    out.entropy += ent * inv_n;
    out.approx_kl += (double(old_logp[r]) - double(lp[a])) * inv_n;
    out.clip_fraction += (std::abs(ratio - 1.0) > clip_eps ? 1.0 : 0.0) * inv_n;
    if (!dlogits) continue;
    // d pol / d log π(a): −A ρ through the unclipped branch; a clipped ratio passes nothing
    // (s2 < s1 only happens when the clip is active).
    const double dlpa = s1 <= s2 ? -adv * ratio : 0.0;
    T* dz = dlogits + r * A;
    for (int64_t j = 0; j < A; ++j) {
      const double p = std::exp(double(lp[j]));
      // −c_H H: dH/dz_j = −p_j (log p_j + H).
      const double g = dlpa * ((j == a ? 1.0 : 0.0) - p) + entropy_coef * p * (double(lp[j]) + ent);
      dz[j] = static_cast<T>(g * inv_n);
    }
    double dv;
    if (l1 >= l2)
      dv = 2.0 * (v - ret);
    else
      dv = std::abs(dv_raw) < clip_eps ? 2.0 * (v_clip - ret) : 0.0;
    dvalues[r] = static_cast<T>(value_coef * dv * inv_n);
  }
  out.loss = out.policy_loss - entropy_coef * out.entropy + value_coef * out.value_loss;
  return out;
}

Ppo::Ppo(const PpoConfig& cfg, std::vector<std::unique_ptr<Env>> envs, Policy& policy,
         uint64_t seed)
    : cfg_(cfg),
      envs_(std::move(envs)),
      policy_(policy),
      P_(cfg.procs),
      F_(cfg.frames_per_proc),
      M_(policy.memory_size()),
      R_(cfg.recurrence),
      write_back_(policy.recurrent() && policy.supports_shifted_chunks()),
      sample_rng_(core::Rng::derive(seed, kSample)),
      shuffle_rng_(core::Rng::derive(seed, kShuffle)) {
  check_rules(cfg, policy.recurrent());
  SB_CHECK(static_cast<int64_t>(envs_.size()) == P_, "Ppo: {} environments for ppo.procs = {}",
           envs_.size(), P_);
  const auto P = size_t(P_), F = size_t(F_), M = size_t(M_), rows = size_t(cfg.batch);
  cur_img_.assign(P * kI, 0);
  cur_mis_.assign(P * kQ, 0);
  cur_mem_.assign(P * M, 0.f);
  cur_mask_.assign(P, 1.f);
  scratch_mem_.assign(P * M, 0.f);
  logits_.assign(P * kA, 0.f);
  values_.assign(P, 0.f);
  logp_step_.assign(P, 0.f);
  act_step_.assign(P, 0);
  img_.assign(F * P * kI, 0);
  mis_.assign(F * P * kQ, 0);
  mem_.assign(F * P * M, 0.f);
  for (auto* v : {&mask_, &val_, &logp_, &rew_, &adv_, &ret_}) v->assign(F * P, 0.f);
  act_.assign(F * P, 0);
  mb_img_.assign(rows * kI, 0);
  mb_mis_.assign(rows * kQ, 0);
  mb_mem0_.assign(rows / size_t(R_) * M + 1, 0.f);
  for (auto* v : {&mb_mask_, &mb_logp_, &mb_val_, &mb_adv_, &mb_ret_, &mb_values_, &mb_dvalues_})
    v->assign(rows, 0.f);
  mb_logits_.assign(rows * kA, 0.f);
  mb_dlogits_.assign(rows * kA, 0.f);
  mb_mem_out_.assign(write_back_ ? rows * M : 0, 0.f);
  mb_act_.assign(rows, 0);
  for (int64_t p = 0; p < P_; ++p) env_rng_.push_back(core::Rng::derive(seed, kEnvBase + uint64_t(p)));
  ep_seed_.assign(P, 0);
  ep_actions_.resize(P);
  ep_return_.assign(P, 0.0);
  ep_length_.assign(P, 0);
  for (int64_t p = 0; p < P_; ++p) reset_env(p);
}

void Ppo::set_obs(int64_t p, const Obs& obs) {
  std::copy(obs.image.begin(), obs.image.end(), cur_img_.begin() + p * kI);
  std::copy(obs.mission.begin(), obs.mission.end(), cur_mis_.begin() + p * kQ);
}

void Ppo::reset_env(int64_t p) {
  const auto i = size_t(p);
  ep_seed_[i] = env_rng_[i].next_u64();
  ep_actions_[i].clear();
  ep_return_[i] = 0;
  ep_length_[i] = 0;
  set_obs(p, envs_[i]->reset(ep_seed_[i]));
}

bool Ppo::shifted(int64_t epoch_counter) const {
  return cfg_.shift_chunks && write_back_ && R_ > 1 && epoch_counter % 2 == 1;
}

int64_t Ppo::minibatches_in_update(int64_t update_index) const {
  const int64_t per = cfg_.batch / R_, full = P_ * F_ / R_;
  int64_t n = 0;
  for (int64_t e = 0; e < cfg_.epochs; ++e) {
    const int64_t chunks = shifted(update_index * cfg_.epochs + e) ? full - P_ : full;
    n += (chunks + per - 1) / per;
  }
  return n;
}

void Ppo::make_chunks() {
  const bool shift = shifted(epoch_counter_);
  ++epoch_counter_;
  chunks_.clear();
  for (int64_t c = 0; c < P_ * F_; c += R_) chunks_.push_back(c);
  for (int64_t i = static_cast<int64_t>(chunks_.size()) - 1; i > 0; --i)
    std::swap(chunks_[size_t(i)], chunks_[size_t(shuffle_rng_.randint(i + 1))]);
  if (shift) {
    // Shifted by half a chunk; the last chunk of each environment would run past its end.
    std::erase_if(chunks_, [&](int64_t c) { return (c + R_) % F_ == 0; });
    for (auto& c : chunks_) c += R_ / 2;
  }
}

void Ppo::collect() {
  const int64_t P = P_, M = M_;
  stats_ = UpdateStats{};
  for (int64_t t = 0; t < F_; ++t) {
    std::copy(cur_img_.begin(), cur_img_.end(), img_.begin() + t * P * kI);
    std::copy(cur_mis_.begin(), cur_mis_.end(), mis_.begin() + t * P * kQ);
    std::copy(cur_mem_.begin(), cur_mem_.end(), mem_.begin() + t * P * M);
    std::copy(cur_mask_.begin(), cur_mask_.end(), mask_.begin() + t * P);
    policy_.act(P, cur_img_.data(), cur_mis_.data(), cur_mask_.data(), cur_mem_.data(), t % R_,
                logits_.data(), values_.data());
    sample_actions(P, kA, logits_.data(), sample_rng_, act_step_.data(), logp_step_.data());
    for (int64_t p = 0; p < P; ++p) {
      const auto i = size_t(t * P + p), pi = size_t(p);
      act_[i] = act_step_[pi];
      val_[i] = values_[pi];
      logp_[i] = logp_step_[pi];
      const StepResult r = envs_[pi]->step(static_cast<Action>(act_step_[pi]));
      ep_actions_[pi].push_back(static_cast<uint8_t>(act_step_[pi]));
      ep_return_[pi] += r.reward;
      ep_length_[pi] += 1;
      rew_[i] = static_cast<float>(r.reward);
      if (r.done) {
        recent_return_.push_back(ep_return_[pi]);
        recent_length_.push_back(ep_length_[pi]);
        while (static_cast<int64_t>(recent_return_.size()) > cfg_.return_window) {
          recent_return_.pop_front();
          recent_length_.pop_front();
        }
        ++episodes_;
        reset_env(p);
        cur_mask_[pi] = 0.f;
      } else {
        set_obs(p, r.obs);
        cur_mask_[pi] = 1.f;
      }
    }
  }
  frames_ += F_ * P;
  ++rollouts_;
  // V after the last step; the memory this step would produce is thrown away.
  std::copy(cur_mem_.begin(), cur_mem_.end(), scratch_mem_.begin());
  policy_.act(P, cur_img_.data(), cur_mis_.data(), cur_mask_.data(), scratch_mem_.data(),
              F_ % R_, logits_.data(), values_.data());
  compute_gae<float>(F_, P, rew_.data(), val_.data(), mask_.data(), values_.data(),
                     cur_mask_.data(), cfg_.gamma, cfg_.gae_lambda, adv_.data(), ret_.data());
  epoch_ = 0;
  batch_pos_ = 0;
  make_chunks();
  while (chunks_.empty() && ++epoch_ < cfg_.epochs) make_chunks();
  have_rollout_ = epoch_ < cfg_.epochs;
}

Ppo::Step Ppo::train_minibatch() {
  Step st;
  while (!have_rollout_) {
    collect();
    st.collected = true;
  }
  const int64_t P = P_, F = F_, M = M_, L = R_, per = cfg_.batch / R_;
  const int64_t begin = batch_pos_ * per;
  const int64_t N = std::min<int64_t>(per, static_cast<int64_t>(chunks_.size()) - begin);
  for (int64_t k = 0; k < N; ++k) {
    const int64_t c = chunks_[size_t(begin + k)], p = c / F, t0 = c % F;
    if (M > 0)
      std::copy_n(mem_.begin() + (t0 * P + p) * M, M, mb_mem0_.begin() + k * M);
    for (int64_t i = 0; i < L; ++i) {
      const int64_t src = (t0 + i) * P + p, row = i * N + k;
      const auto s = size_t(src), d = size_t(row);
      std::copy_n(img_.begin() + src * kI, kI, mb_img_.begin() + row * kI);
      std::copy_n(mis_.begin() + src * kQ, kQ, mb_mis_.begin() + row * kQ);
      mb_mask_[d] = mask_[s];
      mb_act_[d] = act_[s];
      mb_logp_[d] = logp_[s];
      mb_val_[d] = val_[s];
      mb_adv_[d] = adv_[s];
      mb_ret_[d] = ret_[s];
    }
  }
  policy_.forward(L, N, mb_img_.data(), mb_mis_.data(), mb_mem0_.data(), mb_mask_.data(),
                  mb_logits_.data(), mb_values_.data(), write_back_ ? mb_mem_out_.data() : nullptr);
  st.loss = ppo_loss<float>(L * N, kA, mb_logits_.data(), mb_values_.data(), mb_act_.data(),
                            mb_logp_.data(), mb_val_.data(), mb_adv_.data(), mb_ret_.data(),
                            cfg_.clip_eps, cfg_.entropy_coef, cfg_.value_coef,
                            mb_dlogits_.data(), mb_dvalues_.data());
  policy_.backward(mb_dlogits_.data(), mb_dvalues_.data());
  if (write_back_) {
    // The memories this pass computed replace the stored ones for the next epoch.
    for (int64_t k = 0; k < N; ++k) {
      const int64_t c = chunks_[size_t(begin + k)], p = c / F, t0 = c % F;
      for (int64_t i = 0; i + 1 < L; ++i)
        std::copy_n(mb_mem_out_.begin() + (i * N + k) * M, M,
                    mem_.begin() + ((t0 + i + 1) * P + p) * M);
    }
  }
  const double k = double(++stats_.minibatches);
  const auto mean = [k](double& acc, double x) { acc += (x - acc) / k; };
  mean(stats_.loss, st.loss.loss);
  mean(stats_.policy_loss, st.loss.policy_loss);
  mean(stats_.value_loss, st.loss.value_loss);
  mean(stats_.entropy, st.loss.entropy);
  mean(stats_.approx_kl, st.loss.approx_kl);
  mean(stats_.clip_fraction, st.loss.clip_fraction);
  ++batch_pos_;
  if (batch_pos_ * per >= static_cast<int64_t>(chunks_.size())) {
    batch_pos_ = 0;
    do {
      if (++epoch_ >= cfg_.epochs) break;
      make_chunks();
    } while (chunks_.empty());
    if (epoch_ >= cfg_.epochs) {
      have_rollout_ = false;
      st.update_done = true;
    }
  }
  return st;
}

EpisodeStats Ppo::recent_episodes() const {
  EpisodeStats s;
  s.count = static_cast<int64_t>(recent_return_.size());
  if (s.count == 0) return s;
  for (size_t i = 0; i < recent_return_.size(); ++i) {
    s.mean_return += recent_return_[i];
    s.mean_length += double(recent_length_[i]);
  }
  s.mean_return /= double(s.count);
  s.mean_length /= double(s.count);
  return s;
}

size_t Ppo::held_bytes() const {
  size_t b = policy_.held_bytes() + img_.size() + mis_.size() + mb_img_.size() + mb_mis_.size();
  for (const auto* v : {&mem_, &mask_, &val_, &logp_, &rew_, &adv_, &ret_, &mb_mem0_, &mb_mask_,
                        &mb_logp_, &mb_val_, &mb_adv_, &mb_ret_, &mb_logits_, &mb_values_,
                        &mb_dlogits_, &mb_dvalues_, &mb_mem_out_})
    b += v->size() * sizeof(float);
  return b + (act_.size() + mb_act_.size()) * sizeof(int32_t);
}

void Ppo::save_state(core::Scope out) const {
  out.put_rng("sample_rng", sample_rng_);
  out.put_rng("shuffle_rng", shuffle_rng_);
  out.put_int("frames", frames_);
  out.put_int("rollouts", rollouts_);
  out.put_int("episodes", episodes_);
  out.put_int("epoch_counter", epoch_counter_);
  out.put_bool("have_rollout", have_rollout_);
  out.put_int("epoch", epoch_);
  out.put_int("batch_pos", batch_pos_);
  out.put_doubles("recent_return",
                  std::vector<double>(recent_return_.begin(), recent_return_.end()));
  out.put_doubles("recent_length",
                  std::vector<double>(recent_length_.begin(), recent_length_.end()));
  out.put_doubles("stats", std::vector<double>{double(stats_.minibatches), stats_.loss,
                                               stats_.policy_loss, stats_.value_loss,
                                               stats_.entropy, stats_.approx_kl,
                                               stats_.clip_fraction});
  const auto put = [&](const std::string& name, std::vector<float> v) {
    const auto n = static_cast<int64_t>(v.size());
    out.put_array(name, core::Shape{n}, std::move(v));
  };
  for (int64_t p = 0; p < P_; ++p) {
    const auto i = size_t(p);
    const core::Scope env = out.scope(fmt::format("env{}", p));
    env.put_rng("rng", env_rng_[i]);
    env.put_u64("seed", ep_seed_[i]);
    env.put_double("return", ep_return_[i]);
    env.put_int("length", ep_length_[i]);
    // Length first, so that an episode with no actions yet is not an empty array.
    std::vector<float> acts{float(ep_actions_[i].size())};
    for (uint8_t a : ep_actions_[i]) acts.push_back(float(a));
    const auto n = static_cast<int64_t>(acts.size());  // before the move below
    env.put_array("actions", core::Shape{n}, std::move(acts));
  }
  if (M_ > 0) put("memory", cur_mem_);
  put("mask", cur_mask_);
  if (!have_rollout_) return;
  put("rollout.image", std::vector<float>(img_.begin(), img_.end()));
  put("rollout.mission", std::vector<float>(mis_.begin(), mis_.end()));
  if (M_ > 0) put("rollout.memory", mem_);
  put("rollout.mask", mask_);
  put("rollout.action", std::vector<float>(act_.begin(), act_.end()));
  put("rollout.value", val_);
  put("rollout.logp", logp_);
  put("rollout.reward", rew_);
  put("rollout.advantage", adv_);
  put("rollout.return", ret_);
  put("rollout.chunks", std::vector<float>(chunks_.begin(), chunks_.end()));
}

void Ppo::load_state(core::ConstScope in) {
  // A one-dimensional array of n values (another n: other ppo settings).
  const auto array_of = [&](const std::string& name, size_t n) {
    return in.get_array(name, core::Shape{int64_t(n)});
  };
  sample_rng_ = in.get_rng("sample_rng");
  shuffle_rng_ = in.get_rng("shuffle_rng");
  frames_ = in.get_int("frames");
  rollouts_ = in.get_int("rollouts");
  episodes_ = in.get_int("episodes");
  epoch_counter_ = in.get_int("epoch_counter");
  have_rollout_ = in.get_bool("have_rollout");
  epoch_ = in.get_int("epoch");
  batch_pos_ = in.get_int("batch_pos");
  const std::vector<double> ret = in.get_doubles("recent_return");
  const std::vector<double> len = in.get_doubles("recent_length");
  recent_return_.assign(ret.begin(), ret.end());
  recent_length_.clear();
  for (double l : len) recent_length_.push_back(static_cast<int64_t>(l));
  const std::vector<double> st = in.get_doubles("stats");
  SB_CHECK(st.size() == 7, "{}: {} holds {} values, expected 7", in.state().where(),
           in.key("stats"), st.size());
  stats_ = UpdateStats{static_cast<int64_t>(st[0]), st[1], st[2], st[3], st[4], st[5], st[6]};
  for (int64_t p = 0; p < P_; ++p) {
    const auto i = size_t(p);
    const core::ConstScope env = in.scope(fmt::format("env{}", p));
    env_rng_[i] = env.get_rng("rng");
    ep_seed_[i] = env.get_u64("seed");
    ep_return_[i] = env.get_double("return");
    ep_length_[i] = env.get_int("length");
    const std::vector<float>& acts = env.array("actions").data;
    SB_CHECK(!acts.empty() && size_t(acts[0]) + 1 == acts.size(), "{}: {} is malformed",
             in.state().where(), env.key("actions"));
    // Rebuild the environment: the episode's layout from its seed, then its actions.
    Obs obs = envs_[i]->reset(ep_seed_[i]);
    ep_actions_[i].clear();
    for (size_t k = 1; k < acts.size(); ++k) {
      const auto a = static_cast<uint8_t>(acts[k]);
      obs = envs_[i]->step(static_cast<Action>(a)).obs;
      ep_actions_[i].push_back(a);
    }
    set_obs(p, obs);
  }
  const auto P = size_t(P_), F = size_t(F_), M = size_t(M_);
  if (M_ > 0) cur_mem_ = array_of("memory", P * M);
  cur_mask_ = array_of("mask", P);
  if (!have_rollout_) return;
  const auto to_u8 = [](const std::vector<float>& a, std::vector<uint8_t>& dst) {
    for (size_t k = 0; k < a.size(); ++k) dst[k] = static_cast<uint8_t>(a[k]);
  };
  to_u8(array_of("rollout.image", F * P * kI), img_);
  to_u8(array_of("rollout.mission", F * P * kQ), mis_);
  if (M_ > 0) mem_ = array_of("rollout.memory", F * P * M);
  mask_ = array_of("rollout.mask", F * P);
  const std::vector<float>& acts = array_of("rollout.action", F * P);
  for (size_t k = 0; k < acts.size(); ++k) act_[k] = static_cast<int32_t>(acts[k]);
  val_ = array_of("rollout.value", F * P);
  logp_ = array_of("rollout.logp", F * P);
  rew_ = array_of("rollout.reward", F * P);
  adv_ = array_of("rollout.advantage", F * P);
  ret_ = array_of("rollout.return", F * P);
  const std::vector<float>& ch = in.array("rollout.chunks").data;
  chunks_.clear();
  for (float c : ch) chunks_.push_back(static_cast<int64_t>(c));
}

EvalResult evaluate_policy(Policy& policy, const std::string& env_name, int64_t envs,
                           int64_t episodes, uint64_t seed, int64_t window) {
  SB_CHECK(envs >= 1 && episodes >= 1 && window >= 1,
           "evaluate_policy: envs={} episodes={} window={} must be >= 1", envs, episodes, window);
  const int64_t M = policy.memory_size();
  std::vector<std::unique_ptr<Env>> env;
  std::vector<core::Rng> seeds;
  std::vector<uint8_t> img(static_cast<size_t>(envs * kI), 0), mis(static_cast<size_t>(envs * kQ), 0);
  const auto set_obs = [&](int64_t p, const Obs& o) {
    std::copy(o.image.begin(), o.image.end(), img.begin() + p * kI);
    std::copy(o.mission.begin(), o.mission.end(), mis.begin() + p * kQ);
  };
  for (int64_t p = 0; p < envs; ++p) {
    seeds.push_back(core::Rng::derive(seed, kEvalEnvBase + uint64_t(p)));
    env.push_back(make_env(env_name, seed));
    set_obs(p, env.back()->reset(seeds.back().next_u64()));
  }
  const auto n = static_cast<size_t>(envs);
  std::vector<float> mem(n * size_t(M), 0.f), mask(n, 1.f), logits(n * kA, 0.f), values(n, 0.f),
      logp(n, 0.f);
  std::vector<int32_t> actions(n, 0);
  std::vector<double> ret(n, 0.0);
  std::vector<int64_t> len(n, 0);
  core::Rng rng = core::Rng::derive(seed, kEvalSample);
  EvalResult out;
  for (int64_t t = 0; out.episodes < episodes; ++t) {
    policy.act(envs, img.data(), mis.data(), mask.data(), mem.data(), t % window, logits.data(),
               values.data());
    sample_actions(envs, kA, logits.data(), rng, actions.data(), logp.data());
    for (int64_t p = 0; p < envs; ++p) {
      const auto i = size_t(p);
      const StepResult r = env[i]->step(static_cast<Action>(actions[i]));
      ret[i] += r.reward;
      len[i] += 1;
      mask[i] = r.done ? 0.f : 1.f;
      if (!r.done) {
        set_obs(p, r.obs);
        continue;
      }
      if (out.episodes < episodes) {
        out.mean_return += ret[i];
        out.mean_length += double(len[i]);
        ++out.episodes;
      }
      ret[i] = 0;
      len[i] = 0;
      set_obs(p, env[i]->reset(seeds[i].next_u64()));
    }
  }
  out.mean_return /= double(out.episodes);
  out.mean_length /= double(out.episodes);
  return out;
}

template void compute_gae<float>(int64_t, int64_t, const float*, const float*, const float*,
                                 const float*, const float*, double, double, float*, float*);
template void compute_gae<double>(int64_t, int64_t, const double*, const double*, const double*,
                                  const double*, const double*, double, double, double*, double*);
template PpoLoss ppo_loss<float>(int64_t, int64_t, const float*, const float*, const int32_t*,
                                 const float*, const float*, const float*, const float*, double,
                                 double, double, float*, float*);
template PpoLoss ppo_loss<double>(int64_t, int64_t, const double*, const double*, const int32_t*,
                                  const double*, const double*, const double*, const double*,
                                  double, double, double, double*, double*);

}  // namespace seqbench::rl
