#include "nn/init.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "backend/gemm.hpp"
#include "core/check.hpp"

namespace seqbench::nn {

using backend::Trans;

namespace {

// Max column sum of |a| (a (n, n)): the norm the scaling step bounds.
double norm1(const double* a, int64_t n, std::vector<double>& col) {
  col.assign(static_cast<size_t>(n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) col[j] += std::abs(a[i * n + j]);
  return n > 0 ? *std::max_element(col.begin(), col.end()) : 0.0;
}

// Applies the reflector I - 2 v v^T (v unit, nonzero in rows [j, m) only) from the left
// to columns [c0, k) of a (m, k). Row-wise accumulation keeps the access contiguous.
void reflect(const double* v, int64_t j, int64_t m, int64_t c0, int64_t k, double* a,
             std::vector<double>& w) {
  w.assign(static_cast<size_t>(k), 0.0);
  for (int64_t i = j; i < m; ++i)
    for (int64_t c = c0; c < k; ++c) w[c] += v[i] * a[i * k + c];
  for (int64_t i = j; i < m; ++i)
    for (int64_t c = c0; c < k; ++c) a[i * k + c] -= 2.0 * v[i] * w[c];
}

}  // namespace

template <class T>
void xavier_uniform(core::Rng& rng, T* w, int64_t fan_in, int64_t fan_out, int64_t rows,
                    int64_t cols) {
  SB_CHECK(fan_in > 0 && fan_out > 0 && rows > 0 && cols > 0,
           "xavier_uniform: fans and shape must be positive, got fan_in={} fan_out={} "
           "shape ({}, {})",
           fan_in, fan_out, rows, cols);
  const double a = std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  for (int64_t i = 0; i < rows * cols; ++i) w[i] = static_cast<T>(rng.uniform(-a, a));
}

template <class T>
void orthogonal(core::Rng& rng, T* w, int64_t rows, int64_t cols, double gain) {
  SB_CHECK(rows > 0 && cols > 0, "orthogonal: shape must be positive, got ({}, {})", rows, cols);
  const bool tall = rows >= cols;
  const int64_t m = tall ? rows : cols, k = tall ? cols : rows;
  // a (m, k): G, or G^T when G is wide, so the QR always sees a tall matrix.
  std::vector<double> a(static_cast<size_t>(m * k));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) a[tall ? i * k + j : j * k + i] = rng.normal();

  // Householder QR: reflector j is stored as column j of v (m, k), zero above row j.
  // Householder rather than Gram-Schmidt because Q's orthogonality then does not
  // depend on G's conditioning (tests ask for 1e-10 at any size).
  std::vector<double> v(static_cast<size_t>(m * k), 0.0), vj(static_cast<size_t>(m)), tmp;
  std::vector<double> r_diag(static_cast<size_t>(k));
  for (int64_t j = 0; j < k; ++j) {
    double sq = 0;
    for (int64_t i = j; i < m; ++i) sq += a[i * k + j] * a[i * k + j];
    const double norm = std::sqrt(sq);
    const double x0 = a[j * k + j];
    // alpha with the sign opposite to x0 avoids cancellation in v0 = x0 - alpha.
    const double alpha = x0 >= 0 ? -norm : norm;
    r_diag[j] = alpha;
    std::fill(vj.begin(), vj.end(), 0.0);
    for (int64_t i = j; i < m; ++i) vj[i] = a[i * k + j];
    vj[j] -= alpha;
    double vn = 0;
    for (int64_t i = j; i < m; ++i) vn += vj[i] * vj[i];
    vn = std::sqrt(vn);
    if (vn == 0) continue;  // rows [j, m) of this column are all zero: nothing to reflect
    for (int64_t i = j; i < m; ++i) {
      vj[i] /= vn;
      v[i * k + j] = vj[i];
    }
    reflect(vj.data(), j, m, j, k, a.data(), tmp);
  }
  // Thin Q (m, k) = H_0 H_1 ... H_{k-1} [I_k; 0], applied right to left.
  std::vector<double> q(static_cast<size_t>(m * k), 0.0);
  for (int64_t j = 0; j < k; ++j) q[j * k + j] = 1.0;
  for (int64_t j = k - 1; j >= 0; --j) {
    for (int64_t i = 0; i < m; ++i) vj[i] = v[i * k + j];
    reflect(vj.data(), j, m, 0, k, q.data(), tmp);
  }
  for (int64_t j = 0; j < k; ++j) {
    const double s = (r_diag[j] < 0 ? -gain : gain);
    for (int64_t i = 0; i < m; ++i) {
      const double x = s * q[i * k + j];
      if (tall)
        w[i * cols + j] = static_cast<T>(x);  // w (rows, cols) = Q
      else
        w[j * cols + i] = static_cast<T>(x);  // w (rows, cols) = Q^T, Q (cols, rows)
    }
  }
}

template <class T>
void chrono_lstm_biases(core::Rng& rng, T* b, int64_t hidden, double tmax) {
  SB_CHECK(hidden > 0, "chrono_lstm_biases: hidden must be positive, got {}", hidden);
  SB_CHECK(tmax > 2.0, "chrono_lstm_biases: tmax must exceed 2, got {}", tmax);
  for (int64_t j = 0; j < hidden; ++j) {
    const double bf = std::log(rng.uniform(1.0, tmax - 1.0));
    b[hidden + j] = static_cast<T>(bf);
    b[j] = static_cast<T>(-bf);
  }
}

template <class T>
void identity(T* w, int64_t n, double scale) {
  SB_CHECK(n > 0, "identity: size must be positive, got {}", n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) w[i * n + j] = static_cast<T>(i == j ? scale : 0.0);
}

template <class T>
void henaff(core::Rng& rng, T* w, int64_t n) {
  SB_CHECK(n > 0, "henaff: size must be positive, got {}", n);
  std::vector<double> a(static_cast<size_t>(n * n), 0.0), e(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n / 2; ++i) {
    const double theta = rng.uniform(-std::numbers::pi, std::numbers::pi);
    a[(2 * i) * n + 2 * i + 1] = theta;
    a[(2 * i + 1) * n + 2 * i] = -theta;
  }
  expm(a.data(), e.data(), n);
  for (int64_t i = 0; i < n * n; ++i) w[i] = static_cast<T>(e[i]);
}

void expm(const double* a, double* dst, int64_t n) {
  SB_CHECK(n > 0, "expm: size must be positive, got {}", n);
  const size_t nn = static_cast<size_t>(n * n);
  std::vector<double> col, x(a, a + nn), term(nn), next(nn);
  // Scaling: exp(a) = exp(a / 2^s)^(2^s) with ||a / 2^s||_1 <= 1/2, where the Taylor
  // terms fall at least as fast as 2^-k / k!.
  int s = 0;
  const double norm = norm1(a, n, col);
  SB_CHECK(std::isfinite(norm), "expm: the matrix has a non-finite entry (norm {})", norm);
  while (std::ldexp(norm, -s) > 0.5) ++s;
  const double scale = std::ldexp(1.0, -s);
  for (auto& xi : x) xi *= scale;

  // dst = I + x + x^2/2! + ...: term_k = term_{k-1} x / k.
  std::copy(x.begin(), x.end(), term.begin());
  for (size_t i = 0; i < nn; ++i) dst[i] = x[i];
  for (int64_t i = 0; i < n; ++i) dst[i * n + i] += 1.0;
  for (int k = 2; k <= 40; ++k) {
    backend::gemm<double>(Trans::N, Trans::N, n, n, n, 1.0 / k, term.data(), n, x.data(), n, 0.0,
                          next.data(), n);
    term.swap(next);
    for (size_t i = 0; i < nn; ++i) dst[i] += term[i];
    // 2^-53: the term no longer changes the sum in double.
    if (norm1(term.data(), n, col) <= 0x1.0p-53 * norm1(dst, n, col)) break;
  }
  // Squaring: dst = dst^(2^s).
  for (int i = 0; i < s; ++i) {
    backend::gemm<double>(Trans::N, Trans::N, n, n, n, 1.0, dst, n, dst, n, 0.0, next.data(), n);
    std::copy(next.begin(), next.end(), dst);
  }
}

template void xavier_uniform<float>(core::Rng&, float*, int64_t, int64_t, int64_t, int64_t);
template void xavier_uniform<double>(core::Rng&, double*, int64_t, int64_t, int64_t, int64_t);
template void orthogonal<float>(core::Rng&, float*, int64_t, int64_t, double);
template void orthogonal<double>(core::Rng&, double*, int64_t, int64_t, double);
template void chrono_lstm_biases<float>(core::Rng&, float*, int64_t, double);
template void chrono_lstm_biases<double>(core::Rng&, double*, int64_t, double);
template void identity<float>(float*, int64_t, double);
template void identity<double>(double*, int64_t, double);
template void henaff<float>(core::Rng&, float*, int64_t);
template void henaff<double>(core::Rng&, double*, int64_t);

}  // namespace seqbench::nn
