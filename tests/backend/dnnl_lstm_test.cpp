// backend::DnnlLstm against a plain LSTM written here in double (its own forward
// and BPTT, checked once by central differences), on several shapes with nonzero
// initial state and nonzero gradients flowing into the final state.
#include "backend/dnnl_lstm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/check.hpp"
#include "core/rng.hpp"

using namespace seqbench;

namespace {

using Vec = std::vector<double>;

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// Reference LSTM. Layout as documented in dnnl_lstm.hpp: gates i, f, c~, o;
// w_x (I, 4H), w_h (H, 4H), b (4H); x (T, B, I); states (B, H).
struct RefLstm {
  int64_t T, B, I, H;
  Vec x, h0, c0, w_x, w_h, b;
  // Saved by forward: gate activations act (T, B, 4H), h and c (T+1, B, H) with
  // index 0 = initial state.
  Vec act, h, c;

  void forward() {
    act.assign(T * B * 4 * H, 0);
    h.assign((T + 1) * B * H, 0);
    c.assign((T + 1) * B * H, 0);
    std::copy(h0.begin(), h0.end(), h.begin());
    std::copy(c0.begin(), c0.end(), c.begin());
    for (int64_t t = 0; t < T; ++t)
      for (int64_t n = 0; n < B; ++n) {
        const double* xt = &x[(t * B + n) * I];
        const double* hp = &h[(t * B + n) * H];
        const double* cp = &c[(t * B + n) * H];
        double* a = &act[(t * B + n) * 4 * H];
        for (int64_t g = 0; g < 4 * H; ++g) {
          double s = b[g];
          for (int64_t p = 0; p < I; ++p) s += xt[p] * w_x[p * 4 * H + g];
          for (int64_t p = 0; p < H; ++p) s += hp[p] * w_h[p * 4 * H + g];
          a[g] = (g / H == 2) ? std::tanh(s) : sigmoid(s);
        }
        double* hn = &h[((t + 1) * B + n) * H];
        double* cn = &c[((t + 1) * B + n) * H];
        for (int64_t j = 0; j < H; ++j) {
          cn[j] = a[H + j] * cp[j] + a[j] * a[2 * H + j];
          hn[j] = a[3 * H + j] * std::tanh(cn[j]);
        }
      }
  }

  // dy (T, B, H), dhT/dcT (B, H) -> dx (T, B, I), dh0/dc0 (B, H), dw_x, dw_h, db.
  void backward(const Vec& dy, const Vec& dhT, const Vec& dcT, Vec& dx, Vec& dh0, Vec& dc0,
                Vec& dw_x, Vec& dw_h, Vec& db) const {
    dx.assign(T * B * I, 0);
    dw_x.assign(I * 4 * H, 0);
    dw_h.assign(H * 4 * H, 0);
    db.assign(4 * H, 0);
    Vec dh_next = dhT, dc_next = dcT, dpre(4 * H);
    for (int64_t t = T - 1; t >= 0; --t) {
      Vec dh_prev(B * H, 0);
      for (int64_t n = 0; n < B; ++n) {
        const double* a = &act[(t * B + n) * 4 * H];
        const double* cp = &c[(t * B + n) * H];
        const double* cn = &c[((t + 1) * B + n) * H];
        const double* hp = &h[(t * B + n) * H];
        const double* xt = &x[(t * B + n) * I];
        for (int64_t j = 0; j < H; ++j) {
          const double gi = a[j], gf = a[H + j], gc = a[2 * H + j], go = a[3 * H + j];
          const double dh = dy[(t * B + n) * H + j] + dh_next[n * H + j];
          const double tc = std::tanh(cn[j]);
          const double dc = dc_next[n * H + j] + dh * go * (1 - tc * tc);
          dpre[j] = dc * gc * gi * (1 - gi);
          dpre[H + j] = dc * cp[j] * gf * (1 - gf);
          dpre[2 * H + j] = dc * gi * (1 - gc * gc);
          dpre[3 * H + j] = dh * tc * go * (1 - go);
          dc_next[n * H + j] = dc * gf;
        }
        for (int64_t g = 0; g < 4 * H; ++g) {
          db[g] += dpre[g];
          for (int64_t p = 0; p < I; ++p) {
            dw_x[p * 4 * H + g] += xt[p] * dpre[g];
            dx[(t * B + n) * I + p] += w_x[p * 4 * H + g] * dpre[g];
          }
          for (int64_t p = 0; p < H; ++p) {
            dw_h[p * 4 * H + g] += hp[p] * dpre[g];
            dh_prev[n * H + p] += w_h[p * 4 * H + g] * dpre[g];
          }
        }
      }
      dh_next = dh_prev;
    }
    dh0 = dh_next;
    dc0 = dc_next;
  }
};

Vec random_vec(core::Rng& rng, int64_t n, double scale) {
  Vec v(n);
  for (double& e : v) e = rng.uniform(-scale, scale);
  return v;
}

RefLstm random_lstm(core::Rng& rng, int64_t T, int64_t B, int64_t I, int64_t H) {
  RefLstm r{T, B, I, H, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  r.x = random_vec(rng, T * B * I, 1.0);
  r.h0 = random_vec(rng, B * H, 0.8);
  r.c0 = random_vec(rng, B * H, 0.8);
  const double ws = 1.0 / std::sqrt(double(H));
  r.w_x = random_vec(rng, I * 4 * H, ws);
  r.w_h = random_vec(rng, H * 4 * H, ws);
  r.b = random_vec(rng, 4 * H, 0.5);
  return r;
}

std::vector<float> to_f(const Vec& v) { return std::vector<float>(v.begin(), v.end()); }

// |got - want| <= 1e-4 * max(1, max |want|): relative to the tensor's scale.
void expect_close(const std::vector<float>& got, const Vec& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double max_ref = 0;
  for (double w : want) max_ref = std::max(max_ref, std::abs(w));
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(double(got[i]), want[i], 1e-4 * std::max(1.0, max_ref)) << what << "[" << i << "]";
}

// Runs forward + backward (twice, to check accumulation) on DnnlLstm and
// compares everything with the reference.
void check_shape(backend::DnnlLstm& lstm, RefLstm& ref, core::Rng& rng) {
  const int64_t T = ref.T, B = ref.B, I = ref.I, H = ref.H;
  ref.forward();
  std::vector<float> y(T * B * H), hT(B * H), cT(B * H);
  lstm.forward(T, B, to_f(ref.x).data(), to_f(ref.h0).data(), to_f(ref.c0).data(),
               to_f(ref.w_x).data(), to_f(ref.w_h).data(), to_f(ref.b).data(), y.data(), hT.data(),
               cT.data());
  expect_close(y, Vec(ref.h.begin() + B * H, ref.h.end()), "y");
  expect_close(hT, Vec(ref.h.end() - B * H, ref.h.end()), "hT");
  expect_close(cT, Vec(ref.c.end() - B * H, ref.c.end()), "cT");

  const Vec dy = random_vec(rng, T * B * H, 1.0), dhT = random_vec(rng, B * H, 1.0),
            dcT = random_vec(rng, B * H, 1.0);
  Vec dx, dh0, dc0, dw_x, dw_h, db;
  ref.backward(dy, dhT, dcT, dx, dh0, dc0, dw_x, dw_h, db);

  std::vector<float> gdx(T * B * I, 7.f), gdh0(B * H, 7.f), gdc0(B * H, 7.f);
  std::vector<float> gdw_x(I * 4 * H, 0.f), gdw_h(H * 4 * H, 0.f), gdb(4 * H, 0.f);
  const std::vector<float> fdy = to_f(dy), fdhT = to_f(dhT), fdcT = to_f(dcT);
  lstm.backward(T, B, fdy.data(), fdhT.data(), fdcT.data(), gdx.data(), gdh0.data(), gdc0.data(),
                gdw_x.data(), gdw_h.data(), gdb.data());
  expect_close(gdx, dx, "dx");
  expect_close(gdh0, dh0, "dh0");
  expect_close(gdc0, dc0, "dc0");
  expect_close(gdw_x, dw_x, "dw_x");
  expect_close(gdw_h, dw_h, "dw_h");
  expect_close(gdb, db, "db");

  // Second backward: parameter gradients add up, input gradients are overwritten.
  lstm.backward(fdy.data(), fdhT.data(), fdcT.data(), gdx.data(), gdh0.data(), gdc0.data(),
                gdw_x.data(), gdw_h.data(), gdb.data());
  auto twice = [](Vec v) {
    for (double& e : v) e *= 2;
    return v;
  };
  expect_close(gdx, dx, "dx (second call)");
  expect_close(gdh0, dh0, "dh0 (second call)");
  expect_close(gdw_x, twice(dw_x), "dw_x accumulated");
  expect_close(gdw_h, twice(dw_h), "dw_h accumulated");
  expect_close(gdb, twice(db), "db accumulated");
}

}  // namespace

// The oracle itself: central differences of L = sum(dy*y) + dhT.hT + dcT.cT
// against RefLstm::backward, so the comparisons below test against the truth.
TEST(DnnlLstm, ReferenceBackwardMatchesFiniteDifferences) {
  core::Rng rng(3);
  RefLstm r = random_lstm(rng, 3, 2, 2, 3);
  const Vec dy = random_vec(rng, 3 * 2 * 3, 1.0), dhT = random_vec(rng, 6, 1.0),
            dcT = random_vec(rng, 6, 1.0);
  auto loss = [&]() {
    r.forward();
    double l = 0;
    for (size_t i = 0; i < dy.size(); ++i) l += dy[i] * r.h[6 + i];
    for (size_t i = 0; i < 6; ++i)
      l += dhT[i] * r.h[r.h.size() - 6 + i] + dcT[i] * r.c[r.c.size() - 6 + i];
    return l;
  };
  loss();
  Vec dx, dh0, dc0, dw_x, dw_h, db;
  r.backward(dy, dhT, dcT, dx, dh0, dc0, dw_x, dw_h, db);
  const double eps = 1e-6;
  auto check = [&](Vec& param, const Vec& grad, const char* what) {
    for (size_t i = 0; i < param.size(); ++i) {
      const double keep = param[i];
      param[i] = keep + eps;
      const double lp = loss();
      param[i] = keep - eps;
      const double lm = loss();
      param[i] = keep;
      EXPECT_NEAR((lp - lm) / (2 * eps), grad[i], 1e-7) << what << "[" << i << "]";
    }
  };
  check(r.x, dx, "dx");
  check(r.h0, dh0, "dh0");
  check(r.c0, dc0, "dc0");
  check(r.w_x, dw_x, "dw_x");
  check(r.w_h, dw_h, "dw_h");
  check(r.b, db, "db");
}

TEST(DnnlLstm, MatchesReferenceOnRandomShapes) {
  core::Rng rng(11);
  for (int64_t I : {1, 5})
    for (int64_t H : {3, 8}) {
      backend::DnnlLstm lstm(I, H);
      for (int64_t T : {1, 3, 7})
        for (int64_t B : {1, 4}) {
          SCOPED_TRACE(::testing::Message() << "T=" << T << " B=" << B << " I=" << I << " H=" << H);
          RefLstm ref = random_lstm(rng, T, B, I, H);
          check_shape(lstm, ref, rng);
          if (HasFatalFailure()) return;
        }
    }
}

TEST(DnnlLstm, NullStatesAreZerosAndOutputsOptional) {
  core::Rng rng(5);
  const int64_t T = 4, B = 3, I = 2, H = 5;
  RefLstm ref = random_lstm(rng, T, B, I, H);
  std::fill(ref.h0.begin(), ref.h0.end(), 0.0);
  std::fill(ref.c0.begin(), ref.c0.end(), 0.0);
  ref.forward();
  backend::DnnlLstm lstm(I, H);
  std::vector<float> y(T * B * H);
  lstm.forward(T, B, to_f(ref.x).data(), nullptr, nullptr, to_f(ref.w_x).data(),
               to_f(ref.w_h).data(), to_f(ref.b).data(), y.data(), nullptr, nullptr);
  expect_close(y, Vec(ref.h.begin() + B * H, ref.h.end()), "y");

  const Vec dy = random_vec(rng, T * B * H, 1.0);
  Vec dx, dh0, dc0, dw_x, dw_h, db;
  ref.backward(dy, Vec(B * H, 0), Vec(B * H, 0), dx, dh0, dc0, dw_x, dw_h, db);
  std::vector<float> gdw_h(H * 4 * H, 0.f);
  lstm.backward(to_f(dy).data(), nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, gdw_h.data(),
                nullptr);
  expect_close(gdw_h, dw_h, "dw_h");
}

// Changing (T, B) between calls: each shape keeps its own cached primitives and a
// repeated shape reuses them (no growth), and results stay correct.
TEST(DnnlLstm, ShapeChangesUseTheCache) {
  core::Rng rng(9);
  const int64_t I = 3, H = 4;
  backend::DnnlLstm lstm(I, H);
  RefLstm a = random_lstm(rng, 5, 2, I, H);
  RefLstm b = random_lstm(rng, 2, 3, I, H);
  check_shape(lstm, a, rng);
  const size_t bytes_a = lstm.workspace_bytes();
  EXPECT_GT(bytes_a, size_t(0));
  check_shape(lstm, b, rng);
  const size_t bytes_ab = lstm.workspace_bytes();
  EXPECT_GT(bytes_ab, bytes_a);
  EXPECT_EQ(lstm.cached_shapes(), size_t(2));
  RefLstm a2 = random_lstm(rng, 5, 2, I, H);
  check_shape(lstm, a2, rng);
  EXPECT_EQ(lstm.workspace_bytes(), bytes_ab);
  EXPECT_EQ(lstm.cached_shapes(), size_t(2));

  // Many shapes: the cache stays bounded and the latest shape still works.
  for (int64_t T = 1; T <= 12; ++T) {
    RefLstm r = random_lstm(rng, T, 1, I, H);
    check_shape(lstm, r, rng);
    if (HasFatalFailure()) return;
  }
  EXPECT_LE(lstm.cached_shapes(), size_t(8));
}

TEST(DnnlLstm, BackwardShapeMismatchThrows) {
  core::Rng rng(2);
  const int64_t T = 3, B = 2, I = 2, H = 3;
  backend::DnnlLstm lstm(I, H);
  std::vector<float> dy(T * B * H, 1.f), dw_x(I * 4 * H, 0.f);
  EXPECT_THROW(lstm.backward(dy.data(), nullptr, nullptr, nullptr, nullptr, nullptr, dw_x.data(),
                             nullptr, nullptr),
               core::Error);  // no forward yet
  RefLstm r = random_lstm(rng, T, B, I, H);
  std::vector<float> y(T * B * H);
  lstm.forward(T, B, to_f(r.x).data(), nullptr, nullptr, to_f(r.w_x).data(), to_f(r.w_h).data(),
               to_f(r.b).data(), y.data(), nullptr, nullptr);
  EXPECT_THROW(lstm.backward(T + 1, B, dy.data(), nullptr, nullptr, nullptr, nullptr, nullptr,
                             dw_x.data(), nullptr, nullptr),
               core::Error);
  EXPECT_THROW(lstm.backward(T, B + 1, dy.data(), nullptr, nullptr, nullptr, nullptr, nullptr,
                             dw_x.data(), nullptr, nullptr),
               core::Error);
  EXPECT_NO_THROW(lstm.backward(T, B, dy.data(), nullptr, nullptr, nullptr, nullptr, nullptr,
                                dw_x.data(), nullptr, nullptr));
  EXPECT_THROW(backend::DnnlLstm(0, 3), core::Error);
  EXPECT_THROW(lstm.forward(0, B, to_f(r.x).data(), nullptr, nullptr, to_f(r.w_x).data(),
                            to_f(r.w_h).data(), to_f(r.b).data(), y.data(), nullptr, nullptr),
               core::Error);
}
