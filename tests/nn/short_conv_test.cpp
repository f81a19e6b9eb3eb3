// The short convolution of q, k, v (lib/nn/mixers/short_conv.hpp): finite-difference
// gradients of input, state buffer and filter (strided rows, in place, sequences shorter
// than the buffer); step() = forward with the buffer carried; the final buffer; causality
// and the equation itself on a hand-set filter.
#include "nn/mixers/short_conv.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "gradcheck.hpp"

using namespace seqbench;

namespace {

double silu(double a) { return a / (1 + std::exp(-a)); }

struct Fixture {
  core::ParamStoreT<double> ps;
  nn::ShortConv<double> conv;
  int64_t B, N, C, W, ld, lds;
  std::vector<double> x, s0, y, wy;
  // Rows of ld >= C (columns past C are padding the conv must not touch), buffer rows of
  // lds >= (W - 1) C.
  Fixture(int64_t b, int64_t n, int64_t c, int64_t w, uint64_t seed)
      : conv(ps, "conv", c, w), B(b), N(n), C(c), W(w), ld(c + 2), lds((w - 1) * c + 3) {
    ps.finalize(0);
    core::Rng rng(seed);
    conv.init(rng);
    x.resize(size_t(B * N * ld));
    s0.resize(size_t(B * lds));
    y.assign(size_t(B * N * ld), 0.0);
    wy.resize(size_t(B * N * ld));
    gradcheck::fill_normal(rng, x.data(), int64_t(x.size()));
    gradcheck::fill_normal(rng, s0.data(), int64_t(s0.size()));
    gradcheck::fill_normal(rng, wy.data(), int64_t(wy.size()));
  }
  double loss() {
    conv.forward(B, N, x.data(), ld, s0.data(), lds, y.data(), ld);
    double s = 0;
    for (int64_t r = 0; r < B * N; ++r)
      for (int64_t c = 0; c < C; ++c) s += wy[size_t(r * ld + c)] * y[size_t(r * ld + c)];
    return s;
  }
};

void check_gradients(int64_t B, int64_t N, int64_t C, int64_t W, uint64_t seed) {
  Fixture f(B, N, C, W, seed);
  f.loss();
  f.ps.zero_grad();
  std::vector<double> dx(f.x.size(), 0.0), ds0(f.s0.size(), 0.0);
  f.conv.backward(f.wy.data(), f.ld, dx.data(), f.ld, ds0.data(), f.lds);
  auto loss = [&] { return f.loss(); };
  gradcheck::expect_gradient("dx", f.x.data(), dx.data(), int64_t(dx.size()), loss, 1e-6, 1e-6);
  if (W > 1)
    gradcheck::expect_gradient("ds0", f.s0.data(), ds0.data(), int64_t(ds0.size()), loss, 1e-6,
                               1e-6);
  else  // no buffer: nothing written, the padding of the rows included
    for (double g : ds0) ASSERT_EQ(g, 0.0);
  auto& p = f.ps.params().front();
  std::vector<double> gw(p.grad, p.grad + p.numel());
  gradcheck::expect_gradient(p.name, p.value, gw.data(), p.numel(), loss, 1e-6, 1e-6);
  // In place (dx over dy, as the mixers call it) gives the same dx.
  f.loss();
  std::vector<double> inplace = f.wy;
  f.conv.backward(inplace.data(), f.ld, inplace.data(), f.ld, nullptr, 0);
  for (int64_t r = 0; r < B * N; ++r)
    for (int64_t c = 0; c < C; ++c)
      ASSERT_NEAR(inplace[size_t(r * f.ld + c)], dx[size_t(r * f.ld + c)], 1e-12) << r << " " << c;
}

}  // namespace

TEST(ShortConv, GradientsMatchFiniteDifferences) { check_gradients(2, 7, 3, 4, 1); }
TEST(ShortConv, GradientsWidthTwo) { check_gradients(1, 5, 2, 2, 2); }
TEST(ShortConv, GradientsWidthOneHasNoBuffer) { check_gradients(2, 3, 2, 1, 3); }
// Fewer tokens than the buffer holds: the output and the final buffer read the initial one.
TEST(ShortConv, GradientsSequenceShorterThanBuffer) { check_gradients(2, 2, 3, 5, 4); }

TEST(ShortConv, StepMatchesForwardAndCarriesTheBuffer) {
  for (int64_t N : {1, 2, 6}) {
    Fixture f(2, N, 3, 4, 5);
    f.loss();
    std::vector<double> fin(f.s0.size(), -7.0);
    f.conv.final_state(fin.data(), f.lds);
    std::vector<double> buf = f.s0, yt(size_t(f.B * f.ld));
    for (int64_t t = 0; t < N; ++t) {
      std::vector<double> xt(size_t(f.B * f.ld));
      for (int64_t b = 0; b < f.B; ++b)
        std::copy_n(f.x.data() + (b * N + t) * f.ld, f.ld, xt.data() + b * f.ld);
      f.conv.step(f.B, xt.data(), f.ld, buf.data(), f.lds, xt.data(), f.ld);  // y over x
      for (int64_t b = 0; b < f.B; ++b)
        for (int64_t c = 0; c < f.C; ++c)
          ASSERT_NEAR(xt[size_t(b * f.ld + c)], f.y[size_t((b * N + t) * f.ld + c)], 1e-14)
              << "N " << N << " token " << t;
    }
    for (int64_t b = 0; b < f.B; ++b)
      for (int64_t i = 0; i < (f.W - 1) * f.C; ++i)
        ASSERT_EQ(buf[size_t(b * f.lds + i)], fin[size_t(b * f.lds + i)]) << "N " << N << " " << i;
  }
}

// u_t = Σ_j w[j] x_{t-W+1+j} on a hand-set filter, from the zero buffer: a unit impulse at
// token 1 comes out as the filter reversed, and nothing before token 1 moves.
TEST(ShortConv, ImpulseResponseIsTheFilterReversedAndCausal) {
  core::ParamStoreT<double> ps;
  nn::ShortConv<double> conv(ps, "conv", 1, 3);
  ps.finalize(0);
  EXPECT_EQ(conv.state_size(), 2);
  auto& w = ps.params().front();
  ASSERT_EQ(w.numel(), 3);
  w.value[0] = 0.5, w.value[1] = -2.0, w.value[2] = 3.0;  // w[2]: the current token
  std::vector<double> x = {0, 1, 0, 0, 0}, y(5);
  conv.forward(1, 5, x.data(), 1, nullptr, 0, y.data(), 1);
  const double want[5] = {0, 3.0, -2.0, 0.5, 0};
  for (int t = 0; t < 5; ++t) EXPECT_NEAR(y[size_t(t)], silu(want[t]), 1e-15) << t;
}

// Above the size where the loops split across threads (B N C W >= 2^15), with channels
// not a multiple of a thread's block: forward and backward against the formulas of the
// header computed here one element at a time, and the same result, to the last bit, on
// one thread and on two.
TEST(ShortConv, LargeShapesMatchTheFormulasOnOneAndTwoThreads) {
  const int64_t B = 4, N = 64, C = 40, W = 4;
  std::vector<std::vector<double>> results[2];
  const int keep = omp_get_max_threads();
  for (const int threads : {1, 2}) {
    omp_set_num_threads(threads);
    Fixture f(B, N, C, W, 11);
    f.loss();
    f.ps.zero_grad();
    std::vector<double> dx(f.x.size(), 0.0), ds0(f.s0.size(), 0.0);
    f.conv.backward(f.wy.data(), f.ld, dx.data(), f.ld, ds0.data(), f.lds);
    const auto& p = f.ps.params().front();
    results[threads - 1] = {f.y, dx, ds0, std::vector<double>(p.grad, p.grad + p.numel())};
    // The formulas: x_t for t < 0 from the buffer, u, y = silu(u), du, dx, ds0, dw.
    const auto in = [&](int64_t b, int64_t t, int64_t c) {
      return t >= 0 ? f.x[size_t((b * N + t) * f.ld + c)] : f.s0[size_t(b * f.lds + (t + W - 1) * C + c)];
    };
    const auto w = [&](int64_t c, int64_t j) { return p.value[c * W + j]; };
    std::vector<double> du(size_t(B * N * C));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < N; ++t)
        for (int64_t c = 0; c < C; ++c) {
          double u = 0;
          for (int64_t j = 0; j < W; ++j) u += w(c, j) * in(b, t - W + 1 + j, c);
          const size_t at = size_t((b * N + t) * f.ld + c);
          ASSERT_NEAR(f.y[at], silu(u), 1e-12);
          const double sg = 1 / (1 + std::exp(-u));
          du[size_t((b * N + t) * C + c)] = f.wy[at] * sg * (1 + u * (1 - sg));
        }
    for (int64_t c = 0; c < C; ++c)
      for (int64_t j = 0; j < W; ++j) {
        double g = 0;
        for (int64_t b = 0; b < B; ++b)
          for (int64_t t = 0; t < N; ++t) g += du[size_t((b * N + t) * C + c)] * in(b, t - W + 1 + j, c);
        ASSERT_NEAR(p.grad[c * W + j], g, 1e-9 * (1 + std::fabs(g))) << c << " " << j;
      }
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = -(W - 1); t < N; ++t)
        for (int64_t c = 0; c < C; ++c) {
          double g = 0;
          for (int64_t j = 0; j < W; ++j) {
            const int64_t tau = t + W - 1 - j;
            if (tau >= 0 && tau < N) g += w(c, j) * du[size_t((b * N + tau) * C + c)];
          }
          const double got = t >= 0 ? dx[size_t((b * N + t) * f.ld + c)] : ds0[size_t(b * f.lds + (t + W - 1) * C + c)];
          ASSERT_NEAR(got, g, 1e-12) << b << " " << t << " " << c;
        }
  }
  omp_set_num_threads(keep);
  for (size_t i = 0; i < results[0].size(); ++i) EXPECT_EQ(results[0][i], results[1][i]) << "output " << i;
}

TEST(ShortConv, InitIsPyTorchsConv1dDefault) {
  core::ParamStoreT<double> ps;
  nn::ShortConv<double> conv(ps, "conv", 64, 4);
  ps.finalize(0);
  core::Rng rng(9);
  conv.init(rng);
  const auto& w = ps.params().front();
  double lo = 1, hi = -1;
  for (int64_t i = 0; i < w.numel(); ++i) {
    lo = std::min(lo, w.value[i]);
    hi = std::max(hi, w.value[i]);
  }
  EXPECT_GE(lo, -0.5);
  EXPECT_LE(hi, 0.5);
  EXPECT_LT(lo, -0.4);  // 256 draws fill U(-1/2, 1/2)
  EXPECT_GT(hi, 0.4);
}
