// Finite-difference gradient checks (double) for Linear, Embedding and the losses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "gradcheck.hpp"
#include "nn/embedding.hpp"
#include "nn/linear.hpp"
#include "nn/loss.hpp"

using namespace seqbench;
using core::Shape;
using DTensor = core::TensorT<double>;

TEST(LinearGrad, InputsWeightsBias) {
  for (bool bias : {true, false}) {
    core::ParamStoreT<double> ps;
    nn::LinearT<double> lin(ps, "lin", 4, 3, bias);
    ps.finalize(0);
    core::Rng rng(1);
    lin.init(rng);
    DTensor x(Shape{5, 4}), y(Shape{5, 3}), w(Shape{5, 3}), dx(Shape{5, 4});
    gradcheck::fill_normal(rng, x);
    gradcheck::fill_normal(rng, w);
    auto loss = [&] {
      lin.forward(x.cview(), y.view());
      return gradcheck::dot(w.data(), y.data(), y.numel());
    };
    loss();
    lin.backward(x.cview(), w.cview(), dx.view());
    gradcheck::expect_gradient("dx", x.data(), dx.data(), dx.numel(), loss);
    for (auto& p : ps.params()) {
      std::vector<double> a(p.grad, p.grad + p.numel());
      gradcheck::expect_gradient(p.name, p.value, a.data(), p.numel(), loss);
    }
    EXPECT_EQ(ps.params().size(), bias ? 2u : 1u);
  }
}

TEST(LinearForward, KnownValues) {
  core::ParamStore ps;
  nn::Linear lin(ps, "l", 2, 1);
  ps.finalize(0);
  lin.w().value[0] = 2;
  lin.w().value[1] = -1;
  lin.b()->value[0] = 0.5;
  core::Tensor x(Shape{1, 2}), y(Shape{1, 1});
  x[0] = 3;
  x[1] = 4;
  lin.forward(x.cview(), y.view());
  EXPECT_FLOAT_EQ(y[0], 2.5f);
  EXPECT_THROW(lin.forward(x.cview(), core::Tensor(Shape{1, 2}).view()), core::Error);
}

TEST(EmbeddingGrad, ScatterAddsRepeatedIds) {
  core::ParamStoreT<double> ps;
  nn::EmbeddingT<double> emb(ps, "emb", 5, 3);
  ps.finalize(0);
  core::Rng rng(2);
  emb.init(rng);
  std::vector<int32_t> ids{1, 4, 1, 0};
  DTensor y(Shape{4, 3}), w(Shape{4, 3});
  gradcheck::fill_normal(rng, w);
  auto loss = [&] {
    emb.forward(ids.data(), 4, y.view());
    return gradcheck::dot(w.data(), y.data(), y.numel());
  };
  loss();
  emb.backward(ids.data(), 4, w.cview());
  std::vector<double> a(emb.table().grad, emb.table().grad + 15);
  gradcheck::expect_gradient("table", emb.table().value, a.data(), 15, loss);
  EXPECT_DOUBLE_EQ(a[2 * 3], 0.0);  // id 2 never used
  std::vector<int32_t> bad{7};
  EXPECT_THROW(emb.forward(bad.data(), 1, DTensor(Shape{1, 3}).view()), core::Error);
}

TEST(CrossEntropyGrad, WithMaskMatchesFiniteDifferences) {
  core::Rng rng(3);
  DTensor z(Shape{6, 4}), dz(Shape{6, 4});
  gradcheck::fill_normal(rng, z, 2.0);
  std::vector<int32_t> y{0, 3, 2, 1, 1, 3};
  std::vector<double> mask{1, 0, 1, 0.5, 1, 0};
  auto r = nn::softmax_cross_entropy<double>(z.cview(), y.data(), mask.data(), dz.view());
  EXPECT_DOUBLE_EQ(r.count, 3.5);
  auto loss = [&] {
    return nn::softmax_cross_entropy<double>(z.cview(), y.data(), mask.data(),
                                             core::ViewT<double>())
        .loss;
  };
  gradcheck::expect_gradient("dlogits", z.data(), dz.data(), dz.numel(), loss);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(dz[4 + k], 0.0);  // masked row 1
}

TEST(CrossEntropy, KnownValueAndAccuracy) {
  core::Tensor z(Shape{2, 3});
  float vals[] = {0, 0, 0, 10, 0, 0};
  std::copy_n(vals, 6, z.data());
  std::vector<int32_t> y{1, 0};
  auto r = nn::softmax_cross_entropy<float>(z.cview(), y.data(), nullptr, core::View());
  // Row 0: uniform, loss ln 3, argmax 0 (first of ties) != 1; row 1: ~0 loss, correct.
  EXPECT_NEAR(r.loss, (std::log(3.0) + std::log(1 + 2 * std::exp(-10.0))) / 2, 1e-6);
  EXPECT_EQ(r.correct, 1);
  std::vector<int32_t> bad{3, 0};
  EXPECT_THROW(nn::softmax_cross_entropy<float>(z.cview(), bad.data(), nullptr, core::View()),
               core::Error);
}

// Float rows of a word vocabulary take a vectorised path (fast_exp, one exp per
// element); it must agree with the double computation, gradient and argmax included.
TEST(CrossEntropy, WideFloatRowsMatchDouble) {
  const int64_t n = 5, c = 3001;  // odd: exercises the tail of the 8-lane sum
  core::Rng rng(11);
  DTensor zd(Shape{n, c}), dzd(Shape{n, c});
  gradcheck::fill_normal(rng, zd, 4.0);
  core::Tensor zf(Shape{n, c}), dzf(Shape{n, c});
  for (int64_t i = 0; i < n * c; ++i) {
    zf.data()[i] = static_cast<float>(zd[i]);
    zd[i] = zf.data()[i];  // both sides see the same float logits
  }
  zf.data()[2 * c + 17] = 40.f, zd[2 * c + 17] = 40.0;  // a confident row
  const std::vector<int32_t> y{0, 3000, 17, 5, 1234};
  const std::vector<double> md{1, 0.5, 1, 0, 2};
  const std::vector<float> mf(md.begin(), md.end());
  const auto rd = nn::softmax_cross_entropy<double>(zd.cview(), y.data(), md.data(), dzd.view());
  const auto rf = nn::softmax_cross_entropy<float>(zf.cview(), y.data(), mf.data(), dzf.view());
  EXPECT_NEAR(rf.loss, rd.loss, 1e-6 * rd.loss);
  EXPECT_EQ(rf.correct, rd.correct);
  EXPECT_EQ(rf.correct, 1);  // row 2's target is its argmax
  double worst = 0;
  for (int64_t i = 0; i < n * c; ++i) worst = std::max(worst, std::fabs(dzf.data()[i] - dzd[i]));
  EXPECT_LT(worst, 1e-7);
  for (int64_t k = 0; k < c; ++k) ASSERT_EQ(dzf.data()[3 * c + k], 0.f);  // mask 0
  // Without a gradient buffer the loss is the same.
  const auto rl = nn::softmax_cross_entropy<float>(zf.cview(), y.data(), mf.data(), core::View());
  EXPECT_NEAR(rl.loss, rf.loss, 1e-9);
}

TEST(MseGrad, MatchesFiniteDifferences) {
  core::Rng rng(4);
  DTensor p(Shape{3, 2}), t(Shape{3, 2}), dp(Shape{3, 2});
  gradcheck::fill_normal(rng, p);
  gradcheck::fill_normal(rng, t);
  nn::mse<double>(p.cview(), t.cview(), dp.view());
  auto loss = [&] { return nn::mse<double>(p.cview(), t.cview(), core::ViewT<double>()); };
  gradcheck::expect_gradient("dpred", p.data(), dp.data(), dp.numel(), loss);
  DTensor same = p;
  EXPECT_EQ(nn::mse<double>(p.cview(), same.cview(), core::ViewT<double>()), 0.0);
}
