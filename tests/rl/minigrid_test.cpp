// MiniGrid step rules on hand-made worlds, and scripted episodes (transcripts) in fixed-seed
// layouts of every environment the experiments use. Each transcript first pins the layout
// its seed generates (so a change in generation fails loudly, showing the new layout), then
// plays a path worked out by hand from that layout, checking position, direction, carried
// object, door states, reward and done after every step.
#include <gtest/gtest.h>

#include "core/check.hpp"
#include "minigrid_util.hpp"

using namespace seqbench;
using namespace seqbench::rltest;

namespace {

constexpr Action L = Action::kLeft, R = Action::kRight, F = Action::kForward,
                 PICK = Action::kPickup, DROP = Action::kDrop, TOG = Action::kToggle,
                 DONE = Action::kDone;

// MiniGridEnv._reward() after k steps.
double win(int k, int max_steps) { return 1.0 - 0.9 * k / max_steps; }

// One step and what must hold after it.
void expect_step(rl::Env& env, Action a, Pos pos, int dir, Type carrying, double reward, bool done,
                 int line) {
  SCOPED_TRACE(testing::Message() << "transcript line " << line << ", step " << env.step_count() + 1
                                  << " " << rl::action_name(a));
  const rl::StepResult r = env.step(a);
  EXPECT_EQ(env.agent_pos(), pos) << "at (" << env.agent_pos().x << ", " << env.agent_pos().y
                                  << ")\n"
                                  << env.render();
  EXPECT_EQ(env.agent_dir(), dir);
  EXPECT_EQ(r.obs.direction, dir);
  EXPECT_EQ(env.carrying().type, carrying);
  EXPECT_DOUBLE_EQ(r.reward, reward);
  EXPECT_EQ(r.done, done);
  EXPECT_EQ(r.terminated, done);  // no transcript runs into the step limit
  EXPECT_FALSE(r.truncated);
}
#define STEP(env, a, x, y, dir, carry, reward, done) \
  expect_step(env, a, Pos{x, y}, dir, carry, reward, done, __LINE__)

constexpr Type NONE = Type::kEmpty, KEY = Type::kKey;

DoorState door_at(const rl::Env& env, int x, int y) {
  EXPECT_EQ(env.grid().get(x, y).type, Type::kDoor);
  return env.grid().get(x, y).door;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Rules on hand-made worlds

TEST(MinigridStep, TurnsAndMoves) {
  HandEnv env("WEWEWEWEWE\nWE>>FB  WE\nWE      WE\nWEWEWEWEWE");
  env.reset();
  STEP(env, L, 1, 1, 3, NONE, 0, false);  // left from right is up
  STEP(env, F, 1, 1, 3, NONE, 0, false);  // wall: no move
  STEP(env, R, 1, 1, 0, NONE, 0, false);
  STEP(env, F, 2, 1, 0, NONE, 0, false);  // onto a floor tile
  STEP(env, F, 3, 1, 0, NONE, 0, false);
  STEP(env, F, 3, 1, 0, NONE, 0, false);
  STEP(env, R, 3, 1, 1, NONE, 0, false);
  STEP(env, R, 3, 1, 2, NONE, 0, false);
  STEP(env, R, 3, 1, 3, NONE, 0, false);
  STEP(env, R, 3, 1, 0, NONE, 0, false);  // right from up wraps to right
  EXPECT_EQ(env.step_count(), 10);
}

TEST(MinigridStep, GoalPaysByStepCountLavaEndsWithNothing) {
  HandEnv goal("WEWEWEWE\nWE>>GGWE\nWEWEWEWE", false, 40);
  goal.reset();
  STEP(goal, DONE, 1, 1, 0, NONE, 0, false);  // done is a no-op in the base rules
  STEP(goal, F, 2, 1, 0, NONE, win(2, 40), true);
  EXPECT_DOUBLE_EQ(win(2, 40), 0.955);

  HandEnv lava("WEWEWEWE\nWE>>VRWE\nWEWEWEWE");
  lava.reset();
  STEP(lava, F, 2, 1, 0, NONE, 0, true);  // the agent walks onto the lava and dies
}

TEST(MinigridStep, PickupAndDrop) {
  HandEnv env("WEWEWEWEWE\nWEKRABWEWE\nWE^^    WE\nWEWEWEWEWE");
  env.reset();
  STEP(env, PICK, 1, 2, 3, KEY, 0, false);
  EXPECT_TRUE(env.grid().get(1, 1).empty());
  EXPECT_EQ(env.carrying().color, Color::kRed);
  STEP(env, R, 1, 2, 0, KEY, 0, false);
  STEP(env, F, 2, 2, 0, KEY, 0, false);
  STEP(env, L, 2, 2, 3, KEY, 0, false);
  STEP(env, PICK, 2, 2, 3, KEY, 0, false);  // hands full: the ball stays
  EXPECT_EQ(env.grid().get(2, 1).type, Type::kBall);
  STEP(env, DROP, 2, 2, 3, KEY, 0, false);  // the ball's cell is taken
  STEP(env, R, 2, 2, 0, KEY, 0, false);
  STEP(env, DROP, 2, 2, 0, NONE, 0, false);  // onto the empty (3, 2)
  EXPECT_EQ(env.grid().get(3, 2).type, Type::kKey);
  STEP(env, L, 2, 2, 3, NONE, 0, false);
  STEP(env, PICK, 2, 2, 3, Type::kBall, 0, false);
  STEP(env, L, 2, 2, 2, Type::kBall, 0, false);
  STEP(env, PICK, 2, 2, 2, Type::kBall, 0, false);  // nothing there
  STEP(env, L, 2, 2, 1, Type::kBall, 0, false);
  STEP(env, DROP, 2, 2, 1, Type::kBall, 0, false);  // walls cannot hold objects
}

TEST(MinigridStep, DoorsLockedDoorsAndKeys) {
  HandEnv env("WEWEWEWEWE\nWE  LYOBWE\nWEKRKY^^WE\nWEWEWEWEWE");
  env.reset();
  STEP(env, TOG, 3, 2, 3, NONE, 0, false);  // open door (3, 1) closes
  EXPECT_EQ(door_at(env, 3, 1), DoorState::kClosed);
  STEP(env, F, 3, 2, 3, NONE, 0, false);  // closed: no way through
  STEP(env, TOG, 3, 2, 3, NONE, 0, false);
  EXPECT_EQ(door_at(env, 3, 1), DoorState::kOpen);
  STEP(env, F, 3, 1, 3, NONE, 0, false);  // onto the open door
  STEP(env, L, 3, 1, 2, NONE, 0, false);
  STEP(env, TOG, 3, 1, 2, NONE, 0, false);  // locked yellow door, no key
  EXPECT_EQ(door_at(env, 2, 1), DoorState::kLocked);
  STEP(env, F, 3, 1, 2, NONE, 0, false);
  STEP(env, L, 3, 1, 1, NONE, 0, false);
  STEP(env, F, 3, 2, 1, NONE, 0, false);
  STEP(env, R, 3, 2, 2, NONE, 0, false);
  STEP(env, PICK, 3, 2, 2, KEY, 0, false);  // the yellow key at (2, 2)
  EXPECT_EQ(env.carrying().color, Color::kYellow);
  STEP(env, R, 3, 2, 3, KEY, 0, false);
  STEP(env, F, 3, 1, 3, KEY, 0, false);
  STEP(env, L, 3, 1, 2, KEY, 0, false);
  STEP(env, TOG, 3, 1, 2, KEY, 0, false);  // unlocks and opens; the key is kept
  EXPECT_EQ(door_at(env, 2, 1), DoorState::kOpen);
  EXPECT_EQ(env.carrying().color, Color::kYellow);
  STEP(env, TOG, 3, 1, 2, KEY, 0, false);  // once unlocked it closes without locking
  EXPECT_EQ(door_at(env, 2, 1), DoorState::kClosed);
  STEP(env, TOG, 3, 1, 2, KEY, 0, false);
  STEP(env, F, 2, 1, 2, KEY, 0, false);
}

TEST(MinigridStep, WrongKeyDoesNotUnlock) {
  HandEnv env("WEWEWEWE\nWE^^  WE\nWELY  WE\nWEWEWEWE");
  env.reset();
  env.set_carrying(Cell::key(Color::kBlue));
  env.set_agent({1, 1}, 1);
  STEP(env, TOG, 1, 1, 1, KEY, 0, false);
  EXPECT_EQ(door_at(env, 1, 2), DoorState::kLocked);
  env.set_carrying(Cell::ball(Color::kYellow));  // the right colour is not enough
  STEP(env, TOG, 1, 1, 1, Type::kBall, 0, false);
  EXPECT_EQ(door_at(env, 1, 2), DoorState::kLocked);
}

TEST(MinigridStep, ToggleOpensABoxIntoItsContents) {
  HandEnv env("WEWEWEWEWE\nWE^^BP  WE\nWEBG    WE\nWEWEWEWEWE");
  env.reset();
  env.world().set(1, 2, Cell::box(Color::kGreen, Type::kBall, Color::kRed));
  STEP(env, R, 1, 1, 0, NONE, 0, false);
  STEP(env, TOG, 1, 1, 0, NONE, 0, false);  // an empty box vanishes
  EXPECT_TRUE(env.grid().get(2, 1).empty());
  STEP(env, R, 1, 1, 1, NONE, 0, false);
  STEP(env, TOG, 1, 1, 1, NONE, 0, false);
  EXPECT_EQ(env.grid().get(1, 2).type, Type::kBall);
  EXPECT_EQ(env.grid().get(1, 2).color, Color::kRed);
  STEP(env, PICK, 1, 1, 1, Type::kBall, 0, false);
}

TEST(MinigridStep, TimeoutEndsWithNothing) {
  HandEnv env("WEWEWEWE\nWE>>GGWE\nWEWEWEWE", false, 3);
  env.reset();
  EXPECT_FALSE(env.step(L).done);
  EXPECT_FALSE(env.step(R).done);
  const rl::StepResult r = env.step(L);
  EXPECT_TRUE(r.done);
  EXPECT_TRUE(r.truncated);
  EXPECT_FALSE(r.terminated);
  EXPECT_EQ(r.reward, 0.0);
  // Reaching the goal on the last allowed step still pays 1 - 0.9 = 0.1.
  env.reset();
  env.step(DONE);
  env.step(DONE);
  const rl::StepResult g = env.step(F);
  EXPECT_TRUE(g.done);
  EXPECT_TRUE(g.truncated);
  EXPECT_TRUE(g.terminated);  // success at the limit: both, as in gymnasium
  EXPECT_NEAR(g.reward, 0.1, 1e-12);
}

TEST(MinigridStep, MisuseIsAnError) {
  HandEnv env("WEWEWEWE\nWE>>GGWE\nWEWEWEWE");
  EXPECT_THROW(env.step(F), core::Error);  // before reset
  env.reset();
  EXPECT_THROW(env.step(static_cast<Action>(7)), core::Error);
  EXPECT_EQ(rl::parse_action("toggle"), TOG);
  EXPECT_EQ(rl::parse_action("fwd"), F);
  EXPECT_THROW(rl::parse_action("jump"), core::UsageError);
}

TEST(MinigridStep, RenderIsMiniGridsStr) {
  HandEnv env("WEWEWEWEWE\nWEDRLBOYWE\nWEKPAGBYWE\nWEFRGGVRWE\nWE  ^^  WE\nWEWEWEWEWE");
  env.reset();
  EXPECT_EQ(env.render(), "WGWGWGWGWG\nWGDRLB__WG\nWGKPAGBYWG\nWGFRGGVRWG\nWG  ^^  WG\nWGWGWGWGWG");
  env.step(L);
  EXPECT_EQ(env.render().substr(44, 10), "WG  <<  WG");
}

// ---------------------------------------------------------------------------------------
// Transcripts

TEST(MinigridTranscript, Empty5x5) {
  auto env = rl::make_env("Empty-5x5", 1);
  EXPECT_EQ(env->max_steps(), 100);
  EXPECT_TRUE(env->see_through_walls());
  env->reset();
  ASSERT_EQ(env->render(), "WGWGWGWGWG\nWG>>    WG\nWG      WG\nWG    GGWG\nWGWGWGWGWG");
  EXPECT_EQ(env->mission().text, "get to the green goal square");
  STEP(*env, F, 2, 1, 0, NONE, 0, false);
  STEP(*env, F, 3, 1, 0, NONE, 0, false);
  STEP(*env, F, 3, 1, 0, NONE, 0, false);  // the wall
  STEP(*env, R, 3, 1, 1, NONE, 0, false);
  STEP(*env, F, 3, 2, 1, NONE, 0, false);
  STEP(*env, F, 3, 3, 1, NONE, win(6, 100), true);
}

TEST(MinigridTranscript, Empty8x8) {
  auto env = rl::make_env("Empty-8x8", 1);
  EXPECT_EQ(env->max_steps(), 256);
  env->reset();
  ASSERT_EQ(env->grid().get(6, 6).type, Type::kGoal);
  for (int x = 2; x <= 6; ++x) STEP(*env, F, x, 1, 0, NONE, 0, false);
  STEP(*env, R, 6, 1, 1, NONE, 0, false);
  for (int y = 2; y <= 5; ++y) STEP(*env, F, 6, y, 1, NONE, 0, false);
  STEP(*env, F, 6, 6, 1, NONE, win(11, 256), true);
}

TEST(MinigridTranscript, DoorKey5x5) {
  auto env = rl::make_env("DoorKey-5x5", 1);
  EXPECT_EQ(env->max_steps(), 250);
  EXPECT_FALSE(env->see_through_walls());
  const rl::Obs o = env->reset();
  ASSERT_EQ(env->render(), "WGWGWGWGWG\nWG  WG  WG\nWGVVLY  WG\nWGKYWGGGWG\nWGWGWGWGWG");
  // Facing down from (1, 2): the key right ahead, the locked door on the agent's left
  // (view (2, 6)), the wall on its right; the closed door hides the goal side.
  EXPECT_EQ(o.type_at(3, 5), Type::kKey);
  EXPECT_EQ(o.cell(2, 6)[0], 4);
  EXPECT_EQ(o.cell(2, 6)[2], 2);
  EXPECT_EQ(o.type_at(4, 6), Type::kWall);
  EXPECT_EQ(o.type_at(1, 6), Type::kUnseen);
  STEP(*env, L, 1, 2, 0, NONE, 0, false);
  STEP(*env, TOG, 1, 2, 0, NONE, 0, false);  // no key: stays locked
  EXPECT_EQ(door_at(*env, 2, 2), DoorState::kLocked);
  STEP(*env, F, 1, 2, 0, NONE, 0, false);
  STEP(*env, R, 1, 2, 1, NONE, 0, false);
  STEP(*env, PICK, 1, 2, 1, KEY, 0, false);
  EXPECT_TRUE(env->grid().get(1, 3).empty());
  STEP(*env, L, 1, 2, 0, KEY, 0, false);
  STEP(*env, TOG, 1, 2, 0, KEY, 0, false);
  EXPECT_EQ(door_at(*env, 2, 2), DoorState::kOpen);
  STEP(*env, TOG, 1, 2, 0, KEY, 0, false);
  EXPECT_EQ(door_at(*env, 2, 2), DoorState::kClosed);
  STEP(*env, F, 1, 2, 0, KEY, 0, false);
  STEP(*env, TOG, 1, 2, 0, KEY, 0, false);
  STEP(*env, F, 2, 2, 0, KEY, 0, false);
  STEP(*env, F, 3, 2, 0, KEY, 0, false);
  STEP(*env, R, 3, 2, 1, KEY, 0, false);
  STEP(*env, DROP, 3, 2, 1, KEY, 0, false);  // the goal cell cannot take the key
  STEP(*env, F, 3, 3, 1, KEY, win(15, 250), true);
}

TEST(MinigridTranscript, DoorKey8x8) {
  auto env = rl::make_env("DoorKey-8x8", 1);
  EXPECT_EQ(env->max_steps(), 640);
  env->reset();
  ASSERT_EQ(env->render(),
            "WGWGWGWGWGWGWGWG\n"
            "WG      WG    WG\n"
            "WG      WG    WG\n"
            "WG      WG    WG\n"
            "WG  VV  LY    WG\n"
            "WG      WG    WG\n"
            "WGKY    WG  GGWG\n"
            "WGWGWGWGWGWGWGWG");
  STEP(*env, F, 2, 5, 1, NONE, 0, false);
  STEP(*env, F, 2, 6, 1, NONE, 0, false);
  STEP(*env, R, 2, 6, 2, NONE, 0, false);
  STEP(*env, PICK, 2, 6, 2, KEY, 0, false);
  STEP(*env, R, 2, 6, 3, KEY, 0, false);
  STEP(*env, F, 2, 5, 3, KEY, 0, false);
  STEP(*env, F, 2, 4, 3, KEY, 0, false);
  STEP(*env, R, 2, 4, 0, KEY, 0, false);
  STEP(*env, F, 3, 4, 0, KEY, 0, false);
  STEP(*env, TOG, 3, 4, 0, KEY, 0, false);
  EXPECT_EQ(door_at(*env, 4, 4), DoorState::kOpen);
  STEP(*env, F, 4, 4, 0, KEY, 0, false);
  STEP(*env, F, 5, 4, 0, KEY, 0, false);
  STEP(*env, R, 5, 4, 1, KEY, 0, false);
  STEP(*env, F, 5, 5, 1, KEY, 0, false);
  STEP(*env, F, 5, 6, 1, KEY, 0, false);
  STEP(*env, L, 5, 6, 0, KEY, 0, false);
  STEP(*env, F, 6, 6, 0, KEY, win(17, 640), true);
}

TEST(MinigridTranscript, GoToObject6x6N2) {
  const std::string layout =
      "WGWGWGWGWGWG\n"
      "WG    BG  WG\n"
      "WG        WG\n"
      "WG        WG\n"
      "WGKR  <<  WG\n"
      "WGWGWGWGWGWG";
  auto fresh = [&] {
    auto env = rl::make_env("GoToObject-6x6-N2", 2);
    const rl::Obs o = env->reset();
    EXPECT_EQ(env->render(), layout);
    EXPECT_EQ(env->mission().text, "go to the red key");
    // One-hot: red (COLOR_TO_IDX 0) then key (first of key, ball, box).
    const std::array<uint8_t, rl::kMissionSize> m = {1, 0, 0, 0, 0, 0, 1, 0, 0};
    EXPECT_EQ(o.mission, m);
    return env;
  };
  {
    auto env = fresh();
    EXPECT_EQ(env->max_steps(), 180);
    STEP(*env, DONE, 3, 4, 2, NONE, 0, true);  // two cells from the key: done, no reward
  }
  {
    auto env = fresh();
    STEP(*env, TOG, 3, 4, 2, NONE, 0, true);  // toggle ends the episode too
  }
  {
    auto env = fresh();
    STEP(*env, F, 2, 4, 2, NONE, 0, false);
    STEP(*env, PICK, 2, 4, 2, KEY, 0, false);  // picking the target up is not the task
    STEP(*env, DONE, 2, 4, 2, KEY, win(3, 180), true);
  }
  {
    // The second layout of the same stream: the target (yellow box) is diagonal to the
    // agent, which counts as next to it.
    auto env = fresh();
    env->reset();
    ASSERT_EQ(env->render(),
              "WGWGWGWGWGWG\nWG        WG\nWG        WG\nWGAG  >>  WG\nWG      BYWG\nWGWGWGWGWGWG");
    EXPECT_EQ(env->mission().text, "go to the yellow box");
    STEP(*env, DONE, 3, 3, 0, NONE, win(1, 180), true);
  }
}

TEST(MinigridTranscript, KeyCorridorS3R1) {
  auto env = rl::make_env("KeyCorridorS3R1", 1);
  EXPECT_EQ(env->max_steps(), 270);
  const rl::Obs o = env->reset();
  ASSERT_EQ(env->render(), "WGWGWGWGWGWGWG\nWGKGDY<<LGARWG\nWGWGWGWGWGWGWG");
  EXPECT_EQ(env->mission().text, "pick up the red ball");
  const std::array<uint8_t, rl::kMissionSize> m = {1, 0, 0, 0, 0, 0, 0, 1, 0};
  EXPECT_EQ(o.mission, m);
  STEP(*env, PICK, 3, 1, 2, NONE, 0, false);  // a door cannot be picked up
  STEP(*env, F, 3, 1, 2, NONE, 0, false);     // closed
  STEP(*env, TOG, 3, 1, 2, NONE, 0, false);
  EXPECT_EQ(door_at(*env, 2, 1), DoorState::kOpen);
  STEP(*env, F, 2, 1, 2, NONE, 0, false);
  STEP(*env, PICK, 2, 1, 2, KEY, 0, false);  // the key: no reward, not the target
  // "KG"/"LG": grey, which MiniGrid's __str__ writes like green.
  EXPECT_EQ(env->carrying().color, Color::kGrey);
  EXPECT_EQ(env->grid().get(4, 1).color, Color::kGrey);
  STEP(*env, R, 2, 1, 3, KEY, 0, false);
  STEP(*env, R, 2, 1, 0, KEY, 0, false);
  STEP(*env, F, 3, 1, 0, KEY, 0, false);
  STEP(*env, TOG, 3, 1, 0, KEY, 0, false);
  EXPECT_EQ(door_at(*env, 4, 1), DoorState::kOpen);
  STEP(*env, F, 4, 1, 0, KEY, 0, false);
  STEP(*env, PICK, 4, 1, 0, KEY, 0, false);  // hands full
  STEP(*env, DROP, 4, 1, 0, KEY, 0, false);  // the ball is in the way
  STEP(*env, L, 4, 1, 3, KEY, 0, false);
  STEP(*env, L, 4, 1, 2, KEY, 0, false);
  STEP(*env, DROP, 4, 1, 2, NONE, 0, false);  // onto (3, 1)
  STEP(*env, R, 4, 1, 3, NONE, 0, false);
  STEP(*env, R, 4, 1, 0, NONE, 0, false);
  STEP(*env, PICK, 4, 1, 0, Type::kBall, win(18, 270), true);
}

TEST(MinigridTranscript, MemoryS7) {
  auto env = rl::make_env("MemoryS7", 1);
  auto* mem = dynamic_cast<rl::MemoryEnv*>(env.get());
  ASSERT_NE(mem, nullptr);
  EXPECT_EQ(env->max_steps(), 245);
  env->reset();
  ASSERT_EQ(env->render(),
            "WGWGWGWGWGWGWG\n"
            "WGWGWGWGWGKGWG\n"
            "WGAG    WG  WG\n"
            "WG    >>    WG\n"
            "WG      WG  WG\n"
            "WGWGWGWGWGAGWG\n"
            "WGWGWGWGWGWGWG");
  // A ball in the start room: the ball at the bottom of the split is the match.
  EXPECT_EQ(mem->success_pos(), (Pos{5, 4}));
  EXPECT_EQ(mem->failure_pos(), (Pos{5, 2}));
  STEP(*env, F, 4, 3, 0, NONE, 0, false);
  STEP(*env, F, 5, 3, 0, NONE, 0, false);
  STEP(*env, R, 5, 3, 1, NONE, 0, false);
  STEP(*env, PICK, 5, 3, 1, NONE, 0, false);  // pickup acts as toggle: nothing to take
  STEP(*env, F, 5, 4, 1, NONE, win(5, 245), true);

  // Next layout: a ball again, but now the ball is at the top; going down fails.
  env->reset();
  ASSERT_EQ(env->render(),
            "WGWGWGWGWGWGWG\n"
            "WGWGWGWGWGAGWG\n"
            "WGAG    WG  WG\n"
            "WG  >>      WG\n"
            "WG      WG  WG\n"
            "WGWGWGWGWGKGWG\n"
            "WGWGWGWGWGWGWG");
  STEP(*env, F, 3, 3, 0, NONE, 0, false);
  STEP(*env, F, 4, 3, 0, NONE, 0, false);
  STEP(*env, F, 5, 3, 0, NONE, 0, false);
  STEP(*env, R, 5, 3, 1, NONE, 0, false);
  STEP(*env, F, 5, 4, 1, NONE, 0, true);
}

TEST(MinigridTranscript, MemoryS13) {
  auto env = rl::make_env("MemoryS13", 1);
  EXPECT_EQ(env->max_steps(), 845);
  const rl::Obs o = env->reset();
  ASSERT_EQ(env->render(),
            "WGWGWGWGWGWGWGWGWGWGWGWGWG\n"
            "WG                  WG  WG\n"
            "WG                  WG  WG\n"
            "WG                  WG  WG\n"
            "WGWGWGWGWG          WGKGWG\n"
            "WGAG    WGWGWGWGWGWGWG  WG\n"
            "WG              >>      WG\n"
            "WG      WGWGWGWGWGWGWG  WG\n"
            "WGWGWGWGWG          WGAGWG\n"
            "WG                  WG  WG\n"
            "WG                  WG  WG\n"
            "WG                  WG  WG\n"
            "WGWGWGWGWGWGWGWGWGWGWGWGWG");
  // In the corridor the walls either side hide everything but the corridor ahead...
  // At the split (view row 3) light spreads sideways; the outer wall (row 2) stops it.
  EXPECT_EQ(vis_text(o), ".......\n.......\n#######\n#######\n..###..\n..###..\n..###..");
  EXPECT_EQ(o.type_at(1, 3), Type::kKey);  // both objects at the split are in view
  EXPECT_EQ(o.type_at(5, 3), Type::kBall);
  STEP(*env, F, 9, 6, 0, NONE, 0, false);
  STEP(*env, F, 10, 6, 0, NONE, 0, false);
  STEP(*env, F, 11, 6, 0, NONE, 0, false);
  STEP(*env, F, 11, 6, 0, NONE, 0, false);  // the outer wall
  STEP(*env, R, 11, 6, 1, NONE, 0, false);
  STEP(*env, F, 11, 7, 1, NONE, win(6, 845), true);
}

TEST(MinigridTranscript, TimeoutInEveryEnvironment) {
  // Turning on the spot never ends an episode by itself: done comes at max_steps with 0.
  const std::vector<std::pair<std::string, int>> limits = {
      {"Empty-5x5", 100},   {"Empty-8x8", 256},         {"DoorKey-5x5", 250},
      {"DoorKey-8x8", 640}, {"GoToObject-6x6-N2", 180}, {"KeyCorridorS3R1", 270},
      {"MemoryS7", 245},    {"MemoryS13", 845}};
  for (const auto& [name, limit] : limits) {
    SCOPED_TRACE(name);
    auto env = rl::make_env(name, 3);
    env->reset();
    ASSERT_EQ(env->max_steps(), limit);
    for (int k = 1; k < limit; ++k) {
      const rl::StepResult r = env->step(k % 2 ? L : R);
      ASSERT_FALSE(r.done) << "step " << k;
    }
    const rl::StepResult r = env->step(L);
    EXPECT_TRUE(r.done);
    EXPECT_TRUE(r.truncated);
    EXPECT_FALSE(r.terminated);
    EXPECT_EQ(r.reward, 0.0);
    EXPECT_EQ(env->step_count(), limit);
  }
}
