// The small image layers of the MiniGrid agent (rl-starter-files' ACModel.image_conv):
// a 2-D convolution (stride 1, no padding), a max-pool (stride = kernel, floor) and ReLU,
// each a forward/backward pair on channels-last images.
//
// Layout: images are (N, X, Y, C), element [n][x][y][c] at ((n * X + x) * Y + y) * C + c,
// the layout of MiniGrid's obs["image"] ([x][y][c]). PyTorch's ACModel transposes the
// image to (N, C, X, Y) before its Conv2d, so its spatial axes are (x, y) too: our output
// cell (x, y) is its output cell (x, y).
//
// Conv2d as im2col + Linear: every output cell gathers its k×k×Ci input patch, ordered
// (dx, dy, ci), into one row of a (N·Xo·Yo, k·k·Ci) matrix; one GEMM with w (Co, k·k·Ci)
// gives all outputs. PyTorch's weight (Co, Ci, kx, ky) is ours with the patch axes
// permuted: w[o][(dx·k + dy)·Ci + ci] = W_torch[o][ci][dx][dy].
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/param_store.hpp"
#include "core/rng.hpp"
#include "nn/linear.hpp"

namespace seqbench::rl {

template <class T>
class Conv2dT {
 public:
  // Declares name.w (Co, k·k·Ci) and name.b (Co). Input images are (X, Y, Ci).
  Conv2dT(core::ParamStoreT<T>& ps, const std::string& name, int64_t in_ch, int64_t out_ch,
          int64_t kernel, int64_t in_x, int64_t in_y);

  // PyTorch's Conv2d default: w and b ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = k·k·Ci
  // (kaiming_uniform with a = sqrt(5) reduces to that). Call after ps.finalize().
  void init(core::Rng& rng);

  // src (N, X, Y, Ci) -> dst (N, Xo, Yo, Co). Keeps the patches for backward.
  void forward(int64_t n, const T* src, T* dst);
  // Backward of the last forward: ddst (N, Xo, Yo, Co) -> dsrc (N, X, Y, Ci) (overwritten;
  // skipped when null); dw += ddst^T patches, db += column sums.
  void backward(int64_t n, const T* ddst, T* dsrc);

  int64_t in_size() const { return in_x_ * in_y_ * in_ch_; }     // per image
  int64_t out_size() const { return out_x_ * out_y_ * out_ch_; }  // per image
  int64_t out_x() const { return out_x_; }
  int64_t out_y() const { return out_y_; }
  int64_t out_ch() const { return out_ch_; }
  nn::LinearT<T>& linear() { return lin_; }

 private:
  int64_t in_ch_, out_ch_, k_, in_x_, in_y_, out_x_, out_y_;
  nn::LinearT<T> lin_;
  std::vector<T> cols_, dcols_;  // (N·Xo·Yo, k·k·Ci), grown on demand
};

template <class T>
class MaxPool2dT {
 public:
  // k×k windows with stride k over (X, Y, C) images; the output is (X/k, Y/k, C) (floor,
  // as PyTorch's MaxPool2d(k)).
  MaxPool2dT(int64_t channels, int64_t kernel, int64_t in_x, int64_t in_y);

  // src (N, X, Y, C) -> dst (N, X/k, Y/k, C); remembers the winner of each window (the
  // first maximum in (dx, dy) order). The winner is a discrete choice: a constant in
  // backward.
  void forward(int64_t n, const T* src, T* dst);
  // ddst (N, Xo, Yo, C) -> dsrc (N, X, Y, C) (overwritten): each gradient goes to its
  // window's winner, zeros elsewhere.
  void backward(int64_t n, const T* ddst, T* dsrc) const;

  int64_t in_size() const { return in_x_ * in_y_ * ch_; }
  int64_t out_size() const { return out_x_ * out_y_ * ch_; }
  int64_t out_x() const { return out_x_; }
  int64_t out_y() const { return out_y_; }

 private:
  int64_t ch_, k_, in_x_, in_y_, out_x_, out_y_;
  std::vector<int32_t> arg_;  // (N, Xo, Yo, C): offset of the winner within its image
};

// y = max(x, 0) in place over n values.
template <class T>
void relu_forward(int64_t n, T* x);
// dy (n) *= [y > 0] in place, from the ReLU's output y.
template <class T>
void relu_backward(int64_t n, const T* y, T* dy);

}  // namespace seqbench::rl
