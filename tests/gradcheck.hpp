// Finite-difference gradient checking for the hand-written backwards, in double.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "sanitized.hpp"

namespace seqbench::gradcheck {

// Fills with N(0, scale^2).
inline void fill_normal(core::Rng& rng, double* p, int64_t n, double scale = 1.0) {
  for (int64_t i = 0; i < n; ++i) p[i] = rng.normal() * scale;
}
template <class V>
void fill_normal(core::Rng& rng, V&& v, double scale = 1.0) {
  fill_normal(rng, v.data(), v.numel(), scale);
}

// The entries expect_gradient perturbs. The plain suite checks every entry. Under the
// sanitizers (`make asan`, ~10x slower) it checks at most kSanitizedEntries of them: the
// first, the last, the one with the largest analytic gradient and the rest spread over the
// tensor with an odd stride, so that different rows and columns are hit. Every
// forward and backward runs under the sanitizers either way; the plain suite keeps the
// full numerical check.
inline constexpr int64_t kSanitizedEntries = 48;
inline std::vector<int64_t> entries_to_check(const double* analytic, int64_t n) {
  std::vector<int64_t> idx;
  if (!testutil::kUnderAsan || n <= kSanitizedEntries) {
    idx.resize(size_t(n));
    for (int64_t i = 0; i < n; ++i) idx[size_t(i)] = i;
    return idx;
  }
  int64_t top = 0;
  for (int64_t i = 1; i < n; ++i)
    if (std::abs(analytic[i]) > std::abs(analytic[top])) top = i;
  idx = {0, n - 1, top};
  const int64_t stride = (n * 5 / 8) | 1;  // odd, about n / golden ratio
  for (int64_t j = 1; int64_t(idx.size()) < kSanitizedEntries; ++j) idx.push_back(j * stride % n);
  std::sort(idx.begin(), idx.end());
  idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
  return idx;
}

// Compares analytic[i] with the central difference (f(p+e) - f(p-e)) / 2e for each of
// the n entries of p (a spread subset under the sanitizers: entries_to_check); restores
// p. Fails the test with the worst entry's index when
//   |a - fd| > atol + rtol * max(|a|, |fd|).
inline void expect_gradient(const std::string& what, double* p, const double* analytic, int64_t n,
                            const std::function<double()>& f, double eps = 1e-6,
                            double rtol = 1e-5, double atol = 1e-8) {
  ASSERT_GT(n, 0) << what;
  double worst = 0;
  int64_t worst_i = -1;
  double worst_a = 0, worst_fd = 0;
  bool any_nonzero = false;
  for (const int64_t i : entries_to_check(analytic, n)) {
    const double keep = p[i];
    p[i] = keep + eps;
    const double fp = f();
    p[i] = keep - eps;
    const double fm = f();
    p[i] = keep;
    const double fd = (fp - fm) / (2 * eps);
    const double err = std::abs(analytic[i] - fd) - rtol * std::max(std::abs(analytic[i]), std::abs(fd));
    if (std::abs(fd) > 1e-9) any_nonzero = true;
    if (err > worst || worst_i < 0) {
      worst = err;
      worst_i = i;
      worst_a = analytic[i];
      worst_fd = fd;
    }
  }
  EXPECT_TRUE(any_nonzero) << what << ": every finite difference is zero (the check would be vacuous)";
  EXPECT_LE(worst, atol) << what << ": entry " << worst_i << " analytic " << worst_a
                         << " vs finite difference " << worst_fd;
}

// Sum of w ⊙ y over n entries: a scalar loss whose gradient w.r.t. y is w.
inline double dot(const double* w, const double* y, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += w[i] * y[i];
  return s;
}

}  // namespace seqbench::gradcheck
