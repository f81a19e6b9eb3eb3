// MiniGrid's world: the objects a cell can hold and the grid that holds them.
//
// A C++ rendering of gym-minigrid (Chevalier-Boisvert et al., github.com/Farama-Foundation/
// Minigrid, minigrid/core/{constants,world_object,grid}.py). The index tables below are
// MiniGrid's own, so an observation encoded here reads the same as one encoded there:
//   OBJECT_TO_IDX  unseen 0, empty 1, wall 2, floor 3, door 4, key 5, ball 6, box 7,
//                  goal 8, lava 9, agent 10
//   COLOR_TO_IDX   red 0, green 1, blue 2, purple 3, yellow 4, grey 5
//   door state     open 0, closed 1, locked 2
// Python's `None` (an empty cell) is a Cell whose type is kEmpty. Objects are values here,
// not shared references; Python's identity test (`env.carrying == env.obj`) becomes a
// comparison of the `id` an environment gives the objects it places.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace seqbench::rl {

enum class Type : uint8_t {
  kUnseen = 0,
  kEmpty = 1,
  kWall = 2,
  kFloor = 3,
  kDoor = 4,
  kKey = 5,
  kBall = 6,
  kBox = 7,
  kGoal = 8,
  kLava = 9,
  kAgent = 10,  // only in the fully observed encoding (MiniGrid's FullyObsWrapper)
};
inline constexpr int kNumTypes = 11;

enum class Color : uint8_t { kRed = 0, kGreen = 1, kBlue = 2, kPurple = 3, kYellow = 4, kGrey = 5 };
inline constexpr int kNumColors = 6;
// MiniGrid's COLOR_NAMES = sorted(COLORS): the order every random colour choice draws from,
// which is alphabetical and so differs from the index order above.
inline constexpr std::array<Color, kNumColors> kColorNames = {
    Color::kBlue, Color::kGreen, Color::kGrey, Color::kPurple, Color::kRed, Color::kYellow};

enum class DoorState : uint8_t { kOpen = 0, kClosed = 1, kLocked = 2 };

// Directions: 0 right (+x), 1 down (+y), 2 left (-x), 3 up (-y); y grows downwards.
struct Pos {
  int x = 0, y = 0;
  bool operator==(const Pos&) const = default;
};
inline constexpr std::array<Pos, 4> kDirToVec = {Pos{1, 0}, Pos{0, 1}, Pos{-1, 0}, Pos{0, -1}};

// One cell of the world (or the carried object). Python's WorldObj subclasses are a tag
// here; the predicates below are their overridden methods.
struct Cell {
  Type type = Type::kEmpty;
  Color color = Color::kRed;
  DoorState door = DoorState::kOpen;  // doors only: the third channel of the encoding
  // Boxes only: what toggling the box leaves in its place (Python's `contains`). One level
  // deep: a box inside a box comes out empty. kEmpty means the box holds nothing.
  Type content = Type::kEmpty;
  Color content_color = Color::kRed;
  int32_t id = -1;  // identity for objects an environment must recognise later; -1 none

  bool empty() const { return type == Type::kEmpty; }
  // WorldObj.can_overlap: can the agent stand on it.
  bool can_overlap() const {
    return type == Type::kGoal || type == Type::kFloor || type == Type::kLava ||
           (type == Type::kDoor && door == DoorState::kOpen);
  }
  // WorldObj.can_pickup.
  bool can_pickup() const {
    return type == Type::kKey || type == Type::kBall || type == Type::kBox;
  }
  // WorldObj.see_behind: walls and closed (or locked) doors block the view.
  bool see_behind() const {
    if (type == Type::kWall) return false;
    if (type == Type::kDoor) return door == DoorState::kOpen;
    return true;
  }
  // WorldObj.encode (empty -> (1, 0, 0) as Grid.encode writes for None).
  std::array<uint8_t, 3> encode() const {
    if (empty()) return {static_cast<uint8_t>(Type::kEmpty), 0, 0};
    const uint8_t state = type == Type::kDoor ? static_cast<uint8_t>(door) : 0;
    return {static_cast<uint8_t>(type), static_cast<uint8_t>(color), state};
  }
  // Same object kind and appearance (ignores id), e.g. for "is there a green key here".
  bool same_kind(const Cell& o) const {
    return type == o.type && (empty() || (color == o.color && door == o.door));
  }

  // Constructors with MiniGrid's default colours.
  static Cell wall(Color c = Color::kGrey) { return make(Type::kWall, c); }
  static Cell floor(Color c = Color::kBlue) { return make(Type::kFloor, c); }
  static Cell goal() { return make(Type::kGoal, Color::kGreen); }
  static Cell lava() { return make(Type::kLava, Color::kRed); }
  static Cell key(Color c = Color::kBlue) { return make(Type::kKey, c); }
  static Cell ball(Color c = Color::kBlue) { return make(Type::kBall, c); }
  static Cell box(Color c, Type content = Type::kEmpty, Color content_color = Color::kRed) {
    Cell b = make(Type::kBox, c);
    b.content = content;
    b.content_color = content_color;
    return b;
  }
  static Cell door_of(Color c, DoorState s) {
    Cell d = make(Type::kDoor, c);
    d.door = s;
    return d;
  }

 private:
  static Cell make(Type t, Color c) {
    Cell cell;
    cell.type = t;
    cell.color = c;
    return cell;
  }
};

// Row-major width x height cells; (x, y) with x the column. Positions outside the grid are
// an error (Python asserts), except through get_or_wall, which is what Grid.slice reads.
class Grid {
 public:
  Grid() = default;
  Grid(int width, int height);

  int width() const { return width_; }
  int height() const { return height_; }
  bool contains(int x, int y) const { return x >= 0 && y >= 0 && x < width_ && y < height_; }
  const Cell& get(int x, int y) const { return cells_[index(x, y)]; }
  Cell& at(int x, int y) { return cells_[index(x, y)]; }
  void set(int x, int y, const Cell& c) { cells_[index(x, y)] = c; }
  void clear(int x, int y) { cells_[index(x, y)] = Cell{}; }
  // The cell, or a grey wall where (x, y) lies outside (Grid.slice's padding).
  Cell get_or_wall(int x, int y) const { return contains(x, y) ? get(x, y) : Cell::wall(); }

  // Grid.horz_wall / vert_wall / wall_rect; length < 0 runs to the edge like Python's None.
  void horz_wall(int x, int y, int length = -1);
  void vert_wall(int x, int y, int length = -1);
  void wall_rect(int x, int y, int w, int h);

  // Grid.encode(): dst (W, H, 3) uint8, element [x][y][c] at (x * H + y) * 3 + c.
  void encode(uint8_t* dst) const;

 private:
  size_t index(int x, int y) const;
  int width_ = 0, height_ = 0;
  std::vector<Cell> cells_;
};

// Names as MiniGrid spells them ("door", "purple", ...); parse_* throw core::UsageError.
const char* type_name(Type t);
const char* color_name(Color c);
Type parse_type(const std::string& name);
Color parse_color(const std::string& name);

}  // namespace seqbench::rl
