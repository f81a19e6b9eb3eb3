// Weight initialisations (nn/init.hpp): orthogonality of orthogonal / henaff, the
// torch-style sign convention of orthogonal's QR, henaff against its closed form,
// expm on matrices with known exponentials, xavier's bounds and variance, seeding.
#include "nn/init.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "core/check.hpp"
#include "core/rng.hpp"

using namespace seqbench;

namespace {

// max |W W^T - gain^2 I| (rows_orthonormal) or max |W^T W - gain^2 I|, w (rows, cols).
template <class T>
double orthogonality_error(const std::vector<T>& w, int64_t rows, int64_t cols,
                           bool rows_orthonormal, double gain = 1.0) {
  const int64_t n = rows_orthonormal ? rows : cols, k = rows_orthonormal ? cols : rows;
  auto at = [&](int64_t i, int64_t l) {  // element (i, l) of W (rows) or W^T (columns)
    return static_cast<double>(rows_orthonormal ? w[i * cols + l] : w[l * cols + i]);
  };
  double worst = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t l = 0; l < k; ++l) s += at(i, l) * at(j, l);
      worst = std::max(worst, std::abs(s - (i == j ? gain * gain : 0.0)));
    }
  return worst;
}

}  // namespace

class OrthogonalShapes : public ::testing::TestWithParam<std::pair<int, int>> {};

TEST_P(OrthogonalShapes, SmallerSideIsOrthonormalToRoundoff) {
  const auto [rows, cols] = GetParam();
  std::vector<double> w(static_cast<size_t>(rows * cols));
  core::Rng rng(42 + rows * 100 + cols);
  nn::orthogonal(rng, w.data(), rows, cols);
  EXPECT_LT(orthogonality_error(w, rows, cols, rows <= cols), 1e-10);
}

INSTANTIATE_TEST_SUITE_P(Shapes, OrthogonalShapes,
                         ::testing::Values(std::make_pair(1, 1), std::make_pair(2, 2),
                                           std::make_pair(16, 16), std::make_pair(64, 64),
                                           std::make_pair(9, 4), std::make_pair(4, 9),
                                           std::make_pair(1, 7), std::make_pair(7, 1),
                                           std::make_pair(33, 20), std::make_pair(20, 33)));

TEST(Orthogonal, IsTheSignCorrectedQrOfTheDrawnGaussian) {
  // Redraw G from the same seed (rows*cols normals, row-major): with the tall matrix
  // M = G (or G^T when wide) = Q R and W = Q (or Q^T), R = Q^T M must be upper
  // triangular with a positive diagonal, which pins Q down uniquely (torch's convention).
  for (const auto& shape : {std::pair<int64_t, int64_t>{6, 4}, {4, 6}, {5, 5}}) {
    const int64_t rows = shape.first, cols = shape.second;  // lambdas below capture them
    const uint64_t seed = 7;
    std::vector<double> w(static_cast<size_t>(rows * cols)), g(w.size());
    core::Rng rng(seed), redraw(seed);
    nn::orthogonal(rng, w.data(), rows, cols);
    for (auto& x : g) x = redraw.normal();
    const bool tall = rows >= cols;
    const int64_t m = tall ? rows : cols, k = tall ? cols : rows;
    auto M = [&](int64_t i, int64_t j) { return tall ? g[i * cols + j] : g[j * cols + i]; };
    auto Q = [&](int64_t i, int64_t j) { return tall ? w[i * cols + j] : w[j * cols + i]; };
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < k; ++j) {
        double r = 0;
        for (int64_t l = 0; l < m; ++l) r += Q(l, i) * M(l, j);
        if (i > j) {
          EXPECT_NEAR(r, 0.0, 1e-10) << rows << "x" << cols << " R(" << i << "," << j << ")";
        } else if (i == j) {
          EXPECT_GT(r, 1e-6) << rows << "x" << cols << " R(" << i << "," << i << ")";
        }
      }
  }
}

TEST(Orthogonal, GainScalesAndFloatIsTheRoundedDouble) {
  std::vector<double> wd(30);
  std::vector<float> wf(30);
  core::Rng a(3), b(3);
  nn::orthogonal(a, wd.data(), 5, 6, 2.5);
  nn::orthogonal(b, wf.data(), 5, 6, 2.5);
  EXPECT_LT(orthogonality_error(wd, 5, 6, true, 2.5), 1e-10);
  for (size_t i = 0; i < wd.size(); ++i) EXPECT_EQ(wf[i], static_cast<float>(wd[i])) << i;
}

TEST(Orthogonal, SameSeedSameMatrixOtherSeedOther) {
  std::vector<double> a(64), b(64), c(64);
  core::Rng ra(9), rb(9), rc(10);
  nn::orthogonal(ra, a.data(), 8, 8);
  nn::orthogonal(rb, b.data(), 8, 8);
  nn::orthogonal(rc, c.data(), 8, 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(Expm, KnownExponentials) {
  // Nilpotent: exp([[0, 1], [0, 0]]) = [[1, 1], [0, 1]].
  double n2[4] = {0, 1, 0, 0}, e[9];
  nn::expm(n2, e, 2);
  EXPECT_NEAR(e[0], 1, 1e-15);
  EXPECT_NEAR(e[1], 1, 1e-15);
  EXPECT_NEAR(e[2], 0, 1e-15);
  EXPECT_NEAR(e[3], 1, 1e-15);
  // Diagonal with a large entry (needs several squarings): exp of each entry.
  double d[9] = {3.0, 0, 0, 0, -2.0, 0, 0, 0, 0.25};
  nn::expm(d, e, 3);
  const double want[3] = {std::exp(3.0), std::exp(-2.0), std::exp(0.25)};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      EXPECT_NEAR(e[i * 3 + j], i == j ? want[i] : 0.0, 1e-13 * std::exp(3.0)) << i << "," << j;
  // A rotation generator with a large angle: exp([[0, θ], [-θ, 0]]).
  const double th = 10.0;
  double r[4] = {0, th, -th, 0};
  nn::expm(r, e, 2);
  EXPECT_NEAR(e[0], std::cos(th), 1e-13);
  EXPECT_NEAR(e[1], std::sin(th), 1e-13);
  EXPECT_NEAR(e[2], -std::sin(th), 1e-13);
  EXPECT_NEAR(e[3], std::cos(th), 1e-13);
}

TEST(Expm, InverseAndOrthogonalityOnARandomMatrix) {
  // exp(A) exp(-A) = I for any A; exp(S) is orthogonal for skew-symmetric S.
  const int64_t n = 12;
  core::Rng rng(5);
  std::vector<double> a(n * n), na(n * n), s(n * n), ea(n * n), ena(n * n), es(n * n);
  for (int64_t i = 0; i < n * n; ++i) {
    a[i] = rng.normal();
    na[i] = -a[i];
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) s[i * n + j] = a[i * n + j] - a[j * n + i];
  nn::expm(a.data(), ea.data(), n);
  nn::expm(na.data(), ena.data(), n);
  nn::expm(s.data(), es.data(), n);
  double worst = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double p = 0;
      for (int64_t l = 0; l < n; ++l) p += ea[i * n + l] * ena[l * n + j];
      worst = std::max(worst, std::abs(p - (i == j ? 1.0 : 0.0)));
    }
  EXPECT_LT(worst, 1e-9);
  EXPECT_LT(orthogonality_error(es, n, n, true), 1e-10);
}

class HenaffSizes : public ::testing::TestWithParam<int> {};

TEST_P(HenaffSizes, IsOrthogonalAndEqualsTheRotationBlocks) {
  const int64_t n = GetParam();
  const uint64_t seed = 17 + n;
  std::vector<double> w(static_cast<size_t>(n * n));
  core::Rng rng(seed), redraw(seed);
  nn::henaff(rng, w.data(), n);
  EXPECT_LT(orthogonality_error(w, n, n, true), 1e-10);
  // Closed form: block i is [[cos θ_i, sin θ_i], [-sin θ_i, cos θ_i]]; odd n ends in a 1.
  std::vector<double> want(w.size(), 0.0);
  for (int64_t i = 0; i < n / 2; ++i) {
    const double th = redraw.uniform(-std::numbers::pi, std::numbers::pi);
    want[(2 * i) * n + 2 * i] = std::cos(th);
    want[(2 * i) * n + 2 * i + 1] = std::sin(th);
    want[(2 * i + 1) * n + 2 * i] = -std::sin(th);
    want[(2 * i + 1) * n + 2 * i + 1] = std::cos(th);
  }
  if (n % 2) want[(n - 1) * n + n - 1] = 1.0;
  for (size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(w[i], want[i], 1e-13) << "entry " << i;
}

INSTANTIATE_TEST_SUITE_P(Sizes, HenaffSizes, ::testing::Values(1, 2, 3, 8, 11));

TEST(Henaff, SameSeedSameMatrixOtherSeedOther) {
  std::vector<float> a(36), b(36), c(36);
  core::Rng ra(1), rb(1), rc(2);
  nn::henaff(ra, a.data(), 6);
  nn::henaff(rb, b.data(), 6);
  nn::henaff(rc, c.data(), 6);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(Identity, IsScaledIdentity) {
  std::vector<float> w(25, 7.0f);
  nn::identity(w.data(), 5, 0.5);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) EXPECT_EQ(w[i * 5 + j], i == j ? 0.5f : 0.0f) << i << "," << j;
}

TEST(Xavier, BoundsMeanAndVariance) {
  // U(-a, a) has mean 0 and variance a^2 / 3; 20000 draws pin both to a few percent.
  const int64_t rows = 100, cols = 200, fan_in = 30, fan_out = 50;
  const double a = std::sqrt(6.0 / (fan_in + fan_out));
  std::vector<double> w(rows * cols);
  core::Rng rng(11);
  nn::xavier_uniform(rng, w.data(), fan_in, fan_out, rows, cols);
  double sum = 0, sq = 0, mx = 0;
  for (double x : w) {
    EXPECT_LE(std::abs(x), a);
    sum += x;
    sq += x * x;
    mx = std::max(mx, std::abs(x));
  }
  const double n = static_cast<double>(w.size());
  EXPECT_NEAR(sum / n, 0.0, 0.02 * a);
  EXPECT_NEAR(sq / n / (a * a / 3), 1.0, 0.03);
  EXPECT_GT(mx, 0.99 * a);  // the whole interval is used, not a narrower one
}

TEST(Xavier, SameSeedSameMatrixOtherSeedOther) {
  std::vector<double> a(12), b(12), c(12);
  core::Rng ra(4), rb(4), rc(5);
  nn::xavier_uniform(ra, a.data(), 3, 4, 3, 4);
  nn::xavier_uniform(rb, b.data(), 3, 4, 3, 4);
  nn::xavier_uniform(rc, c.data(), 3, 4, 3, 4);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(Init, NonPositiveSizesThrow) {
  std::vector<double> w(4);
  core::Rng rng(0);
  EXPECT_THROW(nn::orthogonal(rng, w.data(), 0, 2), core::Error);
  EXPECT_THROW(nn::henaff(rng, w.data(), 0), core::Error);
  EXPECT_THROW(nn::identity(w.data(), -1), core::Error);
  EXPECT_THROW(nn::xavier_uniform(rng, w.data(), 0, 2, 2, 2), core::Error);
}
