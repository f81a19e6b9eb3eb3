// `seqbench minigrid`: PPO training runs (train::run_app's flow; the experiment opens its
// ppo.csv when the run directory exists and draws the learning curve after training),
// and `--play ENV` to step an environment by hand.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>
#include <sstream>

#include "apps/minigrid/minigrid_experiment.hpp"
#include "backend/gemm.hpp"
#include "config/cli.hpp"
#include "config/yaml_config.hpp"
#include "core/fs.hpp"
#include "core/threads.hpp"
#include "report/csv.hpp"
#include "report/plots.hpp"
#include "report/png.hpp"
#include "report/run_id.hpp"
#include "rl/minigrid/envs.hpp"
#include "rl/minigrid/image.hpp"
#include "train/app.hpp"
#include "train/run_record.hpp"
#include "train/signals.hpp"
#include "train/trainer.hpp"

namespace seqbench::apps {

namespace {

constexpr const char* kName = "minigrid";

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r\n");
  if (a == std::string::npos) return "";
  const size_t b = s.find_last_not_of(" \t\r\n");
  return s.substr(a, b - a + 1);
}

// "forward, left,pickup" -> actions; names as rl::parse_action, plus one-letter keys.
rl::Action action_of(const std::string& word) {
  static const std::pair<const char*, rl::Action> keys[] = {
      {"l", rl::Action::kLeft},   {"r", rl::Action::kRight},  {"f", rl::Action::kForward},
      {"p", rl::Action::kPickup}, {"d", rl::Action::kDrop},   {"t", rl::Action::kToggle}};
  for (const auto& [k, a] : keys)
    if (word == k) return a;
  return rl::parse_action(word);
}

std::vector<rl::Action> parse_actions(const std::string& list) {
  std::vector<rl::Action> out;
  std::stringstream ss(list);
  std::string item;
  int i = 0;
  while (std::getline(ss, item, ',')) {
    ++i;
    const std::string w = trim(item);
    if (w.empty())
      throw core::UsageError(fmt::format("--actions: item {} is empty (hint: \"forward,left,...\")", i));
    try {
      out.push_back(action_of(w));
    } catch (const core::UsageError& e) {
      throw core::UsageError(fmt::format("--actions: item {}: {}", i, e.what()));
    }
  }
  if (out.empty()) throw core::UsageError("--actions: no actions given (hint: \"forward,left,...\")");
  return out;
}

void show(const rl::Env& env, const rl::Obs& obs) {
  fmt::print("{}\nview (the agent at the bottom, facing up):\n{}\n", env.render(), rl::render_obs(obs));
  std::fflush(stdout);
}

// --play: one environment, actions from --actions or from stdin, the text render after
// every step. Ends at the first finished episode of a script, or on "q" / end of input.
// Writes the current state as DIR/step_NNN.png when a PNG directory was asked for.
void snapshot(const rl::Env& env, const std::string& png_dir) {
  if (png_dir.empty()) return;
  const rl::Image img = rl::render_image(env);
  report::write_png(fmt::format("{}/step_{:03d}.png", png_dir, env.step_count()), img.width,
                    img.height, img.rgb);
}

int play(const std::string& name, const std::string& actions, uint64_t seed,
         const std::string& png_dir) {
  std::unique_ptr<rl::Env> env = rl::make_env(name, seed);
  if (!png_dir.empty()) core::make_dirs(png_dir);
  const std::vector<rl::Action> script = actions.empty() ? std::vector<rl::Action>{} : parse_actions(actions);
  rl::Obs obs = env->reset();
  fmt::print("{} (seed {}): {}\nstep 0\n", env->name(), seed, env->mission().text);
  show(*env, obs);
  snapshot(*env, png_dir);
  double ret = 0;
  auto act = [&](rl::Action a) {
    const rl::StepResult r = env->step(a);
    ret += r.reward;
    fmt::print("step {}: {} -> reward {:.4g}{}\n", env->step_count(), rl::action_name(a), r.reward,
               r.done ? (r.truncated && !r.terminated ? " (time limit)" : " (done)") : "");
    show(*env, r.obs);
    snapshot(*env, png_dir);
    if (r.done) fmt::print("episode over: return {:.4g} in {} steps\n", ret, env->step_count());
    return r.done;
  };
  if (!script.empty()) {
    for (size_t i = 0; i < script.size(); ++i)
      if (act(script[i])) {
        if (i + 1 < script.size()) fmt::print("({} actions left unused)\n", script.size() - i - 1);
        break;
      }
    return core::kExitOk;
  }
  const char* help =
      "keys: l left, r right, f forward, p pickup, d drop, t toggle, done; reset; q quit";
  fmt::print(stderr, "{}\n", help);
  std::string line;
  for (;;) {
    fmt::print(stderr, "> ");
    std::fflush(stderr);
    if (!std::getline(std::cin, line)) break;
    const std::string w = trim(line);
    if (w.empty()) continue;
    if (w == "q" || w == "quit") break;
    if (w == "reset") {
      ret = 0;
      obs = env->reset();
      fmt::print("reset\n");
      show(*env, obs);
      snapshot(*env, png_dir);
      continue;
    }
    try {
      if (act(action_of(w))) {
        ret = 0;
        obs = env->reset();
        fmt::print("new episode\n");
        show(*env, obs);
      }
    } catch (const core::UsageError& e) {
      fmt::print(stderr, "{} ({})\n", e.what(), help);
    }
  }
  return core::kExitOk;
}

std::string gp_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// learning_curve.{dat,gp,png} in the run directory from its ppo.csv. Returns a line
// saying what was written (or why the PNG was not).
std::string write_learning_curve(const std::string& dir, const std::string& label,
                                 const std::string& env) {
  const std::string csv = dir + "/ppo.csv";
  if (!core::file_exists(csv)) return "no ppo.csv: no learning curve";
  const report::CsvTable t = report::read_csv(csv);
  const int fc = t.col("frames"), rc = t.col("return_mean");
  std::string dat = "# frames return_mean (mean return of the last episodes)\n";
  for (const auto& r : t.rows) dat += r[size_t(fc)] + " " + r[size_t(rc)] + "\n";
  core::write_file_atomic(dir + "/learning_curve.dat", dat);
  const std::string gp = fmt::format(
      "# Written by `seqbench minigrid`. Restyle freely, then rerun in this directory:\n"
      "#   gnuplot learning_curve.gp\n"
      "set encoding utf8\n"
      "if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {{\n"
      "  set terminal pngcairo size 800,500 enhanced font 'Sans,11'\n"
      "}} else {{\n"
      "  set terminal png size 800,500 enhanced\n"
      "}}\n"
      "set output 'learning_curve.png'\n"
      "set title {} noenhanced\n"
      "set xlabel 'frames'\n"
      "set ylabel 'mean return (last episodes)'\n"
      "set yrange [0:1]\n"
      "set grid\n"
      "set format x '%.1s%c'\n"
      "set key bottom right\n"
      "plot 'learning_curve.dat' using 1:2 with lines lw 2 title {} noenhanced\n",
      gp_quote(label + " on " + env), gp_quote(label));
  core::write_file_atomic(dir + "/learning_curve.gp", gp);
  if (t.rows.empty()) return "learning curve: no PPO update finished yet, no PNG";
  const report::GnuplotResult g = report::run_gnuplot(dir + "/learning_curve.gp");
  if (!g.rendered) return fmt::format("learning curve: PNG skipped ({}); data and script in {}", g.message, dir);
  return fmt::format("learning curve: {}/learning_curve.png", dir);
}

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
  train::AppSpec<MinigridConfig, MinigridExperiment> spec;
  spec.name = kName;
  spec.description = "MiniGrid: PPO with recurrent actor-critics (docs/experiments/minigrid.md)";
  spec.demo_yaml = kMinigridDemoYaml;
  spec.memory = minigrid_memory;
  const auto label_of = [](const MinigridConfig& c) {
    return c.output.label.empty() ? c.env.name + "-" + c.agent.core : c.output.label;
  };
  spec.label = label_of;
  spec.identity = [&](const MinigridConfig& c, MinigridExperiment& e) {
    return identity(c, e, label_of(c));
  };
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
  spec.action = [&](const MinigridConfig& c) -> int {
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
  spec.on_finish = [&](const MinigridConfig& c, MinigridExperiment&, train::RunFiles& files) {
    const std::string curve = write_learning_curve(files.dir(), label_of(c), c.env.name);
    files.log(curve);
    return curve;
  };
  return train::run_app(argc, argv, spec);
}

}  // namespace seqbench::apps
