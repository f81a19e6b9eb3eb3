#include "optim/projection.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <type_traits>

#include "core/check.hpp"

namespace seqbench::optim {

namespace {

// Relative slack within which a norm counts as on its bound (see the header): above the
// rounding of T so that a projected matrix stored back in T is a fixed point.
template <class T>
constexpr double kSlack = std::is_same_v<T, float> ? 1e-6 : 1e-12;

constexpr double kOrthTol = 1e-12;  // converged when |<x_p, x_q>| <= kOrthTol ‖x_p‖ ‖x_q‖
constexpr int kMaxSweeps = 100;     // one-sided Jacobi needs ~5-15; more means NaN/garbage
// Below this many multiply-adds a round's pairs run serially (a parallel region costs more).
constexpr int64_t kParallelMin = int64_t(1) << 14;

// The vectors one-sided Jacobi orthogonalizes, as rows of x (n, m), with the rotations
// accumulated in the rows of vt (n, n). a = Σ_j left_j right_jᵀ, where
//   rows >= cols (!transposed): x = aᵀ, left_j = x_j (= σ_j u_j), right_j = vt_j (= v_j)
//   rows <  cols ( transposed): x = a,  left_j = vt_j (= u_j),    right_j = x_j (= σ_j v_j)
// Working on the shorter side keeps n = min(rows, cols) and the vectors contiguous.
struct Jacobi {
  bool transposed = false;
  int64_t n = 0, m = 0;
  std::vector<double> x;      // (n, m)
  std::vector<double> vt;     // (n, n), empty when vectors were not asked for
  std::vector<double> sigma;  // (n) ‖x_j‖
};

// One plane rotation of rows p, q: [x_p, x_q] <- [c x_p - s x_q, s x_p + c x_q].
inline void rotate_rows(double* xp, double* xq, int64_t len, double c, double s) {
  for (int64_t k = 0; k < len; ++k) {
    const double a = xp[k], b = xq[k];
    xp[k] = c * a - s * b;
    xq[k] = s * a + c * b;
  }
}

// Orthogonalizes the rows of x (n, m) in place (Hestenes); rotates vt (n, n) alongside when
// non-null. Pairs are visited in round-robin tournament order so the n/2 pairs of a round
// are disjoint and run in parallel; each pair's arithmetic does not depend on the thread,
// so results are identical for every thread count.
void orthogonalize_rows(double* x, int64_t n, int64_t m, double* vt) {
  if (n < 2) return;
  const int64_t np = n + (n & 1);  // even player count; index n (when n is odd) is a bye
  std::vector<int64_t> pos(np);
  std::iota(pos.begin(), pos.end(), int64_t(0));
  const int64_t half = np / 2;
  const bool parallel = half * m >= kParallelMin;
  for (int sweep = 0;; ++sweep) {
    SB_CHECK(sweep < kMaxSweeps,
             "Jacobi SVD of a ({} x {}) matrix did not converge in {} sweeps (hint: the "
             "matrix holds NaN/Inf or values near overflow)",
             n, m, kMaxSweeps);
    int64_t rotated = 0;
    for (int64_t round = 0; round < np - 1; ++round) {
#pragma omp parallel for schedule(static) reduction(+ : rotated) if (parallel)
      for (int64_t k = 0; k < half; ++k) {
        const int64_t p = pos[k], q = pos[np - 1 - k];
        if (p >= n || q >= n) continue;
        double* xp = x + p * m;
        double* xq = x + q * m;
        double a = 0, b = 0, g = 0;  // ‖x_p‖², ‖x_q‖², <x_p, x_q>, fresh so no drift
        for (int64_t i = 0; i < m; ++i) {
          a += xp[i] * xp[i];
          b += xq[i] * xq[i];
          g += xp[i] * xq[i];
        }
        if (a == 0 || b == 0) continue;
        if (std::abs(g) <= kOrthTol * std::sqrt(a) * std::sqrt(b)) continue;
        ++rotated;
        // Rotation that diagonalizes [[a, g], [g, b]] (Golub & Van Loan, symSchur2),
        // taking the smaller angle; for huge zeta, t ~ 1 / (2 zeta) avoids overflow.
        const double zeta = (b - a) / (2 * g);
        const double t = std::abs(zeta) > 1e150 ? 0.5 / zeta
                                                : (zeta >= 0 ? 1.0 : -1.0) /
                                                      (std::abs(zeta) + std::sqrt(1 + zeta * zeta));
        const double c = 1 / std::sqrt(1 + t * t), s = c * t;
        rotate_rows(xp, xq, m, c, s);
        if (vt != nullptr) rotate_rows(vt + p * n, vt + q * n, n, c, s);
      }
      std::rotate(pos.begin() + 1, pos.end() - 1, pos.end());  // next round's pairing
    }
    if (rotated == 0) return;
  }
}

template <class T>
Jacobi jacobi(const T* a, int64_t rows, int64_t cols, bool want_vectors) {
  SB_CHECK(rows >= 0 && cols >= 0, "matrix shape ({}, {}) has a negative extent", rows, cols);
  SB_CHECK(a != nullptr || rows * cols == 0, "null matrix pointer for shape ({}, {})", rows, cols);
  Jacobi j;
  j.transposed = rows < cols;
  j.n = std::min(rows, cols);
  j.m = std::max(rows, cols);
  j.x.resize(static_cast<size_t>(j.n * j.m));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const double v = static_cast<double>(a[r * cols + c]);
      SB_CHECK(std::isfinite(v),
               "matrix ({}, {}) has a non-finite entry {} at ({}, {}) (hint: training "
               "diverged; lower the lr or enable gradient clipping)",
               rows, cols, v, r, c);
      if (j.transposed)
        j.x[static_cast<size_t>(r * cols + c)] = v;
      else
        j.x[static_cast<size_t>(c * rows + r)] = v;
    }
  if (want_vectors) {
    j.vt.assign(static_cast<size_t>(j.n * j.n), 0.0);
    for (int64_t i = 0; i < j.n; ++i) j.vt[static_cast<size_t>(i * j.n + i)] = 1.0;
  }
  orthogonalize_rows(j.x.data(), j.n, j.m, want_vectors ? j.vt.data() : nullptr);
  j.sigma.resize(static_cast<size_t>(j.n));
  for (int64_t i = 0; i < j.n; ++i) {
    const double* xi = j.x.data() + i * j.m;
    double s2 = 0;
    for (int64_t k = 0; k < j.m; ++k) s2 += xi[k] * xi[k];
    j.sigma[static_cast<size_t>(i)] = std::sqrt(s2);
  }
  return j;
}

// Indices of j.sigma sorted by descending value (ties by index, so the order is stable).
std::vector<int64_t> descending(const std::vector<double>& sigma) {
  std::vector<int64_t> idx(sigma.size());
  std::iota(idx.begin(), idx.end(), int64_t(0));
  std::stable_sort(idx.begin(), idx.end(),
                   [&](int64_t l, int64_t r) { return sigma[size_t(l)] > sigma[size_t(r)]; });
  return idx;
}

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// out[c] = Σ_r |w[r, c]| for w (rows, ncols).
template <class T>
std::vector<double> column_l1(const T* w, int64_t rows, int64_t ncols) {
  std::vector<double> out(static_cast<size_t>(ncols), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const T* wr = w + r * ncols;
    for (int64_t c = 0; c < ncols; ++c) out[size_t(c)] += std::abs(static_cast<double>(wr[c]));
  }
  return out;
}

double block_max(const std::vector<double>& col, int64_t c0, int64_t c1) {
  double v = 0;
  for (int64_t c = c0; c < c1; ++c) v = std::max(v, col[size_t(c)]);
  return v;
}

// Per-column factors that bring every column of [c0, c1) with ℓ1 norm above
// budget * (1 + slack) down to exactly budget; other entries of scale are left as they are.
void column_budget(const std::vector<double>& col, int64_t c0, int64_t c1, double budget,
                   double slack, std::vector<double>& scale) {
  for (int64_t c = c0; c < c1; ++c)
    if (col[size_t(c)] > budget * (1 + slack)) scale[size_t(c)] = budget / col[size_t(c)];
}

// w (rows, ncols): column c multiplied by scale[c]; a factor of exactly 1 keeps the bits.
template <class T>
void scale_columns(T* w, int64_t rows, int64_t ncols, const std::vector<double>& scale) {
  bool any = false;
  for (double s : scale) any = any || s != 1.0;
  if (!any) return;
  for (int64_t r = 0; r < rows; ++r) {
    T* wr = w + r * ncols;
    for (int64_t c = 0; c < ncols; ++c)
      if (scale[size_t(c)] != 1.0)
        wr[c] = static_cast<T>(static_cast<double>(wr[c]) * scale[size_t(c)]);
  }
}

LstmGateNorms scaled(const LstmGateNorms& n, double s) {
  return {n.w_i * s, n.w_f * s, n.w_z * s, n.w_o * s, n.u_f * s};
}

[[noreturn]] void usage(const std::string& msg) { throw core::UsageError(msg); }

}  // namespace

// ---- SVD -------------------------------------------------------------------------------

template <class T>
Svd jacobi_svd(const T* a, int64_t rows, int64_t cols) {
  Jacobi j = jacobi(a, rows, cols, /*want_vectors=*/true);
  Svd out;
  out.rows = rows;
  out.cols = cols;
  out.k = j.n;
  out.u.assign(static_cast<size_t>(rows * j.n), 0.0);
  out.v.assign(static_cast<size_t>(cols * j.n), 0.0);
  out.s.resize(static_cast<size_t>(j.n));
  const std::vector<int64_t> order = descending(j.sigma);
  for (int64_t o = 0; o < j.n; ++o) {
    const int64_t i = order[size_t(o)];
    const double sg = j.sigma[size_t(i)];
    out.s[size_t(o)] = sg;
    const double* xi = j.x.data() + i * j.m;   // σ_i times a singular vector
    const double* vi = j.vt.data() + i * j.n;  // the other singular vector
    const double inv = sg > 0 ? 1.0 / sg : 0.0;
    double* u_col = out.u.data() + o;  // stride k
    double* v_col = out.v.data() + o;
    if (!j.transposed) {
      for (int64_t r = 0; r < rows; ++r) u_col[r * j.n] = xi[r] * inv;
      for (int64_t c = 0; c < cols; ++c) v_col[c * j.n] = sg > 0 ? vi[c] : 0.0;
    } else {
      for (int64_t r = 0; r < rows; ++r) u_col[r * j.n] = sg > 0 ? vi[r] : 0.0;
      for (int64_t c = 0; c < cols; ++c) v_col[c * j.n] = xi[c] * inv;
    }
  }
  return out;
}

template <class T>
std::vector<double> singular_values(const T* a, int64_t rows, int64_t cols) {
  Jacobi j = jacobi(a, rows, cols, /*want_vectors=*/false);
  std::vector<double> s = j.sigma;
  std::sort(s.begin(), s.end(), std::greater<double>());
  return s;
}

template <class T>
double spectral_norm(const T* a, int64_t rows, int64_t cols) {
  const std::vector<double> s = singular_values(a, rows, cols);
  return s.empty() ? 0.0 : s.front();
}

template <class T>
double clip_singular_values(T* w, int64_t rows, int64_t cols, double max_sv) {
  SB_CHECK(std::isfinite(max_sv) && max_sv >= 0,
           "singular value bound {} must be finite and >= 0 (hint: stability.lambda)", max_sv);
  if (rows <= 0 || cols <= 0) {
    SB_CHECK(rows >= 0 && cols >= 0, "matrix shape ({}, {}) has a negative extent", rows, cols);
    return 0.0;
  }
  Jacobi j = jacobi(w, rows, cols, /*want_vectors=*/true);
  const double smax = *std::max_element(j.sigma.begin(), j.sigma.end());
  const double limit = max_sv * (1 + kSlack<T>);
  if (smax <= limit) return smax;
  // w - Σ (σ_i - max_sv) u_i v_iᵀ = w - Σ (1 - max_sv/σ_i) left_i right_iᵀ: the components
  // below the bound are never recomputed, so they keep full accuracy.
  std::vector<double> a(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows * cols; ++i) a[size_t(i)] = static_cast<double>(w[i]);
  for (int64_t i = 0; i < j.n; ++i) {
    const double sg = j.sigma[size_t(i)];
    if (sg <= limit) continue;
    const double f = 1.0 - max_sv / sg;
    const double* xi = j.x.data() + i * j.m;
    const double* vi = j.vt.data() + i * j.n;
    const double* left = j.transposed ? vi : xi;   // (rows)
    const double* right = j.transposed ? xi : vi;  // (cols)
    for (int64_t r = 0; r < rows; ++r) {
      const double lr = f * left[r];
      double* ar = a.data() + r * cols;
      for (int64_t c = 0; c < cols; ++c) ar[c] -= lr * right[c];
    }
  }
  for (int64_t i = 0; i < rows * cols; ++i) w[i] = static_cast<T>(a[size_t(i)]);
  return smax;
}

template <class T>
double project_rnn(T* w_h, int64_t H, double lambda) {
  return clip_singular_values(w_h, H, H, lambda);
}

// ---- LSTM ------------------------------------------------------------------------------

template <class T>
LstmGateNorms lstm_gate_norms(const T* w_x, int64_t I, const T* w_h, int64_t H) {
  SB_CHECK(I >= 0 && H >= 0, "LSTM sizes I = {}, H = {} must be >= 0", I, H);
  SB_CHECK(w_h != nullptr || H == 0, "LSTM w_h is null for H = {}", H);
  SB_CHECK(w_x != nullptr || I == 0 || H == 0, "LSTM w_x is null for I = {}", I);
  LstmGateNorms n;
  if (H == 0) return n;
  const std::vector<double> ch = column_l1(w_h, H, 4 * H);
  n.w_i = block_max(ch, 0 * H, 1 * H);
  n.w_f = block_max(ch, 1 * H, 2 * H);
  n.w_z = block_max(ch, 2 * H, 3 * H);
  n.w_o = block_max(ch, 3 * H, 4 * H);
  if (I > 0) n.u_f = block_max(column_l1(w_x, I, 4 * H), 1 * H, 2 * H);
  return n;
}

double lstm_contraction_bound(const LstmGateNorms& n, const LstmStability& s) {
  const double lf = sigmoid(n.w_f + n.u_f * s.input_bound + s.forget_bias_bound);
  if (!(lf < 1.0)) return std::numeric_limits<double>::infinity();
  return lf + n.w_i / 4 + n.w_z + n.w_f / (4 * (1 - lf)) + n.w_o / 4;
}

template <class T>
void project_lstm(T* w_x, int64_t I, T* w_h, int64_t H, const LstmStability& s) {
  const bool paper = s.variant == "paper";
  if (!paper && s.variant != "official_l1")
    usage(
        fmt::format("stability.variant \"{}\" is not one of: paper, official_l1 (hint: paper "
                    "enforces the inf-norm contraction bound with lambda, official_l1 the "
                    "official code's fixed column l1 budgets)",
                    s.variant));
  if (H == 0) return;
  const LstmGateNorms n = lstm_gate_norms(w_x, I, w_h, H);
  const std::vector<double> ch = column_l1(w_h, H, 4 * H);
  const std::vector<double> cx = I > 0 ? column_l1(w_x, I, 4 * H) : std::vector<double>();
  std::vector<double> sh(static_cast<size_t>(4 * H), 1.0), sx(static_cast<size_t>(4 * H), 1.0);

  if (paper) {
    if (!(std::isfinite(s.lambda) && s.lambda > 0))
      usage(fmt::format("stability.lambda = {} must be finite and > 0 (hint: 1.0)", s.lambda));
    if (!(std::isfinite(s.input_bound) && s.input_bound >= 0))
      usage(
          fmt::format("stability.input_bound = {} must be finite and >= 0 (hint: 1 for "
                      "one-hot inputs)",
                      s.input_bound));
    if (!(std::isfinite(s.forget_bias_bound) && s.forget_bias_bound >= 0))
      usage(fmt::format("stability.forget_bias_bound = {} must be finite and >= 0 (hint: 0)",
                        s.forget_bias_bound));
    if (lstm_contraction_bound(n, s) <= s.lambda * (1 + kSlack<T>)) return;
    const double floor = lstm_contraction_bound(scaled(n, 0.0), s);  // σ(b_f)
    if (!(floor < s.lambda))
      usage(
          fmt::format("stability.lambda = {} cannot be met: with forget_bias_bound = {} the "
                      "forget gate alone gives {} (hint: lambda > sigmoid(forget_bias_bound); 1.0 "
                      "works for a zero bias bound)",
                      s.lambda, s.forget_bias_bound, floor));
    // B(s·norms) is continuous and increasing in s with B(0) < lambda < B(1): bisect, keep
    // the side that satisfies the bound.
    double lo = 0.0, hi = 1.0;
    for (int it = 0; it < 200 && hi - lo > 0; ++it) {
      const double mid = 0.5 * (lo + hi);
      if (mid == lo || mid == hi) break;
      (lstm_contraction_bound(scaled(n, mid), s) <= s.lambda ? lo : hi) = mid;
    }
    const LstmGateNorms b = scaled(n, lo);
    column_budget(ch, 0 * H, 1 * H, b.w_i, 0.0, sh);
    column_budget(ch, 1 * H, 2 * H, b.w_f, 0.0, sh);
    column_budget(ch, 2 * H, 3 * H, b.w_z, 0.0, sh);
    column_budget(ch, 3 * H, 4 * H, b.w_o, 0.0, sh);
    if (I > 0) column_budget(cx, 1 * H, 2 * H, b.u_f, 0.0, sx);
  } else {
    column_budget(ch, 0 * H, 1 * H, kOfficialL1Wi, kSlack<T>, sh);
    column_budget(ch, 1 * H, 2 * H, kOfficialL1Wf, kSlack<T>, sh);
    column_budget(ch, 2 * H, 3 * H, kOfficialL1Wz, kSlack<T>, sh);
    column_budget(ch, 3 * H, 4 * H, kOfficialL1Wo, kSlack<T>, sh);
    if (I > 0) column_budget(cx, 1 * H, 2 * H, kOfficialL1Uf, kSlack<T>, sx);
  }
  scale_columns(w_h, H, 4 * H, sh);
  if (I > 0) scale_columns(w_x, I, 4 * H, sx);
}

#define SB_INSTANTIATE(T)                                                          \
  template Svd jacobi_svd<T>(const T*, int64_t, int64_t);                          \
  template std::vector<double> singular_values<T>(const T*, int64_t, int64_t);     \
  template double spectral_norm<T>(const T*, int64_t, int64_t);                    \
  template double clip_singular_values<T>(T*, int64_t, int64_t, double);           \
  template double project_rnn<T>(T*, int64_t, double);                             \
  template LstmGateNorms lstm_gate_norms<T>(const T*, int64_t, const T*, int64_t); \
  template void project_lstm<T>(T*, int64_t, T*, int64_t, const LstmStability&);
SB_INSTANTIATE(float)
SB_INSTANTIATE(double)
#undef SB_INSTANTIATE

}  // namespace seqbench::optim
