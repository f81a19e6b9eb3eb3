#include "rl/minigrid/world.hpp"

#include "core/check.hpp"

namespace seqbench::rl {

namespace {
constexpr std::array<const char*, kNumTypes> kTypeNames = {
    "unseen", "empty", "wall", "floor", "door", "key", "ball", "box", "goal", "lava", "agent"};
constexpr std::array<const char*, kNumColors> kColorNameStr = {"red",    "green",  "blue",
                                                               "purple", "yellow", "grey"};
}  // namespace

Grid::Grid(int width, int height) : width_(width), height_(height) {
  // Python asserts width, height >= 3: the smallest room with walls around one cell.
  SB_CHECK(width >= 3 && height >= 3, "minigrid Grid must be at least 3x3, got {}x{}", width,
           height);
  cells_.assign(static_cast<size_t>(width) * static_cast<size_t>(height), Cell{});
}

size_t Grid::index(int x, int y) const {
  SB_CHECK(contains(x, y), "minigrid cell ({}, {}) lies outside the {}x{} grid", x, y, width_,
           height_);
  return static_cast<size_t>(y) * static_cast<size_t>(width_) + static_cast<size_t>(x);
}

void Grid::horz_wall(int x, int y, int length) {
  if (length < 0) length = width_ - x;
  for (int i = 0; i < length; ++i) set(x + i, y, Cell::wall());
}

void Grid::vert_wall(int x, int y, int length) {
  if (length < 0) length = height_ - y;
  for (int j = 0; j < length; ++j) set(x, y + j, Cell::wall());
}

void Grid::wall_rect(int x, int y, int w, int h) {
  horz_wall(x, y, w);
  horz_wall(x, y + h - 1, w);
  vert_wall(x, y, h);
  vert_wall(x + w - 1, y, h);
}

void Grid::encode(uint8_t* dst) const {
  for (int x = 0; x < width_; ++x)
    for (int y = 0; y < height_; ++y) {
      const auto e = get(x, y).encode();
      uint8_t* d = dst + (static_cast<size_t>(x) * static_cast<size_t>(height_) + y) * 3;
      d[0] = e[0];
      d[1] = e[1];
      d[2] = e[2];
    }
}

const char* type_name(Type t) {
  const auto i = static_cast<size_t>(t);
  return i < kTypeNames.size() ? kTypeNames[i] : "?";
}

const char* color_name(Color c) {
  const auto i = static_cast<size_t>(c);
  return i < kColorNameStr.size() ? kColorNameStr[i] : "?";
}

Type parse_type(const std::string& name) {
  for (size_t i = 0; i < kTypeNames.size(); ++i)
    if (name == kTypeNames[i]) return static_cast<Type>(i);
  throw core::UsageError(fmt::format(
      "unknown minigrid object type '{}' (hint: one of empty, wall, floor, door, key, ball, "
      "box, goal, lava)",
      name));
}

Color parse_color(const std::string& name) {
  for (size_t i = 0; i < kColorNameStr.size(); ++i)
    if (name == kColorNameStr[i]) return static_cast<Color>(i);
  throw core::UsageError(fmt::format(
      "unknown minigrid colour '{}' (hint: one of red, green, blue, purple, yellow, grey)", name));
}

}  // namespace seqbench::rl
