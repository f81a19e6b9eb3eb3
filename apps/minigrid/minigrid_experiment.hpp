// The MiniGrid experiment: PPO (lib/rl/ppo.hpp) with rl-starter-files' recurrent
// actor-critic (lib/rl/policy.hpp) on the C++ MiniGrid environments (lib/rl/minigrid),
// as Kerg et al. 2020 trained RelLSTM and LSTM agents (docs/papers.md section 1).
//
// Mapping onto the Trainer: one Trainer update = one PPO minibatch. train_step() collects
// a rollout when the previous one is used up, then computes the next minibatch's
// gradient; the Trainer clips it (optim.clip = PPO's max_grad_norm) and takes the Adam
// step, exactly once per minibatch as torch-ac does. An update of PPO (a rollout and its
// epochs) is 30 Trainer updates with the paper's settings (8 + 7 + 8 + 7 minibatches: odd
// epochs use shifted chunks). ppo.frames > 0 converts a frame budget into train.steps.
// Metric "return": the mean return of the last ppo.return_window training episodes
// (torch-ac's return_per_episode), or of ppo.eval_episodes fresh seeded episodes.
// Checkpoints hold the pending rollout and the environments' episodes (rebuilt by replay),
// so --resume continues bit for bit, also from the middle of an update.
//
// Besides the Trainer's files, a run writes ppo.csv (one row per PPO update: frames,
// returns, losses, entropy, fps; docs/experiments/minigrid.md) and learning_curve.{dat,gp,png}
// (mean return against frames).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "optim/optim_config.hpp"
#include "report/csv.hpp"
#include "rl/policy.hpp"
#include "rl/ppo.hpp"
#include "train/experiment.hpp"
#include "train/memory_estimate.hpp"
#include "train/train_config.hpp"

namespace seqbench::apps {

struct MinigridEnvConfig {
  std::string name = "DoorKey-5x5";

  template <class V>
  void visit(V& v) {
    v("name", name, "MiniGrid environment, e.g. DoorKey-5x5, Empty-5x5, MemoryS7 (docs/minigrid.md)");
  }
};

struct MinigridConfig : train::TrainingSections {
  MinigridEnvConfig env;
  rl::AgentConfig agent;
  rl::PpoConfig ppo;

  // rl-starter-files' defaults for PPO: Adam lr 1e-3, eps 1e-8, max_grad_norm 0.5; one
  // thread.
  MinigridConfig();

  template <class V>
  void visit(V& v) {
    v("env", env, "the environment");
    v("agent", agent, "the actor-critic and its recurrent core");
    v("ppo", ppo, "PPO settings (torch-ac's PPOAlgo)");
    visit_training(v,
                   "training loop; steps, log_every, eval_every count PPO minibatches "
                   "(train.batch and train.bptt are not used: see ppo.batch, ppo.recurrence)",
                   "optimizer (Adam) and the gradient-norm clip (PPO's max_grad_norm)");
  }
};

// The embedded default of `seqbench minigrid --demo`: configs/minigrid/empty_5x5_lstm_small.yaml.
extern const char* const kMinigridDemoYaml;

// The memory a run of cfg needs (lib/train/memory_estimate.hpp): the actor-critic's
// parameters (convolutions, core, heads), the rollout of ppo.procs x
// ppo.frames_per_proc frames (observations, memories, scalars), and a minibatch's
// activations (the core's over chunks of ppo.recurrence steps, the convolutions').
train::MemoryEstimate minigrid_memory(const MinigridConfig& cfg);

class MinigridExperiment : public train::Experiment {
 public:
  // Builds the environments, the agent and PPO. Config mistakes throw core::UsageError
  // naming the key (unknown env.name, train.batch/bptt set, impossible ppo settings).
  explicit MinigridExperiment(const MinigridConfig& cfg);
  ~MinigridExperiment() override;

  // Fresh initial parameters from the seed (skipped when resuming).
  void init();
  // Trainer updates (PPO minibatches) that ppo.frames frames take, rounded up to whole
  // PPO updates.
  int64_t steps_for_frames(int64_t frames) const;
  // Opens run_dir/ppo.csv (appending on resume, after dropping rows later than
  // resume_step); rows are written from then on.
  void attach(const std::string& run_dir, bool resume, int64_t resume_step);

  core::ParamStore& params() override { return ps_; }
  train::Metrics train_step() override;
  train::Metrics evaluate() override;
  std::string metric() const override { return "return"; }
  bool higher_is_better() const override { return true; }
  // Not defined for PPO (the config rejects train.gradnorm_every > 0).
  std::vector<double> gradnorm_probe() override { return {}; }
  size_t held_bytes() override { return ppo_->held_bytes(); }
  void save_state(train::Checkpoint& ck) const override;
  void load_state(const train::Checkpoint& ck) override;

  const rl::Ppo& ppo() const { return *ppo_; }
  const MinigridConfig& config() const { return cfg_; }

 private:
  MinigridConfig cfg_;
  core::ParamStore ps_;
  std::unique_ptr<rl::Policy> policy_;
  std::unique_ptr<rl::Ppo> ppo_;
  std::unique_ptr<report::CsvWriter> csv_;
  int64_t steps_ = 0;             // train_step() calls so far (= Trainer updates)
  double elapsed_s_ = 0;          // wall seconds inside PPO updates, across resumes
  double grad_norm_sum_ = 0;      // over the current PPO update's minibatches
  std::chrono::steady_clock::time_point update_t0_;
  bool timing_ = false;           // update_t0_ marks the start of the current update
};

// `seqbench minigrid ...` and the seqbench_minigrid binary.
int minigrid_main(int argc, char** argv);

}  // namespace seqbench::apps
