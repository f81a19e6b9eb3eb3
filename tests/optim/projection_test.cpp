#include "optim/projection.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/check.hpp"
#include "core/rng.hpp"

using namespace seqbench;
using optim::LstmStability;

namespace {

using Mat = std::vector<double>;  // row-major, shape carried beside it

Mat random_matrix(core::Rng& rng, int64_t rows, int64_t cols, double scale = 1.0) {
  Mat m(static_cast<size_t>(rows * cols));
  for (double& v : m) v = scale * rng.normal();
  return m;
}

// c (n, p) = a (n, k) b (k, p)
Mat matmul(const Mat& a, const Mat& b, int64_t n, int64_t k, int64_t p) {
  Mat c(static_cast<size_t>(n * p), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t l = 0; l < k; ++l)
      for (int64_t j = 0; j < p; ++j)
        c[size_t(i * p + j)] += a[size_t(i * k + l)] * b[size_t(l * p + j)];
  return c;
}

Mat transpose(const Mat& a, int64_t rows, int64_t cols) {
  Mat t(a.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[size_t(c * rows + r)] = a[size_t(r * cols + c)];
  return t;
}

double max_abs_diff(const Mat& a, const Mat& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

double frobenius(const Mat& a) {
  double s = 0;
  for (double v : a) s += v * v;
  return std::sqrt(s);
}

Mat minus(const Mat& a, const Mat& b) {
  Mat d(a.size());
  for (size_t i = 0; i < a.size(); ++i) d[i] = a[i] - b[i];
  return d;
}

// A random (n, n) orthogonal matrix: Gram-Schmidt (twice, for accuracy) on random rows.
Mat random_orthogonal(core::Rng& rng, int64_t n) {
  Mat q = random_matrix(rng, n, n);
  for (int pass = 0; pass < 2; ++pass)
    for (int64_t i = 0; i < n; ++i) {
      double* qi = q.data() + i * n;
      for (int64_t j = 0; j < i; ++j) {
        const double* qj = q.data() + j * n;
        double d = 0;
        for (int64_t k = 0; k < n; ++k) d += qi[k] * qj[k];
        for (int64_t k = 0; k < n; ++k) qi[k] -= d * qj[k];
      }
      double nr = 0;
      for (int64_t k = 0; k < n; ++k) nr += qi[k] * qi[k];
      nr = std::sqrt(nr);
      for (int64_t k = 0; k < n; ++k) qi[k] /= nr;
    }
  return q;
}

// u (rows, k) diag(s) v (cols, k)ᵀ
Mat reconstruct(const optim::Svd& d) {
  Mat us(d.u);
  for (int64_t r = 0; r < d.rows; ++r)
    for (int64_t j = 0; j < d.k; ++j) us[size_t(r * d.k + j)] *= d.s[size_t(j)];
  return matmul(us, transpose(d.v, d.cols, d.k), d.rows, d.k, d.cols);
}

// max |qᵀ q - I| for q (n, k)
double orthonormality_error(const Mat& q, int64_t n, int64_t k) {
  const Mat g = matmul(transpose(q, n, k), q, k, n, k);
  double e = 0;
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < k; ++j)
      e = std::max(e, std::abs(g[size_t(i * k + j)] - (i == j ? 1.0 : 0.0)));
  return e;
}

// A matrix with prescribed singular values: u (rows, rows) diag(s) v (cols, cols)ᵀ.
Mat with_singular_values(core::Rng& rng, int64_t rows, int64_t cols, const std::vector<double>& s) {
  const Mat u = random_orthogonal(rng, rows), v = random_orthogonal(rng, cols);
  Mat d(static_cast<size_t>(rows * cols), 0.0);
  for (size_t i = 0; i < s.size(); ++i) d[i * size_t(cols) + i] = s[i];
  return matmul(matmul(u, d, rows, rows, cols), transpose(v, cols, cols), rows, cols, cols);
}

// ---- SVD ---------------------------------------------------------------------------------

TEST(JacobiSvd, ReconstructsRandomSquareTallAndWide) {
  core::Rng rng(11);
  const int64_t shapes[][2] = {{12, 12}, {20, 7}, {6, 15}, {1, 5}, {5, 1}, {33, 33}};
  for (const auto& sh : shapes) {
    const int64_t rows = sh[0], cols = sh[1];
    const Mat a = random_matrix(rng, rows, cols);
    const optim::Svd d = optim::jacobi_svd(a.data(), rows, cols);
    ASSERT_EQ(d.k, std::min(rows, cols));
    EXPECT_LT(max_abs_diff(reconstruct(d), a), 1e-10) << rows << "x" << cols;
    EXPECT_LT(orthonormality_error(d.u, rows, d.k), 1e-10) << rows << "x" << cols;
    EXPECT_LT(orthonormality_error(d.v, cols, d.k), 1e-10) << rows << "x" << cols;
    for (int64_t j = 0; j + 1 < d.k; ++j) EXPECT_GE(d.s[size_t(j)], d.s[size_t(j + 1)]);
    EXPECT_GE(d.s.back(), 0.0);
  }
}

TEST(JacobiSvd, SingularValuesOfDiagonalAndRotatedMatrices) {
  // diag(3, -2, 0.5, 0): singular values are the sorted absolute values.
  const Mat diag{3, 0, 0, 0, 0, -2, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 0};
  const std::vector<double> s = optim::singular_values(diag.data(), 4, 4);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_NEAR(s[0], 3.0, 1e-15);
  EXPECT_NEAR(s[1], 2.0, 1e-15);
  EXPECT_NEAR(s[2], 0.5, 1e-15);
  EXPECT_NEAR(s[3], 0.0, 1e-15);
  EXPECT_NEAR(optim::spectral_norm(diag.data(), 4, 4), 3.0, 1e-15);

  // A 2-D rotation by 0.3 times diag(5, 1): singular values 5 and 1.
  const double c = std::cos(0.3), sn = std::sin(0.3);
  const Mat rot{5 * c, -1 * sn, 5 * sn, 1 * c};
  const std::vector<double> s2 = optim::singular_values(rot.data(), 2, 2);
  EXPECT_NEAR(s2[0], 5.0, 1e-13);
  EXPECT_NEAR(s2[1], 1.0, 1e-13);

  // Random orthogonal factors around known values, square and rectangular.
  core::Rng rng(5);
  const std::vector<double> want{7.5, 4.0, 2.25, 1.0, 1e-3};
  for (const auto& sh : {std::pair<int64_t, int64_t>{5, 5}, {9, 5}, {5, 8}}) {
    const Mat a = with_singular_values(rng, sh.first, sh.second, want);
    const std::vector<double> got = optim::singular_values(a.data(), sh.first, sh.second);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << i;
  }
}

TEST(JacobiSvd, RankDeficientMatrixConverges) {
  // Rank 2: columns 0 and 2 equal, column 3 = 2 * column 1, column 4 zero.
  core::Rng rng(3);
  const int64_t rows = 8, cols = 5;
  Mat a = random_matrix(rng, rows, cols);
  for (int64_t r = 0; r < rows; ++r) {
    a[size_t(r * cols + 2)] = a[size_t(r * cols + 0)];
    a[size_t(r * cols + 3)] = 2 * a[size_t(r * cols + 1)];
    a[size_t(r * cols + 4)] = 0;
  }
  const optim::Svd d = optim::jacobi_svd(a.data(), rows, cols);
  EXPECT_LT(max_abs_diff(reconstruct(d), a), 1e-10);
  EXPECT_GT(d.s[1], 0.1);
  for (int64_t j = 2; j < d.k; ++j) EXPECT_LT(d.s[size_t(j)], 1e-12 * d.s[0]) << j;
}

TEST(JacobiSvd, RejectsNonFiniteEntries) {
  Mat a{1, 2, std::nan(""), 4};
  EXPECT_THROW(optim::spectral_norm(a.data(), 2, 2), core::Error);
}

// ---- clip_singular_values ----------------------------------------------------------------

TEST(ClipSingularValues, LeavesMatrixInsideTheBallUnchanged) {
  core::Rng rng(21);
  for (const auto& sh : {std::pair<int64_t, int64_t>{10, 10}, {12, 6}, {6, 12}}) {
    const Mat orig =
        with_singular_values(rng, sh.first, sh.second, {0.95, 0.5, 0.25, 0.1, 0.05, 0.01});
    Mat w = orig;
    const double before = optim::clip_singular_values(w.data(), sh.first, sh.second, 1.0);
    EXPECT_NEAR(before, 0.95, 1e-12);
    EXPECT_LE(max_abs_diff(w, orig), 1e-12);
    EXPECT_EQ(w, orig);  // not even rounded: nothing is written when nothing is clipped
  }
}

TEST(ClipSingularValues, ClipsToLambdaKeepsSmallValuesAndIsIdempotent) {
  core::Rng rng(22);
  const std::vector<double> sv{4.0, 2.5, 1.2, 0.9, 0.3, 0.05};
  for (const auto& sh : {std::pair<int64_t, int64_t>{6, 6}, {11, 6}, {6, 13}}) {
    const int64_t rows = sh.first, cols = sh.second;
    Mat w = with_singular_values(rng, rows, cols, sv);
    const double lambda = 1.0;
    const double before = optim::clip_singular_values(w.data(), rows, cols, lambda);
    EXPECT_NEAR(before, 4.0, 1e-12);
    EXPECT_NEAR(optim::spectral_norm(w.data(), rows, cols), lambda, 1e-9);
    const std::vector<double> after = optim::singular_values(w.data(), rows, cols);
    for (size_t i = 0; i < sv.size(); ++i)
      EXPECT_NEAR(after[i], std::min(sv[i], lambda), 1e-9) << i;

    const Mat once = w;
    const double again = optim::clip_singular_values(w.data(), rows, cols, lambda);
    EXPECT_NEAR(again, lambda, 1e-9);
    EXPECT_LE(max_abs_diff(w, once), 1e-12);
  }
}

TEST(ClipSingularValues, IsTheNearestMatrixInTheBall) {
  core::Rng rng(23);
  const int64_t rows = 7, cols = 5;
  const double lambda = 1.0;
  const Mat w = random_matrix(rng, rows, cols, 1.5);
  const std::vector<double> sv = optim::singular_values(w.data(), rows, cols);
  ASSERT_GT(sv[0], lambda);
  Mat p = w;
  optim::clip_singular_values(p.data(), rows, cols, lambda);
  const double dist = frobenius(minus(w, p));
  // The closed form: ‖w − p‖_F² = Σ (σ_i − λ)_+².
  double want2 = 0;
  for (double s : sv) want2 += std::max(0.0, s - lambda) * std::max(0.0, s - lambda);
  EXPECT_NEAR(dist * dist, want2, 1e-10);
  // Candidates in the ball: random matrices scaled into it, w itself scaled in, and p
  // perturbed then scaled back in. None may be closer than p.
  for (int trial = 0; trial < 40; ++trial) {
    Mat c;
    if (trial % 3 == 0) {
      c = random_matrix(rng, rows, cols);
    } else if (trial % 3 == 1) {
      c = w;
    } else {
      c = p;
      for (double& v : c) v += 0.05 * rng.normal();
    }
    const double n2 = optim::spectral_norm(c.data(), rows, cols);
    const double shrink = rng.uniform(0.5, 1.0) * std::min(1.0, lambda / n2);
    for (double& v : c) v *= (trial % 3 == 0 ? shrink : std::min(1.0, lambda / n2));
    ASSERT_LE(optim::spectral_norm(c.data(), rows, cols), lambda * (1 + 1e-12));
    EXPECT_LE(dist, frobenius(minus(w, c)) + 1e-12) << "trial " << trial;
  }
}

TEST(ClipSingularValues, ZeroBoundGivesZeroMatrixAndBadBoundThrows) {
  core::Rng rng(24);
  Mat w = random_matrix(rng, 4, 3);
  optim::clip_singular_values(w.data(), 4, 3, 0.0);
  for (double v : w) EXPECT_NEAR(v, 0.0, 1e-14);
  EXPECT_THROW(optim::clip_singular_values(w.data(), 4, 3, -1.0), core::Error);
  EXPECT_THROW(optim::clip_singular_values(w.data(), 4, 3, std::nan("")), core::Error);
}

TEST(ClipSingularValues, FloatInstantiation) {
  core::Rng rng(25);
  const int64_t rows = 9, cols = 9;
  const Mat wd = with_singular_values(rng, rows, cols, {3.0, 2.0, 0.7, 0.2});
  std::vector<float> w(wd.begin(), wd.end());
  const double before = optim::clip_singular_values(w.data(), rows, cols, 1.0);
  EXPECT_NEAR(before, 3.0, 1e-5);
  EXPECT_NEAR(optim::spectral_norm(w.data(), rows, cols), 1.0, 1e-5);
  const std::vector<double> s = optim::singular_values(w.data(), rows, cols);
  EXPECT_NEAR(s[2], 0.7, 1e-5);
  // Stored in float, the clipped matrix is a fixed point (within the float slack).
  const std::vector<float> once = w;
  optim::clip_singular_values(w.data(), rows, cols, 1.0);
  EXPECT_EQ(w, once);
  // Inside the ball: untouched.
  std::vector<float> small(wd.begin(), wd.end());
  for (float& v : small) v *= 0.25f;
  const std::vector<float> small0 = small;
  optim::clip_singular_values(small.data(), rows, cols, 1.0);
  EXPECT_EQ(small, small0);
}

TEST(ProjectRnn, MakesTheTanhStateMapLambdaContractive) {
  core::Rng rng(26);
  const int64_t H = 16;
  const double lambda = 0.9;
  Mat w = random_matrix(rng, H, H, 0.6);  // ‖w‖_2 ≈ 0.6 · 2√H ≈ 4.8
  ASSERT_GT(optim::spectral_norm(w.data(), H, H), 2.0);
  Mat ref = w;
  optim::clip_singular_values(ref.data(), H, H, lambda);
  optim::project_rnn(w.data(), H, lambda);
  EXPECT_EQ(w, ref);
  // h_t = tanh(h_{t-1} w + u) with row-vector states: ‖Δh_t‖_2 ≤ λ ‖Δh_{t-1}‖_2.
  for (int trial = 0; trial < 50; ++trial) {
    const Mat h1 = random_matrix(rng, 1, H, 2.0), h2 = random_matrix(rng, 1, H, 2.0);
    const Mat u = random_matrix(rng, 1, H);
    Mat a1 = matmul(h1, w, 1, H, H), a2 = matmul(h2, w, 1, H, H);
    for (int64_t j = 0; j < H; ++j) {
      a1[size_t(j)] = std::tanh(a1[size_t(j)] + u[size_t(j)]);
      a2[size_t(j)] = std::tanh(a2[size_t(j)] + u[size_t(j)]);
    }
    EXPECT_LE(frobenius(minus(a1, a2)), lambda * frobenius(minus(h1, h2)) * (1 + 1e-12));
  }
}

// ---- LSTM --------------------------------------------------------------------------------

// Max column ℓ1 norm of columns [c0, c1) of w (rows, ncols), computed independently.
template <class T>
double max_col_l1(const std::vector<T>& w, int64_t rows, int64_t ncols, int64_t c0, int64_t c1) {
  double best = 0;
  for (int64_t c = c0; c < c1; ++c) {
    double s = 0;
    for (int64_t r = 0; r < rows; ++r) s += std::abs(static_cast<double>(w[size_t(r * ncols + c)]));
    best = std::max(best, s);
  }
  return best;
}

// Condition (*) of projection.hpp, written out again here.
template <class T>
double paper_bound(const std::vector<T>& wx, int64_t I, const std::vector<T>& wh, int64_t H,
                   double bx, double bf) {
  const double wi = max_col_l1(wh, H, 4 * H, 0, H), wf = max_col_l1(wh, H, 4 * H, H, 2 * H);
  const double wz = max_col_l1(wh, H, 4 * H, 2 * H, 3 * H),
               wo = max_col_l1(wh, H, 4 * H, 3 * H, 4 * H);
  const double uf = max_col_l1(wx, I, 4 * H, H, 2 * H);
  const double lf = 1 / (1 + std::exp(-(wf + uf * bx + bf)));
  return lf + wi / 4 + wz + wf / (4 * (1 - lf)) + wo / 4;
}

struct LstmWeights {
  int64_t I, H;
  Mat wx, wh;
};

LstmWeights random_lstm(core::Rng& rng, int64_t I, int64_t H, double scale) {
  return {I, H, random_matrix(rng, I, 4 * H, scale), random_matrix(rng, H, 4 * H, scale)};
}

// Columns of w (rows, ncols) in [c0, c1) equal in a and b.
bool same_columns(const Mat& a, const Mat& b, int64_t rows, int64_t ncols, int64_t c0, int64_t c1) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = c0; c < c1; ++c)
      if (a[size_t(r * ncols + c)] != b[size_t(r * ncols + c)]) return false;
  return true;
}

TEST(LstmGateNorms, ReadTheGateBlocksOfOurLayout) {
  // w_h (H, 4H) with gate g's column j holding g+1 in every row: column ℓ1 = H (g+1).
  const int64_t I = 2, H = 3;
  Mat wh(size_t(H * 4 * H)), wx(size_t(I * 4 * H), 0.0);
  for (int64_t r = 0; r < H; ++r)
    for (int64_t c = 0; c < 4 * H; ++c) wh[size_t(r * 4 * H + c)] = double(c / H + 1);
  wx[size_t(0 * 4 * H + H + 1)] = -0.5;  // U_f column 1 (gate f, unit 1)
  wx[size_t(1 * 4 * H + H + 1)] = 0.25;
  wx[size_t(0 * 4 * H + 0)] = 100;  // gate i input weight: not part of any norm
  const optim::LstmGateNorms n = optim::lstm_gate_norms(wx.data(), I, wh.data(), H);
  EXPECT_DOUBLE_EQ(n.w_i, 3.0);
  EXPECT_DOUBLE_EQ(n.w_f, 6.0);
  EXPECT_DOUBLE_EQ(n.w_z, 9.0);
  EXPECT_DOUBLE_EQ(n.w_o, 12.0);
  EXPECT_DOUBLE_EQ(n.u_f, 0.75);
}

TEST(ProjectLstmOfficialL1, EnforcesTheColumnBudgets) {
  core::Rng rng(31);
  const int64_t I = 5, H = 6;
  LstmWeights w = random_lstm(rng, I, H, 0.5);
  // Make gate i column 0 already small: it must come out unchanged.
  for (int64_t r = 0; r < H; ++r) w.wh[size_t(r * 4 * H + 0)] = 0.01;
  const LstmWeights orig = w;
  LstmStability s;
  s.variant = "official_l1";
  optim::project_lstm(w.wx.data(), I, w.wh.data(), H, s);
  const double budgets[4] = {0.395, 0.155, 0.099, 0.395};
  for (int g = 0; g < 4; ++g) {
    // Every column of a random 0.5-scaled block starts far above its budget but one.
    EXPECT_NEAR(max_col_l1(w.wh, H, 4 * H, g * H, (g + 1) * H), budgets[g], 1e-15) << g;
    for (int64_t j = 0; j < H; ++j) {
      if (g == 0 && j == 0) continue;
      EXPECT_NEAR(max_col_l1(w.wh, H, 4 * H, g * H + j, g * H + j + 1), budgets[g], 1e-15);
    }
  }
  EXPECT_TRUE(same_columns(w.wh, orig.wh, H, 4 * H, 0, 1));
  EXPECT_NEAR(max_col_l1(w.wx, I, 4 * H, H, 2 * H), 0.25, 1e-15);
  // Input weights of gates i, z, o are not projected.
  EXPECT_TRUE(same_columns(w.wx, orig.wx, I, 4 * H, 0, H));
  EXPECT_TRUE(same_columns(w.wx, orig.wx, I, 4 * H, 2 * H, 4 * H));
  // Scaling a column keeps its direction.
  const double ratio = w.wh[size_t(1 * 4 * H + 7)] / orig.wh[size_t(1 * 4 * H + 7)];
  EXPECT_NEAR(w.wh[size_t(3 * 4 * H + 7)], ratio * orig.wh[size_t(3 * 4 * H + 7)], 1e-15);

  // Idempotent, and the official budgets satisfy the paper bound with λ ≈ 0.9933.
  const LstmWeights once = w;
  optim::project_lstm(w.wx.data(), I, w.wh.data(), H, s);
  EXPECT_EQ(w.wh, once.wh);
  EXPECT_EQ(w.wx, once.wx);
  const double b = paper_bound(w.wx, I, w.wh, H, 1.0, 0.0);
  EXPECT_NEAR(b, 0.99325, 1e-4);
  EXPECT_LT(b, 0.994);
  const double lib = optim::lstm_contraction_bound(
      {optim::kOfficialL1Wi, optim::kOfficialL1Wf, optim::kOfficialL1Wz, optim::kOfficialL1Wo,
       optim::kOfficialL1Uf},
      LstmStability{});
  EXPECT_NEAR(lib, b, 1e-12);
}

TEST(ProjectLstmOfficialL1, LeavesSatisfyingWeightsUnchanged) {
  core::Rng rng(32);
  const int64_t I = 4, H = 5;
  LstmWeights w = random_lstm(rng, I, H, 0.005);  // column ℓ1 ≈ 0.02 < every budget
  const LstmWeights orig = w;
  LstmStability s;
  s.variant = "official_l1";
  optim::project_lstm(w.wx.data(), I, w.wh.data(), H, s);
  EXPECT_EQ(w.wh, orig.wh);
  EXPECT_EQ(w.wx, orig.wx);
}

TEST(ProjectLstmPaper, EnforcesTheContractionBoundWithEquality) {
  core::Rng rng(33);
  const int64_t I = 7, H = 8;
  for (const double lambda : {0.97, 0.8}) {
    for (const double bx : {1.0, 3.0}) {
      LstmWeights w = random_lstm(rng, I, H, 0.3);
      const LstmWeights orig = w;
      LstmStability s;
      s.lambda = lambda;
      s.input_bound = bx;
      s.forget_bias_bound = 0.2;
      ASSERT_GT(paper_bound(w.wx, I, w.wh, H, bx, 0.2), lambda);
      optim::project_lstm(w.wx.data(), I, w.wh.data(), H, s);
      const double b = paper_bound(w.wx, I, w.wh, H, bx, 0.2);
      EXPECT_LE(b, lambda * (1 + 1e-12)) << lambda << " " << bx;
      EXPECT_GE(b, lambda * (1 - 1e-9)) << lambda << " " << bx;  // the smallest shrink
      // Every gate's ∞-norm shrank by the same factor.
      const double f = max_col_l1(w.wh, H, 4 * H, 0, H) / max_col_l1(orig.wh, H, 4 * H, 0, H);
      EXPECT_LT(f, 1.0);
      for (int g = 1; g < 4; ++g)
        EXPECT_NEAR(max_col_l1(w.wh, H, 4 * H, g * H, (g + 1) * H),
                    f * max_col_l1(orig.wh, H, 4 * H, g * H, (g + 1) * H), 1e-12);
      EXPECT_NEAR(max_col_l1(w.wx, I, 4 * H, H, 2 * H), f * max_col_l1(orig.wx, I, 4 * H, H, 2 * H),
                  1e-12);
      EXPECT_TRUE(same_columns(w.wx, orig.wx, I, 4 * H, 0, H));
      EXPECT_TRUE(same_columns(w.wx, orig.wx, I, 4 * H, 2 * H, 4 * H));
      // Idempotent.
      const LstmWeights once = w;
      optim::project_lstm(w.wx.data(), I, w.wh.data(), H, s);
      EXPECT_EQ(w.wh, once.wh);
      EXPECT_EQ(w.wx, once.wx);
    }
  }
}

TEST(ProjectLstmPaper, LeavesSatisfyingWeightsUnchanged) {
  core::Rng rng(34);
  const int64_t I = 3, H = 4;
  LstmWeights w = random_lstm(rng, I, H, 0.01);
  ASSERT_LT(paper_bound(w.wx, I, w.wh, H, 1.0, 0.0), 0.7);
  const LstmWeights orig = w;
  optim::project_lstm(w.wx.data(), I, w.wh.data(), H, LstmStability{});
  EXPECT_EQ(w.wh, orig.wh);
  EXPECT_EQ(w.wx, orig.wx);
}

// One LSTM step in our layout; state (c, h) rows of H.
void lstm_step(const LstmWeights& w, const Mat& x, const Mat& b, const Mat& c0, const Mat& h0,
               Mat& c1, Mat& h1) {
  const int64_t H = w.H;
  const Mat ax = matmul(x, w.wx, 1, w.I, 4 * H), ah = matmul(h0, w.wh, 1, H, 4 * H);
  auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
  c1.assign(size_t(H), 0.0);
  h1.assign(size_t(H), 0.0);
  for (int64_t j = 0; j < H; ++j) {
    auto pre = [&](int g) {
      return ax[size_t(g * H + j)] + ah[size_t(g * H + j)] + b[size_t(g * H + j)];
    };
    const double i = sig(pre(0)), f = sig(pre(1)), z = std::tanh(pre(2)), o = sig(pre(3));
    c1[size_t(j)] = i * z + f * c0[size_t(j)];
    h1[size_t(j)] = o * std::tanh(c1[size_t(j)]);
  }
}

double max_norm_distance(const Mat& c1, const Mat& h1, const Mat& c2, const Mat& h2) {
  return std::max(max_abs_diff(c1, c2), max_abs_diff(h1, h2));
}

TEST(ProjectLstmPaper, ProjectedLstmIsContractiveOnReachableStates) {
  // The derivation behind (*), checked on the actual cell: for states with ‖h‖_∞ ≤ 1,
  // ‖c‖_∞ ≤ 1 / (1 − λ_f), inputs with ‖x‖_∞ ≤ B_x and |b_f| ≤ bound, one step shrinks
  // max(‖Δc‖_∞, ‖Δh‖_∞) by at least λ.
  core::Rng rng(35);
  const int64_t I = 4, H = 6;
  const double lambda = 0.9, bx = 1.0, bf = 0.5;
  LstmWeights w = random_lstm(rng, I, H, 1.0);
  LstmStability s;
  s.lambda = lambda;
  s.input_bound = bx;
  s.forget_bias_bound = bf;
  optim::project_lstm(w.wx.data(), I, w.wh.data(), H, s);
  const optim::LstmGateNorms n = optim::lstm_gate_norms(w.wx.data(), I, w.wh.data(), H);
  const double lf = 1 / (1 + std::exp(-(n.w_f + n.u_f * bx + bf)));
  const double cmax = 1 / (1 - lf);
  double worst = 0;
  for (int trial = 0; trial < 400; ++trial) {
    Mat x(static_cast<size_t>(I)), b(static_cast<size_t>(4 * H));
    Mat c1(static_cast<size_t>(H)), h1 = c1, c2 = c1, h2 = c1;
    for (double& v : x) v = rng.uniform(-bx, bx);
    for (double& v : b) v = rng.uniform(-2, 2);
    for (int64_t j = 0; j < H; ++j) b[size_t(H + j)] = rng.uniform(-bf, bf);
    for (int64_t j = 0; j < H; ++j) {
      c1[size_t(j)] = rng.uniform(-cmax, cmax);
      c2[size_t(j)] = rng.uniform(-cmax, cmax);
      h1[size_t(j)] = rng.uniform(-1, 1);
      h2[size_t(j)] = rng.uniform(-1, 1);
    }
    Mat c1n, h1n, c2n, h2n;
    lstm_step(w, x, b, c1, h1, c1n, h1n);
    lstm_step(w, x, b, c2, h2, c2n, h2n);
    const double ratio = max_norm_distance(c1n, h1n, c2n, h2n) / max_norm_distance(c1, h1, c2, h2);
    worst = std::max(worst, ratio);
  }
  EXPECT_LE(worst, lambda);
  EXPECT_GT(worst, 0.1);  // the check is not vacuous
}

TEST(ProjectLstm, FloatInstantiation) {
  core::Rng rng(36);
  const int64_t I = 5, H = 7;
  const LstmWeights wd = random_lstm(rng, I, H, 0.4);
  for (const char* variant : {"paper", "official_l1"}) {
    std::vector<float> wx(wd.wx.begin(), wd.wx.end()), wh(wd.wh.begin(), wd.wh.end());
    LstmStability s;
    s.variant = variant;
    s.lambda = 0.95;
    optim::project_lstm(wx.data(), I, wh.data(), H, s);
    if (s.variant == "paper") {
      EXPECT_LE(paper_bound(wx, I, wh, H, 1.0, 0.0), 0.95 * (1 + 1e-6));
      EXPECT_GE(paper_bound(wx, I, wh, H, 1.0, 0.0), 0.95 * (1 - 1e-5));
    } else {
      EXPECT_LE(max_col_l1(wh, H, 4 * H, H, 2 * H), 0.155 * (1 + 1e-6));
      EXPECT_LE(max_col_l1(wh, H, 4 * H, 2 * H, 3 * H), 0.099 * (1 + 1e-6));
      EXPECT_LE(max_col_l1(wx, I, 4 * H, H, 2 * H), 0.25 * (1 + 1e-6));
    }
    const std::vector<float> wx1 = wx, wh1 = wh;
    optim::project_lstm(wx.data(), I, wh.data(), H, s);
    EXPECT_EQ(wx, wx1) << variant;
    EXPECT_EQ(wh, wh1) << variant;
  }
}

TEST(ProjectLstm, RejectsBadSettings) {
  core::Rng rng(37);
  LstmWeights w = random_lstm(rng, 2, 3, 1.0);
  LstmStability s;
  s.variant = "spectral";
  EXPECT_THROW(optim::project_lstm(w.wx.data(), 2, w.wh.data(), 3, s), core::UsageError);
  s.variant = "paper";
  s.lambda = 0.5;  // = σ(0): the forget gate alone reaches it
  EXPECT_THROW(optim::project_lstm(w.wx.data(), 2, w.wh.data(), 3, s), core::UsageError);
  s.lambda = 0.9;
  s.input_bound = -1;
  EXPECT_THROW(optim::project_lstm(w.wx.data(), 2, w.wh.data(), 3, s), core::UsageError);
}

TEST(ProjectLstm, WorksWithoutInputWeights) {
  core::Rng rng(38);
  const int64_t H = 4;
  Mat wh = random_matrix(rng, H, 4 * H, 1.0);
  LstmStability s;
  s.variant = "official_l1";
  optim::project_lstm<double>(nullptr, 0, wh.data(), H, s);
  EXPECT_LE(max_col_l1(wh, H, 4 * H, 3 * H, 4 * H), 0.395 * (1 + 1e-12));
}

}  // namespace
