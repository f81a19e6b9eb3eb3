// MiniGrid observations: the egocentric 7x7 view, its orientation, and visibility.
#include <gtest/gtest.h>

#include "core/rng.hpp"
#include "minigrid_util.hpp"

using namespace seqbench;
using namespace seqbench::rltest;

namespace {

// gym-minigrid's gen_obs_grid, literally: Grid.slice at get_view_exts, rotate_left
// agent_dir + 1 times, process_vis, carried object at (3, 6). The library computes the same
// view by a direct coordinate map; this is the reference it must match.
rl::Obs reference_obs(const rl::Grid& world, Pos a, int dir, const Cell& carrying,
                      bool see_through) {
  constexpr int S = rl::kViewSize, hs = S / 2;
  int top_x = 0, top_y = 0;
  switch (dir) {
    case 0:
      top_x = a.x, top_y = a.y - hs;
      break;
    case 1:
      top_x = a.x - hs, top_y = a.y;
      break;
    case 2:
      top_x = a.x - S + 1, top_y = a.y - hs;
      break;
    default:
      top_x = a.x - hs, top_y = a.y - S + 1;
      break;
  }
  std::array<Cell, S * S> g;  // [i][j] at i * S + j
  for (int j = 0; j < S; ++j)
    for (int i = 0; i < S; ++i)
      g[static_cast<size_t>(i * S + j)] = world.get_or_wall(top_x + i, top_y + j);
  for (int r = 0; r < dir + 1; ++r) {
    std::array<Cell, S * S> rot;
    for (int i = 0; i < S; ++i)
      for (int j = 0; j < S; ++j)
        rot[static_cast<size_t>(j * S + (S - 1 - i))] = g[static_cast<size_t>(i * S + j)];
    g = rot;
  }
  rl::View view;
  view.cells = g;
  if (see_through)
    view.visible.fill(true);
  else
    rl::process_vis(view);
  view.at(hs, S - 1) = carrying;
  rl::Obs obs;
  for (int x = 0; x < S; ++x)
    for (int y = 0; y < S; ++y)
      if (view.vis(x, y)) {
        const auto e = view.at(x, y).encode();
        std::copy(e.begin(), e.end(), obs.image.begin() + (x * S + y) * 3);
      }
  obs.direction = dir;
  return obs;
}

// A 9x9 room whose 7x7 interior is exactly the view of an agent at (4, 7) facing up:
// view (x, y) = world (x + 1, y + 1).
std::string room9(const std::vector<std::string>& interior) {
  std::string s = std::string(18, 'W');
  for (size_t i = 0; i < 9; ++i) s[2 * i + 1] = 'E';
  std::string out = s + "\n";
  for (const auto& row : interior) out += "WE" + row + "WE\n";
  return out + s;
}

}  // namespace

TEST(MinigridObs, DirectMapMatchesSliceAndRotateLeft) {
  // Random worlds with every kind of cell, every position and direction, both visibility
  // modes, with and without a carried object.
  core::Rng rng(7);
  const std::vector<Cell> kinds = {Cell{},
                                   Cell{},
                                   Cell{},
                                   Cell::wall(),
                                   Cell::floor(Color::kPurple),
                                   Cell::goal(),
                                   Cell::lava(),
                                   Cell::key(Color::kRed),
                                   Cell::ball(Color::kYellow),
                                   Cell::box(Color::kGreen),
                                   Cell::door_of(Color::kBlue, DoorState::kOpen),
                                   Cell::door_of(Color::kBlue, DoorState::kClosed),
                                   Cell::door_of(Color::kGrey, DoorState::kLocked)};
  int compared = 0;
  for (int trial = 0; trial < 6; ++trial) {
    const int w = 5 + static_cast<int>(rng.randint(8)), h = 5 + static_cast<int>(rng.randint(8));
    rl::Grid g(w, h);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        g.set(x, y, kinds[static_cast<size_t>(rng.randint(static_cast<int64_t>(kinds.size())))]);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        for (int dir = 0; dir < 4; ++dir)
          for (int see : {0, 1}) {
            const Cell carrying = (x + y) % 3 == 0 ? Cell::ball(Color::kBlue) : Cell{};
            const rl::Obs got = rl::observe(g, {x, y}, dir, carrying, see == 1);
            const rl::Obs want = reference_obs(g, {x, y}, dir, carrying, see == 1);
            ASSERT_EQ(got.image, want.image)
                << "at (" << x << ", " << y << ") dir " << dir << " see " << see << "\n"
                << rl::render_obs(got) << "\nwant\n"
                << rl::render_obs(want);
            ASSERT_EQ(got.direction, dir);
            ++compared;
          }
  }
  EXPECT_GT(compared, 1000);
}

TEST(MinigridObs, ViewIsEgocentric) {
  // A red key ahead, a blue ball to the agent's right, a yellow box to its left, whichever
  // way the agent faces: they land at view (3, 5), (4, 6) and (2, 6).
  for (int dir = 0; dir < 4; ++dir) {
    HandEnv env(room9({"              ", "              ", "              ", "              ",
                       "              ", "              ", "      ^^      "}));
    env.reset();
    const Pos a{4, 4};
    const Pos f = rl::kDirToVec[static_cast<size_t>(dir)];
    const Pos r{-f.y, f.x};
    env.set_agent(a, dir);
    env.world().set(a.x + f.x, a.y + f.y, Cell::key(Color::kRed));
    env.world().set(a.x + r.x, a.y + r.y, Cell::ball(Color::kBlue));
    env.world().set(a.x - r.x, a.y - r.y, Cell::box(Color::kYellow));
    const rl::Obs o = env.observation();
    SCOPED_TRACE(dir);
    EXPECT_EQ(o.direction, dir);
    EXPECT_EQ(o.type_at(3, 5), Type::kKey);
    EXPECT_EQ(o.cell(3, 5)[1], 0);
    EXPECT_EQ(o.type_at(4, 6), Type::kBall);
    EXPECT_EQ(o.cell(4, 6)[1], 2);
    EXPECT_EQ(o.type_at(2, 6), Type::kBox);
    EXPECT_EQ(o.type_at(3, 6), Type::kEmpty);  // the agent's own cell
  }
}

TEST(MinigridObs, WallRowHidesWhatIsBehindItAndAnOpenDoorDoesNot) {
  // Wall across view row 3 with a door in the middle, a purple ball behind it at view (2, 1).
  const auto map = [](const std::string& door) {
    return room9({"              ", "    AP        ", "              ", "WEWEWE" + door + "WEWEWE",
                  "              ", "              ", "      ^^      "});
  };
  const std::string hidden = ".......\n.......\n.......\n#######\n#######\n#######\n#######";
  const std::string all = "#######\n#######\n#######\n#######\n#######\n#######\n#######";
  for (const char* door : {"DY", "LY"}) {
    SCOPED_TRACE(door);
    HandEnv env(map(door));
    const rl::Obs o = env.reset();
    EXPECT_EQ(vis_text(o), hidden);
    EXPECT_EQ(o.cell(2, 1)[0], 0);  // the ball is unseen: (0, 0, 0)
    EXPECT_EQ(o.cell(3, 3)[0], 4);  // the door itself is seen
    EXPECT_EQ(o.cell(3, 3)[2], std::string(door) == "DY" ? 1 : 2);
  }
  HandEnv open(map("OY"));
  const rl::Obs o = open.reset();
  EXPECT_EQ(vis_text(o), all);
  EXPECT_EQ(o.type_at(2, 1), Type::kBall);
  EXPECT_EQ(o.cell(2, 1)[1], 3);
  EXPECT_EQ(o.cell(3, 3)[2], 0);
  // The same world seen through walls (as Empty and GoToObject do): nothing is hidden.
  HandEnv through(map("DY"), /*see_through_walls=*/true);
  EXPECT_EQ(vis_text(through.reset()), all);
}

TEST(MinigridObs, ProcessVisSweepsAsMiniGrid) {
  // A one-cell corridor: the walls on both sides are seen, nothing beyond them.
  {
    std::vector<std::string> rows(7, "    WE  WE    ");
    rows[6] = "    WE^^WE    ";
    HandEnv env(room9(rows));
    EXPECT_EQ(vis_text(env.reset()),
              "..###..\n..###..\n..###..\n..###..\n..###..\n..###..\n..###..");
  }
  // A single wall straight ahead hides nothing: light reaches behind it diagonally
  // (process_vis marks (i, j-1) from every lit see-through cell (i-1, j) or (i+1, j)).
  {
    std::vector<std::string> rows(7, "              ");
    rows[5] = "      WE      ";
    rows[6] = "      ^^      ";
    HandEnv env(room9(rows));
    const rl::Obs o = env.reset();
    EXPECT_EQ(vis_text(o), "#######\n#######\n#######\n#######\n#######\n#######\n#######");
    EXPECT_EQ(o.type_at(3, 5), Type::kWall);
    EXPECT_EQ(o.type_at(3, 4), Type::kEmpty);
  }
  // A wall beside the agent hides the rest of the agent's row on that side, but the row
  // above is lit from the right: (1, 5) and (0, 5) are seen, (1, 6) and (0, 6) are not.
  {
    std::vector<std::string> rows(7, "              ");
    rows[6] = "    WE^^      ";
    HandEnv env(room9(rows));
    EXPECT_EQ(vis_text(env.reset()),
              "#######\n#######\n#######\n#######\n#######\n#######\n..#####");
  }
}

TEST(MinigridObs, OutsideTheWorldReadsAsWall) {
  // Agent at (1, 1) facing up in a 5x5 room, seeing through walls: the three view rows that
  // lie above the world (y < 0) are walls, like Grid.slice's padding.
  HandEnv env("WEWEWEWEWE\nWE^^    WE\nWE      WE\nWE      WE\nWEWEWEWEWE", true);
  const rl::Obs o = env.reset();
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 7; ++x) EXPECT_EQ(o.type_at(x, y), Type::kWall) << x << "," << y;
  EXPECT_EQ(o.type_at(3, 6), Type::kEmpty);
  EXPECT_EQ(o.type_at(4, 6), Type::kEmpty);
  EXPECT_EQ(o.type_at(5, 6), Type::kEmpty);
  EXPECT_EQ(o.type_at(6, 6), Type::kWall);
  EXPECT_EQ(o.type_at(2, 6), Type::kWall);
  EXPECT_EQ(o.type_at(1, 6), Type::kWall);  // x = -1: outside the world
  // Without seeing through walls, the world's top wall hides the padding beyond it.
  HandEnv blind("WEWEWEWEWE\nWE^^    WE\nWE      WE\nWE      WE\nWEWEWEWEWE", false);
  EXPECT_EQ(vis_text(blind.reset()),
            ".......\n.......\n.......\n.......\n.......\n..#####\n..#####");
}

TEST(MinigridObs, CarriedObjectShowsAtTheAgentsCell) {
  HandEnv env("WEWEWEWEWE\nWE      WE\nWE  KR  WE\nWE  ^^  WE\nWEWEWEWEWE");
  rl::Obs o = env.reset();
  EXPECT_EQ(o.type_at(3, 6), Type::kEmpty);
  EXPECT_EQ(o.type_at(3, 5), Type::kKey);
  o = env.step(Action::kPickup).obs;
  EXPECT_EQ(o.type_at(3, 6), Type::kKey);
  EXPECT_EQ(o.cell(3, 6)[1], 0);
  EXPECT_EQ(o.type_at(3, 5), Type::kEmpty);
  EXPECT_EQ(rl::render_obs(o),
            "..............\n..............\n..............\n..WGWGWGWGWG..\n"
            "..WG      WG..\n..WG      WG..\n..WG  KR  WG..");
}

TEST(MinigridObs, AgentOnAnOpenDoorSeesThroughIt) {
  // Standing in a doorway, the agent's own cell shows what it carries (nothing), and the
  // door does not block the view of either side.
  HandEnv env(room9({"              ", "              ", "  AR          ", "WEWEWE^^WEWEWE",
                     "              ", "              ", "              "}));
  env.reset();
  env.world().set(4, 4, Cell::door_of(Color::kRed, DoorState::kOpen));
  const rl::Obs o = env.observation();
  EXPECT_EQ(o.type_at(3, 6), Type::kEmpty);
  EXPECT_EQ(o.type_at(2, 6), Type::kWall);
  // The ball at world (2, 3) is 1 ahead and 2 to the left: view (1, 5).
  EXPECT_EQ(o.type_at(1, 5), Type::kBall);
}

TEST(MinigridObs, FullyObservedEncodingMarksTheAgent) {
  HandEnv env("WEWEWEWEWE\nWE  VV  WE\nWE  KR  WE\nWE      WE\nWEWEWEWEWE");
  env.reset();
  std::vector<uint8_t> full(5 * 5 * 3);
  env.encode_full(full.data());
  auto at = [&](int x, int y, int c) { return full[static_cast<size_t>((x * 5 + y) * 3 + c)]; };
  EXPECT_EQ(at(2, 1, 0), 10);
  EXPECT_EQ(at(2, 1, 1), 0);
  EXPECT_EQ(at(2, 1, 2), 1);
  EXPECT_EQ(at(2, 2, 0), 5);
  EXPECT_EQ(at(0, 0, 0), 2);
  EXPECT_EQ(at(1, 1, 0), 1);
}
