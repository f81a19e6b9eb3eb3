// Generic checks for any recurrent cell run by Recurrent<Cell>, in double:
//  - finite-difference gradients w.r.t. inputs, every parameter and the initial state
//    (full BPTT), through a random linear loss on all outputs;
//  - truncated BPTT(k) equals full BPTT run chunk by chunk from the (constant) states
//    the full forward reached.
// Usage: cellcheck::expect_gradients<MyCell<double>>(make, T, B, seed), where
// make(ps) declares the cell's parameters in ps and returns the cell.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "gradcheck.hpp"
#include "core/param_store.hpp"
#include "nn/recurrent/recurrent.hpp"

namespace seqbench::cellcheck {

using DTensor = core::TensorT<double>;

template <class Cell>
struct Fixture {
  core::ParamStoreT<double> ps;
  std::unique_ptr<nn::Recurrent<Cell>> rnn;
  int64_t T, B, I, H, S;
  DTensor x, s0, y, w_y;

  Fixture(const std::function<Cell(core::ParamStoreT<double>&)>& make, int64_t t, int64_t b,
          int64_t bptt, uint64_t seed, double s0_scale) {
    rnn = std::make_unique<nn::Recurrent<Cell>>(make(ps), bptt, 1.0);
    ps.finalize(0);
    T = t;
    B = b;
    I = rnn->input_size();
    H = rnn->hidden();
    S = rnn->state_size();
    x.resize(core::Shape{T, B, I});
    s0.resize(core::Shape{B, S});
    y.resize(core::Shape{T, B, H});
    w_y.resize(core::Shape{T, B, H});
    core::Rng rng(seed);
    rnn->init(rng);
    gradcheck::fill_normal(rng, x);
    gradcheck::fill_normal(rng, s0, s0_scale);
    gradcheck::fill_normal(rng, w_y);
  }
  double loss() {
    rnn->forward(x.cview(), s0.cview(), y.view());
    return gradcheck::dot(w_y.data(), y.data(), y.numel());
  }
};

// s0_scale: spread of the random initial state (some cells need a positive part, e.g.
// AdamLSTM's second-moment state: pass a make() whose cell documents it).
template <class Cell>
void expect_gradients(const std::function<Cell(core::ParamStoreT<double>&)>& make, int64_t T,
                      int64_t B, uint64_t seed, double s0_scale = 0.5, double rtol = 1e-5) {
  Fixture<Cell> f(make, T, B, 0, seed, s0_scale);
  f.loss();
  DTensor dx(f.x.shape()), ds0(f.s0.shape());
  f.ps.zero_grad();
  f.rnn->backward(f.w_y.cview(), dx.view(), ds0.view());
  auto loss = [&] { return f.loss(); };
  gradcheck::expect_gradient("dx", f.x.data(), dx.data(), dx.numel(), loss, 1e-6, rtol);
  gradcheck::expect_gradient("ds0 (initial state)", f.s0.data(), ds0.data(), ds0.numel(), loss,
                             1e-6, rtol);
  for (auto& p : f.ps.params()) {
    std::vector<double> analytic(p.grad, p.grad + p.numel());
    gradcheck::expect_gradient(p.name, p.value, analytic.data(), p.numel(), loss, 1e-6, rtol);
  }
}

template <class Cell>
void expect_truncation_is_chunkwise(const std::function<Cell(core::ParamStoreT<double>&)>& make,
                                    int64_t T, int64_t B, int64_t k, uint64_t seed) {
  Fixture<Cell> trunc(make, T, B, k, seed, 0.5);
  trunc.loss();
  DTensor dx(trunc.x.shape()), ds0(trunc.s0.shape());
  trunc.ps.zero_grad();
  trunc.rnn->backward(trunc.w_y.cview(), dx.view(), ds0.view());

  Fixture<Cell> full(make, T, B, 0, seed, 0.5);  // same seed: same weights and data
  full.ps.zero_grad();
  const int64_t I = full.I, H = full.H, S = full.S;
  DTensor dx_ref(trunc.x.shape()), ds0_ref(trunc.s0.shape()), state = full.s0;
  for (int64_t t0 = 0; t0 < T; t0 += k) {
    const int64_t len = std::min(k, T - t0);
    DTensor xc(core::Shape{len, B, I}), yc(core::Shape{len, B, H}), dxc(core::Shape{len, B, I}),
        ds0c(core::Shape{B, S}), next(core::Shape{B, S});
    std::copy_n(full.x.data() + t0 * B * I, len * B * I, xc.data());
    full.rnn->forward(xc.cview(), state.cview(), yc.view());
    std::copy_n(full.rnn->final_state().data, B * S, next.data());
    core::ViewT<const double> wy(full.w_y.data() + t0 * B * H, core::Shape{len, B, H});
    full.rnn->backward(wy, dxc.view(), ds0c.view());
    std::copy_n(dxc.data(), len * B * I, dx_ref.data() + t0 * B * I);
    if (t0 == 0) ds0_ref = ds0c;
    state = next;
  }
  for (int64_t i = 0; i < dx.numel(); ++i) EXPECT_NEAR(dx[i], dx_ref[i], 1e-12) << "dx " << i;
  for (int64_t i = 0; i < ds0.numel(); ++i) EXPECT_NEAR(ds0[i], ds0_ref[i], 1e-12) << "ds0 " << i;
  auto g = trunc.ps.grads();
  auto g_ref = full.ps.grads();
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], g_ref[i], 1e-12) << "param grad " << i;

  // Guard against a driver that ignores k: the truncated gradient must differ from the
  // full-BPTT one on the whole sequence.
  Fixture<Cell> whole(make, T, B, 0, seed, 0.5);
  whole.loss();
  DTensor dx_whole(whole.x.shape());
  whole.rnn->backward(whole.w_y.cview(), dx_whole.view(), core::ViewT<double>());
  double diff = 0;
  for (int64_t i = 0; i < dx.numel(); ++i) diff += std::abs(dx[i] - dx_whole[i]);
  EXPECT_GT(diff, 1e-6) << "truncation changed nothing";
}

}  // namespace seqbench::cellcheck
