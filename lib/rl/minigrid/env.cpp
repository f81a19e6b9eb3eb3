#include "rl/minigrid/env.hpp"

#include <algorithm>

#include "core/check.hpp"

namespace seqbench::rl {

namespace {

constexpr std::array<const char*, kNumActions> kActionNames = {
    "left", "right", "forward", "pickup", "drop", "toggle", "done"};

// OBJECT_TO_STR of MiniGridEnv.__str__, indexed by Type.
constexpr std::array<char, kNumTypes> kTypeChar = {'?', ' ', 'W', 'F', 'D', 'K',
                                                   'A', 'B', 'G', 'V', '?'};
// c.color[0].upper(), indexed by Color.
constexpr std::array<char, kNumColors> kColorChar = {'R', 'G', 'B', 'P', 'Y', 'G'};
constexpr std::array<char, 4> kDirChar = {'>', 'V', '<', '^'};

void append_cell(std::string& out, const Cell& c) {
  if (c.empty()) {
    out += "  ";
  } else if (c.type == Type::kDoor) {
    if (c.door == DoorState::kOpen) {
      out += "__";
    } else {
      out += c.door == DoorState::kLocked ? 'L' : 'D';
      out += kColorChar[static_cast<size_t>(c.color)];
    }
  } else {
    out += kTypeChar[static_cast<size_t>(c.type)];
    out += kColorChar[static_cast<size_t>(c.color)];
  }
}

}  // namespace

const char* action_name(Action a) {
  const auto i = static_cast<size_t>(a);
  return i < kActionNames.size() ? kActionNames[i] : "?";
}

Action parse_action(const std::string& name) {
  if (name == "fwd") return Action::kForward;
  for (size_t i = 0; i < kActionNames.size(); ++i)
    if (name == kActionNames[i]) return static_cast<Action>(i);
  throw core::UsageError(fmt::format(
      "unknown minigrid action '{}' (hint: one of left, right, forward, pickup, drop, toggle, "
      "done)",
      name));
}

// ---------------------------------------------------------------------------------------
// Observation

void process_vis(View& view) {
  // Grid.process_vis with agent_pos = (3, 6), verbatim: sweep rows from the agent's row
  // upwards; light spreads right then left along a row and diagonally up, stopping at cells
  // that cannot be seen behind.
  constexpr int W = kViewSize, H = kViewSize;
  auto& mask = view.visible;
  mask.fill(false);
  auto m = [&](int x, int y) -> bool& { return mask[static_cast<size_t>(x * W + y)]; };
  m(W / 2, H - 1) = true;
  for (int j = H - 1; j >= 0; --j) {
    for (int i = 0; i < W - 1; ++i) {
      if (!m(i, j)) continue;
      const Cell& cell = view.at(i, j);
      if (!cell.empty() && !cell.see_behind()) continue;
      m(i + 1, j) = true;
      if (j > 0) {
        m(i + 1, j - 1) = true;
        m(i, j - 1) = true;
      }
    }
    for (int i = W - 1; i >= 1; --i) {
      if (!m(i, j)) continue;
      const Cell& cell = view.at(i, j);
      if (!cell.empty() && !cell.see_behind()) continue;
      m(i - 1, j) = true;
      if (j > 0) {
        m(i - 1, j - 1) = true;
        m(i, j - 1) = true;
      }
    }
  }
  for (int i = 0; i < W; ++i)
    for (int j = 0; j < H; ++j)
      if (!m(i, j)) view.at(i, j) = Cell{};
}

void gen_obs_grid(const Grid& world, Pos agent, int dir, const Cell& carrying,
                  bool see_through_walls, View& dst) {
  SB_CHECK(dir >= 0 && dir < 4, "minigrid agent direction must be 0..3, got {}", dir);
  // Grid.slice(get_view_exts) followed by rotate_left() agent_dir + 1 times places world
  // cell agent + f * (6 - vy) + r * (vx - 3) at view (vx, vy), f the facing vector and r =
  // (-f.y, f.x) the agent's right; computing that directly avoids four grid copies (the
  // equivalence is tested against a literal slice + rotate).
  const Pos f = kDirToVec[static_cast<size_t>(dir)];
  const Pos r{-f.y, f.x};
  constexpr int hs = kViewSize / 2;
  for (int vx = 0; vx < kViewSize; ++vx)
    for (int vy = 0; vy < kViewSize; ++vy) {
      const int ahead = kViewSize - 1 - vy, side = vx - hs;
      dst.at(vx, vy) =
          world.get_or_wall(agent.x + f.x * ahead + r.x * side, agent.y + f.y * ahead + r.y * side);
    }
  if (see_through_walls)
    dst.visible.fill(true);
  else
    process_vis(dst);
  // The agent sees what it carries at its own position.
  dst.at(hs, kViewSize - 1) = carrying;
}

Obs observe(const Grid& world, Pos agent, int dir, const Cell& carrying, bool see_through_walls) {
  View view;
  gen_obs_grid(world, agent, dir, carrying, see_through_walls, view);
  Obs obs;
  for (int x = 0; x < kViewSize; ++x)
    for (int y = 0; y < kViewSize; ++y) {
      uint8_t* d = obs.image.data() + (x * kViewSize + y) * 3;
      if (!view.vis(x, y)) continue;  // unseen: (0, 0, 0)
      const auto e = view.at(x, y).encode();
      d[0] = e[0];
      d[1] = e[1];
      d[2] = e[2];
    }
  obs.direction = dir;
  return obs;
}

std::string render_obs(const Obs& obs) {
  std::string out;
  for (int y = 0; y < kViewSize; ++y) {
    for (int x = 0; x < kViewSize; ++x) {
      const uint8_t* c = obs.cell(x, y);
      if (c[0] == static_cast<uint8_t>(Type::kUnseen)) {
        out += "..";
      } else if (x == kViewSize / 2 && y == kViewSize - 1 &&
                 c[0] == static_cast<uint8_t>(Type::kEmpty)) {
        out += "^^";
      } else {
        Cell cell;
        cell.type = static_cast<Type>(c[0] < kNumTypes ? c[0] : 0);
        cell.color = static_cast<Color>(c[1] < kNumColors ? c[1] : 0);
        cell.door = static_cast<DoorState>(c[2] <= 2 ? c[2] : 0);
        append_cell(out, cell);
      }
    }
    if (y + 1 < kViewSize) out += '\n';
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Env

Env::Env(std::string name, int width, int height, int max_steps, bool see_through_walls,
         uint64_t seed)
    : width_(width),
      height_(height),
      name_(std::move(name)),
      max_steps_(max_steps),
      see_through_walls_(see_through_walls),
      rng_(seed) {
  SB_CHECK(max_steps > 0, "minigrid env {}: max_steps must be positive, got {}", name_, max_steps);
}

Obs Env::reset() {
  agent_pos_ = {-1, -1};
  agent_dir_ = -1;
  next_id_ = 0;
  carrying_ = Cell{};
  mission_ = Mission{};
  grid_ = Grid(width_, height_);
  gen_grid(width_, height_);
  SB_CHECK(grid_.contains(agent_pos_.x, agent_pos_.y) && agent_dir_ >= 0 && agent_dir_ < 4,
           "minigrid env {}: gen_grid left the agent at ({}, {}) facing {} (hint: set "
           "agent_pos_ and agent_dir_)",
           name_, agent_pos_.x, agent_pos_.y, agent_dir_);
  const Cell& start = grid_.get(agent_pos_.x, agent_pos_.y);
  SB_CHECK(start.empty() || start.can_overlap(),
           "minigrid env {}: the agent starts on a {} at ({}, {})", name_, type_name(start.type),
           agent_pos_.x, agent_pos_.y);
  carrying_ = Cell{};
  step_count_ = 0;
  started_ = true;
  return observation();
}

Pos Env::front_pos() const {
  const Pos d = kDirToVec[static_cast<size_t>(agent_dir_ & 3)];
  return {agent_pos_.x + d.x, agent_pos_.y + d.y};
}

double Env::success_reward() const {
  return 1.0 - 0.9 * (static_cast<double>(step_count_) / static_cast<double>(max_steps_));
}

Obs Env::observation() const {
  Obs obs = observe(grid_, agent_pos_, agent_dir_, carrying_, see_through_walls_);
  if (mission_.color >= 0) obs.mission[static_cast<size_t>(mission_.color)] = 1;
  if (mission_.type >= 0) obs.mission[static_cast<size_t>(kNumColors + mission_.type)] = 1;
  return obs;
}

StepResult Env::step(Action action) { return minigrid_step(action); }

StepResult Env::minigrid_step(Action action) {
  SB_CHECK(started_, "minigrid env {}: step() before reset() (hint: call reset() first)", name_);
  SB_CHECK(static_cast<int>(action) < kNumActions, "minigrid env {}: action {} out of range 0..{}",
           name_, static_cast<int>(action), kNumActions - 1);
  ++step_count_;
  StepResult res;
  const Pos fwd = front_pos();
  SB_CHECK(grid_.contains(fwd.x, fwd.y),
           "minigrid env {}: the cell in front of the agent ({}, {}) is outside the grid (hint: "
           "surround hand-made grids with walls)",
           name_, fwd.x, fwd.y);
  const Cell fwd_cell = grid_.get(fwd.x, fwd.y);

  switch (action) {
    case Action::kLeft:
      agent_dir_ = (agent_dir_ + 3) % 4;
      break;
    case Action::kRight:
      agent_dir_ = (agent_dir_ + 1) % 4;
      break;
    case Action::kForward:
      if (fwd_cell.empty() || fwd_cell.can_overlap()) agent_pos_ = fwd;
      if (fwd_cell.type == Type::kGoal) {
        res.terminated = true;
        res.reward = success_reward();
      }
      if (fwd_cell.type == Type::kLava) res.terminated = true;
      break;
    case Action::kPickup:
      if (!fwd_cell.empty() && fwd_cell.can_pickup() && carrying_.empty()) {
        carrying_ = fwd_cell;
        grid_.clear(fwd.x, fwd.y);
      }
      break;
    case Action::kDrop:
      if (fwd_cell.empty() && !carrying_.empty()) {
        grid_.set(fwd.x, fwd.y, carrying_);
        carrying_ = Cell{};
      }
      break;
    case Action::kToggle:
      if (!fwd_cell.empty()) toggle(fwd);
      break;
    case Action::kDone:
      break;
  }

  res.truncated = step_count_ >= max_steps_;
  res.done = res.terminated || res.truncated;
  res.obs = observation();
  return res;
}

void Env::toggle(Pos pos) {
  Cell& c = grid_.at(pos.x, pos.y);
  if (c.type == Type::kDoor) {
    if (c.door == DoorState::kLocked) {
      // Door.toggle: only the matching key unlocks, and the agent keeps the key.
      if (carrying_.type == Type::kKey && carrying_.color == c.color) c.door = DoorState::kOpen;
    } else {
      c.door = c.door == DoorState::kOpen ? DoorState::kClosed : DoorState::kOpen;
    }
  } else if (c.type == Type::kBox) {
    // Box.toggle: the box is replaced by what it contains (possibly nothing).
    Cell inside;
    if (c.content != Type::kEmpty) {
      inside.type = c.content;
      inside.color = c.content_color;
      inside.door = inside.type == Type::kDoor ? DoorState::kClosed : DoorState::kOpen;
    }
    c = inside;
  }
}

std::string Env::render() const {
  std::string out;
  out.reserve(static_cast<size_t>((2 * grid_.width() + 1) * grid_.height()));
  for (int j = 0; j < grid_.height(); ++j) {
    for (int i = 0; i < grid_.width(); ++i) {
      if (i == agent_pos_.x && j == agent_pos_.y) {
        out.append(2, kDirChar[static_cast<size_t>(agent_dir_ & 3)]);
        continue;
      }
      append_cell(out, grid_.get(i, j));
    }
    if (j + 1 < grid_.height()) out += '\n';
  }
  return out;
}

void Env::encode_full(uint8_t* dst) const {
  grid_.encode(dst);
  uint8_t* a = dst + (static_cast<size_t>(agent_pos_.x) * static_cast<size_t>(grid_.height()) +
                      static_cast<size_t>(agent_pos_.y)) *
                         3;
  a[0] = static_cast<uint8_t>(Type::kAgent);
  a[1] = static_cast<uint8_t>(Color::kRed);
  a[2] = static_cast<uint8_t>(agent_dir_);
}

// ---------------------------------------------------------------------------------------
// Generation helpers

int Env::rand_int(int low, int high) {
  SB_CHECK(high > low, "minigrid env {}: rand_int({}, {}) has an empty range", name_, low, high);
  return low + static_cast<int>(rng_.randint(high - low));
}

Pos Env::place_obj(const Cell& obj, Pos top, Pos size, const RejectFn& reject, int64_t max_tries) {
  top = {std::max(top.x, 0), std::max(top.y, 0)};
  if (size.x < 0 || size.y < 0) size = {grid_.width(), grid_.height()};
  int64_t tries = 0;
  Pos pos;
  while (true) {
    // Python raises RecursionError: rejection sampling cannot find a free cell.
    SB_CHECK(tries <= max_tries,
             "minigrid env {}: place_obj found no free cell in [{},{})x[{},{}) after {} tries",
             name_, top.x, top.x + size.x, top.y, top.y + size.y, tries);
    ++tries;
    pos.x = rand_int(top.x, std::min(top.x + size.x, grid_.width()));
    pos.y = rand_int(top.y, std::min(top.y + size.y, grid_.height()));
    if (!grid_.get(pos.x, pos.y).empty()) continue;
    if (pos == agent_pos_) continue;
    if (reject && reject(*this, pos)) continue;
    break;
  }
  if (!obj.empty()) put_obj(obj, pos.x, pos.y);
  return pos;
}

void Env::put_obj(const Cell& obj, int x, int y) { grid_.set(x, y, obj); }

Pos Env::place_agent(Pos top, Pos size, bool rand_dir, int64_t max_tries) {
  agent_pos_ = {-1, -1};
  const Pos pos = place_obj(Cell{}, top, size, nullptr, max_tries);
  agent_pos_ = pos;
  if (rand_dir) agent_dir_ = rand_int(0, 4);
  return pos;
}

}  // namespace seqbench::rl
