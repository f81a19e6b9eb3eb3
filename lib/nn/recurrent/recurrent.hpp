// Recurrent<Cell>: the one time loop. Owns the per-sequence buffers, backpropagation
// through time (full, or truncated every k steps), the initial state and the
// gradient-norm probe. The cell supplies the math (see nn/cells/lstm.hpp for the
// Cell interface: input_forward, step_forward, prepare_backward, step_backward,
// recurrent_weight_backward, input_backward and the size accessors).
//
// Threads: when a step has enough work (split_rows), each thread of the team runs the
// whole time loop on its own contiguous slice of batch rows (nn/parallel.hpp); the
// weight gradients are GEMMs over all steps and rows after the loop.
//
// Buffers (resized only when T or B grow, never inside the time loop):
//   xp_     (T, B, P)    input projections, overwritten by dL/da in backward
//   states_ (T+1, B, S)  s_0 .. s_T
//   cache_  (T, B, C)    what step_backward needs
//   ds_, ds_prev_ (B, S) running state gradients
//   dh_sq_  (T, B)       per-row squared norms for the probe (grown by its first use)
//
// Truncated BPTT(k): the sequence is cut into chunks [0,k), [k,2k), ...; the state is
// carried forward across a cut but no gradient flows back across it (as if the state
// were detached every k steps). k = 0 means full BPTT.
#pragma once

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "nn/parallel.hpp"
#include "core/buffer.hpp"
#include "nn/sequence_layer.hpp"

namespace seqbench::nn {

template <class Cell>
class Recurrent : public SequenceLayer<typename Cell::Scalar> {
 public:
  using T = typename Cell::Scalar;

  using InitFn = std::function<void(Cell&, core::Rng&)>;
  using UpdateFn = std::function<void(Cell&)>;

  // bptt: truncation window k (0 = full BPTT). init() calls cell.init(rng, forget_bias)
  // unless init_fn is given (e.g. a paper's own initialisation). after_update, if
  // given, runs after init and after every optimizer step (e.g. a projection).
  Recurrent(Cell cell, int64_t bptt, double forget_bias = 0.0, InitFn init_fn = {},
            UpdateFn after_update = {})
      : cell_(std::move(cell)),
        bptt_(bptt),
        forget_bias_(forget_bias),
        init_fn_(std::move(init_fn)),
        after_update_(std::move(after_update)) {
    SB_CHECK(bptt >= 0, "bptt window must be >= 0, got {}", bptt);
  }

  Cell& cell() { return cell_; }
  int64_t input_size() const override { return cell_.input_size(); }
  int64_t hidden() const override { return cell_.hidden(); }
  int64_t state_size() const override { return cell_.state_size(); }
  void init(core::Rng& rng) override {
    if (init_fn_)
      init_fn_(cell_, rng);
    else
      cell_.init(rng, forget_bias_);
    after_update();
  }
  void after_update() override {
    if (after_update_) after_update_(cell_);
  }

  void forward(core::ViewT<const T> x, core::ViewT<const T> s0, core::ViewT<T> y) override {
    const int64_t steps = x.dim(0), b = x.dim(1);
    const int64_t I = cell_.input_size(), H = cell_.hidden(), S = cell_.state_size();
    const int64_t P = cell_.proj_size(), C = cell_.cache_size();
    core::check_shape(x, core::Shape{steps, b, I}, "Recurrent.forward x");
    core::check_shape(y, core::Shape{steps, b, H}, "Recurrent.forward y");
    reserve(steps, b);
    T_ = steps;
    B_ = b;
    x_ = x;
    T* st = states_.data();
    if (s0.data) {
      core::check_shape(s0, core::Shape{b, S}, "Recurrent.forward s0");
      std::copy_n(s0.data, b * S, st);
    } else {
      std::fill_n(st, b * S, T(0));
    }
    cell_.input_forward(steps * b, x.data, xp_.data());
    // Rows [r0, r1) through all T steps (nn/parallel.hpp: one slice per thread).
    for_row_slices(b, split_rows(b), [&](int64_t r0, int64_t r1) {
      const int64_t nb = r1 - r0;
      for (int64_t t = 0; t < steps; ++t) {
        T* s_prev = st + (t * b + r0) * S;
        T* s = s_prev + b * S;
        cell_.step_forward(t, nb, xp_.data() + (t * b + r0) * P, s_prev, s,
                           cache_.data() + (t * b + r0) * C);
        T* yt = y.data + (t * b + r0) * H;
        for (int64_t r = 0; r < nb; ++r) std::copy_n(s + r * S, H, yt + r * H);
      }
    });
  }

  void backward(core::ViewT<const T> dy, core::ViewT<T> dx, core::ViewT<T> ds0,
                std::vector<double>* dh_norms = nullptr) override {
    const int64_t steps = T_, b = B_;
    const int64_t H = cell_.hidden(), S = cell_.state_size();
    const int64_t P = cell_.proj_size(), C = cell_.cache_size();
    SB_CHECK(steps > 0, "Recurrent.backward called before forward");
    core::check_shape(dy, core::Shape{steps, b, H}, "Recurrent.backward dy");
    if (dh_norms) {
      dh_norms->assign(static_cast<size_t>(steps), 0.0);
      core::grow(dh_sq_, steps * b);
    }
    std::fill_n(ds_.data(), b * S, T(0));
    const T* st = states_.data();
    cell_.prepare_backward();
    for_row_slices(b, split_rows(b), [&](int64_t r0, int64_t r1) {
      const int64_t nb = r1 - r0;
      T* ds = ds_.data() + r0 * S;
      T* ds_prev = ds_prev_.data() + r0 * S;
      for (int64_t t = steps - 1; t >= 0; --t) {
        const T* dyt = dy.data + (t * b + r0) * H;
        for (int64_t r = 0; r < nb; ++r)
          for (int64_t j = 0; j < H; ++j) ds[r * S + j] += dyt[r * H + j];
        if (dh_norms)
          for (int64_t r = 0; r < nb; ++r) {
            double sq = 0;
            for (int64_t j = 0; j < H; ++j) sq += double(ds[r * S + j]) * double(ds[r * S + j]);
            dh_sq_[static_cast<size_t>(t * b + r0 + r)] = sq;
          }
        // dL/da_t overwrites the input projection of step t, which is no longer needed.
        cell_.step_backward(t, nb, st + (t * b + r0) * S, cache_.data() + (t * b + r0) * C, ds,
                            xp_.data() + (t * b + r0) * P, ds_prev);
        // Truncation: no gradient into s_{t} from chunk [t, t+k) when t is a cut.
        if (bptt_ > 0 && t > 0 && t % bptt_ == 0) std::fill_n(ds_prev, nb * S, T(0));
        std::swap(ds, ds_prev);
      }
    });
    // After an odd number of swaps dL/ds_0 sits in ds_prev_.
    const T* ds = (steps % 2 == 0 ? ds_ : ds_prev_).data();
    if (dh_norms)
      for (int64_t t = 0; t < steps; ++t) {
        double sq = 0;
        for (int64_t r = 0; r < b; ++r) sq += dh_sq_[static_cast<size_t>(t * b + r)];
        (*dh_norms)[static_cast<size_t>(t)] = std::sqrt(sq);
      }
    if (ds0.data) {
      core::check_shape(ds0, core::Shape{b, S}, "Recurrent.backward ds0");
      std::copy_n(ds, b * S, ds0.data);
    }
    cell_.recurrent_weight_backward(steps * b, st, xp_.data(), cache_.data());
    if (dx.data) core::check_shape(dx, x_.shape, "Recurrent.backward dx");
    cell_.input_backward(steps * b, x_.data, xp_.data(), dx.data);
  }

  core::ViewT<const T> final_state() const override {
    return core::ViewT<const T>(states_.data() + T_ * B_ * cell_.state_size(),
                                core::Shape{B_, cell_.state_size()});
  }

  size_t held_bytes() const override {
    return sizeof(T) *
               (xp_.size() + states_.size() + cache_.size() + ds_.size() + ds_prev_.size()) +
           sizeof(double) * dh_sq_.size();
  }

 private:
  // Whether a step has enough work to give each thread its own slice of rows.
  bool split_rows(int64_t b) const { return b * cell_.proj_size() >= kRowParallelMin; }

  void reserve(int64_t steps, int64_t b) {
    core::grow(xp_, steps * b * cell_.proj_size());
    core::grow(states_, (steps + 1) * b * cell_.state_size());
    core::grow(cache_, steps * b * cell_.cache_size());
    core::grow(ds_, b * cell_.state_size());
    core::grow(ds_prev_, b * cell_.state_size());
  }

  Cell cell_;
  int64_t bptt_;
  double forget_bias_;
  InitFn init_fn_;
  UpdateFn after_update_;
  int64_t T_ = 0, B_ = 0;
  core::ViewT<const T> x_;  // the last forward's input; the caller keeps it alive until backward
  std::vector<T> xp_, states_, cache_, ds_, ds_prev_;
  std::vector<double> dh_sq_;  // (T, B) squared norms of dL/dh per row, for dh_norms
};

}  // namespace seqbench::nn
