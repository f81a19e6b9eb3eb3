// Generic checks for any sequence mixer (lib/nn/mixers/mixer.hpp), used by every mixer's
// test:
//  - expect_gradients: finite-difference gradients, in double, w.r.t. the input, the
//    initial state and every parameter, through a random linear loss on all outputs;
//  - expect_step_matches_forward: the recurrent form (step) token by token gives the
//    outputs and final state of the parallel / chunked forward;
//  - expect_chunk_invariance: the output does not depend on mixer.chunk;
//  - expect_estimate_matches_held: estimate_bytes(B, N) is what held_bytes() reports
//    after a forward and backward (float).
// Shapes are chosen by the caller; use an N that is not a multiple of cfg.chunk so that
// a partial last chunk is covered.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <type_traits>

#include "core/param_store.hpp"
#include "gradcheck.hpp"
#include "nn/mixers/mixer.hpp"

namespace seqbench::mixercheck {

using DTensor = core::TensorT<double>;
// Fills the initial state (B, S); the default is N(0, 0.5²). A mixer whose state must keep
// a sign (linear attention's normaliser) passes its own.
using StateFill = std::function<void(core::Rng& rng, double* s0, int64_t n)>;

inline void normal_state(core::Rng& rng, double* s0, int64_t n) {
  gradcheck::fill_normal(rng, s0, n, 0.5);
}

// Changes parameters after init (e.g. to put a gate where a test needs it); empty = none.
using Tweak = std::function<void(core::ParamStoreT<double>& ps)>;

template <class T>
struct MixerFixture {
  core::ParamStoreT<T> ps;
  std::unique_ptr<nn::Mixer<T>> mixer;
  int64_t B, N, I, O, S;
  core::TensorT<T> x, s0, y, w_y;

  MixerFixture(const nn::MixerFactory& f, const nn::MixerConfig& cfg, int64_t input,
               int64_t output, int64_t b, int64_t n, uint64_t seed,
               const StateFill& fill = normal_state, const Tweak& tweak = {})
      : B(b), N(n), I(input), O(output) {
    mixer = nn::make_mixer<T>(f, cfg, ps, "mix", input, output);
    ps.finalize(0);
    S = mixer->state_size();
    EXPECT_EQ(mixer->input_size(), I);
    EXPECT_EQ(mixer->output_size(), O);
    x.resize(core::Shape{B, N, I});
    s0.resize(core::Shape{B, S});
    y.resize(core::Shape{B, N, O});
    w_y.resize(core::Shape{B, N, O});
    core::Rng rng(seed);
    mixer->init(rng);
    if constexpr (std::is_same_v<T, double>)
      if (tweak) tweak(ps);
    std::vector<double> tmp(size_t(B * N * I + B * S + B * N * O));
    gradcheck::fill_normal(rng, tmp.data(), B * N * I);
    fill(rng, tmp.data() + B * N * I, B * S);
    gradcheck::fill_normal(rng, tmp.data() + B * N * I + B * S, B * N * O);
    std::copy_n(tmp.data(), B * N * I, x.data());
    std::copy_n(tmp.data() + B * N * I, B * S, s0.data());
    std::copy_n(tmp.data() + B * N * I + B * S, B * N * O, w_y.data());
  }
  double loss() {
    mixer->forward(x.cview(), s0.cview(), y.view());
    double s = 0;
    for (int64_t i = 0; i < y.numel(); ++i) s += double(w_y[i]) * double(y[i]);
    return s;
  }
};

// Finite differences of every input, initial-state entry and parameter.
inline void expect_gradients(const nn::MixerFactory& f, const nn::MixerConfig& cfg, int64_t I,
                             int64_t O, int64_t B, int64_t N, uint64_t seed,
                             const StateFill& fill = normal_state, double rtol = 1e-5,
                             const Tweak& tweak = {}) {
  MixerFixture<double> fx(f, cfg, I, O, B, N, seed, fill, tweak);
  ASSERT_GT(fx.S, 0);
  fx.loss();
  DTensor dx(fx.x.shape()), ds0(fx.s0.shape());
  fx.ps.zero_grad();
  fx.mixer->backward(fx.w_y.cview(), dx.view(), ds0.view());
  auto loss = [&] { return fx.loss(); };
  gradcheck::expect_gradient("dx", fx.x.data(), dx.data(), dx.numel(), loss, 1e-6, rtol);
  gradcheck::expect_gradient("ds0 (initial state)", fx.s0.data(), ds0.data(), ds0.numel(), loss,
                             1e-6, rtol);
  for (auto& p : fx.ps.params()) {
    std::vector<double> analytic(p.grad, p.grad + p.numel());
    gradcheck::expect_gradient(p.name, p.value, analytic.data(), p.numel(), loss, 1e-6, rtol);
  }
  // A second backward of the same forward gives the same input gradient (no state left
  // over from the first).
  DTensor dx2(fx.x.shape());
  fx.loss();
  fx.mixer->backward(fx.w_y.cview(), dx2.view(), core::ViewT<double>());
  for (int64_t i = 0; i < dx.numel(); ++i) ASSERT_NEAR(dx2[i], dx[i], 1e-10) << "dx " << i;
}

// The recurrent form equals the training form: outputs at every token and the final state.
inline void expect_step_matches_forward(const nn::MixerFactory& f, const nn::MixerConfig& cfg,
                                        int64_t I, int64_t O, int64_t B, int64_t N,
                                        uint64_t seed, const StateFill& fill = normal_state,
                                        double tol = 1e-10, const Tweak& tweak = {}) {
  MixerFixture<double> fx(f, cfg, I, O, B, N, seed, fill, tweak);
  fx.loss();
  DTensor state = fx.s0, xt(core::Shape{B, I}), yt(core::Shape{B, O});
  for (int64_t t = 0; t < N; ++t) {
    for (int64_t b = 0; b < B; ++b)
      std::copy_n(fx.x.data() + (b * N + t) * I, I, xt.data() + b * I);
    fx.mixer->step(xt.cview(), state.view(), yt.view());
    for (int64_t b = 0; b < B; ++b)
      for (int64_t o = 0; o < O; ++o)
        ASSERT_NEAR(yt[b * O + o], fx.y[(b * N + t) * O + o], tol)
            << "token " << t << " row " << b << " unit " << o;
  }
  const auto fin = fx.mixer->final_state();
  ASSERT_EQ(fin.numel(), B * fx.S);
  for (int64_t i = 0; i < B * fx.S; ++i) ASSERT_NEAR(state[i], fin[i], tol) << "state " << i;
  // From the zero state too (s0 empty).
  DTensor y0(fx.y.shape());
  fx.mixer->forward(fx.x.cview(), core::ViewT<const double>(), y0.view());
  std::fill_n(state.data(), state.numel(), 0.0);
  for (int64_t b = 0; b < B; ++b) std::copy_n(fx.x.data() + b * N * I, I, xt.data() + b * I);
  fx.mixer->step(xt.cview(), state.view(), yt.view());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t o = 0; o < O; ++o)
      ASSERT_NEAR(yt[b * O + o], y0[b * N * O + o], tol) << "zero state, row " << b;
}

// The training form's chunk length changes nothing but rounding.
inline void expect_chunk_invariance(const nn::MixerFactory& f, nn::MixerConfig cfg, int64_t I,
                                    int64_t O, int64_t B, int64_t N, uint64_t seed,
                                    const StateFill& fill = normal_state) {
  cfg.chunk = 1;
  MixerFixture<double> a(f, cfg, I, O, B, N, seed, fill);
  cfg.chunk = N + 3;
  MixerFixture<double> b(f, cfg, I, O, B, N, seed, fill);
  a.loss();
  b.loss();
  for (int64_t i = 0; i < a.y.numel(); ++i) ASSERT_NEAR(a.y[i], b.y[i], 1e-10) << "y " << i;
}

inline void expect_estimate_matches_held(const nn::MixerFactory& f, const nn::MixerConfig& cfg,
                                         int64_t I, int64_t O, int64_t B, int64_t N) {
  core::ParamStoreT<float> ps;
  auto m = nn::make_mixer<float>(f, cfg, ps, "mix", I, O);
  ps.finalize(0);
  core::Rng rng(3);
  m->init(rng);
  const size_t want = m->estimate_bytes(B, N);
  core::TensorT<float> x(core::Shape{B, N, I}), y(core::Shape{B, N, O}), dy(core::Shape{B, N, O}),
      dx(core::Shape{B, N, I});
  for (int64_t i = 0; i < x.numel(); ++i) x[i] = float(rng.normal());
  for (int64_t i = 0; i < dy.numel(); ++i) dy[i] = float(rng.normal());
  m->forward(x.cview(), core::ViewT<const float>(), y.view());
  m->backward(dy.cview(), dx.view(), core::ViewT<float>());
  EXPECT_EQ(m->held_bytes(), want);
  for (int64_t i = 0; i < y.numel(); ++i) ASSERT_TRUE(std::isfinite(y[i])) << "y " << i;
  for (int64_t i = 0; i < dx.numel(); ++i) ASSERT_TRUE(std::isfinite(dx[i])) << "dx " << i;
}

}  // namespace seqbench::mixercheck
