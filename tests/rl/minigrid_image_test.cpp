// The picture of a state: size, the agent's triangle in its cell pointing its way, the
// goal green, walls grey, the view highlight brightening cells in front of the agent only.
#include <gtest/gtest.h>

#include "rl/minigrid/envs.hpp"
#include "rl/minigrid/image.hpp"

using namespace seqbench;

namespace {

std::array<int, 3> pixel(const rl::Image& img, int x, int y) {
  const uint8_t* p = img.rgb.data() + (size_t(y) * img.width + x) * 3;
  return {p[0], p[1], p[2]};
}

}  // namespace

TEST(MinigridImage, AgentGoalWallsAndHighlight) {
  auto env = rl::make_env("Empty-5x5", 1);
  env->reset();
  const int tile = 20;
  const rl::Image img = rl::render_image(*env, tile);
  ASSERT_EQ(img.width, 5 * tile);
  ASSERT_EQ(img.height, 5 * tile);
  // Empty-5x5: the agent at (1, 1) facing right, the goal at (3, 3).
  ASSERT_EQ(env->agent_pos().x, 1);
  ASSERT_EQ(env->agent_dir(), 0);
  // Centre of the agent cell: red; the tip side (right) red, the back corners not.
  EXPECT_EQ(pixel(img, 1 * tile + 10, 1 * tile + 10)[0], 255);
  EXPECT_LT(pixel(img, 1 * tile + 10, 1 * tile + 10)[1], 100) << "red (brightened: in view)";
  EXPECT_NE(pixel(img, 1 * tile + 3, 1 * tile + 3), (std::array<int, 3>{255, 0, 0}));
  // The goal (inside the 7x7 view in front of the agent): green, brightened.
  const auto goal = pixel(img, 3 * tile + 10, 3 * tile + 10);
  EXPECT_GT(goal[1], 200);
  EXPECT_GT(goal[0], 0) << "highlighted cells are brightened";
  // The wall behind the agent (0, 1) is outside the view: plain grey.
  EXPECT_EQ(pixel(img, 0 * tile + 10, 1 * tile + 10), (std::array<int, 3>{100, 100, 100}));
  // After turning left (facing up) the triangle's tip moves to the top of the cell.
  env->step(rl::Action::kLeft);
  const rl::Image up = rl::render_image(*env, tile);
  EXPECT_EQ(pixel(up, 1 * tile + 10, 1 * tile + 4)[0], 255);
  EXPECT_NE(pixel(up, 1 * tile + 10, 1 * tile + 17), (std::array<int, 3>{255, 0, 0}));
}
