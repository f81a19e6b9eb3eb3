// MiniGridEnv: the agent, its actions, its egocentric view and the episode loop.
//
// Follows gym-minigrid's MiniGridEnv (minigrid_env.py) rule for rule:
// - step(): step_count += 1; left/right turn; forward moves onto an empty or overlappable
//   cell, ends the episode with reward 1 - 0.9 * step_count / max_steps on a goal and with
//   0 on lava; pickup takes a key/ball/box in front when the hands are empty; drop puts the
//   carried object in front when that cell is empty; toggle opens/closes a door (a locked
//   door opens only for a key of its colour, which the agent keeps) or replaces a box by
//   its contents; done does nothing here. step_count >= max_steps ends the episode
//   (truncated). Stepping after done is allowed, as in Python; callers reset.
// - the observation (gen_obs_grid + Grid.encode): the 7x7 cells ahead of the agent, rotated
//   so that the agent sits at view (3, 6) facing up (view y = 0 is farthest); cells outside
//   the world read as walls; unless the environment sees through walls, process_vis hides
//   (encodes as unseen (0, 0, 0)) what walls and closed doors occlude; the agent's own cell
//   shows the carried object, or empty.
// Random layouts use core::Rng, not numpy's generator, so a seed gives a different layout
// than in Python; the generation procedure (which draws in which order) is the same.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "rl/minigrid/world.hpp"

namespace seqbench::rl {

enum class Action : uint8_t {
  kLeft = 0,
  kRight = 1,
  kForward = 2,
  kPickup = 3,
  kDrop = 4,
  kToggle = 5,
  kDone = 6,
};
inline constexpr int kNumActions = 7;
const char* action_name(Action a);
// "left", "right", "forward"/"fwd", "pickup", "drop", "toggle", "done"; throws UsageError.
Action parse_action(const std::string& name);

inline constexpr int kViewSize = 7;  // AGENT_VIEW_SIZE
inline constexpr int kImageSize = kViewSize * kViewSize * 3;
// Mission one-hot: the target's colour (COLOR_TO_IDX order, 6) then its type (key, ball,
// box: 3). All zeros for tasks whose mission string never changes.
inline constexpr int kMissionSize = kNumColors + 3;

// What the agent observes after reset() or step().
struct Obs {
  // (7, 7, 3) uint8 as MiniGrid's obs["image"]: element [x][y][c] at (x * 7 + y) * 3 + c,
  // x = 0..6 left to right across the view, y = 0 farthest .. 6 the agent's row; c =
  // (type, colour, state). The agent itself is at (3, 6) facing up (toward y = 0).
  std::array<uint8_t, kImageSize> image{};
  int direction = 0;                            // obs["direction"]: agent_dir, 0..3
  std::array<uint8_t, kMissionSize> mission{};  // one-hot, see kMissionSize

  const uint8_t* cell(int x, int y) const { return image.data() + (x * kViewSize + y) * 3; }
  Type type_at(int x, int y) const { return static_cast<Type>(cell(x, y)[0]); }
};

struct StepResult {
  Obs obs;
  double reward = 0.0;
  bool done = false;        // terminated || truncated (gym-minigrid 1.x's single flag)
  bool terminated = false;  // the task ended it: success, lava, or the task's own rule
  bool truncated = false;   // the step limit was reached (step_count >= max_steps)
};

// The target an environment names in its mission, and the text MiniGrid would show.
struct Mission {
  std::string text;
  int color = -1;  // COLOR_TO_IDX of the target, or -1
  int type = -1;   // 0 key, 1 ball, 2 box, or -1
};

// The agent's 7x7 view before encoding (gen_obs_grid): cells as the agent sees them, with
// hidden ones cleared, and the visibility mask. Indexed [x][y] as Obs::image.
struct View {
  std::array<Cell, kViewSize * kViewSize> cells{};
  std::array<bool, kViewSize * kViewSize> visible{};
  Cell& at(int x, int y) { return cells[static_cast<size_t>(x * kViewSize + y)]; }
  const Cell& at(int x, int y) const { return cells[static_cast<size_t>(x * kViewSize + y)]; }
  bool vis(int x, int y) const { return visible[static_cast<size_t>(x * kViewSize + y)]; }
};

// gen_obs_grid for an agent at `agent` facing `dir` in `world`, carrying `carrying`
// (empty Cell for nothing). see_through_walls skips process_vis (everything in the square
// is visible), as MiniGrid does for Empty and GoToObject.
void gen_obs_grid(const Grid& world, Pos agent, int dir, const Cell& carrying,
                  bool see_through_walls, View& dst);
// gen_obs: the view encoded (unseen cells (0, 0, 0)), direction set, mission left zero.
Obs observe(const Grid& world, Pos agent, int dir, const Cell& carrying, bool see_through_walls);
// Grid.process_vis on a 7x7 view with the agent at (3, 6): fills view.visible and clears
// the cells it hides.
void process_vis(View& view);
// Two characters per cell like MiniGrid's __str__, for a 7x7 observation: the agent's cell
// shows "^^" unless it carries something, unseen cells show "..".
std::string render_obs(const Obs& obs);

class Env {
 public:
  virtual ~Env() = default;
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

  const std::string& name() const { return name_; }
  // Reseeds the layout stream; the next reset() draws its layout from it.
  void seed(uint64_t seed) { rng_ = core::Rng(seed); }
  // A new episode: a fresh layout from the environment's random stream (so successive
  // resets give different layouts, and the same seed gives the same sequence of them).
  Obs reset();
  Obs reset(uint64_t seed) {
    this->seed(seed);
    return reset();
  }
  virtual StepResult step(Action action);
  // gen_obs() for the current state (what the last reset/step returned).
  Obs observation() const;

  // MiniGridEnv.__str__: one line per row, two characters per cell: object letter (W wall,
  // F floor, D door, K key, A ball, B box, G goal, V lava) and colour initial; "  " empty;
  // doors "__" open, "L<c>" locked, "D<c>" closed; the agent ">>", "VV", "<<", "^^".
  std::string render() const;

  // State, for tests, renderers and agents that need more than the observation.
  const Grid& grid() const { return grid_; }
  Pos agent_pos() const { return agent_pos_; }
  int agent_dir() const { return agent_dir_; }
  Pos front_pos() const;
  const Cell& carrying() const { return carrying_; }  // type kEmpty when nothing
  int step_count() const { return step_count_; }
  int max_steps() const { return max_steps_; }
  bool see_through_walls() const { return see_through_walls_; }
  const Mission& mission() const { return mission_; }
  // MiniGridEnv._reward(): what success is worth at the current step count.
  double success_reward() const;
  // FullyObsWrapper: dst (W, H, 3) = grid.encode() with the agent cell set to
  // (10, red, agent_dir).
  void encode_full(uint8_t* dst) const;

 protected:
  Env(std::string name, int width, int height, int max_steps, bool see_through_walls,
      uint64_t seed);

  // _gen_grid(width, height): build grid_, set agent_pos_/agent_dir_ and mission_.
  virtual void gen_grid(int width, int height) = 0;
  // MiniGridEnv.step, for subclasses that add their own rules after it.
  StepResult minigrid_step(Action action);
  // Door.toggle / Box.toggle on the cell at pos.
  void toggle(Pos pos);

  // Random helpers, named and drawing in the same order as MiniGridEnv's.
  int rand_int(int low, int high);  // [low, high)
  bool rand_bool() { return rand_int(0, 2) == 0; }
  template <class T>
  const T& rand_elem(const std::vector<T>& v) {
    return v[static_cast<size_t>(rand_int(0, static_cast<int>(v.size())))];
  }
  Color rand_color() { return kColorNames[static_cast<size_t>(rand_int(0, kNumColors))]; }

  using RejectFn = std::function<bool(const Env&, Pos)>;
  static constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();
  // place_obj: a uniform position in [top, top + size) clipped to the grid (size {-1,-1}
  // = whole grid) that is empty, not the agent and not rejected; an empty `obj` (the
  // agent) places nothing. Throws after max_tries failures.
  Pos place_obj(const Cell& obj, Pos top = {0, 0}, Pos size = {-1, -1},
                const RejectFn& reject = nullptr, int64_t max_tries = kNoLimit);
  void put_obj(const Cell& obj, int x, int y);
  Pos place_agent(Pos top = {0, 0}, Pos size = {-1, -1}, bool rand_dir = true,
                  int64_t max_tries = kNoLimit);
  // A fresh identity for an object whose later whereabouts the environment checks.
  int32_t new_id() { return next_id_++; }

  Grid grid_;
  Pos agent_pos_{-1, -1};
  int agent_dir_ = -1;
  Cell carrying_;
  Mission mission_;
  int width_, height_;

 private:
  std::string name_;
  int max_steps_;
  bool see_through_walls_;
  int step_count_ = 0;
  int32_t next_id_ = 0;
  bool started_ = false;
  core::Rng rng_;
};

// The registry. Names are MiniGrid's without the "MiniGrid-" prefix and "-v0" suffix
// ("DoorKey-5x5"); the full gym ids are accepted too. Unknown names throw UsageError with
// the nearest registered name.
std::unique_ptr<Env> make_env(const std::string& name, uint64_t seed);
const std::vector<std::string>& env_names();
// The docs table of the environments: | environment | task |.
std::string envs_markdown();

}  // namespace seqbench::rl
