// MiniGrid objects and grid: index tables, object rules, encoding, names.
#include <gtest/gtest.h>

#include "core/check.hpp"
#include "rl/minigrid/world.hpp"

using namespace seqbench;
using rl::Cell;
using rl::Color;
using rl::DoorState;
using rl::Type;

TEST(MinigridWorld, IndexTablesAreMiniGrids) {
  // OBJECT_TO_IDX, COLOR_TO_IDX and the door states, spelled out as gym-minigrid has them.
  const std::vector<std::pair<const char*, int>> objects = {
      {"unseen", 0}, {"empty", 1}, {"wall", 2}, {"floor", 3}, {"door", 4},  {"key", 5},
      {"ball", 6},   {"box", 7},   {"goal", 8}, {"lava", 9},  {"agent", 10}};
  for (const auto& [name, idx] : objects) {
    EXPECT_EQ(static_cast<int>(rl::parse_type(name)), idx) << name;
    EXPECT_STREQ(rl::type_name(static_cast<Type>(idx)), name);
  }
  const std::vector<std::pair<const char*, int>> colors = {
      {"red", 0}, {"green", 1}, {"blue", 2}, {"purple", 3}, {"yellow", 4}, {"grey", 5}};
  for (const auto& [name, idx] : colors) {
    EXPECT_EQ(static_cast<int>(rl::parse_color(name)), idx) << name;
    EXPECT_STREQ(rl::color_name(static_cast<Color>(idx)), name);
  }
  EXPECT_EQ(static_cast<int>(DoorState::kOpen), 0);
  EXPECT_EQ(static_cast<int>(DoorState::kClosed), 1);
  EXPECT_EQ(static_cast<int>(DoorState::kLocked), 2);
  // COLOR_NAMES is sorted alphabetically: the order random colours are drawn from.
  const std::vector<Color> sorted = {Color::kBlue,   Color::kGreen, Color::kGrey,
                                     Color::kPurple, Color::kRed,   Color::kYellow};
  EXPECT_EQ(std::vector<Color>(rl::kColorNames.begin(), rl::kColorNames.end()), sorted);
}

TEST(MinigridWorld, UnknownNamesAreUsageErrorsWithAHint) {
  try {
    rl::parse_color("gray");
    FAIL() << "no exception";
  } catch (const core::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("grey"), std::string::npos) << e.what();
  }
  EXPECT_THROW(rl::parse_type("chair"), core::UsageError);
}

TEST(MinigridWorld, ObjectRulesFollowWorldObjSubclasses) {
  struct Row {
    Cell c;
    bool overlap, pickup, see_behind;
  };
  const std::vector<Row> rows = {
      {Cell::wall(), false, false, false},
      {Cell::floor(), true, false, true},
      {Cell::goal(), true, false, true},
      {Cell::lava(), true, false, true},
      {Cell::key(), false, true, true},
      {Cell::ball(), false, true, true},
      {Cell::box(Color::kRed), false, true, true},
      {Cell::door_of(Color::kRed, DoorState::kOpen), true, false, true},
      {Cell::door_of(Color::kRed, DoorState::kClosed), false, false, false},
      {Cell::door_of(Color::kRed, DoorState::kLocked), false, false, false},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(rl::type_name(r.c.type));
    EXPECT_EQ(r.c.can_overlap(), r.overlap);
    EXPECT_EQ(r.c.can_pickup(), r.pickup);
    EXPECT_EQ(r.c.see_behind(), r.see_behind);
  }
}

TEST(MinigridWorld, EncodeIsTypeColourState) {
  using E = std::array<uint8_t, 3>;
  EXPECT_EQ(Cell{}.encode(), (E{1, 0, 0}));  // Grid.encode writes None as (empty, 0, 0)
  EXPECT_EQ(Cell::wall().encode(), (E{2, 5, 0}));
  EXPECT_EQ(Cell::floor().encode(), (E{3, 2, 0}));
  EXPECT_EQ(Cell::door_of(Color::kYellow, DoorState::kOpen).encode(), (E{4, 4, 0}));
  EXPECT_EQ(Cell::door_of(Color::kYellow, DoorState::kClosed).encode(), (E{4, 4, 1}));
  EXPECT_EQ(Cell::door_of(Color::kPurple, DoorState::kLocked).encode(), (E{4, 3, 2}));
  EXPECT_EQ(Cell::key(Color::kRed).encode(), (E{5, 0, 0}));
  EXPECT_EQ(Cell::ball(Color::kGreen).encode(), (E{6, 1, 0}));
  EXPECT_EQ(Cell::box(Color::kGrey, Type::kKey, Color::kRed).encode(), (E{7, 5, 0}));
  EXPECT_EQ(Cell::goal().encode(), (E{8, 1, 0}));
  EXPECT_EQ(Cell::lava().encode(), (E{9, 0, 0}));
}

TEST(MinigridWorld, GridWallsAndEncodingLayout) {
  rl::Grid g(5, 4);
  g.wall_rect(0, 0, 5, 4);
  g.set(2, 1, Cell::key(Color::kPurple));
  int walls = 0;
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 5; ++x) walls += g.get(x, y).type == Type::kWall;
  EXPECT_EQ(walls, 2 * 5 + 2 * 2);
  EXPECT_TRUE(g.get(1, 1).empty());
  // (W, H, 3) with [x][y][c] at (x * H + y) * 3 + c, as numpy's array[i, j, c].
  std::vector<uint8_t> enc(5 * 4 * 3);
  g.encode(enc.data());
  EXPECT_EQ(enc[(2 * 4 + 1) * 3 + 0], 5);
  EXPECT_EQ(enc[(2 * 4 + 1) * 3 + 1], 3);
  EXPECT_EQ(enc[(1 * 4 + 1) * 3 + 0], 1);
  EXPECT_EQ(enc[(4 * 4 + 3) * 3 + 0], 2);
  // Out of range is an error; get_or_wall pads with walls like Grid.slice.
  EXPECT_THROW(g.get(5, 0), core::Error);
  EXPECT_EQ(g.get_or_wall(-1, 2).type, Type::kWall);
  EXPECT_THROW(rl::Grid(2, 5), core::Error);
}
