// LayerNorm (nn/layer_norm): normalised rows and the affine map on known values,
// finite-difference gradients in double (input, gain, bias; with and without affine),
// accumulation into dsrc, shape errors.
#include "nn/layer_norm.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "gradcheck.hpp"

using namespace seqbench;
using core::Shape;
using DTensor = core::TensorT<double>;

TEST(LayerNorm, RowsHaveZeroMeanUnitVarianceThenGainAndBias) {
  core::ParamStoreT<double> ps;
  nn::LayerNormT<double> ln(ps, "ln", 4, true, 1e-12);
  ps.finalize(0);
  ln.init();
  DTensor x(Shape{2, 4}), y(Shape{2, 4});
  const double xs[8] = {1, 2, 3, 4, -5, 0, 5, 10};
  std::copy_n(xs, 8, x.data());
  nn::LayerNormCache<double> c;
  ln.forward(x.cview(), y.view(), c);
  for (int r = 0; r < 2; ++r) {
    double m = 0, v = 0;
    for (int j = 0; j < 4; ++j) m += y[r * 4 + j] / 4;
    for (int j = 0; j < 4; ++j) v += (y[r * 4 + j] - m) * (y[r * 4 + j] - m) / 4;
    EXPECT_NEAR(m, 0.0, 1e-12);
    EXPECT_NEAR(v, 1.0, 1e-9);
  }
  // Row 0: mean 2.5, var 1.25.
  EXPECT_NEAR(y[0], -1.5 / std::sqrt(1.25), 1e-9);
  EXPECT_NEAR(c.mean[1], 2.5, 1e-12);
  ln.gain()->value[0] = 2;
  ln.bias()->value[0] = 0.5;
  ln.forward(x.cview(), y.view(), c);
  EXPECT_NEAR(y[0], 2 * (-1.5 / std::sqrt(1.25)) + 0.5, 1e-9);
}

TEST(LayerNormGrad, InputGainBiasWithAndWithoutAffine) {
  for (bool affine : {true, false}) {
    core::ParamStoreT<double> ps;
    nn::LayerNormT<double> ln(ps, "ln", 5, affine);
    ps.finalize(0);
    ln.init();
    core::Rng rng(3);
    if (affine) {
      gradcheck::fill_normal(rng, ln.gain()->value, 5);
      gradcheck::fill_normal(rng, ln.bias()->value, 5);
    }
    DTensor x(Shape{3, 5}), y(Shape{3, 5}), w(Shape{3, 5}), dx(Shape{3, 5});
    gradcheck::fill_normal(rng, x, 2.0);
    gradcheck::fill_normal(rng, w);
    nn::LayerNormCache<double> c;
    auto loss = [&] {
      ln.forward(x.cview(), y.view(), c);
      return gradcheck::dot(w.data(), y.data(), y.numel());
    };
    loss();
    ln.backward(x.cview(), w.cview(), c, dx.view());
    gradcheck::expect_gradient("dx", x.data(), dx.data(), dx.numel(), loss);
    for (auto& p : ps.params()) {
      std::vector<double> a(p.grad, p.grad + p.numel());
      gradcheck::expect_gradient(p.name, p.value, a.data(), p.numel(), loss);
    }
    EXPECT_EQ(ps.params().size(), affine ? 2u : 0u);
  }
}

TEST(LayerNormGrad, BackwardAccumulatesIntoDsrc) {
  core::ParamStoreT<double> ps;
  nn::LayerNormT<double> ln(ps, "ln", 3);
  ps.finalize(0);
  ln.init();
  core::Rng rng(4);
  DTensor x(Shape{2, 3}), y(Shape{2, 3}), w(Shape{2, 3}), d1(Shape{2, 3}), d2(Shape{2, 3});
  gradcheck::fill_normal(rng, x);
  gradcheck::fill_normal(rng, w);
  nn::LayerNormCache<double> c;
  ln.forward(x.cview(), y.view(), c);
  ln.backward(x.cview(), w.cview(), c, d1.view());
  for (int64_t i = 0; i < d2.numel(); ++i) d2[i] = 1.0;
  ln.backward(x.cview(), w.cview(), c, d2.view());
  for (int64_t i = 0; i < d2.numel(); ++i) EXPECT_NEAR(d2[i], d1[i] + 1.0, 1e-12);
}

TEST(LayerNorm, ShapeErrors) {
  core::ParamStore ps;
  nn::LayerNormT<float> ln(ps, "ln", 4);
  ps.finalize(0);
  core::Tensor x(Shape{2, 3}), y(Shape{2, 3});
  nn::LayerNormCache<float> c;
  EXPECT_THROW(ln.forward(x.cview(), y.view(), c), core::Error);
  core::Tensor x4(Shape{2, 4}), y5(Shape{2, 5});
  EXPECT_THROW(ln.forward(x4.cview(), y5.view(), c), core::Error);
  EXPECT_THROW(nn::LayerNormT<float>(ps, "bad", 0), core::Error);
}
