// MiniGrid environments over many seeds: the registry, determinism, the layout rules each
// generator must keep, and a planner that solves every layout and checks the reward.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/check.hpp"
#include "core/rng.hpp"
#include "minigrid_util.hpp"

using namespace seqbench;
using namespace seqbench::rltest;

namespace {

double win(const rl::Env& env) {
  return 1.0 - 0.9 * env.step_count() / static_cast<double>(env.max_steps());
}

// Walks to face `target` (opening closed doors on the way); fails the test if impossible.
void go_face(rl::Env& env, Pos target) {
  const auto plan = plan_to_face(env, target);
  ASSERT_TRUE(plan.has_value()) << "cannot reach (" << target.x << ", " << target.y << ")\n"
                                << env.render();
  run(env, *plan, false);
}

std::vector<std::pair<Pos, Cell>> objects(const rl::Grid& g) {
  std::vector<std::pair<Pos, Cell>> out;
  for (int y = 0; y < g.height(); ++y)
    for (int x = 0; x < g.width(); ++x) {
      const Cell& c = g.get(x, y);
      if (c.type == Type::kKey || c.type == Type::kBall || c.type == Type::kBox)
        out.emplace_back(Pos{x, y}, c);
    }
  return out;
}

constexpr int kSeeds = 60;

}  // namespace

TEST(MinigridRegistry, NamesAliasesAndErrors) {
  const auto& names = rl::env_names();
  for (const char* n : {"Empty-5x5", "Empty-8x8", "DoorKey-5x5", "DoorKey-8x8", "GoToObject-6x6-N2",
                        "KeyCorridorS3R1", "MemoryS7", "MemoryS13"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  auto env = rl::make_env("MiniGrid-DoorKey-5x5-v0", 4);
  EXPECT_EQ(env->name(), "DoorKey-5x5");
  EXPECT_NE(dynamic_cast<rl::DoorKeyEnv*>(env.get()), nullptr);
  try {
    rl::make_env("DoorKey-7x7", 0);
    FAIL() << "no exception";
  } catch (const core::UsageError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("DoorKey-7x7"), std::string::npos) << msg;
    EXPECT_NE(msg.find("did you mean 'DoorKey-"), std::string::npos) << msg;
  }
}

TEST(MinigridRegistry, SameSeedSameEpisodesDifferentSeedDifferentLayouts) {
  for (const auto& name : rl::env_names()) {
    SCOPED_TRACE(name);
    auto a = rl::make_env(name, 11), b = rl::make_env(name, 11), c = rl::make_env(name, 12);
    core::Rng acts(5);
    bool differs = false;
    for (int ep = 0; ep < 4; ++ep) {
      const rl::Obs oa = a->reset(), ob = b->reset();
      c->reset();
      ASSERT_EQ(a->render(), b->render());
      ASSERT_EQ(oa.image, ob.image);
      ASSERT_EQ(oa.mission, ob.mission);
      differs |= a->render() != c->render() || a->mission().text != c->mission().text;
      for (int t = 0; t < 40; ++t) {
        const auto act = static_cast<Action>(acts.randint(rl::kNumActions));
        const rl::StepResult ra = a->step(act), rb = b->step(act);
        ASSERT_EQ(ra.obs.image, rb.obs.image);
        ASSERT_EQ(ra.reward, rb.reward);
        ASSERT_EQ(ra.done, rb.done);
        if (ra.done) break;
      }
    }
    if (name.rfind("Empty", 0) != 0) {
      EXPECT_TRUE(differs) << "seeds 11 and 12 gave equal layouts";
    }
    // reset(seed) restarts the stream.
    auto d = rl::make_env(name, 11);
    d->reset();
    a->reset(11);
    EXPECT_EQ(a->render(), d->render());
  }
}

TEST(MinigridLayouts, DoorKey) {
  for (const char* name : {"DoorKey-5x5", "DoorKey-8x8", "DoorKey-16x16"}) {
    auto env = rl::make_env(name, 1);
    std::set<int> splits;
    for (int s = 0; s < kSeeds; ++s) {
      env->reset();
      const rl::Grid& g = env->grid();
      const int n = g.width();
      SCOPED_TRACE(env->render());
      ASSERT_EQ(g.get(n - 2, n - 2).type, Type::kGoal);
      const Pos door = *find_cell(g, Type::kDoor);
      EXPECT_EQ(g.get(door.x, door.y).door, DoorState::kLocked);
      EXPECT_EQ(g.get(door.x, door.y).color, Color::kYellow);
      EXPECT_GE(door.x, 2);
      EXPECT_LT(door.x, n - 2);
      EXPECT_GE(door.y, 1);
      EXPECT_LT(door.y, n - 2);
      for (int y = 0; y < n; ++y)
        if (y != door.y) {
          EXPECT_EQ(g.get(door.x, y).type, Type::kWall);
        }
      const auto objs = objects(g);
      ASSERT_EQ(objs.size(), 1u);
      EXPECT_EQ(objs[0].second.type, Type::kKey);
      EXPECT_EQ(objs[0].second.color, Color::kYellow);
      EXPECT_LT(objs[0].first.x, door.x);
      EXPECT_LT(env->agent_pos().x, door.x);
      EXPECT_TRUE(g.get(env->agent_pos().x, env->agent_pos().y).empty());
      splits.insert(door.x);
    }
    // The split column is drawn from [2, n - 2).
    const int n = env->grid().width();
    if (n <= 8) {
      EXPECT_EQ(static_cast<int>(splits.size()), n - 4) << name;
    } else {
      EXPECT_GE(static_cast<int>(splits.size()), (n - 4) / 2) << name;
    }
  }
}

TEST(MinigridLayouts, GoToObject) {
  auto env = rl::make_env("GoToObject-6x6-N2", 3);
  auto* go = dynamic_cast<rl::GoToObjectEnv*>(env.get());
  ASSERT_NE(go, nullptr);
  std::set<std::string> missions;
  for (int s = 0; s < kSeeds; ++s) {
    const rl::Obs o = env->reset();
    SCOPED_TRACE(env->render());
    const auto objs = objects(env->grid());
    ASSERT_EQ(objs.size(), 2u);
    EXPECT_FALSE(objs[0].second.same_kind(objs[1].second));
    const Cell& target = env->grid().get(go->target_pos().x, go->target_pos().y);
    ASSERT_TRUE(target.can_pickup());
    EXPECT_EQ(env->mission().text, fmt::format("go to the {} {}", rl::color_name(target.color),
                                               rl::type_name(target.type)));
    int hot = 0;
    for (uint8_t v : o.mission) hot += v;
    EXPECT_EQ(hot, 2);
    EXPECT_EQ(o.mission[static_cast<size_t>(target.color)], 1);
    missions.insert(env->mission().text);
  }
  EXPECT_GT(missions.size(), 10u);
}

TEST(MinigridLayouts, KeyCorridor) {
  for (const char* name :
       {"KeyCorridorS3R1", "KeyCorridorS3R3", "KeyCorridorS4R3", "KeyCorridorS6R3"}) {
    auto env = rl::make_env(name, 5);
    auto* kc = dynamic_cast<rl::KeyCorridorEnv*>(env.get());
    ASSERT_NE(kc, nullptr);
    for (int s = 0; s < kSeeds / 2; ++s) {
      env->reset();
      const rl::Grid& g = env->grid();
      SCOPED_TRACE(env->render());
      int locked = 0;
      Pos lock;
      for (int y = 0; y < g.height(); ++y)
        for (int x = 0; x < g.width(); ++x)
          if (g.get(x, y).type == Type::kDoor && g.get(x, y).door == DoorState::kLocked)
            ++locked, lock = {x, y};
      ASSERT_EQ(locked, 1);
      const auto objs = objects(g);
      ASSERT_EQ(objs.size(), 2u);
      const auto& key = objs[0].second.type == Type::kKey ? objs[0] : objs[1];
      const auto& ball = objs[0].second.type == Type::kBall ? objs[0] : objs[1];
      ASSERT_EQ(key.second.type, Type::kKey);
      ASSERT_EQ(ball.second.type, Type::kBall);
      EXPECT_EQ(key.second.color, g.get(lock.x, lock.y).color);
      EXPECT_EQ(ball.second.id, kc->target_id());
      const int rs = kc->room_size();
      EXPECT_EQ(lock.x, 2 * (rs - 1));                          // left wall of the right column
      EXPECT_GT(ball.first.x, lock.x);                          // behind the locked door
      EXPECT_EQ((ball.first.y) / (rs - 1), lock.y / (rs - 1));  // in that room
      EXPECT_LT(key.first.x, rs - 1);                           // left column
      EXPECT_EQ(env->mission().color, static_cast<int>(ball.second.color));
      // Placed inside the middle room's rectangle, walls included: where a wall was
      // removed to make the corridor, the agent may start on the old wall line (as in
      // Python, whose place_obj samples the whole rectangle).
      const auto& mid_room = kc->room(1, kc->num_rows() / 2);
      const Pos a = env->agent_pos();
      EXPECT_GE(a.x, mid_room.top.x);
      EXPECT_LT(a.x, mid_room.top.x + mid_room.size.x);
      EXPECT_GE(a.y, mid_room.top.y);
      EXPECT_LT(a.y, mid_room.top.y + mid_room.size.y);
    }
  }
}

TEST(MinigridLayouts, Memory) {
  for (const char* name : {"MemoryS7", "MemoryS13", "MemoryS17Random"}) {
    auto env = rl::make_env(name, 9);
    auto* mem = dynamic_cast<rl::MemoryEnv*>(env.get());
    ASSERT_NE(mem, nullptr);
    std::set<std::pair<int, int>> seen;  // (start type, success above?)
    for (int s = 0; s < kSeeds; ++s) {
      env->reset();
      const rl::Grid& g = env->grid();
      SCOPED_TRACE(env->render());
      const int mid = g.height() / 2;
      const Cell& start = g.get(1, mid - 1);
      ASSERT_TRUE(start.type == Type::kKey || start.type == Type::kBall);
      EXPECT_EQ(start.color, Color::kGreen);
      const int xe = mem->success_pos().x;
      const Cell& top = g.get(xe, mid - 2);
      const Cell& bottom = g.get(xe, mid + 2);
      EXPECT_NE(top.type, bottom.type);
      const Pos want = top.type == start.type ? Pos{xe, mid - 1} : Pos{xe, mid + 1};
      const Pos other = top.type == start.type ? Pos{xe, mid + 1} : Pos{xe, mid - 1};
      EXPECT_EQ(mem->success_pos(), want);
      EXPECT_EQ(mem->failure_pos(), other);
      EXPECT_EQ(env->agent_pos().y, mid);
      EXPECT_GE(env->agent_pos().x, 1);
      EXPECT_LE(env->agent_pos().x, xe - 1);
      EXPECT_EQ(env->agent_dir(), 0);
      seen.insert({static_cast<int>(start.type), want.y < mid});
    }
    EXPECT_EQ(seen.size(), 4u) << name;  // every combination occurs
  }
}

// ---------------------------------------------------------------------------------------
// Every layout is solvable by the rules, and success pays 1 - 0.9 * steps / max_steps.

TEST(MinigridSolve, EmptyAndDoorKey) {
  for (const char* name :
       {"Empty-5x5", "Empty-16x16", "DoorKey-5x5", "DoorKey-8x8", "DoorKey-16x16"}) {
    auto env = rl::make_env(name, 21);
    for (int s = 0; s < kSeeds / 2; ++s) {
      env->reset();
      SCOPED_TRACE(env->render());
      if (const auto key = find_cell(env->grid(), Type::kKey)) {
        go_face(*env, *key);
        env->step(Action::kPickup);
        ASSERT_EQ(env->carrying().type, Type::kKey);
        const Pos door = *find_cell(env->grid(), Type::kDoor);
        go_face(*env, door);
        env->step(Action::kToggle);
        ASSERT_EQ(env->grid().get(door.x, door.y).door, DoorState::kOpen);
      }
      go_face(*env, *find_cell(env->grid(), Type::kGoal));
      const rl::StepResult r = env->step(Action::kForward);
      EXPECT_TRUE(r.done);
      EXPECT_TRUE(r.terminated);
      EXPECT_FALSE(r.truncated);
      EXPECT_DOUBLE_EQ(r.reward, win(*env));
      EXPECT_GT(r.reward, 0.5);
    }
  }
}

TEST(MinigridSolve, GoToObject) {
  for (const char* name : {"GoToObject-6x6-N2", "GoToObject-8x8-N2"}) {
    auto env = rl::make_env(name, 22);
    auto* go = dynamic_cast<rl::GoToObjectEnv*>(env.get());
    for (int s = 0; s < kSeeds; ++s) {
      env->reset();
      SCOPED_TRACE(env->render());
      const rl::Mission m = env->mission();
      const Type t = std::array{Type::kKey, Type::kBall, Type::kBox}[static_cast<size_t>(m.type)];
      const auto plan = plan_to_face(*env, [&](Pos p) {
        const Cell& c = env->grid().get(p.x, p.y);
        return c.type == t && static_cast<int>(c.color) == m.color;
      });
      ASSERT_TRUE(plan.has_value());
      run(*env, *plan, false);
      const Pos f = env->front_pos();
      EXPECT_EQ(f, go->target_pos());
      const rl::StepResult r = env->step(Action::kDone);
      EXPECT_TRUE(r.done);
      EXPECT_TRUE(r.terminated);
      EXPECT_DOUBLE_EQ(r.reward, win(*env));
    }
  }
}

TEST(MinigridSolve, KeyCorridor) {
  for (const char* name :
       {"KeyCorridorS3R1", "KeyCorridorS3R2", "KeyCorridorS3R3", "KeyCorridorS4R3"}) {
    auto env = rl::make_env(name, 23);
    for (int s = 0; s < kSeeds / 2; ++s) {
      env->reset();
      SCOPED_TRACE(env->render());
      go_face(*env, *find_cell(env->grid(), Type::kKey));
      run(*env, {Action::kPickup}, false);
      ASSERT_EQ(env->carrying().type, Type::kKey);
      const Pos lock = *find_cell(env->grid(), Type::kDoor, DoorState::kLocked);
      go_face(*env, lock);
      run(*env, {Action::kToggle}, false);
      ASSERT_EQ(env->grid().get(lock.x, lock.y).door, DoorState::kOpen);
      // The key must go before the ball can be held: step into the doorway, put the key
      // back where the agent stood.
      run(*env, {Action::kForward, Action::kLeft, Action::kLeft, Action::kDrop}, false);
      ASSERT_TRUE(env->carrying().empty()) << env->render();
      const auto ball = find_cell(env->grid(), Type::kBall);
      go_face(*env, *ball);
      const rl::StepResult r = env->step(Action::kPickup);
      EXPECT_TRUE(r.done);
      EXPECT_TRUE(r.terminated);
      EXPECT_DOUBLE_EQ(r.reward, win(*env));
    }
  }
}

TEST(MinigridSolve, MemoryFromWhatTheAgentSawFirst) {
  for (const char* name : {"MemoryS7", "MemoryS13", "MemoryS17Random"}) {
    auto env = rl::make_env(name, 24);
    for (int s = 0; s < kSeeds / 2; ++s) {
      env->reset();
      SCOPED_TRACE(env->render());
      const rl::Grid& g = env->grid();
      const int mid = g.height() / 2;
      const Type cue = g.get(1, mid - 1).type;
      // The split: the column holding an object two rows above and below the corridor.
      int xe = -1;
      for (int x = 2; x + 1 < g.width() && xe < 0; ++x)
        if (g.get(x, mid - 2).can_pickup() && g.get(x, mid + 2).can_pickup()) xe = x;
      ASSERT_GT(xe, 0);
      const Pos target = g.get(xe, mid - 2).type == cue ? Pos{xe, mid - 1} : Pos{xe, mid + 1};
      go_face(*env, target);
      const rl::StepResult r = env->step(Action::kForward);
      EXPECT_TRUE(r.done);
      EXPECT_TRUE(r.terminated);
      EXPECT_GT(r.reward, 0.0);
      EXPECT_DOUBLE_EQ(r.reward, win(*env));
    }
  }
}
