#include "apps/minigrid/minigrid_experiment.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "apps/minigrid/demo_config.hpp"
#include "core/fs.hpp"
#include "nn/registry.hpp"
#include "optim/optimizer.hpp"
#include "rl/minigrid/envs.hpp"
#include "train/run_files.hpp"

namespace seqbench::apps {

namespace {

// Independent random streams derived from train.seed.
enum Stream : uint64_t { kInit = 1, kPpo = 2, kEval = 3 };

const std::vector<std::string>& csv_columns() {
  static const std::vector<std::string> c{
      "step",      "update",        "frames",      "episodes",      "return_mean",
      "length_mean", "return_count", "loss",       "policy_loss",   "value_loss",
      "entropy",   "approx_kl",     "clip_fraction", "grad_norm",   "fps",
      "elapsed_s"};
  return c;
}

std::vector<std::unique_ptr<rl::Env>> make_envs(const std::string& name, int64_t n, uint64_t seed) {
  std::vector<std::unique_ptr<rl::Env>> envs;
  try {
    for (int64_t i = 0; i < n; ++i) envs.push_back(rl::make_env(name, seed));
  } catch (const core::UsageError& e) {
    throw core::UsageError(fmt::format("env.name: {}", e.what()));
  }
  return envs;
}

const MinigridConfig& checked(const MinigridConfig& cfg) {
  const train::TrainConfig defaults;
  if (cfg.train.batch != defaults.batch)
    throw core::UsageError(fmt::format(
        "train.batch: not used by minigrid (hint: the PPO minibatch is ppo.batch, now {})",
        cfg.ppo.batch));
  if (cfg.train.bptt != defaults.bptt)
    throw core::UsageError(fmt::format(
        "train.bptt: not used by minigrid (hint: the BPTT chunk is ppo.recurrence, now {})",
        cfg.ppo.recurrence));
  if (cfg.train.gradnorm_every != 0)
    throw core::UsageError(
        "train.gradnorm_every: gradient-norm probes are not defined for PPO (hint: set it to 0)");
  return cfg;
}

}  // namespace

MinigridConfig::MinigridConfig() {
  optim.name = "adam";
  optim.lr = 1e-3;
  optim.eps = 1e-8;
  optim.clip = 0.5;
  train.steps = 30 * 100;  // 100 PPO updates with the paper's settings
  train.log_every = 30;
  train.eval_every = 300;
  // The products are small (at most 256 x 256 x 64 per minibatch): on 2 shared cores a
  // second OpenMP thread made DoorKey-5x5 four times slower.
  train.threads = 1;
}

const char* const kMinigridDemoYaml = kMinigridDemoYamlText;

train::MemoryEstimate minigrid_memory(const MinigridConfig& c) {
  const auto& a = c.agent;
  const int64_t E = rl::Policy::kEmbed, A = rl::kNumActions;
  const bool none = a.core == rl::kNoCore;
  const int64_t H = none ? E : a.hidden;
  nn::ModelConfig core;  // the core as a recurrent model of its cell
  if (!none) core.cell = a.core;
  core.hidden = H;
  core.nu = a.nu;
  core.rho = a.rho;
  const double R = double(c.ppo.recurrence);
  // The agent's memory per environment: the cell's step state, or for an attentive cell
  // run over a replay window (rl/cores.cpp) its state, a count and the window's inputs.
  const nn::CellEntry* cell = none ? nullptr : &nn::find_cell(a.core, nn::kAgent, "agent.core");
  const double M = none ? 0
                   : cell->agent == nn::AgentForm::kWindowedAttentive
                       ? cell->footprint->state_floats(core) + 1 + R * double(E)
                       : cell->footprint->state_floats(core);
  const int64_t Z = H + (rl::uses_mission(a.mission, c.env.name) ? rl::kMissionSize : 0);
  // Convolutions 3->16, 16->32, 32->64 (2x2), heads Z->64->A and Z->64->1.
  const int64_t conv = (16 * 3 * 4 + 16) + (32 * 16 * 4 + 32) + (64 * 32 * 4 + 64);
  const int64_t heads = 2 * (Z * 64 + 64) + 64 * A + A + 64 + 1;
  const std::vector<std::string> hidden{train::key("agent.hidden", a.hidden)};
  train::MemoryEstimate e;
  train::add_parameters(e, conv + heads + (none ? 0 : train::recurrent_params(core, E)), c.optim,
                        hidden);
  const double frames = double(c.ppo.procs) * double(c.ppo.frames_per_proc);
  e.add("rollout (observations, memories, returns)",
        frames * (rl::kImageSize + rl::kMissionSize + sizeof(float) * (M + 6) + sizeof(int32_t)),
        {train::key("ppo.procs", c.ppo.procs),
         train::key("ppo.frames_per_proc", c.ppo.frames_per_proc), hidden[0]});
  const double rows = double(c.ppo.batch);
  const int64_t chunks = std::max<int64_t>(1, c.ppo.batch / std::max<int64_t>(1, c.ppo.recurrence));
  // Per row: the convolutions' outputs and gradients (6x6x16, 3x3x16, 2x2x32, 64), the
  // heads' hidden layers, the minibatch's copies of the rollout.
  double act = rows * (sizeof(float) * 2 * (6 * 6 * 16 + 3 * 3 * 16 + 2 * 2 * 32 + 64 + 4 * 64) +
                       rl::kImageSize + rl::kMissionSize + sizeof(float) * (2 * M + 2 * A + 10));
  if (!none)
    act += train::recurrent_layer_bytes(core, E, c.ppo.recurrence, chunks, false) +
           train::recurrent_workspace_bytes(core, E);
  e.add("minibatch activations", act,
        {train::key("ppo.batch", c.ppo.batch), train::key("ppo.recurrence", c.ppo.recurrence),
         hidden[0]});
  return e;
}

MinigridExperiment::MinigridExperiment(const MinigridConfig& cfg) : cfg_(checked(cfg)) {
  std::vector<std::unique_ptr<rl::Env>> envs = make_envs(cfg.env.name, cfg.ppo.procs, cfg.train.seed);
  const bool mission = rl::uses_mission(cfg.agent.mission, cfg.env.name);
  policy_ = std::make_unique<rl::Policy>(ps_, cfg.agent, mission, cfg.ppo.recurrence);
  ps_.finalize(optim::make_optimizer<float>(cfg.optim)->n_slots());
  ppo_ = std::make_unique<rl::Ppo>(cfg.ppo, std::move(envs), *policy_,
                                   core::Rng::derive(cfg.train.seed, kPpo).next_u64());
}

MinigridExperiment::~MinigridExperiment() = default;

void MinigridExperiment::init() {
  core::Rng rng = core::Rng::derive(cfg_.train.seed, kInit);
  policy_->init(rng);
}

int64_t MinigridExperiment::steps_for_frames(int64_t frames) const {
  const int64_t per = ppo_->frames_per_update();
  const int64_t updates = (frames + per - 1) / per;
  // Closed form: an update's minibatches depend only on its parity (shifted chunks in
  // odd epochs), so no loop over the updates (ppo.frames 1e14 took 11 minutes).
  return (updates + 1) / 2 * ppo_->minibatches_in_update(0) +
         updates / 2 * ppo_->minibatches_in_update(1);
}

void MinigridExperiment::attach(const std::string& run_dir, bool resume, int64_t resume_step) {
  const std::string path = run_dir + "/ppo.csv";
  if (resume) train::drop_rows_after(path, resume_step);
  csv_ = std::make_unique<report::CsvWriter>(
      path, csv_columns(),
      resume ? report::CsvWriter::Mode::Append : report::CsvWriter::Mode::Truncate);
}

train::Metrics MinigridExperiment::train_step() {
  using Clock = std::chrono::steady_clock;
  if (ppo_->needs_rollout()) {
    update_t0_ = Clock::now();
    timing_ = true;
    grad_norm_sum_ = 0;
  }
  const rl::Ppo::Step st = ppo_->train_minibatch();
  ++steps_;
  grad_norm_sum_ += optim::grad_norm(ps_);
  const rl::EpisodeStats ep = ppo_->recent_episodes();
  if (st.update_done) {
    const rl::Ppo::UpdateStats& u = ppo_->update_stats();
    double fps = std::numeric_limits<double>::quiet_NaN();  // an update cut by a resume
    if (timing_) {
      const double s = std::chrono::duration<double>(Clock::now() - update_t0_).count();
      elapsed_s_ += s;
      fps = double(ppo_->frames_per_update()) / s;
    }
    timing_ = false;
    if (csv_) {
      using W = report::CsvWriter;
      csv_->row({W::cell(steps_), W::cell(ppo_->rollouts()), W::cell(ppo_->frames()),
                 W::cell(ppo_->episodes()), W::cell(ep.mean_return), W::cell(ep.mean_length),
                 W::cell(ep.count), W::cell(u.loss), W::cell(u.policy_loss), W::cell(u.value_loss),
                 W::cell(u.entropy), W::cell(u.approx_kl), W::cell(u.clip_fraction),
                 W::cell(grad_norm_sum_ / double(u.minibatches)), W::cell(fps), W::cell(elapsed_s_)});
    }
  }
  return {{"loss", st.loss.loss},
          {"return", ep.mean_return},
          {"policy_loss", st.loss.policy_loss},
          {"value_loss", st.loss.value_loss},
          {"entropy", st.loss.entropy}};
}

train::Metrics MinigridExperiment::evaluate() {
  const double loss = ppo_->update_stats().loss;
  if (cfg_.ppo.eval_episodes > 0) {
    const rl::EvalResult r = rl::evaluate_policy(
        *policy_, cfg_.env.name, cfg_.ppo.procs, cfg_.ppo.eval_episodes,
        core::Rng::derive(cfg_.train.seed, kEval).next_u64(), cfg_.ppo.recurrence);
    return {{"loss", loss},
            {"return", r.mean_return},
            {"episode_length", r.mean_length},
            {"frames", double(ppo_->frames())}};
  }
  const rl::EpisodeStats ep = ppo_->recent_episodes();
  return {{"loss", loss},
          {"return", ep.mean_return},
          {"episode_length", ep.mean_length},
          {"frames", double(ppo_->frames())}};
}

void MinigridExperiment::save_state(train::Checkpoint& ck) const {
  const core::Scope s = ck.scope("minigrid");
  s.put_int("steps", steps_);
  s.put_double("elapsed_s", elapsed_s_);
  s.put_double("grad_norm_sum", grad_norm_sum_);
  ppo_->save_state(ck.scope("ppo"));
}

void MinigridExperiment::load_state(const train::Checkpoint& ck) {
  const core::ConstScope s = ck.scope("minigrid");
  steps_ = s.get_int("steps");
  elapsed_s_ = s.get_double("elapsed_s");
  grad_norm_sum_ = s.get_double("grad_norm_sum");
  timing_ = false;
  ppo_->load_state(ck.scope("ppo"));
}

}  // namespace seqbench::apps
