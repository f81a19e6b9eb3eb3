// Proximal policy optimisation with a recurrent policy, as torch-ac's PPOAlgo (the
// rl-starter-files agent Kerg et al. 2020 trained on MiniGrid), minibatch by minibatch:
//
//   rollout:  procs environments × frames_per_proc steps with the current policy; each
//             step stores the observation, the memory before the step (unmasked) and the
//             mask (0 where the previous step ended that environment's episode: its memory
//             is wiped before this step, in that row only), the sampled action, its
//             log-probability and the value. Environments restart by themselves when an
//             episode ends (gym's ParallelEnv). A time-limit end counts as terminal (no
//             bootstrap), as torch-ac does.
//   GAE:      δ_t = r_t + γ V_{t+1} m_{t+1} − V_t,  A_t = δ_t + γ λ m_{t+1} A_{t+1},
//             R_t = V_t + A_t, with V and m after the last step from one more policy step.
//   epochs:   each epoch cuts every environment's frames into chunks of `recurrence` steps
//             (every other epoch shifted by recurrence/2, dropping the chunk that would run
//             past the end), shuffles them and groups batch/recurrence chunks per minibatch.
//             A chunk is replayed from its stored memory (truncated BPTT inside the chunk,
//             masks applied at every step) and the memories it produces replace the stored
//             ones for the next epoch. Loss per frame, averaged over the minibatch:
//               −min(ρ A, clip(ρ, 1±ε) A) − c_H H(π) + c_V max((V−R)², (V_clip−R)²),
//               ρ = exp(log π(a) − log π_old(a)), V_clip = V_old + clip(V − V_old, ±ε).
//             Clipping the global gradient norm and the Adam step are the caller's (the
//             Trainer's): train_minibatch() only accumulates the gradient.
// torch-ac resets memory per environment; the official Kerg et al. code wiped every
// environment's memory at every step (docs/papers.md section 1): not reproduced here.
//
// Seeding: environment p's episodes are seeded from a stream derived from (seed, p);
// action sampling and chunk shuffling have their own streams. For a given thread count a
// seed gives the same run, and save_state/load_state resume it exactly (the environments
// are rebuilt by replaying the current episode's actions from its seed).
//
// Shapes: F frames_per_proc, P procs, M memory, R recurrence, L = R chunk length, N
// chunks per minibatch, A = 7 actions, I = 147 image bytes, Q = 9 mission bytes.
// Rollout arrays are (F, P): frame (t, p) at t·P + p.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "config/field.hpp"
#include "core/rng.hpp"
#include "core/state.hpp"
#include "rl/minigrid/env.hpp"
#include "rl/policy.hpp"

namespace seqbench::rl {

struct PpoConfig {
  int64_t procs = 16;            // parallel environments
  int64_t frames_per_proc = 128;  // rollout length per environment
  int64_t epochs = 4;
  int64_t batch = 256;           // frames per minibatch
  int64_t recurrence = 16;       // chunk length (truncated BPTT); 1 without memory
  double gamma = 0.99;           // discount
  double gae_lambda = 0.95;
  double entropy_coef = 0.01;
  double value_coef = 0.5;
  double clip_eps = 0.2;
  bool shift_chunks = true;      // every other epoch, chunks start half a chunk later
  int64_t frames = 0;            // > 0: total frames to train; sets train.steps
  int64_t return_window = 100;   // "return" = mean over this many last episodes
  int64_t eval_episodes = 0;     // > 0: validation runs this many fresh episodes

  template <class V>
  void visit(V& v) {
    v("procs", procs, "parallel environments", config::range(1, 65536));
    v("frames_per_proc", frames_per_proc, "frames per environment per rollout",
      config::range(1, 10'000'000));
    v("epochs", epochs, "passes over each rollout", config::at_least(1));
    v("batch", batch, "frames per minibatch (a multiple of recurrence)",
      config::range(1, 10'000'000));
    v("recurrence", recurrence,
      "chunk length for truncated BPTT (divides frames_per_proc and batch; 1 for core none)",
      config::range(1, 10'000'000));
    v("gamma", gamma, "discount γ", config::range(0.0, 1.0));
    v("gae_lambda", gae_lambda, "GAE λ", config::range(0.0, 1.0));
    v("entropy_coef", entropy_coef, "entropy bonus coefficient", config::non_negative());
    v("value_coef", value_coef, "value loss coefficient", config::non_negative());
    v("clip_eps", clip_eps, "PPO clipping ε (policy ratio and value)", config::positive());
    v("shift_chunks", shift_chunks,
      "odd epochs use chunks shifted by recurrence/2 (torch-ac); step-wise cores only", config::any());
    v("frames", frames, "total environment frames (> 0 overrides train.steps)",
      config::range(0, int64_t(1e13)));
    v("return_window", return_window, "episodes in the running mean return",
      config::range(1, 10'000'000));
    v("eval_episodes", eval_episodes,
      "validation: 0 = the running mean of training episodes; > 0 = fresh seeded episodes",
      config::non_negative());
  }
};

// Throws core::UsageError naming the key for settings PPO cannot run: any field outside
// its declared range (config::check), recurrence not dividing frames_per_proc or batch,
// recurrence > 1 without memory.
void check_rules(const PpoConfig& cfg, bool recurrent);

// GAE over a rollout (torch-ac's collect_experiences): rewards, values, masks (F, P) with
// masks[t] = 0 when step t−1 ended the episode; next_value, next_mask (P) after the last
// step -> advantages, returns (F, P).
template <class T>
void compute_gae(int64_t F, int64_t P, const T* rewards, const T* values, const T* masks,
                 const T* next_value, const T* next_mask, double gamma, double lambda,
                 T* advantages, T* returns);

struct PpoLoss {
  double loss = 0, policy_loss = 0, value_loss = 0, entropy = 0;
  double approx_kl = 0;      // mean of log π_old(a) − log π(a)
  double clip_fraction = 0;  // share of frames with |ρ − 1| > ε
};

// The PPO loss averaged over n frames, and its gradient: logits (n, A), values (n),
// actions (n), old_logp, old_values, advantages, returns (n) -> dlogits (n, A), dvalues (n)
// (overwritten; both skipped when dlogits is null). Where min/max/clip pick a branch, the
// gradient is that branch's (a clipped ratio or value passes none).
template <class T>
PpoLoss ppo_loss(int64_t n, int64_t A, const T* logits, const T* values, const int32_t* actions,
                 const T* old_logp, const T* old_values, const T* advantages, const T* returns,
                 double clip_eps, double entropy_coef, double value_coef, T* dlogits, T* dvalues);

// Finished-episode statistics over a window of the last episodes.
struct EpisodeStats {
  double mean_return = 0, mean_length = 0;
  int64_t count = 0;  // episodes in the window
};

class Ppo {
 public:
  // What one minibatch did.
  struct Step {
    PpoLoss loss;
    bool collected = false;    // a rollout was collected first
    bool update_done = false;  // the rollout's last minibatch (its update is complete)
  };
  // Means over the minibatches of the current (or just finished) update.
  struct UpdateStats {
    int64_t minibatches = 0;
    double loss = 0, policy_loss = 0, value_loss = 0, entropy = 0, approx_kl = 0,
           clip_fraction = 0;
  };

  // envs: cfg.procs environments of one task (each is reseeded per episode from the
  // seed, whatever seed it was built with). The policy must be built with window =
  // cfg.recurrence; its parameters receive the gradients.
  Ppo(const PpoConfig& cfg, std::vector<std::unique_ptr<Env>> envs, Policy& policy,
      uint64_t seed);

  // Collects a rollout when none is pending, then computes the gradient of the next
  // minibatch (accumulated into the policy's parameters; zero them before).
  Step train_minibatch();
  bool needs_rollout() const { return !have_rollout_; }
  // One rollout and its advantages; the epochs start over.
  void collect();

  // Minibatches of the update that `rollouts_done` rollouts lead to (torch-ac alternates
  // shifted and unshifted epochs with a counter that runs across updates).
  int64_t minibatches_in_update(int64_t update_index) const;

  int64_t frames() const { return frames_; }        // environment steps so far (all procs)
  int64_t rollouts() const { return rollouts_; }
  int64_t episodes() const { return episodes_; }    // finished episodes so far
  EpisodeStats recent_episodes() const;
  const UpdateStats& update_stats() const { return stats_; }
  int64_t frames_per_update() const { return P_ * F_; }

  // Acting state, for tests: memory (P, M) after the last step, mask (P) for the next.
  const std::vector<float>& memory() const { return cur_mem_; }
  const std::vector<float>& mask() const { return cur_mask_; }
  // Rollout arrays (F, P) (and (F, P, M) for memories) of the last collect().
  const std::vector<float>& rollout_memory() const { return mem_; }
  const std::vector<float>& rollout_mask() const { return mask_; }
  Env& env(int64_t p) { return *envs_[size_t(p)]; }

  // Resumable state (rng streams, counters, episode replays, the pending rollout and
  // the epoch position), written under `out` (the caller's scope, e.g. "ppo"). load_state
  // throws core::Error naming a missing entry or an array whose size does not fit this
  // configuration.
  void save_state(core::Scope out) const;
  void load_state(core::ConstScope in);

  size_t held_bytes() const;

 private:
  void reset_env(int64_t p);
  void set_obs(int64_t p, const Obs& obs);
  void make_chunks();
  bool shifted(int64_t epoch_counter) const;

  PpoConfig cfg_;
  std::vector<std::unique_ptr<Env>> envs_;
  Policy& policy_;
  int64_t P_, F_, M_, R_;
  bool write_back_;
  // Acting state: current observations, memory, mask.
  std::vector<uint8_t> cur_img_, cur_mis_;
  std::vector<float> cur_mem_, cur_mask_, logits_, values_, logp_step_, scratch_mem_;
  std::vector<int32_t> act_step_;
  // Episodes: per environment the seed stream, the current episode's seed and actions,
  // its return and length so far; the window of finished episodes.
  std::vector<core::Rng> env_rng_;
  std::vector<uint64_t> ep_seed_;
  std::vector<std::vector<uint8_t>> ep_actions_;
  std::vector<double> ep_return_;
  std::vector<int64_t> ep_length_;
  std::deque<double> recent_return_;
  std::deque<int64_t> recent_length_;
  core::Rng sample_rng_, shuffle_rng_;
  // The rollout, (F, P) order.
  std::vector<uint8_t> img_, mis_;
  std::vector<float> mem_, mask_, val_, logp_, rew_, adv_, ret_;
  std::vector<int32_t> act_;
  // Epoch schedule: chunk starts (p · F + t) of the current epoch, minibatch position.
  bool have_rollout_ = false;
  int64_t epoch_ = 0, batch_pos_ = 0, epoch_counter_ = 0;
  std::vector<int64_t> chunks_;
  int64_t frames_ = 0, rollouts_ = 0, episodes_ = 0;
  UpdateStats stats_;
  // Minibatch buffers (L·N rows).
  std::vector<uint8_t> mb_img_, mb_mis_;
  std::vector<float> mb_mem0_, mb_mask_, mb_logp_, mb_val_, mb_adv_, mb_ret_, mb_logits_,
      mb_values_, mb_dlogits_, mb_dvalues_, mb_mem_out_;
  std::vector<int32_t> mb_act_;
};

struct EvalResult {
  double mean_return = 0, mean_length = 0;
  int64_t episodes = 0;
};

// Runs `episodes` fresh episodes of env_name with the policy (sampled actions), `envs`
// environments in parallel, everything seeded from `seed` (the same episodes every call).
// window: the policy's recurrence (phases for rel_lstm). Leaves the policy's parameters
// and gradients as they are.
EvalResult evaluate_policy(Policy& policy, const std::string& env_name, int64_t envs,
                           int64_t episodes, uint64_t seed, int64_t window);

}  // namespace seqbench::rl
