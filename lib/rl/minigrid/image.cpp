#include "rl/minigrid/image.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace seqbench::rl {
namespace {

using Rgb = std::array<uint8_t, 3>;

// MiniGrid's COLORS.
Rgb color_rgb(Color c) {
  switch (c) {
    case Color::kRed:
      return {255, 0, 0};
    case Color::kGreen:
      return {0, 255, 0};
    case Color::kBlue:
      return {0, 0, 255};
    case Color::kPurple:
      return {112, 39, 195};
    case Color::kYellow:
      return {255, 255, 0};
    case Color::kGrey:
      return {100, 100, 100};
  }
  return {0, 0, 0};
}

struct Canvas {
  Image& img;
  void set(int x, int y, Rgb c) {
    if (x < 0 || y < 0 || x >= img.width || y >= img.height) return;
    uint8_t* p = img.rgb.data() + (size_t(y) * size_t(img.width) + size_t(x)) * 3;
    p[0] = c[0], p[1] = c[1], p[2] = c[2];
  }
  // Fills the pixels of tile (tx, ty) whose centre (u, v) in [0,1]^2 satisfies inside.
  template <class F>
  void fill(int tx, int ty, int tile, Rgb c, F inside) {
    for (int py = 0; py < tile; ++py)
      for (int px = 0; px < tile; ++px)
        if (inside((px + 0.5) / tile, (py + 0.5) / tile)) set(tx * tile + px, ty * tile + py, c);
  }
};

// Is (u, v) inside the triangle pointing right, rotated by dir quarter turns clockwise.
bool in_agent(double u, double v, int dir) {
  for (int k = 0; k < (4 - dir) % 4; ++k) {  // rotate the point back to "pointing right"
    const double nu = v, nv = 1 - u;
    u = nu, v = nv;
  }
  const double x0 = 0.12, x1 = 0.88;
  if (u < x0 || u > x1) return false;
  const double half = 0.38 * (x1 - u) / (x1 - x0);
  return std::abs(v - 0.5) <= half;
}

void draw_cell(Canvas& cv, int x, int y, int tile, const Cell& c) {
  const Rgb col = color_rgb(c.color);
  auto all = [](double, double) { return true; };
  switch (c.type) {
    case Type::kWall:
      cv.fill(x, y, tile, {100, 100, 100}, all);
      break;
    case Type::kFloor:
      cv.fill(x, y, tile, {uint8_t(col[0] / 2), uint8_t(col[1] / 2), uint8_t(col[2] / 2)},
              [](double u, double v) { return u > 0.03 && v > 0.03; });
      break;
    case Type::kGoal:
      cv.fill(x, y, tile, {0, 255, 0}, all);
      break;
    case Type::kLava:
      cv.fill(x, y, tile, {255, 128, 0}, all);
      cv.fill(x, y, tile, {0, 0, 0}, [](double u, double v) {
        const double w = 0.5 + 0.12 * std::sin(u * 12.566);
        return std::abs(v - 0.3 - (w - 0.5)) < 0.03 || std::abs(v - 0.7 - (w - 0.5)) < 0.03;
      });
      break;
    case Type::kDoor:
      if (c.door == DoorState::kOpen) {
        cv.fill(x, y, tile, col, [](double u, double v) { return u > 0.88 && v > 0.03; });
      } else {
        cv.fill(x, y, tile, col, all);
        cv.fill(x, y, tile, {0, 0, 0},
                [](double u, double v) { return u > 0.06 && u < 0.94 && v > 0.06 && v < 0.94; });
        if (c.door == DoorState::kLocked)
          cv.fill(x, y, tile, col, [](double u, double v) {
            return u > 0.52 && u < 0.75 && std::abs(v - 0.5) < 0.04;
          });
        else
          cv.fill(x, y, tile, col, [](double u, double v) {
            return (u - 0.75) * (u - 0.75) + (v - 0.5) * (v - 0.5) < 0.006;
          });
      }
      break;
    case Type::kKey:
      cv.fill(x, y, tile, col, [](double u, double v) {
        const bool shaft = u > 0.5 && u < 0.63 && v > 0.31 && v < 0.88;
        const bool teeth =
            u > 0.38 && u < 0.5 && ((v > 0.59 && v < 0.66) || (v > 0.81 && v < 0.88));
        const double r = (u - 0.56) * (u - 0.56) + (v - 0.28) * (v - 0.28);
        return shaft || teeth || (r < 0.036 && r > 0.012);
      });
      break;
    case Type::kBall:
      cv.fill(x, y, tile, col, [](double u, double v) {
        return (u - 0.5) * (u - 0.5) + (v - 0.5) * (v - 0.5) < 0.096;
      });
      break;
    case Type::kBox:
      cv.fill(x, y, tile, col, [](double u, double v) {
        const bool edge = u > 0.12 && u < 0.88 && v > 0.12 && v < 0.88 &&
                          !(u > 0.18 && u < 0.82 && v > 0.18 && v < 0.82);
        return edge || (v > 0.47 && v < 0.53 && u > 0.12 && u < 0.88);
      });
      break;
    default:
      break;
  }
}

}  // namespace

Image render_image(const Env& env, int tile) {
  const Grid& g = env.grid();
  Image img;
  img.width = g.width() * tile;
  img.height = g.height() * tile;
  img.rgb.assign(size_t(img.width) * size_t(img.height) * 3, 0);
  Canvas cv{img};
  for (int y = 0; y < g.height(); ++y)
    for (int x = 0; x < g.width(); ++x) {
      // Grid lines, as MiniGrid draws them.
      cv.fill(x, y, tile, {100, 100, 100},
              [](double u, double v) { return u < 0.031 || v < 0.031; });
      draw_cell(cv, x, y, tile, g.get(x, y));
    }
  const Pos a = env.agent_pos();
  cv.fill(a.x, a.y, tile, {255, 0, 0},
          [&](double u, double v) { return in_agent(u, v, env.agent_dir()); });
  // Highlight the 7x7 view (MiniGrid: the cells of the agent's view, brightened).
  const int dir = env.agent_dir();
  for (int vy = 0; vy < 7; ++vy)
    for (int vx = 0; vx < 7; ++vx) {
      // View coordinates: the agent at (3, 6) looking "up" the view.
      const int f = 6 - vy, s = vx - 3;  // forward and right-hand offsets
      static const int dx[4] = {1, 0, -1, 0}, dy[4] = {0, 1, 0, -1};
      const int rx = -dy[dir], ry = dx[dir];  // the agent's right
      const int cx = a.x + f * dx[dir] + s * rx, cy = a.y + f * dy[dir] + s * ry;
      if (!g.contains(cx, cy)) continue;
      for (int py = 0; py < tile; ++py)
        for (int px = 0; px < tile; ++px) {
          uint8_t* p = img.rgb.data() +
                       (size_t(cy * tile + py) * size_t(img.width) + size_t(cx * tile + px)) * 3;
          for (int k = 0; k < 3; ++k) p[k] = uint8_t(std::min(255, p[k] + (255 - p[k]) * 3 / 10));
        }
    }
  return img;
}

}  // namespace seqbench::rl
