#include "rl/minigrid/envs.hpp"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>

#include "core/check.hpp"
#include "core/text.hpp"

namespace seqbench::rl {

namespace {
// Mission type index of kMissionSize's second block.
int mission_type(Type t) {
  switch (t) {
    case Type::kKey:
      return 0;
    case Type::kBall:
      return 1;
    case Type::kBox:
      return 2;
    default:
      return -1;
  }
}

Cell make_object(Type kind, Color color) {
  switch (kind) {
    case Type::kKey:
      return Cell::key(color);
    case Type::kBall:
      return Cell::ball(color);
    case Type::kBox:
      return Cell::box(color);
    default:
      break;
  }
  SB_CHECK(false, "minigrid: object kind must be key, ball or box, got {}", type_name(kind));
  return Cell{};
}
}  // namespace

// ---------------------------------------------------------------------------------------
// Empty

EmptyEnv::EmptyEnv(std::string name, int size, uint64_t seed)
    : Env(std::move(name), size, size, 4 * size * size, /*see_through_walls=*/true, seed) {}

void EmptyEnv::gen_grid(int width, int height) {
  grid_.wall_rect(0, 0, width, height);
  put_obj(Cell::goal(), width - 2, height - 2);
  agent_pos_ = {1, 1};
  agent_dir_ = 0;
  mission_.text = "get to the green goal square";
}

// ---------------------------------------------------------------------------------------
// DoorKey

DoorKeyEnv::DoorKeyEnv(std::string name, int size, uint64_t seed)
    : Env(std::move(name), size, size, 10 * size * size, /*see_through_walls=*/false, seed) {}

void DoorKeyEnv::gen_grid(int width, int height) {
  grid_.wall_rect(0, 0, width, height);
  put_obj(Cell::goal(), width - 2, height - 2);
  const int split = rand_int(2, width - 2);
  grid_.vert_wall(split, 0);
  place_agent({0, 0}, {split, height});
  const int door_y = rand_int(1, width - 2);
  put_obj(Cell::door_of(Color::kYellow, DoorState::kLocked), split, door_y);
  place_obj(Cell::key(Color::kYellow), {0, 0}, {split, height});
  mission_.text = "use the key to open the door and then get to the goal";
}

// ---------------------------------------------------------------------------------------
// GoToObject

GoToObjectEnv::GoToObjectEnv(std::string name, int size, int num_objs, uint64_t seed)
    : Env(std::move(name), size, size, 5 * size * size, /*see_through_walls=*/true, seed),
      num_objs_(num_objs) {
  SB_CHECK(num_objs >= 1 && num_objs <= 3 * kNumColors,
           "GoToObject: num_objs must be 1..18 (distinct type/colour pairs), got {}", num_objs);
}

void GoToObjectEnv::gen_grid(int width, int height) {
  grid_.wall_rect(0, 0, width, height);
  const std::vector<Type> types = {Type::kKey, Type::kBall, Type::kBox};
  const std::vector<Color> colors(kColorNames.begin(), kColorNames.end());
  std::vector<std::pair<Type, Color>> objs;
  std::vector<Pos> obj_pos;
  while (static_cast<int>(objs.size()) < num_objs_) {
    const Type t = rand_elem(types);
    const Color c = rand_elem(colors);
    if (std::find(objs.begin(), objs.end(), std::make_pair(t, c)) != objs.end()) continue;
    Cell obj = make_object(t, c);
    obj.id = new_id();
    obj_pos.push_back(place_obj(obj));
    objs.emplace_back(t, c);
  }
  place_agent();
  const int idx = rand_int(0, static_cast<int>(objs.size()));
  target_pos_ = obj_pos[static_cast<size_t>(idx)];
  const auto [t, c] = objs[static_cast<size_t>(idx)];
  mission_.color = static_cast<int>(c);
  mission_.type = mission_type(t);
  mission_.text = fmt::format("go to the {} {}", color_name(c), type_name(t));
}

StepResult GoToObjectEnv::step(Action action) {
  StepResult res = minigrid_step(action);
  if (action == Action::kToggle) res.terminated = res.done = true;
  if (action == Action::kDone) {
    // Chebyshev distance <= 1 from where the target was placed (it may have been moved).
    if (std::abs(agent_pos_.x - target_pos_.x) <= 1 && std::abs(agent_pos_.y - target_pos_.y) <= 1)
      res.reward = success_reward();
    res.terminated = res.done = true;
  }
  return res;
}

// ---------------------------------------------------------------------------------------
// RoomGrid

RoomGrid::RoomGrid(std::string name, int room_size, int num_rows, int num_cols, int max_steps,
                   uint64_t seed)
    : Env(std::move(name), (room_size - 1) * num_cols + 1, (room_size - 1) * num_rows + 1,
          max_steps, /*see_through_walls=*/false, seed),
      room_size_(room_size),
      num_rows_(num_rows),
      num_cols_(num_cols) {
  SB_CHECK(room_size >= 3 && num_rows > 0 && num_cols > 0,
           "RoomGrid: room_size must be >= 3 and rows, cols > 0, got {}, {}, {}", room_size,
           num_rows, num_cols);
}

const RoomGrid::Room& RoomGrid::room_from_pos(int x, int y) const {
  SB_CHECK(x >= 0 && y >= 0, "RoomGrid: position ({}, {}) is negative", x, y);
  const int i = x / (room_size_ - 1), j = y / (room_size_ - 1);
  SB_CHECK(i < num_cols_ && j < num_rows_, "RoomGrid: position ({}, {}) is outside the rooms", x,
           y);
  return room(i, j);
}

void RoomGrid::gen_grid(int /*width*/, int /*height*/) {
  rooms_.assign(static_cast<size_t>(num_rows_ * num_cols_), Room{});
  for (int j = 0; j < num_rows_; ++j)
    for (int i = 0; i < num_cols_; ++i) {
      Room& r = room_mut(i, j);
      r.top = {i * (room_size_ - 1), j * (room_size_ - 1)};
      r.size = {room_size_, room_size_};
      grid_.wall_rect(r.top.x, r.top.y, r.size.x, r.size.y);
    }
  for (int j = 0; j < num_rows_; ++j)
    for (int i = 0; i < num_cols_; ++i) {
      Room& r = room_mut(i, j);
      const int x_l = r.top.x + 1, y_l = r.top.y + 1;
      const int x_m = r.top.x + r.size.x - 1, y_m = r.top.y + r.size.y - 1;
      // Door positions, order right, down, left, up; shared walls reuse the neighbour's.
      if (i < num_cols_ - 1) {
        r.neighbor[0] = j * num_cols_ + i + 1;
        r.door_pos[0] = Pos{x_m, rand_int(y_l, y_m)};
      }
      if (j < num_rows_ - 1) {
        r.neighbor[1] = (j + 1) * num_cols_ + i;
        r.door_pos[1] = Pos{rand_int(x_l, x_m), y_m};
      }
      if (i > 0) {
        r.neighbor[2] = j * num_cols_ + i - 1;
        r.door_pos[2] = room(i - 1, j).door_pos[0];
      }
      if (j > 0) {
        r.neighbor[3] = (j - 1) * num_cols_ + i;
        r.door_pos[3] = room(i, j - 1).door_pos[1];
      }
    }
  agent_pos_ = {(num_cols_ / 2) * (room_size_ - 1) + room_size_ / 2,
                (num_rows_ / 2) * (room_size_ - 1) + room_size_ / 2};
  agent_dir_ = 0;
}

Pos RoomGrid::place_in_room(int i, int j, const Cell& obj) {
  Room& r = room_mut(i, j);
  // reject_next_to: not within Manhattan distance 1 of the agent's (provisional) start.
  const RejectFn reject_next_to = [](const Env& env, Pos p) {
    const Pos a = env.agent_pos();
    return std::abs(a.x - p.x) + std::abs(a.y - p.y) < 2;
  };
  const Pos pos = place_obj(obj, r.top, r.size, reject_next_to, 1000);
  r.objs.emplace_back(obj.type, obj.color);
  return pos;
}

std::pair<Cell, Pos> RoomGrid::add_object(int i, int j, std::optional<Type> kind,
                                          std::optional<Color> color) {
  if (!kind) kind = rand_elem(std::vector<Type>{Type::kKey, Type::kBall, Type::kBox});
  if (!color) color = rand_color();
  Cell obj = make_object(*kind, *color);
  obj.id = new_id();
  const Pos pos = place_in_room(i, j, obj);
  return {obj, pos};
}

std::pair<Cell, Pos> RoomGrid::add_door(int i, int j, std::optional<int> door_idx,
                                        std::optional<Color> color, std::optional<bool> locked) {
  Room& r = room_mut(i, j);
  if (!door_idx) {
    // A side that has a neighbour and no door yet.
    while (true) {
      door_idx = rand_int(0, 4);
      const auto k = static_cast<size_t>(*door_idx);
      if (r.neighbor[k] >= 0 && !r.has_door[k]) break;
    }
  }
  if (!color) color = rand_color();
  if (!locked) locked = rand_bool();
  const auto k = static_cast<size_t>(*door_idx);
  SB_CHECK(!r.has_door[k], "RoomGrid: room ({}, {}) already has a door on side {}", i, j, k);
  SB_CHECK(r.door_pos[k].has_value() && r.neighbor[k] >= 0,
           "RoomGrid: room ({}, {}) has no neighbour on side {}", i, j, k);
  r.locked = *locked;
  const Cell door = Cell::door_of(*color, *locked ? DoorState::kLocked : DoorState::kClosed);
  const Pos pos = *r.door_pos[k];
  grid_.set(pos.x, pos.y, door);
  r.has_door[k] = true;
  rooms_[static_cast<size_t>(r.neighbor[k])].has_door[(k + 2) % 4] = true;
  return {door, pos};
}

void RoomGrid::remove_wall(int i, int j, int wall_idx) {
  SB_CHECK(wall_idx >= 0 && wall_idx < 4, "RoomGrid: wall index must be 0..3, got {}", wall_idx);
  Room& r = room_mut(i, j);
  const auto k = static_cast<size_t>(wall_idx);
  SB_CHECK(!r.has_door[k], "RoomGrid: room ({}, {}) has a door on side {}", i, j, k);
  SB_CHECK(r.neighbor[k] >= 0, "RoomGrid: room ({}, {}) has no neighbour on side {}", i, j, k);
  const int tx = r.top.x, ty = r.top.y, w = r.size.x, h = r.size.y;
  switch (wall_idx) {
    case 0:
      for (int d = 1; d < h - 1; ++d) grid_.clear(tx + w - 1, ty + d);
      break;
    case 1:
      for (int d = 1; d < w - 1; ++d) grid_.clear(tx + d, ty + h - 1);
      break;
    case 2:
      for (int d = 1; d < h - 1; ++d) grid_.clear(tx, ty + d);
      break;
    default:
      for (int d = 1; d < w - 1; ++d) grid_.clear(tx + d, ty);
      break;
  }
  r.has_door[k] = true;
  rooms_[static_cast<size_t>(r.neighbor[k])].has_door[(k + 2) % 4] = true;
}

Pos RoomGrid::place_agent_in_room(std::optional<int> i, std::optional<int> j, bool rand_dir) {
  if (!i) i = rand_int(0, num_cols_);
  if (!j) j = rand_int(0, num_rows_);
  const Room& r = room(*i, *j);
  while (true) {
    place_agent(r.top, r.size, rand_dir, 1000);
    const Pos f = front_pos();
    const Cell& front = grid_.get(f.x, f.y);
    if (front.empty() || front.type == Type::kWall) break;
  }
  return agent_pos_;
}

void RoomGrid::connect_all(int max_itrs) {
  const Room& start = room_from_pos(agent_pos_.x, agent_pos_.y);
  const int start_idx = static_cast<int>(&start - rooms_.data());
  std::vector<char> reach(rooms_.size());
  std::vector<int> stack;
  auto count_reach = [&] {
    std::fill(reach.begin(), reach.end(), 0);
    stack.assign(1, start_idx);
    int n = 0;
    while (!stack.empty()) {
      const int r = stack.back();
      stack.pop_back();
      if (reach[static_cast<size_t>(r)]) continue;
      reach[static_cast<size_t>(r)] = 1;
      ++n;
      for (size_t k = 0; k < 4; ++k)
        if (rooms_[static_cast<size_t>(r)].has_door[k])
          stack.push_back(rooms_[static_cast<size_t>(r)].neighbor[k]);
    }
    return n;
  };
  const std::vector<Color> door_colors(kColorNames.begin(), kColorNames.end());
  int itrs = 0;
  while (true) {
    SB_CHECK(itrs <= max_itrs, "RoomGrid {}: connect_all failed after {} iterations", name(),
             max_itrs);
    ++itrs;
    if (count_reach() == num_rows_ * num_cols_) break;
    const int i = rand_int(0, num_cols_);
    const int j = rand_int(0, num_rows_);
    const int k = rand_int(0, 4);
    const Room& r = room(i, j);
    const auto kk = static_cast<size_t>(k);
    if (!r.door_pos[kk] || r.has_door[kk]) continue;
    if (r.locked || rooms_[static_cast<size_t>(r.neighbor[kk])].locked) continue;
    const Color color = rand_elem(door_colors);
    add_door(i, j, k, color, false);
  }
}

// ---------------------------------------------------------------------------------------
// KeyCorridor

KeyCorridorEnv::KeyCorridorEnv(std::string name, int room_size, int num_rows, uint64_t seed)
    : RoomGrid(std::move(name), room_size, num_rows, 3, 30 * room_size * room_size, seed) {}

void KeyCorridorEnv::gen_grid(int width, int height) {
  RoomGrid::gen_grid(width, height);
  for (int j = 1; j < num_rows(); ++j) remove_wall(1, j, 3);
  const int room_idx = rand_int(0, num_rows());
  const auto [door, door_pos] = add_door(2, room_idx, 2, std::nullopt, true);
  const auto [obj, obj_pos] = add_object(2, room_idx, Type::kBall);
  const int key_room = rand_int(0, num_rows());
  add_object(0, key_room, Type::kKey, door.color);
  place_agent_in_room(1, num_rows() / 2);
  connect_all();
  target_id_ = obj.id;
  mission_.color = static_cast<int>(obj.color);
  mission_.type = mission_type(obj.type);
  mission_.text = fmt::format("pick up the {} {}", color_name(obj.color), type_name(obj.type));
}

StepResult KeyCorridorEnv::step(Action action) {
  StepResult res = minigrid_step(action);
  if (action == Action::kPickup && !carrying_.empty() && carrying_.id == target_id_) {
    res.reward = success_reward();
    res.terminated = res.done = true;
  }
  return res;
}

// ---------------------------------------------------------------------------------------
// Memory

MemoryEnv::MemoryEnv(std::string name, int size, bool random_length, uint64_t seed)
    : Env(std::move(name), size, size, 5 * size * size, /*see_through_walls=*/false, seed),
      random_length_(random_length) {
  SB_CHECK(size % 2 == 1 && size >= 7, "Memory: size must be odd and >= 7, got {}", size);
}

void MemoryEnv::gen_grid(int width, int height) {
  grid_.horz_wall(0, 0);
  grid_.horz_wall(0, height - 1);
  grid_.vert_wall(0, 0);
  grid_.vert_wall(width - 1, 0);
  const int mid = height / 2;
  const int upper = mid - 2, lower = mid + 2;
  const int hallway_end = random_length_ ? rand_int(4, width - 2) : width - 3;
  // Start room.
  for (int i = 1; i < 5; ++i) {
    grid_.set(i, upper, Cell::wall());
    grid_.set(i, lower, Cell::wall());
  }
  grid_.set(4, upper + 1, Cell::wall());
  grid_.set(4, lower - 1, Cell::wall());
  // Horizontal hallway.
  for (int i = 5; i < hallway_end; ++i) {
    grid_.set(i, upper + 1, Cell::wall());
    grid_.set(i, lower - 1, Cell::wall());
  }
  // Vertical hallway.
  for (int j = 0; j < height; ++j) {
    if (j != mid) grid_.set(hallway_end, j, Cell::wall());
    grid_.set(hallway_end + 2, j, Cell::wall());
  }
  agent_pos_ = {rand_int(1, hallway_end + 1), mid};
  agent_dir_ = 0;

  const Type start_obj = rand_elem(std::vector<Type>{Type::kKey, Type::kBall});
  grid_.set(1, mid - 1, make_object(start_obj, Color::kGreen));
  const auto other = rand_elem(
      std::vector<std::array<Type, 2>>{{Type::kBall, Type::kKey}, {Type::kKey, Type::kBall}});
  const Pos pos0{hallway_end + 1, mid - 2}, pos1{hallway_end + 1, mid + 2};
  grid_.set(pos0.x, pos0.y, make_object(other[0], Color::kGreen));
  grid_.set(pos1.x, pos1.y, make_object(other[1], Color::kGreen));
  if (start_obj == other[0]) {
    success_pos_ = {pos0.x, pos0.y + 1};
    failure_pos_ = {pos1.x, pos1.y - 1};
  } else {
    success_pos_ = {pos1.x, pos1.y - 1};
    failure_pos_ = {pos0.x, pos0.y + 1};
  }
  mission_.text = "go to the matching object at the end of the hallway";
}

StepResult MemoryEnv::step(Action action) {
  if (action == Action::kPickup) action = Action::kToggle;
  StepResult res = minigrid_step(action);
  if (agent_pos_ == success_pos_) {
    res.reward = success_reward();
    res.terminated = res.done = true;
  }
  if (agent_pos_ == failure_pos_) {
    res.reward = 0.0;
    res.terminated = res.done = true;
  }
  return res;
}

// ---------------------------------------------------------------------------------------
// Registry

namespace {

using Factory = std::function<std::unique_ptr<Env>(const std::string&, uint64_t)>;

struct EnvEntry {
  std::string name;
  const char* doc;  // one line
  Factory make;
};

const std::vector<EnvEntry>& registry() {
  static const std::vector<EnvEntry> reg = [] {
    std::vector<EnvEntry> r;
    for (int n : {5, 6, 8, 16}) {
      r.push_back({fmt::format("Empty-{}x{}", n, n), "reach the goal square in an empty room", [n](const std::string& name, uint64_t s) {
        return std::make_unique<EmptyEnv>(name, n, s);
      }});
    }
    for (int n : {5, 6, 8, 16}) {
      r.push_back({fmt::format("DoorKey-{}x{}", n, n), "pick up the key, open the door, reach the goal", [n](const std::string& name, uint64_t s) {
        return std::make_unique<DoorKeyEnv>(name, n, s);
      }});
    }
    for (int n : {6, 8}) {
      r.push_back({fmt::format("GoToObject-{}x{}-N2", n, n),
                   "go next to the object the mission names, among 2", [n](const std::string& name, uint64_t s) {
                       return std::make_unique<GoToObjectEnv>(name, n, 2, s);
                     }});
    }
    const std::array<std::pair<int, int>, 6> kc = {
        {{3, 1}, {3, 2}, {3, 3}, {4, 3}, {5, 3}, {6, 3}}};
    // Pairs, not structured bindings: clang before 16 cannot capture a binding.
    for (const auto& p : kc) {
      const int room = p.first, rows = p.second;
      r.push_back({fmt::format("KeyCorridorS{}R{}", room, rows),
                   "find the key behind a door, unlock the locked room, pick up the ball",
                   [room, rows](const std::string& name, uint64_t s) {
                       return std::make_unique<KeyCorridorEnv>(name, room, rows, s);
                     }});
    }
    const std::array<std::pair<int, bool>, 6> mem = {
        {{7, false}, {9, false}, {11, false}, {13, false}, {13, true}, {17, true}}};
    for (const auto& p : mem) {
      const int size = p.first;
      const bool random = p.second;
      r.push_back({fmt::format("MemoryS{}{}", size, random ? "Random" : ""),
                   "remember the object seen at the start, choose the matching one at the end",
                   [size, random](const std::string& name, uint64_t s) {
                       return std::make_unique<MemoryEnv>(name, size, random, s);
                     }});
    }
    return r;
  }();
  return reg;
}

}  // namespace

const std::vector<std::string>& env_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& e : registry()) n.push_back(e.name);
    return n;
  }();
  return names;
}

std::unique_ptr<Env> make_env(const std::string& name, uint64_t seed) {
  std::string key = name;
  // Accept gym ids: "MiniGrid-DoorKey-5x5-v0".
  if (key.rfind("MiniGrid-", 0) == 0) key = key.substr(9);
  if (key.size() > 3 && key.compare(key.size() - 3, 3, "-v0") == 0) key.resize(key.size() - 3);
  for (const auto& e : registry())
    if (e.name == key) return e.make(e.name, seed);
  throw core::UsageError(
      core::unknown_name("minigrid environment", name, env_names()) + " (see docs/minigrid.md)");
}

std::string envs_markdown() {
  std::string out = "| environment | task |\n|---|---|\n";
  for (const auto& e : registry()) out += fmt::format("| `{}` | {} |\n", e.name, e.doc);
  return out;
}

}  // namespace seqbench::rl
