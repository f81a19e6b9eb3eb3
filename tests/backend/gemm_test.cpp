// backend::gemm against a naive triple loop in double: every Trans combination,
// odd sizes, operands that are sub-matrices of larger buffers (lda/ldb/ldc larger
// than the row length), alpha/beta, every float implementation and the double path;
// the libxsmm path (xsmm, auto) for every form it takes and its kernel cache.
#include "backend/gemm.hpp"

#include <gtest/gtest.h>

#include <omp.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <thread>
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

// The libxsmm path's forms fall back to oneDNN (N/T and T/T, alpha 1.3, beta -0.7):
// still right.
TEST(Gemm, FloatXsmmAndAutoFallBackMatchNaiveLoop) {
  for (GemmImpl impl : {GemmImpl::Xsmm, GemmImpl::Auto}) {
    ImplGuard g(impl);
    check_against_reference<float>(1e-5);
  }
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
  for (GemmImpl impl : {GemmImpl::OneDnn, GemmImpl::OpenBlas, GemmImpl::Xsmm, GemmImpl::Auto}) {
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
  for (GemmImpl impl : {GemmImpl::OneDnn, GemmImpl::OpenBlas, GemmImpl::Xsmm, GemmImpl::Auto})
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
  EXPECT_EQ(backend::parse_gemm_impl("xsmm"), GemmImpl::Xsmm);
  EXPECT_EQ(backend::parse_gemm_impl("auto"), GemmImpl::Auto);
  for (GemmImpl impl : {GemmImpl::OneDnn, GemmImpl::OpenBlas, GemmImpl::Xsmm, GemmImpl::Auto})
    EXPECT_EQ(backend::parse_gemm_impl(backend::gemm_impl_name(impl)), impl);
  try {
    backend::parse_gemm_impl("mkl");
    FAIL() << "parse_gemm_impl accepted 'mkl'";
  } catch (const core::UsageError& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.exit_code(), core::kExitUsage);
    EXPECT_NE(m.find("'mkl'"), std::string::npos) << m;
    EXPECT_NE(m.find("auto, onednn, openblas or xsmm"), std::string::npos) << m;
  }
  {
    ImplGuard g(GemmImpl::OpenBlas);
    EXPECT_EQ(backend::gemm_impl(), GemmImpl::OpenBlas);
    EXPECT_STREQ(backend::gemm_impl_name(backend::gemm_impl()), "openblas");
  }
}

TEST(Gemm, DefaultImplIsAuto) {
  // No test before this one in the binary leaves another setting behind (ImplGuard).
  EXPECT_EQ(backend::gemm_impl(), GemmImpl::Auto);
}

namespace {

// One product on the path under test (alpha 1, beta 0 or 1, tb = N), checked against the
// double reference and the padding; returns how many products ran on libxsmm.
int64_t check_small(Trans ta, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                    int64_t ldc, float beta, core::Rng& rng) {
  const int64_t ar = ta == Trans::N ? m : k, ac = ta == Trans::N ? k : m;
  Strided<float> a(ar, ac, lda, rng), b(k, n, ldb, rng), c(m, n, ldc, rng);
  const std::vector<double> ref = reference(ta, Trans::N, m, n, k, 1.0, a, b, double(beta), c);
  const int64_t before = backend::small_gemm_stats().thread_calls;
  backend::gemm<float>(ta, Trans::N, m, n, k, 1.0f, a.buf.data(), a.ld, b.buf.data(), b.ld, beta,
                       c.buf.data(), c.ld);
  const int64_t ran = backend::small_gemm_stats().thread_calls - before;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const double want = ref[size_t(i * n + j)];
      EXPECT_NEAR(c.at(i, j), want, 1e-5 * (1.0 + std::abs(want)) * std::sqrt(double(k)))
          << "m=" << m << " n=" << n << " k=" << k << " ta=" << int(ta) << " beta=" << beta
          << " lda=" << lda << " ldb=" << ldb << " ldc=" << ldc << " at (" << i << ", " << j
          << ")";
      if (::testing::Test::HasFailure()) return ran;
    }
    for (int64_t j = n; j < c.ld; ++j)
      EXPECT_EQ(c.buf[size_t(i * c.ld + j)], float(kPad)) << "gemm wrote into the ldc padding";
  }
  return ran;
}

}  // namespace

// Every form libxsmm takes (A or A^T, beta 0 and 1), at odd sizes, the recurrent step's
// shapes and with the row strides the cells use: the LSTM reads h_{t-1} out of a state
// row [h | c] (lda = 2H) and writes the gate pre-activations into a cache row wider than
// 4H; the weight gradient reads A^T from the same state rows.
TEST(Gemm, XsmmMatchesNaiveLoopForEveryFormItTakes) {
  ImplGuard g(GemmImpl::Xsmm);
  core::Rng rng(5);
  struct Small {
    int64_t m, n, k, lda_pad, ldb_pad, ldc_pad;
  };
  const Small cases[] = {{1, 1, 1, 0, 0, 0},      {3, 5, 7, 3, 5, 2},      {17, 9, 13, 1, 0, 7},
                         {33, 31, 65, 0, 4, 0},   {1, 19, 4, 2, 2, 2},     {23, 1, 2, 0, 0, 1},
                         {10, 512, 128, 128, 0, 640}, {10, 128, 512, 0, 0, 128},
                         {5, 512, 128, 128, 0, 0}, {50, 128, 128, 128, 0, 0},
                         {100, 512, 128, 128, 0, 640}};
  for (const Small& s : cases)
    for (Trans ta : kTrans)
      for (float beta : {0.0f, 1.0f}) {
        const int64_t ac = ta == Trans::N ? s.k : s.m;
        const int64_t ran = check_small(ta, s.m, s.n, s.k, ac + s.lda_pad, s.n + s.ldb_pad,
                                        s.n + s.ldc_pad, beta, rng);
        EXPECT_EQ(ran, 1) << "not on libxsmm: m=" << s.m << " n=" << s.n << " k=" << s.k
                          << " ta=" << int(ta) << " beta=" << beta;
        if (HasFailure()) return;
      }
}

// auto: libxsmm inside its class, oneDNN outside it (and for the forms libxsmm lacks),
// right either way. The class of A B depends on the ISA libxsmm generates for.
TEST(Gemm, AutoSendsOnlyItsClassToXsmm) {
  ImplGuard g(GemmImpl::Auto);
  core::Rng rng(6);
  // libxsmm's code path, from "libxsmm 1.17 (target cpx)" (LIBXSMM_TARGET=hsw: AVX2).
  const std::string v = backend::library_versions();
  const size_t at = v.find("(target ");
  ASSERT_NE(at, std::string::npos) << v;
  const std::string target = v.substr(at + 8, v.find(')', at) - at - 8);
  const auto uses = [](Trans ta, int64_t m, int64_t n, int64_t k, float beta) {
    return backend::auto_uses_xsmm(ta, Trans::N, m, n, k, 1.0f, beta);
  };
  // The weight gradient A^T B with up to 12 rows, m, n <= 512: on libxsmm on every ISA.
  EXPECT_TRUE(uses(Trans::T, 128, 512, 10, 1.0f));
  EXPECT_EQ(check_small(Trans::T, 128, 512, 10, 128 + 128, 512, 512 + 128, 1.0f, rng), 1);
  EXPECT_EQ(check_small(Trans::T, 128, 128, 12, 128, 128, 128, 0.0f, rng), 1);
  EXPECT_EQ(check_small(Trans::T, 512, 128, 3, 512, 128, 128, 0.0f, rng), 1);
  EXPECT_EQ(check_small(Trans::T, 128, 128, 13, 128, 128, 128, 0.0f, rng), 0);
  EXPECT_EQ(check_small(Trans::T, 513, 16, 5, 513, 16, 16, 0.0f, rng), 0);
  EXPECT_EQ(check_small(Trans::T, 16, 513, 5, 16, 513, 513, 0.0f, rng), 0);
  // A B with 2 <= m <= 12, n, k <= 512: on libxsmm, whatever code it generates.
  EXPECT_TRUE(uses(Trans::N, 10, 512, 128, 0.0f)) << target;
  EXPECT_EQ(check_small(Trans::N, 10, 512, 128, 256, 512, 640, 0.0f, rng), 1);
  EXPECT_EQ(check_small(Trans::N, 12, 128, 512, 512, 128, 256, 1.0f, rng), 1);
  EXPECT_EQ(check_small(Trans::N, 2, 128, 128, 128, 128, 128, 0.0f, rng), 1);
  EXPECT_EQ(check_small(Trans::N, 1, 128, 128, 128, 128, 128, 0.0f, rng), 0);
  EXPECT_EQ(check_small(Trans::N, 13, 128, 128, 128, 128, 128, 0.0f, rng), 0);
  EXPECT_EQ(check_small(Trans::N, 10, 513, 16, 16, 513, 513, 0.0f, rng), 0);
  EXPECT_EQ(check_small(Trans::N, 10, 16, 513, 513, 16, 16, 1.0f, rng), 0);
  EXPECT_EQ(check_small(Trans::N, 100, 512, 128, 128, 512, 512, 0.0f, rng), 0);
  // 512 x 512 x 12 (3.1 M multiply-adds): oneDNN's with more than one thread outside a
  // parallel region, libxsmm's inside one.
  EXPECT_EQ(uses(Trans::T, 512, 512, 12, 0.0f), omp_get_max_threads() == 1);
  EXPECT_EQ(check_small(Trans::T, 512, 512, 12, 512, 512, 512, 0.0f, rng),
            omp_get_max_threads() > 1 ? 0 : 1);
  int64_t inside = -1;
  bool inside_uses = false;
#pragma omp parallel num_threads(2)
  {
#pragma omp single
    {
      core::Rng r2(7);
      inside_uses = uses(Trans::T, 512, 512, 12, 0.0f);
      inside = check_small(Trans::T, 512, 512, 12, 512, 512, 512, 0.0f, r2);
    }
  }
  EXPECT_EQ(inside, 1);
  EXPECT_TRUE(inside_uses);
  // Forms libxsmm has no kernel for, or alpha/beta it does not take.
  EXPECT_FALSE(backend::auto_uses_xsmm(Trans::T, Trans::T, 128, 128, 8, 1.f, 0.f));
  EXPECT_FALSE(backend::auto_uses_xsmm(Trans::T, Trans::N, 128, 128, 8, 2.f, 0.f));
  EXPECT_FALSE(backend::auto_uses_xsmm(Trans::T, Trans::N, 128, 128, 8, 1.f, 0.5f));
  Strided<float> a(8, 8, 8, rng), b(8, 8, 8, rng), c(8, 8, 8, rng);
  const int64_t before = backend::small_gemm_stats().thread_calls;
  backend::gemm<float>(Trans::T, Trans::T, 8, 8, 8, 1.f, a.buf.data(), 8, b.buf.data(), 8, 0.f,
                       c.buf.data(), 8);
  backend::gemm<float>(Trans::T, Trans::N, 8, 8, 8, 2.f, a.buf.data(), 8, b.buf.data(), 8, 0.f,
                       c.buf.data(), 8);
  backend::gemm<float>(Trans::T, Trans::N, 8, 8, 8, 1.f, a.buf.data(), 8, b.buf.data(), 8, 0.5f,
                       c.buf.data(), 8);
  EXPECT_EQ(backend::small_gemm_stats().thread_calls, before);
  // onednn never goes to libxsmm.
  ImplGuard g2(GemmImpl::OneDnn);
  EXPECT_EQ(check_small(Trans::T, 128, 512, 10, 128, 512, 512, 0.0f, rng), 0);
}

// A kernel is generated once per shape in the process: the first call of a thread misses
// its own cache, the repeats hit it, and other threads find the process's kernel.
TEST(Gemm, XsmmDispatchIsCachedPerShape) {
  ImplGuard g(GemmImpl::Xsmm);
  core::Rng rng(8);
  // A shape no other test uses.
  const int64_t m = 7, n = 45, k = 19;
  Strided<float> a(m, k, k + 1, rng), b(k, n, n, rng);
  const auto s0 = backend::small_gemm_stats();
  std::vector<float> c(size_t(m * n));
  for (int rep = 0; rep < 50; ++rep)
    backend::gemm<float>(Trans::N, Trans::N, m, n, k, 1.f, a.buf.data(), a.ld, b.buf.data(), n,
                         0.f, c.data(), n);
  const auto s1 = backend::small_gemm_stats();
  EXPECT_EQ(s1.dispatches - s0.dispatches, 1);
  EXPECT_EQ(s1.thread_misses - s0.thread_misses, 1);
  EXPECT_EQ(s1.thread_hits - s0.thread_hits, 49);
  EXPECT_EQ(s1.thread_calls - s0.thread_calls, 50);
  // The same shape from four fresh threads at once: no new kernel, one miss each, the
  // same result.
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      std::vector<float> ct(size_t(m * n));
      const auto t0 = backend::small_gemm_stats();
      for (int rep = 0; rep < 20; ++rep)
        backend::gemm<float>(Trans::N, Trans::N, m, n, k, 1.f, a.buf.data(), a.ld, b.buf.data(),
                             n, 0.f, ct.data(), n);
      const auto t1 = backend::small_gemm_stats();
      if (t1.thread_misses - t0.thread_misses != 1 || t1.thread_hits - t0.thread_hits != 19 ||
          t1.thread_calls - t0.thread_calls != 20 || ct != c)
        ++bad;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(backend::small_gemm_stats().dispatches, s1.dispatches);
  // Another leading dimension is another kernel.
  std::vector<float> c2(size_t(m * (n + 3)));
  backend::gemm<float>(Trans::N, Trans::N, m, n, k, 1.f, a.buf.data(), a.ld, b.buf.data(), n, 0.f,
                       c2.data(), n + 3);
  EXPECT_EQ(backend::small_gemm_stats().dispatches, s1.dispatches + 1);
}

// gemm_small (the fused LSTM step's row blocks): on libxsmm under auto even outside auto's
// class (16 rows, n = 1024 > 512; alpha 1, beta 0 or 1, tb = N), on oneDNN when the setting
// is onednn, on gemm for the forms libxsmm lacks and for double; right in every case.
TEST(Gemm, GemmSmallRunsOnXsmmUnlessTheSettingSaysOtherwise) {
  core::Rng rng(8);
  const auto run = [&](Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha,
                       float beta) {
    const int64_t ar = ta == Trans::N ? m : k, ac = ta == Trans::N ? k : m;
    const int64_t br = tb == Trans::N ? k : n, bc = tb == Trans::N ? n : k;
    Strided<float> a(ar, ac, ac + 128, rng), b(br, bc, bc + 3, rng), c(m, n, n + 640, rng);
    const std::vector<double> ref = reference(ta, tb, m, n, k, alpha, a, b, beta, c);
    const int64_t before = backend::small_gemm_stats().thread_calls;
    backend::gemm_small<float>(ta, tb, m, n, k, alpha, a.buf.data(), a.ld, b.buf.data(), b.ld,
                               beta, c.buf.data(), c.ld);
    const int64_t ran = backend::small_gemm_stats().thread_calls - before;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const double want = ref[size_t(i * n + j)];
        EXPECT_NEAR(c.at(i, j), want, 1e-5 * (1.0 + std::abs(want)) * std::sqrt(double(k)))
            << "m=" << m << " n=" << n << " k=" << k << " at (" << i << ", " << j << ")";
        if (::testing::Test::HasFailure()) return ran;
      }
      for (int64_t j = n; j < c.ld; ++j)
        EXPECT_EQ(c.buf[size_t(i * c.ld + j)], float(kPad)) << "wrote into the ldc padding";
    }
    return ran;
  };
  {
    ImplGuard g(GemmImpl::Auto);
    ASSERT_FALSE(backend::auto_uses_xsmm(Trans::N, Trans::N, 16, 1024, 256, 1.0f, 0.0f));
    EXPECT_EQ(run(Trans::N, Trans::N, 16, 1024, 256, 1.0f, 0.0f), 1);
    EXPECT_EQ(run(Trans::N, Trans::N, 5, 512, 128, 1.0f, 1.0f), 1);
    EXPECT_EQ(run(Trans::N, Trans::N, 1, 128, 512, 1.0f, 0.0f), 1);
    EXPECT_EQ(run(Trans::N, Trans::N, 4, 32, 8, 2.0f, 0.0f), 0);  // alpha != 1: gemm
    EXPECT_EQ(run(Trans::N, Trans::T, 4, 32, 8, 1.0f, 0.0f), 0);  // B^T: gemm
  }
  {
    ImplGuard g(GemmImpl::OneDnn);
    EXPECT_EQ(run(Trans::N, Trans::N, 16, 1024, 256, 1.0f, 0.0f), 0);
  }
  Strided<double> a(3, 7, 9, rng), b(7, 5, 5, rng), c(3, 5, 6, rng);
  const std::vector<double> ref = reference(Trans::N, Trans::N, 3, 5, 7, 1.0, a, b, 0.0, c);
  backend::gemm_small<double>(Trans::N, Trans::N, 3, 5, 7, 1.0, a.buf.data(), a.ld, b.buf.data(),
                              b.ld, 0.0, c.buf.data(), c.ld);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 5; ++j) EXPECT_NEAR(c.at(i, j), ref[size_t(i * 5 + j)], 1e-13);
}
