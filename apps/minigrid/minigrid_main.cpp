// `seqbench minigrid`: PPO training runs (train::run_app's flow; the experiment opens its
// ppo.csv when the run directory exists and the learning curve is drawn after training,
// minigrid_curve.hpp), and `--play ENV` to step an environment by hand (minigrid_play.hpp).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "apps/minigrid/minigrid_curve.hpp"
#include "apps/minigrid/minigrid_experiment.hpp"
#include "apps/minigrid/minigrid_play.hpp"
#include "core/threads.hpp"
#include "train/app.hpp"

namespace seqbench::apps {

namespace {

train::RunIdentity identity(const MinigridConfig& c, MinigridExperiment& e, const std::string& label) {
  return train::RunIdentity{
      {"label", label},
      {"env", c.env.name},
      {"core", c.agent.core},
      {"hidden", std::to_string(c.agent.hidden)},
      {"params", std::to_string(e.params().size())},
      {"procs", std::to_string(c.ppo.procs)},
      {"frames_per_proc", std::to_string(c.ppo.frames_per_proc)},
      {"recurrence", std::to_string(c.ppo.recurrence)},
      {"optimizer", c.optim.name},
      {"lr", fmt::format("{}", c.optim.lr)},
      {"seed", std::to_string(c.train.seed)},
      {"threads", std::to_string(core::num_threads())},
      {"gemm", c.train.gemm},
      {"frames", std::to_string(e.ppo().frames())},
      {"episodes", std::to_string(e.ppo().episodes())},
      {"data", "minigrid (C++ reimplementation)"},
  };
}

}  // namespace

int minigrid_main(int argc, char** argv) {
  train::AppSpec<MinigridConfig, MinigridExperiment> spec{
      "minigrid", "MiniGrid: PPO with recurrent actor-critics (docs/experiments/minigrid.md)",
      kMinigridDemoYaml, minigrid_memory};
  spec.label = [](const MinigridConfig& c) { return c.env.name + "-" + c.agent.core; };
  spec.identity = identity;
  std::string play_env, actions, png_dir;
  spec.add_options = [&](CLI::App& app) {
    app.add_option("--play", play_env,
                   "step environment ENV by hand (keys on stdin) and print it; no training")
        ->option_text("ENV");
    app.add_option("--actions", actions,
                   "with --play: a scripted list, e.g. \"forward,left,pickup\" (l r f p d t work too)")
        ->option_text("LIST");
    app.add_option("--png", png_dir, "with --play: also write every state as DIR/step_NNN.png")
        ->option_text("DIR");
  };
  spec.action = [&](const MinigridConfig& c, const std::string&, const train::MemoryLimit&) -> int {
    if (!actions.empty() && play_env.empty()) throw core::UsageError("--actions needs --play ENV");
    if (!png_dir.empty() && play_env.empty()) throw core::UsageError("--png needs --play ENV");
    if (play_env.empty()) return -1;
    return play(play_env, actions, c.train.seed, png_dir);
  };
  // A frame budget becomes the number of minibatch updates (one Trainer update each).
  spec.adjust = [](MinigridConfig& c, MinigridExperiment& e) {
    if (c.ppo.frames > 0) c.train.steps = e.steps_for_frames(c.ppo.frames);
  };
  spec.on_start = [](MinigridExperiment& e, train::RunFiles& files, bool resume, int64_t step) {
    e.attach(files.dir(), resume, step);
  };
  spec.on_finish = [](const MinigridConfig& c, MinigridExperiment&, train::RunFiles& files,
                      const std::string& label, const train::Summary&) {
    const std::string curve = write_learning_curve(files.dir(), label, c.env.name);
    files.log(curve);
    return curve;
  };
  return train::run_app(argc, argv, spec);
}

}  // namespace seqbench::apps
