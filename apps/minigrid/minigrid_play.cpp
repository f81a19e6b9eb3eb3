#include "apps/minigrid/minigrid_play.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "core/text.hpp"
#include "report/png.hpp"
#include "rl/minigrid/image.hpp"

namespace seqbench::apps {

namespace {

// One action: its name as rl::parse_action takes it, or its one-letter key.
rl::Action action_of(const std::string& word) {
  static const std::pair<const char*, rl::Action> keys[] = {
      {"l", rl::Action::kLeft},   {"r", rl::Action::kRight},  {"f", rl::Action::kForward},
      {"p", rl::Action::kPickup}, {"d", rl::Action::kDrop},   {"t", rl::Action::kToggle}};
  for (const auto& [k, a] : keys)
    if (word == k) return a;
  return rl::parse_action(word);
}

void show(const rl::Env& env, const rl::Obs& obs) {
  fmt::print("{}\nview (the agent at the bottom, facing up):\n{}\n", env.render(), rl::render_obs(obs));
  std::fflush(stdout);
}

// Writes the current state as DIR/step_NNN.png when a PNG directory was asked for.
void snapshot(const rl::Env& env, const std::string& png_dir) {
  if (png_dir.empty()) return;
  const rl::Image img = rl::render_image(env);
  report::write_png(fmt::format("{}/step_{:03d}.png", png_dir, env.step_count()), img.width,
                    img.height, img.rgb);
}

}  // namespace

std::vector<rl::Action> parse_actions(const std::string& list) {
  std::vector<rl::Action> out;
  std::stringstream ss(list);
  std::string item;
  int i = 0;
  while (std::getline(ss, item, ',')) {
    ++i;
    const std::string w = core::trim(item);
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
    const std::string w = core::trim(line);
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

}  // namespace seqbench::apps
