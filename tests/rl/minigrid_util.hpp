// Helpers for the MiniGrid tests: hand-made worlds from text, and a small planner that
// turns "go and face that cell" into actions.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <deque>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "rl/minigrid/envs.hpp"

namespace seqbench::rltest {

using rl::Action;
using rl::Cell;
using rl::Color;
using rl::DoorState;
using rl::Pos;
using rl::Type;

inline Color color_of_letter(char c) {
  switch (c) {
    case 'R':
      return Color::kRed;
    case 'G':
      return Color::kGreen;
    case 'B':
      return Color::kBlue;
    case 'P':
      return Color::kPurple;
    case 'Y':
      return Color::kYellow;
    case 'E':
      return Color::kGrey;  // parser only: render() prints grey as 'G' like MiniGrid
    default:
      ADD_FAILURE() << "bad colour letter '" << c << "'";
      return Color::kRed;
  }
}

// A world written like Env::render(): two characters per cell, rows separated by '\n'.
// "  " empty, "W?" wall, "G?" goal, "V?" lava, "F<c>" floor, "K<c>" key, "A<c>" ball,
// "B<c>" box, "D<c>" closed door, "L<c>" locked door, "O<c>" open door (parser only; render
// shows "__"), agent ">>" "VV" "<<" "^^". Colours R G B P Y, E for grey.
class HandEnv : public rl::Env {
 public:
  explicit HandEnv(const std::string& map, bool see_through_walls = false, int max_steps = 100)
      : HandEnv(parse(map), see_through_walls, max_steps) {}

  // Test access to the state MiniGrid's tests poke at directly.
  rl::Grid& world() { return grid_; }
  void set_agent(Pos p, int dir) {
    agent_pos_ = p;
    agent_dir_ = dir;
  }
  void set_carrying(const Cell& c) { carrying_ = c; }

 protected:
  void gen_grid(int, int) override {
    grid_ = parsed_.grid;
    agent_pos_ = parsed_.agent;
    agent_dir_ = parsed_.dir;
  }

 private:
  struct Parsed {
    rl::Grid grid;
    Pos agent{-1, -1};
    int dir = -1;
  };
  HandEnv(Parsed p, bool see_through_walls, int max_steps)
      : Env("hand", p.grid.width(), p.grid.height(), max_steps, see_through_walls, 0),
        parsed_(std::move(p)) {}

  static Parsed parse(const std::string& map) {
    std::vector<std::string> rows;
    std::stringstream ss(map);
    for (std::string line; std::getline(ss, line);) rows.push_back(line);
    const int h = static_cast<int>(rows.size());
    const int w = static_cast<int>(rows.at(0).size() / 2);
    Parsed p;
    p.grid = rl::Grid(w, h);
    for (int y = 0; y < h; ++y) {
      EXPECT_EQ(rows[static_cast<size_t>(y)].size(), static_cast<size_t>(2 * w)) << "row " << y;
      for (int x = 0; x < w; ++x) {
        const char a = rows[static_cast<size_t>(y)][static_cast<size_t>(2 * x)];
        const char b = rows[static_cast<size_t>(y)][static_cast<size_t>(2 * x + 1)];
        const std::string s{a, b};
        if (s == "  ") continue;
        if (s == ">>" || s == "VV" || s == "<<" || s == "^^") {
          p.agent = {x, y};
          p.dir = s == ">>" ? 0 : s == "VV" ? 1 : s == "<<" ? 2 : 3;
          continue;
        }
        Cell c;
        switch (a) {
          case 'W':
            c = Cell::wall();
            break;
          case 'G':
            c = Cell::goal();
            break;
          case 'V':
            c = Cell::lava();
            break;
          case 'F':
            c = Cell::floor(color_of_letter(b));
            break;
          case 'K':
            c = Cell::key(color_of_letter(b));
            break;
          case 'A':
            c = Cell::ball(color_of_letter(b));
            break;
          case 'B':
            c = Cell::box(color_of_letter(b));
            break;
          case 'D':
            c = Cell::door_of(color_of_letter(b), DoorState::kClosed);
            break;
          case 'L':
            c = Cell::door_of(color_of_letter(b), DoorState::kLocked);
            break;
          case 'O':
            c = Cell::door_of(color_of_letter(b), DoorState::kOpen);
            break;
          default:
            ADD_FAILURE() << "bad cell '" << s << "' at (" << x << ", " << y << ")";
        }
        p.grid.set(x, y, c);
      }
    }
    return p;
  }

  Parsed parsed_;
};

// Visibility of an observation as text, one row per view row: '#' seen, '.' unseen.
inline std::string vis_text(const rl::Obs& obs) {
  std::string s;
  for (int y = 0; y < rl::kViewSize; ++y) {
    for (int x = 0; x < rl::kViewSize; ++x) s += obs.type_at(x, y) == Type::kUnseen ? '.' : '#';
    if (y + 1 < rl::kViewSize) s += '\n';
  }
  return s;
}

// Breadth-first search over (x, y, dir) for the fewest actions that leave the agent facing
// a cell that satisfies `goal`. Cells the agent can enter: empty, overlappable, and closed
// unlocked doors (entered by toggle + forward). Lava is never entered. Returns nullopt when
// no such cell is reachable.
template <class GoalFn>
std::optional<std::vector<Action>> plan_to_face(const rl::Env& env, GoalFn goal) {
  const rl::Grid& g = env.grid();
  const int W = g.width(), H = g.height();
  auto id = [&](Pos p, int d) { return (p.y * W + p.x) * 4 + d; };
  std::vector<int> prev(static_cast<size_t>(W * H * 4), -2);
  std::vector<std::vector<Action>> how(prev.size());
  std::deque<std::pair<Pos, int>> q;
  const Pos start = env.agent_pos();
  prev[static_cast<size_t>(id(start, env.agent_dir()))] = -1;
  q.emplace_back(start, env.agent_dir());
  while (!q.empty()) {
    const auto [p, d] = q.front();
    q.pop_front();
    const Pos f{p.x + rl::kDirToVec[static_cast<size_t>(d)].x,
                p.y + rl::kDirToVec[static_cast<size_t>(d)].y};
    if (g.contains(f.x, f.y) && goal(f)) {
      std::vector<Action> acts;
      for (int s = id(p, d); prev[static_cast<size_t>(s)] != -1; s = prev[static_cast<size_t>(s)]) {
        const auto& a = how[static_cast<size_t>(s)];
        acts.insert(acts.begin(), a.begin(), a.end());
      }
      return acts;
    }
    std::vector<std::tuple<Pos, int, std::vector<Action>>> next = {
        {p, (d + 3) % 4, {Action::kLeft}}, {p, (d + 1) % 4, {Action::kRight}}};
    if (g.contains(f.x, f.y)) {
      const Cell& c = g.get(f.x, f.y);
      if (c.type != Type::kLava) {
        if (c.empty() || c.can_overlap())
          next.emplace_back(f, d, std::vector{Action::kForward});
        else if (c.type == Type::kDoor && c.door == DoorState::kClosed)
          next.emplace_back(f, d, std::vector{Action::kToggle, Action::kForward});
      }
    }
    for (auto& [np, nd, acts] : next) {
      const auto k = static_cast<size_t>(id(np, nd));
      if (prev[k] != -2) continue;
      prev[k] = id(p, d);
      how[k] = acts;
      q.emplace_back(np, nd);
    }
  }
  return std::nullopt;
}

inline std::optional<std::vector<Action>> plan_to_face(const rl::Env& env, Pos target) {
  return plan_to_face(env, [target](Pos p) { return p == target; });
}

inline std::optional<Pos> find_cell(const rl::Grid& g, Type t,
                                    std::optional<DoorState> state = std::nullopt) {
  for (int y = 0; y < g.height(); ++y)
    for (int x = 0; x < g.width(); ++x) {
      const Cell& c = g.get(x, y);
      if (c.type == t && (!state || c.door == *state)) return Pos{x, y};
    }
  return std::nullopt;
}

// Runs actions, requiring that none but (optionally) the last ends the episode. Returns
// the last result.
inline rl::StepResult run(rl::Env& env, const std::vector<Action>& acts, bool last_may_end) {
  rl::StepResult r;
  for (size_t i = 0; i < acts.size(); ++i) {
    r = env.step(acts[i]);
    if (i + 1 < acts.size() || !last_may_end) {
      EXPECT_FALSE(r.done) << "episode ended early at action " << i << " ("
                           << rl::action_name(acts[i]) << ")\n"
                           << env.render();
      EXPECT_EQ(r.reward, 0.0);
    }
  }
  return r;
}

}  // namespace seqbench::rltest
