// The MiniGrid tasks, each a transcription of its gym-minigrid class (minigrid/envs/*.py,
// minigrid/core/roomgrid.py). Sizes, step limits and see-through settings are MiniGrid's:
//
//   name                 grid    max_steps        see through  mission one-hot
//   Empty-NxN            NxN     4 N^2            yes          -
//   DoorKey-NxN          NxN     10 N^2           no           -
//   GoToObject-NxN-Nk    NxN     5 N^2            yes          target colour + type
//   KeyCorridorSsRr      (3(s-1)+1) x (r(s-1)+1)  30 s^2  no   target colour + ball
//   MemorySn[Random]     nxn     5 n^2            no           -
//
// Construct them through make_env (env.hpp); the classes are public so that tests and
// tools can read the task-specific state (targets, success cells).
#pragma once

#include <array>
#include <optional>
#include <utility>
#include <vector>

#include "rl/minigrid/env.hpp"

namespace seqbench::rl {

// EmptyEnv: walls around an empty room, the agent at (1, 1) facing right, the goal in the
// bottom-right corner. No randomness.
class EmptyEnv : public Env {
 public:
  EmptyEnv(std::string name, int size, uint64_t seed);

 protected:
  void gen_grid(int width, int height) override;
};

// DoorKeyEnv: a vertical wall at a random column splits the room; a locked yellow door in it;
// the agent and a yellow key on the left, the goal at the bottom right.
class DoorKeyEnv : public Env {
 public:
  DoorKeyEnv(std::string name, int size, uint64_t seed);

 protected:
  void gen_grid(int width, int height) override;
};

// GoToObjectEnv: num_objs distinct (type, colour) objects from {key, ball, box} x colours at
// random cells, the agent anywhere; mission "go to the <colour> <type>". The done action
// next to the target's original cell (8-neighbourhood, or on it) earns the reward and ends
// the episode; done elsewhere ends it with 0; toggle ends it with 0.
class GoToObjectEnv : public Env {
 public:
  GoToObjectEnv(std::string name, int size, int num_objs, uint64_t seed);
  StepResult step(Action action) override;
  Pos target_pos() const { return target_pos_; }

 protected:
  void gen_grid(int width, int height) override;

 private:
  int num_objs_;
  Pos target_pos_;
};

// RoomGrid: num_rows x num_cols rooms of room_size (walls shared), door positions drawn per
// wall, and the helpers MiniGrid's multi-room tasks build on. The agent starts in the
// middle room facing right until a task places it.
class RoomGrid : public Env {
 public:
  struct Room {
    Pos top, size;
    // Order right, down, left, up. has_door: a door or a removed wall connects that side.
    std::array<bool, 4> has_door{};
    std::array<std::optional<Pos>, 4> door_pos{};
    std::array<int, 4> neighbor{-1, -1, -1, -1};  // room index j * num_cols + i, or -1
    bool locked = false;
    std::vector<std::pair<Type, Color>> objs;
  };
  int num_rows() const { return num_rows_; }
  int num_cols() const { return num_cols_; }
  int room_size() const { return room_size_; }
  const Room& room(int i, int j) const { return rooms_[static_cast<size_t>(j * num_cols_ + i)]; }
  // Room containing a cell (room_from_pos).
  const Room& room_from_pos(int x, int y) const;

 protected:
  RoomGrid(std::string name, int room_size, int num_rows, int num_cols, int max_steps,
           uint64_t seed);
  void gen_grid(int width, int height) override;

  Room& room_mut(int i, int j) { return rooms_[static_cast<size_t>(j * num_cols_ + i)]; }
  // place_in_room / add_object: a new object in room (i, j), not next to the agent.
  Pos place_in_room(int i, int j, const Cell& obj);
  // kind is key/ball/box (random when nullopt), colour random when nullopt.
  std::pair<Cell, Pos> add_object(int i, int j, std::optional<Type> kind = std::nullopt,
                                  std::optional<Color> color = std::nullopt);
  std::pair<Cell, Pos> add_door(int i, int j, std::optional<int> door_idx = std::nullopt,
                                std::optional<Color> color = std::nullopt,
                                std::optional<bool> locked = std::nullopt);
  void remove_wall(int i, int j, int wall_idx);
  // Places the agent in room (i, j) (random when nullopt), redrawing until it does not
  // face an object (a wall or nothing in front).
  Pos place_agent_in_room(std::optional<int> i = std::nullopt, std::optional<int> j = std::nullopt,
                          bool rand_dir = true);
  // connect_all: adds unlocked doors of random colours until every room is reachable.
  void connect_all(int max_itrs = 5000);

 private:
  int room_size_, num_rows_, num_cols_;
  std::vector<Room> rooms_;
};

// KeyCorridorEnv: the middle column of rooms is a corridor; a locked door on the left wall of
// a random right-column room, a ball (the target) behind it, the door's key in a random
// left-column room. Picking up the target ends the episode with the reward. The agent keeps
// the key after unlocking, so it must drop it before it can pick up the ball.
class KeyCorridorEnv : public RoomGrid {
 public:
  KeyCorridorEnv(std::string name, int room_size, int num_rows, uint64_t seed);
  StepResult step(Action action) override;
  int32_t target_id() const { return target_id_; }

 protected:
  void gen_grid(int width, int height) override;

 private:
  int32_t target_id_ = -1;
};

// MemoryEnv: a start room showing a green key or ball at (1, H/2 - 1), a corridor along row
// H/2 to a vertical split, a green key and ball at its two ends (random order). Stepping
// onto the cell next to the matching object (success_pos) ends the episode with the reward,
// onto the other one (failure_pos) with 0. pickup acts as toggle.
class MemoryEnv : public Env {
 public:
  MemoryEnv(std::string name, int size, bool random_length, uint64_t seed);
  StepResult step(Action action) override;
  Pos success_pos() const { return success_pos_; }
  Pos failure_pos() const { return failure_pos_; }

 protected:
  void gen_grid(int width, int height) override;

 private:
  bool random_length_;
  Pos success_pos_, failure_pos_;
};

}  // namespace seqbench::rl
