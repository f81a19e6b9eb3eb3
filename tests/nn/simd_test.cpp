// nn/simd.hpp: the float kernels against the plain loops they stand for, at lengths
// around the vector widths (8 for AVX2, 16 for AVX-512) and their multiples of four.
#include "nn/simd.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace seqbench::nn {
namespace {

std::vector<float> wave(int64_t n, float a, float b) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = std::sin(a * float(i) + b);
  return v;
}

// The dot product agrees with a double-precision sum to float rounding at every length,
// including the tails past the last whole vector.
TEST(Simd, DotMatchesTheSumAtEveryLength) {
  for (const int64_t n : {0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 128}) {
    const std::vector<float> a = wave(n, 0.7f, 0.1f), b = wave(n, 1.3f, 2.0f);
    double ref = 0, mag = 0;
    for (int64_t i = 0; i < n; ++i) {
      ref += double(a[size_t(i)]) * double(b[size_t(i)]);
      mag += std::fabs(double(a[size_t(i)]) * double(b[size_t(i)]));
    }
    EXPECT_NEAR(dot(n, a.data(), b.data()), ref, 1e-6 * (1 + mag)) << "n=" << n;
  }
  EXPECT_EQ(dot(3, std::vector<double>{1, 2, 3}.data(), std::vector<double>{4, 5, 6}.data()), 32.0);
}

// add_rows gives what the row-by-row multiply-adds give, y[j] = fma(row_k[j], c_k, y[j])
// for k in order: bit for bit where the vector form runs (it uses the fma instruction);
// elsewhere (a portable build, which neither has nor contracts to an fma) within rounding.
TEST(Simd, AddRowsIsTheRowByRowMultiplyAddBitForBit) {
  for (const int64_t n : {1, 7, 8, 9, 16, 17, 31, 32, 33, 48, 64, 65, 80}) {
    for (const int64_t K : {0, 1, 3, 64}) {
      const int64_t stride = n + 5;  // rows not packed: the stride is honoured
      const std::vector<float> rows = wave(K * stride + 1, 0.37f, 0.5f), coef = wave(K + 1, 2.1f, 0.3f);
      std::vector<float> y = wave(n, 0.9f, 1.0f), ref = y;
      for (int64_t k = 0; k < K; ++k)
        for (int64_t j = 0; j < n; ++j)
          ref[size_t(j)] = std::fma(rows[size_t(k * stride + j)], coef[size_t(k)], ref[size_t(j)]);
      add_rows(n, K, rows.data(), stride, coef.data(), y.data());
      for (int64_t j = 0; j < n; ++j) {
#ifdef SEQBENCH_SIMD
        ASSERT_EQ(y[size_t(j)], ref[size_t(j)]) << "n=" << n << " K=" << K << " j=" << j;
#else
        ASSERT_NEAR(y[size_t(j)], ref[size_t(j)], 1e-5f * (1 + float(K))) << "n=" << n << " K=" << K << " j=" << j;
#endif
      }
    }
  }
}

}  // namespace
}  // namespace seqbench::nn
