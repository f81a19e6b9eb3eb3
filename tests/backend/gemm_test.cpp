// backend::gemm against a naive triple loop in double: every Trans combination,
// odd sizes, operands that are sub-matrices of larger buffers (lda/ldb/ldc larger
// than the row length), alpha/beta, both float implementations and the double path.
#include "backend/gemm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/check.hpp"
#include "core/rng.hpp"

using namespace seqbench;
using backend::GemmImpl;
using backend::Trans;

namespace {

// Restores the process-wide choice so test order does not matter.
class ImplGuard {
 public:
  explicit ImplGuard(GemmImpl impl) : saved_(backend::gemm_impl()) { backend::set_gemm_impl(impl); }
  ~ImplGuard() { backend::set_gemm_impl(saved_); }

 private:
  GemmImpl saved_;
};

constexpr double kPad = 12345.0;  // sentinel in the stride padding; must survive every call

// A rows x cols matrix stored with row stride ld >= cols, padding filled with kPad.
template <class T>
struct Strided {
  int64_t rows, cols, ld;
  std::vector<T> buf;
  Strided(int64_t r, int64_t c, int64_t ld_, core::Rng& rng) : rows(r), cols(c), ld(ld_) {
    buf.assign(static_cast<size_t>(std::max<int64_t>(1, r * ld)), T(kPad));
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) buf[i * ld + j] = T(rng.uniform(-1.0, 1.0));
  }
  T at(int64_t i, int64_t j) const { return buf[i * ld + j]; }
};

// op(X)(i, j) for a stored matrix X.
template <class T>
double op_at(const Strided<T>& x, Trans t, int64_t i, int64_t j) {
  return t == Trans::N ? double(x.at(i, j)) : double(x.at(j, i));
}

template <class T>
std::vector<double> reference(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, double alpha,
                              const Strided<T>& a, const Strided<T>& b, double beta,
                              const Strided<T>& c) {
  std::vector<double> out(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += op_at(a, ta, i, p) * op_at(b, tb, p, j);
      out[i * n + j] = alpha * s + beta * double(c.at(i, j));
    }
  return out;
}

struct Case {
  int64_t m, n, k;
};
const Case kCases[] = {{1, 1, 1}, {3, 5, 7}, {17, 9, 13}, {33, 31, 65}, {1, 19, 4}, {23, 1, 2}};
const Trans kTrans[] = {Trans::N, Trans::T};

template <class T>
void check_against_reference(double tol) {
  core::Rng rng(42);
  const double alpha = 1.3, beta = -0.7;
  for (const Case& cs : kCases)
    for (Trans ta : kTrans)
      for (Trans tb : kTrans) {
        const int64_t m = cs.m, n = cs.n, k = cs.k;
        // Stored shapes depend on the transposition; strides exceed the row length.
        const int64_t ar = ta == Trans::N ? m : k, ac = ta == Trans::N ? k : m;
        const int64_t br = tb == Trans::N ? k : n, bc = tb == Trans::N ? n : k;
        Strided<T> a(ar, ac, ac + 3, rng), b(br, bc, bc + 5, rng), c(m, n, n + 2, rng);
        const std::vector<double> ref = reference(ta, tb, m, n, k, alpha, a, b, beta, c);
        backend::gemm<T>(ta, tb, m, n, k, T(alpha), a.buf.data(), a.ld, b.buf.data(), b.ld, T(beta),
                         c.buf.data(), c.ld);
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j)
            ASSERT_NEAR(c.at(i, j), ref[i * n + j], tol * (1.0 + std::abs(ref[i * n + j])))
                << "m=" << m << " n=" << n << " k=" << k << " ta=" << int(ta) << " tb=" << int(tb)
                << " at (" << i << ", " << j << ")";
          for (int64_t j = n; j < c.ld; ++j)
            ASSERT_EQ(c.buf[i * c.ld + j], T(kPad)) << "gemm wrote into the ldc padding";
        }
      }
}

}  // namespace

TEST(Gemm, FloatOneDnnMatchesNaiveLoop) {
  ImplGuard g(GemmImpl::OneDnn);
  check_against_reference<float>(1e-5);
}

TEST(Gemm, FloatOpenBlasMatchesNaiveLoop) {
  ImplGuard g(GemmImpl::OpenBlas);
  check_against_reference<float>(1e-5);
}

TEST(Gemm, DoubleMatchesNaiveLoopExactly) { check_against_reference<double>(1e-13); }

TEST(Gemm, OpenBlasEqualsOneDnn) {
  core::Rng rng(7);
  for (Trans ta : kTrans)
    for (Trans tb : kTrans) {
      const int64_t m = 37, n = 29, k = 101;
      const int64_t ac = ta == Trans::N ? k : m, bc = tb == Trans::N ? n : k;
      Strided<float> a(ta == Trans::N ? m : k, ac, ac + 1, rng);
      Strided<float> b(tb == Trans::N ? k : n, bc, bc + 4, rng);
      Strided<float> c1(m, n, n + 3, rng);
      Strided<float> c2 = c1;
      {
        ImplGuard g(GemmImpl::OneDnn);
        backend::gemm<float>(ta, tb, m, n, k, 0.5f, a.buf.data(), a.ld, b.buf.data(), b.ld, 2.f,
                             c1.buf.data(), c1.ld);
      }
      {
        ImplGuard g(GemmImpl::OpenBlas);
        backend::gemm<float>(ta, tb, m, n, k, 0.5f, a.buf.data(), a.ld, b.buf.data(), b.ld, 2.f,
                             c2.buf.data(), c2.ld);
      }
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          ASSERT_NEAR(c1.at(i, j), c2.at(i, j), 1e-5f * (1.f + std::abs(c2.at(i, j))))
              << "ta=" << int(ta) << " tb=" << int(tb) << " at (" << i << ", " << j << ")";
    }
}

TEST(Gemm, ZeroSizes) {
  for (GemmImpl impl : {GemmImpl::OneDnn, GemmImpl::OpenBlas}) {
    ImplGuard g(impl);
    const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 1, 1, 1, 1, 1};
    std::vector<float> c = {1, 2, 3, 4, 5, 6};
    // m == 0 and n == 0: C untouched, pointers may even be null.
    backend::gemm<float>(Trans::N, Trans::N, 0, 3, 2, 1.f, nullptr, 2, b, 3, 0.f, c.data(), 3);
    backend::gemm<float>(Trans::N, Trans::N, 2, 0, 3, 1.f, a, 3, nullptr, 1, 0.f, c.data(), 3);
    EXPECT_EQ(c, (std::vector<float>{1, 2, 3, 4, 5, 6}));
    // k == 0: C = beta * C, A and B are never read.
    backend::gemm<float>(Trans::N, Trans::T, 2, 3, 0, 1.f, nullptr, 1, nullptr, 1, 2.f, c.data(),
                         3);
    EXPECT_EQ(c, (std::vector<float>{2, 4, 6, 8, 10, 12}));
  }
  std::vector<double> cd = {1, 2};
  backend::gemm<double>(Trans::T, Trans::N, 1, 2, 0, 1.0, nullptr, 1, nullptr, 2, -1.0, cd.data(),
                        2);
  EXPECT_EQ(cd, (std::vector<double>{-1, -2}));
}

TEST(Gemm, BetaZeroIgnoresNanInC) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1};
  for (GemmImpl impl : {GemmImpl::OneDnn, GemmImpl::OpenBlas})
    for (int64_t k : {0, 2}) {
      ImplGuard g(impl);
      std::vector<float> c(4, nan);
      backend::gemm<float>(Trans::N, Trans::N, 2, 2, k, 1.f, a, 2, b, 2, 0.f, c.data(), 2);
      const std::vector<float> want =
          k == 0 ? std::vector<float>{0, 0, 0, 0} : std::vector<float>{1, 2, 3, 4};
      EXPECT_EQ(c, want) << "impl=" << backend::gemm_impl_name(impl) << " k=" << k;
    }
}

TEST(Gemm, BadStrideThrows) {
  float a[4] = {}, b[4] = {}, c[4] = {};
  EXPECT_THROW(backend::gemm<float>(Trans::N, Trans::N, 2, 2, 2, 1.f, a, 1, b, 2, 0.f, c, 2),
               core::Error);
  EXPECT_THROW(backend::gemm<float>(Trans::N, Trans::T, 2, 2, 2, 1.f, a, 2, b, 1, 0.f, c, 2),
               core::Error);
  EXPECT_THROW(backend::gemm<double>(Trans::N, Trans::N, 2, 2, 2, 1.0, nullptr, 2, nullptr, 2, 0.0,
                                     nullptr, 1),
               core::Error);
}

TEST(Gemm, ImplSettingAndParsing) {
  EXPECT_EQ(backend::parse_gemm_impl("onednn"), GemmImpl::OneDnn);
  EXPECT_EQ(backend::parse_gemm_impl("openblas"), GemmImpl::OpenBlas);
  try {
    backend::parse_gemm_impl("mkl");
    FAIL() << "parse_gemm_impl accepted 'mkl'";
  } catch (const core::UsageError& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.exit_code(), core::kExitUsage);
    EXPECT_NE(m.find("'mkl'"), std::string::npos) << m;
    EXPECT_NE(m.find("onednn or openblas"), std::string::npos) << m;
  }
  {
    ImplGuard g(GemmImpl::OpenBlas);
    EXPECT_EQ(backend::gemm_impl(), GemmImpl::OpenBlas);
    EXPECT_STREQ(backend::gemm_impl_name(backend::gemm_impl()), "openblas");
  }
}
