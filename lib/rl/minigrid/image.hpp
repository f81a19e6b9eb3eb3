// A picture of a MiniGrid state for people (docs, `seqbench minigrid --play --png DIR`):
// tile x tile pixels per cell in MiniGrid's palette (walls grey, goal green, lava orange,
// coloured doors, keys, balls and boxes, the agent a red triangle pointing its way), with
// the agent's 7x7 view brightened as MiniGrid's render(highlight=True) does.
#pragma once

#include <cstdint>
#include <vector>

#include "rl/minigrid/env.hpp"

namespace seqbench::rl {

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;  // (height, width, 3) row-major
};

Image render_image(const Env& env, int tile = 24);

}  // namespace seqbench::rl
