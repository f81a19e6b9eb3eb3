// Sparse Attentive Backtracking (nn::SabLayer): an independent plain re-implementation of
// the forward (reference below) that the layer must match; finite-difference gradients in
// double w.r.t. inputs, every parameter and the initial state, both without a cut (FD of
// the plain loss) and with truncation (FD of the reference with the LSTM's input state
// at every cut frozen at its unperturbed value, which is exactly what "no gradient
// across the cut" differentiates), with the discrete top-k selection checked to be the
// same at every perturbed point; the cut zeroes the LSTM path while attention still
// reaches an early memory; the sparsifier on hand-made scores; state layout; options.
#include "nn/recurrent/sab.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "gradcheck.hpp"

using namespace seqbench;
using core::Shape;
using DTensor = core::TensorT<double>;
using DLayer = nn::SabLayer<double>;

namespace {

nn::SabOptions opts(int64_t trunc, int64_t attk, int64_t ktop) {
  nn::SabOptions o;
  o.trunc = trunc;
  o.attk = attk;
  o.ktop = ktop;
  return o;
}

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// The SAB forward written out from the header's equations, one row and step at a time,
// sharing nothing with the layer but the parameters. cut_in[c] (B, 2H), when given,
// replaces the state the LSTM reads at every cut step c (c % trunc == 0, c > 0);
// cut_out receives the live values there. sel receives every selection (time indices,
// and whether each weight is non-zero) in step, row order.
struct Reference {
  int64_t I, H;
  nn::SabOptions o;
  const double *w_x, *w_h, *b, *w_a;

  void forward(const DTensor& x, const DTensor& s0, DTensor& y,
               const std::vector<std::vector<double>>* cut_in,
               std::vector<std::vector<double>>* cut_out, std::vector<int64_t>* sel) const {
    const int64_t T = x.shape()[0], B = x.shape()[1], G = 4 * H;
    if (cut_out) cut_out->assign(static_cast<size_t>(T), {});
    if (sel) sel->clear();
    std::vector<double> hs(static_cast<size_t>(T * B * H));  // every h_t (after the summary)
    std::vector<double> h(static_cast<size_t>(B * H)), c(static_cast<size_t>(B * H));
    for (int64_t r = 0; r < B; ++r)
      for (int64_t j = 0; j < H; ++j) {
        h[r * H + j] = s0.data()[r * 2 * H + j];
        c[r * H + j] = s0.data()[r * 2 * H + H + j];
      }
    for (int64_t t = 0; t < T; ++t) {
      if (o.trunc > 0 && t > 0 && t % o.trunc == 0) {
        if (cut_out) {
          auto& v = (*cut_out)[static_cast<size_t>(t)];
          v.assign(h.begin(), h.end());
          v.insert(v.end(), c.begin(), c.end());
        }
        if (cut_in) {
          const auto& v = (*cut_in)[static_cast<size_t>(t)];
          std::copy_n(v.begin(), B * H, h.begin());
          std::copy_n(v.begin() + B * H, B * H, c.begin());
        }
      }
      for (int64_t r = 0; r < B; ++r) {
        std::vector<double> a(static_cast<size_t>(G));
        for (int64_t k = 0; k < G; ++k) {
          double s = b[k];
          for (int64_t i = 0; i < I; ++i) s += x.data()[(t * B + r) * I + i] * w_x[i * G + k];
          for (int64_t i = 0; i < H; ++i) s += h[r * H + i] * w_h[i * G + k];
          a[static_cast<size_t>(k)] = s;
        }
        std::vector<double> hh(static_cast<size_t>(H));
        for (int64_t j = 0; j < H; ++j) {
          const double ig = sigmoid(a[j]), fg = sigmoid(a[H + j]), gg = std::tanh(a[2 * H + j]),
                       og = sigmoid(a[3 * H + j]);
          c[r * H + j] = fg * c[r * H + j] + ig * gg;
          hh[static_cast<size_t>(j)] = og * std::tanh(c[r * H + j]);
        }
        // Memory: h_i with i % attk == 0, i < t.
        std::vector<int64_t> mem;
        for (int64_t i = 0; i < t; i += o.attk) mem.push_back(i);
        std::vector<double> e(mem.size()), w(mem.size(), 0.0);
        for (size_t m = 0; m < mem.size(); ++m) {
          double s = 0;
          for (int64_t j = 0; j < H; ++j)
            s += w_a[j] * std::tanh(hh[static_cast<size_t>(j)]) +
                 w_a[H + j] * std::tanh(hs[(mem[m] * B + r) * H + j]);
          e[m] = s;
        }
        const int64_t n = static_cast<int64_t>(mem.size());
        if (n <= o.ktop) {
          w = e;
        } else {
          std::vector<size_t> ord(mem.size());
          std::iota(ord.begin(), ord.end(), size_t{0});
          std::stable_sort(ord.begin(), ord.end(), [&](size_t p, size_t q) { return e[p] > e[q]; });
          const double delta = e[ord[static_cast<size_t>(o.ktop - 1)]] + 1e-7;
          double z = 0;
          for (size_t m = 0; m < mem.size(); ++m) {
            w[m] = std::max(e[m] - delta, 0.0);
            z += w[m];
          }
          for (auto& v : w) v /= z + 1e-7;
          if (sel)
            for (int64_t k = 0; k < o.ktop; ++k) {
              sel->push_back(mem[ord[static_cast<size_t>(k)]]);
              sel->push_back(w[ord[static_cast<size_t>(k)]] > 0);
            }
        }
        for (size_t m = 0; m < mem.size(); ++m)
          for (int64_t j = 0; j < H; ++j) hh[static_cast<size_t>(j)] += w[m] * hs[(mem[m] * B + r) * H + j];
        for (int64_t j = 0; j < H; ++j) {
          h[r * H + j] = hh[static_cast<size_t>(j)];
          hs[(t * B + r) * H + j] = hh[static_cast<size_t>(j)];
          y.data()[(t * B + r) * H + j] = hh[static_cast<size_t>(j)];
        }
      }
    }
  }
};

struct Fixture {
  core::ParamStoreT<double> ps;
  std::unique_ptr<DLayer> layer;
  nn::SabOptions o;
  int64_t T, B, I, H, S;
  DTensor x, s0, y, w_y;

  // w_scale multiplies w_a after init: the reference's N(0, 0.01²) gives near-equal
  // scores, a larger scale makes the top-k pick clear winners (and the raw branch's
  // weights non-negligible).
  Fixture(const nn::SabOptions& opt, int64_t t, int64_t b, int64_t in, int64_t hidden,
          uint64_t seed, double w_scale = 100.0)
      : o(opt), T(t), B(b), I(in), H(hidden) {
    layer = std::make_unique<DLayer>(ps, "sab", in, hidden, o);
    ps.finalize(0);
    S = layer->state_size();
    x.resize(Shape{T, B, I});
    s0.resize(Shape{B, S});
    y.resize(Shape{T, B, H});
    w_y.resize(Shape{T, B, H});
    core::Rng rng(seed);
    layer->init(rng);
    auto& w = ps.get("sab.w_a");
    for (int64_t i = 0; i < w.numel(); ++i) w.value[i] *= w_scale;
    gradcheck::fill_normal(rng, x);
    gradcheck::fill_normal(rng, s0, 0.5);
    gradcheck::fill_normal(rng, w_y);
  }
  Reference reference() {
    return Reference{I, H, o, ps.get("sab.w_x").value, ps.get("sab.w_h").value,
                     ps.get("sab.b").value, ps.get("sab.w_a").value};
  }
  // The layer's sparse-branch selection (indices and non-zero pattern), comparable with
  // Reference's sel.
  std::vector<int64_t> selection() const {
    std::vector<int64_t> s;
    for (int64_t t = 0; t < T; ++t) {
      if (layer->memory_size(t) <= o.ktop) continue;
      for (int64_t r = 0; r < B; ++r) {
        auto idx = layer->attended(t, r);
        auto a = layer->attention(t, r);
        for (size_t k = 0; k < idx.size(); ++k) {
          s.push_back(idx[k]);
          s.push_back(a[k] > 0);
        }
      }
    }
    return s;
  }
  double loss() {
    layer->forward(x.cview(), s0.cview(), y.view());
    return gradcheck::dot(w_y.data(), y.data(), y.numel());
  }
};

// Checks the layer's backward against finite differences of `loss` for x, s0 and every
// parameter; `loss` must also count selection changes into *flips.
void expect_all_gradients(Fixture& f, const std::function<double()>& loss) {
  f.loss();
  DTensor dx(f.x.shape()), ds0(f.s0.shape());
  f.ps.zero_grad();
  f.layer->backward(f.w_y.cview(), dx.view(), ds0.view());
  gradcheck::expect_gradient("dx", f.x.data(), dx.data(), dx.numel(), loss);
  gradcheck::expect_gradient("ds0", f.s0.data(), ds0.data(), ds0.numel(), loss);
  for (auto& p : f.ps.params()) {
    std::vector<double> analytic(p.grad, p.grad + p.numel());
    gradcheck::expect_gradient(p.name, p.value, analytic.data(), p.numel(), loss);
  }
}

}  // namespace

TEST(Sab, ForwardMatchesReference) {
  for (int64_t trunc : {0, 3}) {
    Fixture f(opts(trunc, 2, 3), 13, 2, 3, 4, 21);
    f.loss();
    DTensor yr(f.y.shape());
    std::vector<int64_t> sel;
    f.reference().forward(f.x, f.s0, yr, nullptr, nullptr, &sel);
    for (int64_t i = 0; i < f.y.numel(); ++i) ASSERT_NEAR(f.y.data()[i], yr.data()[i], 1e-12) << i;
    EXPECT_EQ(f.selection(), sel);
    EXPECT_FALSE(sel.empty());
  }
}

TEST(Sab, GradientsWithoutCut) {
  // trunc = T: no cut, so backward is the exact gradient of the plain loss. attk = 2,
  // T = 14: the memory grows to 7 states, ktop = 3 makes the top-k a real selection
  // from t = 7 on, while t = 1..6 run the raw branch.
  const int64_t T = 14;
  Fixture f(opts(T, 2, 3), T, 2, 3, 4, 5);
  f.loss();
  ASSERT_GT(f.layer->memory_size(T - 1), 3 + 2);
  const std::vector<int64_t> ref = f.selection();
  int flips = 0;
  auto loss = [&] {
    const double l = f.loss();
    if (f.selection() != ref) ++flips;
    return l;
  };
  expect_all_gradients(f, loss);
  EXPECT_EQ(flips, 0) << "a perturbation changed the top-k selection";
  // trunc = 0 (full BPTT) is the same graph.
  Fixture g(opts(0, 2, 3), T, 2, 3, 4, 5);
  g.loss();
  f.loss();
  DTensor dx1(f.x.shape()), dx2(f.x.shape());
  f.ps.zero_grad();
  g.ps.zero_grad();
  f.layer->backward(f.w_y.cview(), dx1.view(), {});
  g.layer->backward(g.w_y.cview(), dx2.view(), {});
  for (int64_t i = 0; i < dx1.numel(); ++i) EXPECT_EQ(dx1.data()[i], dx2.data()[i]);
  auto g1 = f.ps.grads(), g2 = g.ps.grads();
  for (size_t i = 0; i < g1.size(); ++i) EXPECT_EQ(g1[i], g2[i]) << i;
}

TEST(Sab, GradientsOfTheTruncatedObjective) {
  // trunc = 4 < T = 14 (cuts at 4, 8, 12). The truncated gradient is the derivative of
  // the reference with the LSTM's input state at every cut held at its unperturbed
  // value (a detach), so finite differences of that are exact.
  const int64_t T = 14;
  Fixture f(opts(4, 2, 3), T, 2, 3, 4, 5);
  Reference ref = f.reference();
  std::vector<std::vector<double>> frozen;
  std::vector<int64_t> sel0, sel;
  DTensor yr(f.y.shape());
  ref.forward(f.x, f.s0, yr, nullptr, &frozen, &sel0);
  int flips = 0;
  auto loss = [&] {
    ref.forward(f.x, f.s0, yr, &frozen, nullptr, &sel);
    if (sel != sel0) ++flips;
    return gradcheck::dot(f.w_y.data(), yr.data(), yr.numel());
  };
  expect_all_gradients(f, loss);
  EXPECT_EQ(flips, 0) << "a perturbation changed the top-k selection";
  // The cut matters: the plain loss's gradient differs from the truncated one.
  f.loss();
  DTensor dx(f.x.shape());
  f.ps.zero_grad();
  f.layer->backward(f.w_y.cview(), dx.view(), {});
  const double keep = f.x.data()[0];
  f.x.data()[0] = keep + 1e-6;
  const double lp = f.loss();
  f.x.data()[0] = keep - 1e-6;
  const double lm = f.loss();
  f.x.data()[0] = keep;
  EXPECT_GT(std::abs((lp - lm) / 2e-6 - dx.data()[0]), 1e-4);
}

TEST(Sab, CutStopsTheLstmPathButNotTheAttention) {
  // attk = 2, trunc = 4, T = 16, loss only at the last step. h_3 (end of the first
  // chunk, not a memory) reaches the loss only through step 4's LSTM, which the cut
  // blocks: zero. An early memory h_i (i < 4) picked by the last step's top-k still
  // gets gradient through the attention, 12+ steps and three cuts later.
  const int64_t T = 16, B = 2;
  Fixture f(opts(4, 2, 3), T, B, 3, 4, 5);
  std::fill_n(f.w_y.data(), (T - 1) * B * f.H, 0.0);
  f.loss();
  int64_t early = -1;
  for (int64_t r = 0; r < B; ++r) {
    auto idx = f.layer->attended(T - 1, r);
    auto a = f.layer->attention(T - 1, r);
    for (size_t k = 0; k < idx.size(); ++k)
      if (idx[k] < 4 && a[k] > 0) early = idx[k];
  }
  ASSERT_GE(early, 0) << "pick a seed whose last step attends to h_0 or h_2";
  std::vector<double> norms;
  f.ps.zero_grad();
  f.layer->backward(f.w_y.cview(), {}, {}, &norms);
  EXPECT_EQ(norms[3], 0.0);
  EXPECT_EQ(norms[7], 0.0);
  EXPECT_GT(norms[static_cast<size_t>(early)], 1e-6);
  // Without the cut the LSTM path carries gradient back to h_3.
  Fixture g(opts(0, 2, 3), T, B, 3, 4, 5);
  std::fill_n(g.w_y.data(), (T - 1) * B * g.H, 0.0);
  g.loss();
  g.ps.zero_grad();
  g.layer->backward(g.w_y.cview(), {}, {}, &norms);
  EXPECT_GT(norms[3], 1e-6);
}

TEST(Sab, SparsifyOnHandMadeScores) {
  const double eps = DLayer::kEps;
  const double e[6] = {0.5, 2.0, -1.0, 1.0, 2.0, 0.3};
  int32_t order[6];
  double a[6], z = 0;
  // n > ktop: top 3 by score, ties to the lower index, pivot (3rd largest, 1.0) last;
  // δ = 1.0 + ε, so the pivot's weight is 0 and only two are non-zero.
  ASSERT_EQ(DLayer::sparsify(6, 3, e, order, a, &z), 3);
  EXPECT_EQ(order[0], 1);
  EXPECT_EQ(order[1], 4);
  EXPECT_EQ(order[2], 3);
  EXPECT_NEAR(z, 2 * (1.0 - eps) + eps, 1e-15);
  EXPECT_NEAR(a[0], (1.0 - eps) / z, 1e-15);
  EXPECT_NEAR(a[1], (1.0 - eps) / z, 1e-15);
  EXPECT_EQ(a[2], 0.0);
  // ktop = 4: pivot 0.5; weights 1.5, 1.5, 0.5 over 3.5.
  ASSERT_EQ(DLayer::sparsify(6, 4, e, order, a, &z), 4);
  EXPECT_EQ(std::vector<int32_t>(order, order + 4), (std::vector<int32_t>{1, 4, 3, 0}));
  EXPECT_NEAR(a[0], 1.5 / 3.5, 1e-6);
  EXPECT_NEAR(a[2], 0.5 / 3.5, 1e-6);
  EXPECT_EQ(a[3], 0.0);
  // n <= ktop: the raw scores, unnormalised, in memory order (the reference's branch).
  ASSERT_EQ(DLayer::sparsify(3, 3, e, order, a, &z), 3);
  EXPECT_EQ(std::vector<double>(a, a + 3), (std::vector<double>{0.5, 2.0, -1.0}));
  EXPECT_EQ(z, 1.0);
  // ktop = 1 with n > 1: the pivot is the maximum itself, so every weight is 0.
  ASSERT_EQ(DLayer::sparsify(6, 1, e, order, a, &z), 1);
  EXPECT_EQ(order[0], 1);
  EXPECT_EQ(a[0], 0.0);
}

TEST(Sparsify, BackwardMatchesFiniteDifferences) {
  // Loss Σ_k g_k a_k over the selected entries, differentiated w.r.t. all 7 scores
  // (those outside the top-k must get exactly 0).
  std::vector<double> e = {0.4, 1.7, -0.2, 1.1, 2.3, 0.9, 1.5};
  const double g[4] = {0.3, -1.2, 0.7, 2.0};
  const int64_t n = 7, K = 4;
  int32_t order[7];
  double a[7], z;
  DLayer::sparsify(n, K, e.data(), order, a, &z);
  const std::vector<int32_t> sel(order, order + K);
  double de_sel[4];
  DLayer::sparsify_backward(n, K, a, z, g, de_sel);
  std::vector<double> de(n, 0.0);
  for (int64_t k = 0; k < K; ++k) de[static_cast<size_t>(order[k])] = de_sel[k];
  int flips = 0;
  auto loss = [&] {
    int32_t o2[7];
    double a2[7], z2;
    DLayer::sparsify(n, K, e.data(), o2, a2, &z2);
    if (std::vector<int32_t>(o2, o2 + K) != sel) ++flips;
    double s = 0;
    for (int64_t k = 0; k < K; ++k) s += g[k] * a2[k];
    return s;
  };
  gradcheck::expect_gradient("de", e.data(), de.data(), n, loss);
  EXPECT_EQ(flips, 0);
  EXPECT_NEAR(std::accumulate(de.begin(), de.end(), 0.0), 0.0, 1e-12);  // shift invariance
  for (int i : {0, 2}) EXPECT_EQ(de[static_cast<size_t>(i)], 0.0);     // not selected
  // Raw branch: identity.
  double da[3] = {1.0, -2.0, 0.5}, d3[3];
  DLayer::sparsify_backward(3, 5, a, 1.0, da, d3);
  EXPECT_EQ(std::vector<double>(d3, d3 + 3), std::vector<double>(da, da + 3));
}

TEST(Sab, StateLayoutAndMemory) {
  Fixture f(opts(5, 3, 2), 10, 2, 3, 4, 13);
  f.loss();
  const int64_t H = f.H, S = f.S;
  EXPECT_EQ(S, 2 * H);
  auto fs = f.layer->final_state();
  ASSERT_EQ(fs.shape, (Shape{2, S}));
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t j = 0; j < H; ++j) EXPECT_EQ(fs(r, j), f.y.data()[(9 * 2 + r) * H + j]);
  // Memory sizes: ceil(t / attk); selected: min(n_t, ktop), time indices multiples of 3.
  const int64_t expect_n[10] = {0, 1, 1, 1, 2, 2, 2, 3, 3, 3};
  for (int64_t t = 0; t < 10; ++t) {
    EXPECT_EQ(f.layer->memory_size(t), expect_n[t]);
    auto idx = f.layer->attended(t, 1);
    EXPECT_EQ(static_cast<int64_t>(idx.size()), std::min<int64_t>(expect_n[t], 2));
    for (int32_t i : idx) {
      EXPECT_EQ(i % 3, 0);
      EXPECT_LT(i, t);
    }
  }
  // Both halves of s0 are read (step 0's LSTM reads h_{-1} and c_{-1}).
  const std::vector<double> y0(f.y.data(), f.y.data() + f.y.numel());
  f.s0.data()[0] += 1.0;
  f.loss();
  EXPECT_NE(std::vector<double>(f.y.data(), f.y.data() + f.y.numel()), y0);
  f.s0.data()[0] -= 1.0;
  f.s0.data()[H] += 1.0;
  f.loss();
  EXPECT_NE(std::vector<double>(f.y.data(), f.y.data() + f.y.numel()), y0);
  // A null s0 is the zero state.
  std::fill_n(f.s0.data(), f.s0.numel(), 0.0);
  f.loss();
  const std::vector<double> yz(f.y.data(), f.y.data() + f.y.numel());
  f.layer->forward(f.x.cview(), core::ViewT<const double>(), f.y.view());
  EXPECT_EQ(std::vector<double>(f.y.data(), f.y.data() + f.y.numel()), yz);
}

TEST(Sab, ParamNamesInitAndHeldBytes) {
  core::ParamStoreT<float> ps;
  nn::SabLayer<float> l(ps, "l0", 3, 4, opts(10, 5, 5));
  ps.finalize(0);
  for (const char* n : {"l0.w_x", "l0.w_h", "l0.b", "l0.w_a"}) EXPECT_NE(ps.find(n), nullptr) << n;
  EXPECT_EQ(ps.get("l0.w_h").shape, (Shape{4, 16}));
  EXPECT_EQ(ps.get("l0.w_a").shape, (Shape{8}));
  core::Rng rng(1);
  l.init(rng);
  const auto& w = ps.get("l0.w_a");
  double sq = 0;
  for (int64_t i = 0; i < w.numel(); ++i) sq += double(w.value[i]) * double(w.value[i]);
  EXPECT_GT(sq, 0.0);
  EXPECT_LT(std::sqrt(sq / 8), 0.05);  // N(0, 0.01²), not U(±1/sqrt(H))
  core::TensorT<float> x(Shape{200, 2, 3}), y(Shape{200, 2, 4}), dy(Shape{200, 2, 4});
  for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] = static_cast<float>(rng.normal());
  l.forward(x.cview(), {}, y.view());
  for (int64_t i = 0; i < y.numel(); ++i) ASSERT_TRUE(std::isfinite(y.data()[i]));
  // At least the per-step LSTM states and caches (T·B·(2H + 5H + 4H) floats).
  const size_t fwd = l.held_bytes();
  EXPECT_GE(fwd, size_t{200 * 2 * 11 * 4} * sizeof(float));
  l.backward(dy.cview(), {}, {});
  EXPECT_GE(l.held_bytes(), fwd + size_t{200 * 2 * 4} * sizeof(float));  // + dh_
}

TEST(Sab, OptionErrors) {
  core::ParamStoreT<double> ps;
  EXPECT_THROW(DLayer(ps, "a", 2, 3, opts(-1, 5, 5)), core::UsageError);
  EXPECT_THROW(DLayer(ps, "b", 2, 3, opts(10, 0, 5)), core::UsageError);
  EXPECT_THROW(DLayer(ps, "c", 2, 3, opts(10, 5, 0)), core::UsageError);
  EXPECT_TRUE(ps.params().empty());  // nothing declared by a rejected layer
}
