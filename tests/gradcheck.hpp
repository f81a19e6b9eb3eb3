// Finite-difference gradient checking for the hand-written backwards, in double.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include "core/rng.hpp"
#include "core/tensor.hpp"

namespace seqbench::gradcheck {

// Fills with N(0, scale^2).
inline void fill_normal(core::Rng& rng, double* p, int64_t n, double scale = 1.0) {
  for (int64_t i = 0; i < n; ++i) p[i] = rng.normal() * scale;
}
template <class V>
void fill_normal(core::Rng& rng, V&& v, double scale = 1.0) {
  fill_normal(rng, v.data(), v.numel(), scale);
}

// Compares analytic[i] with the central difference (f(p+e) - f(p-e)) / 2e for each of
// the n entries of p; restores p. Fails the test with the worst entry's index when
//   |a - fd| > atol + rtol * max(|a|, |fd|).
inline void expect_gradient(const std::string& what, double* p, const double* analytic, int64_t n,
                            const std::function<double()>& f, double eps = 1e-6,
                            double rtol = 1e-5, double atol = 1e-8) {
  ASSERT_GT(n, 0) << what;
  double worst = 0;
  int64_t worst_i = -1;
  double worst_a = 0, worst_fd = 0;
  bool any_nonzero = false;
  for (int64_t i = 0; i < n; ++i) {
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
