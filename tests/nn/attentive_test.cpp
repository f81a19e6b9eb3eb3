// Self-attentive recurrent layers (mem_rnn, rel_rnn, rel_lstm; Kerg et al. 2020):
// finite-difference gradients in double w.r.t. inputs, every parameter and the initial
// state (with the discrete selection checked to be the same at every perturbed point);
// rel_rnn with ν >= T equals mem_rnn exactly; the relevant-set rule (first empty slot,
// lowest score evicted, strictly higher score needed) on hand-made scores and replayed
// against the forward's own attention; state layout; option errors.
#include "nn/recurrent/attentive.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/threads.hpp"
#include "gradcheck.hpp"

using namespace seqbench;
using core::Shape;
using DTensor = core::TensorT<double>;
using DLayer = nn::AttentiveRecurrent<double>;

namespace {

nn::AttentiveOptions opts(const std::string& kind, int64_t nu = 2, int64_t rho = 2,
                          const std::string& phi = "tanh") {
  nn::AttentiveOptions o;
  o.kind = kind;
  o.nu = nu;
  o.rho = rho;
  o.nonlinearity = phi;
  return o;
}

struct Fixture {
  core::ParamStoreT<double> ps;
  std::unique_ptr<DLayer> layer;
  int64_t T, B, I, H, S;
  DTensor x, s0, y, w_y;
  std::vector<int32_t> selection;  // every attended index of the last forward, in order

  // v_scale multiplies the attention vector v after init: a sharper softmax than the
  // near-uniform one of a fresh init, so that later states can outscore the early ones
  // (which collect α = 1 at t = 1) and relevant-set replacements actually happen.
  Fixture(const nn::AttentiveOptions& o, int64_t t, int64_t b, int64_t in, int64_t hidden,
          uint64_t seed, double v_scale = 1.0)
      : T(t), B(b), I(in), H(hidden) {
    layer = std::make_unique<DLayer>(ps, "att", in, hidden, o);
    ps.finalize(0);
    S = layer->state_size();
    x.resize(Shape{T, B, I});
    s0.resize(Shape{B, S});
    y.resize(Shape{T, B, H});
    w_y.resize(Shape{T, B, H});
    core::Rng rng(seed);
    layer->init(rng);
    auto& v = ps.get("att.v");
    for (int64_t i = 0; i < v.numel(); ++i) v.value[i] *= v_scale;
    gradcheck::fill_normal(rng, x);
    gradcheck::fill_normal(rng, s0, 0.5);
    gradcheck::fill_normal(rng, w_y);
  }
  double loss() {
    layer->forward(x.cview(), s0.cview(), y.view());
    selection.clear();
    for (int64_t t = 0; t < T; ++t)
      for (int64_t r = 0; r < B; ++r) {
        auto a = layer->attended(t, r);
        selection.insert(selection.end(), a.begin(), a.end());
      }
    return gradcheck::dot(w_y.data(), y.data(), y.numel());
  }
};

// Relevant-set members attended at step t, row r (the entries before the buffer).
std::set<int32_t> relevant_at(const DLayer& l, int64_t t, int64_t r) {
  auto a = l.attended(t, r);
  const int64_t buffered = std::min(t, l.nu());
  return std::set<int32_t>(a.begin(), a.end() - buffered);
}

// Gradient check of every input; the loss also counts forwards whose discrete
// selection differs from the unperturbed one (must stay 0: the finite differences are
// then taken with the selection fixed, which is what backward differentiates).
void expect_gradients(const nn::AttentiveOptions& o, int64_t T, int64_t B, int64_t I, int64_t H,
                      uint64_t seed, double v_scale = 1.0) {
  Fixture f(o, T, B, I, H, seed, v_scale);
  f.loss();
  const std::vector<int32_t> ref = f.selection;
  DTensor dx(f.x.shape()), ds0(f.s0.shape());
  f.ps.zero_grad();
  f.layer->backward(f.w_y.cview(), dx.view(), ds0.view());
  int flips = 0;
  auto loss = [&] {
    const double l = f.loss();
    if (f.selection != ref) ++flips;
    return l;
  };
  gradcheck::expect_gradient("dx", f.x.data(), dx.data(), dx.numel(), loss);
  // The h part of s0 is not read (t = 0 has no attention), so it is checked on its own
  // to be exactly zero; the rest by finite differences.
  const int64_t S = f.S;
  for (int64_t r = 0; r < B; ++r)
    for (int64_t j = 0; j < H; ++j) EXPECT_EQ(ds0.data()[r * S + j], 0.0);
  for (int64_t r = 0; r < B; ++r)
    gradcheck::expect_gradient("ds0 row " + std::to_string(r), f.s0.data() + r * S + H,
                               ds0.data() + r * S + H, S - H, loss);
  for (auto& p : f.ps.params()) {
    std::vector<double> analytic(p.grad, p.grad + p.numel());
    gradcheck::expect_gradient(p.name, p.value, analytic.data(), p.numel(), loss);
  }
  EXPECT_EQ(flips, 0) << "a perturbation changed the relevant-set selection";
}

}  // namespace

TEST(Attentive, MemRnnGradients) { expect_gradients(opts("mem_rnn"), 8, 2, 3, 4, 11); }

TEST(Attentive, RelRnnGradientsWithEvictions) {
  // T = 12 > ν + ρ = 4: states leave the buffer from t = 3 on and, with this seed, some
  // relevant-set member is replaced during the sequence (asserted below).
  const int64_t T = 12, B = 2;
  const double v_scale = 8.0;
  Fixture f(opts("rel_rnn"), T, B, 3, 4, 10, v_scale);
  f.loss();
  bool replaced = false;
  for (int64_t r = 0; r < B; ++r)
    for (int64_t t = 1; t < T; ++t) {
      const auto before = relevant_at(*f.layer, t - 1, r), now = relevant_at(*f.layer, t, r);
      for (int32_t i : before)
        if (!now.count(i)) replaced = true;
    }
  ASSERT_TRUE(replaced) << "pick a seed whose forward replaces a relevant-set member";
  for (int64_t t = 0; t < T; ++t) EXPECT_LE(f.layer->kappa(t), f.layer->nu() + f.layer->rho());
  expect_gradients(opts("rel_rnn"), T, B, 3, 4, 10, v_scale);
}

TEST(Attentive, RelRnnReluGradients) {
  // relu's kink at 0: a pre-activation within ±eps of 0 would make a finite difference
  // straddle it and fail the check, so passing means this fixed seed stays clear of it;
  // an all-dead layer fails gradcheck's "every finite difference is zero" check.
  expect_gradients(opts("rel_rnn", 2, 2, "relu"), 10, 2, 3, 4, 5);
}

TEST(Attentive, RelLstmGradients) {
  // v scaled as in RelRnnGradientsWithEvictions: a non-uniform softmax over buffer and
  // relevant set.
  expect_gradients(opts("rel_lstm"), 10, 2, 3, 4, 7, 8.0);
}

TEST(Attentive, RelRnnWithLongBufferIsMemRnn) {
  const int64_t T = 9, B = 3, I = 2, H = 5;
  Fixture mem(opts("mem_rnn"), T, B, I, H, 3);
  Fixture rel(opts("rel_rnn", T, 3), T, B, I, H, 3);
  mem.loss();
  rel.loss();
  for (int64_t i = 0; i < mem.y.numel(); ++i) ASSERT_EQ(mem.y.data()[i], rel.y.data()[i]) << i;
  EXPECT_EQ(mem.selection, rel.selection);
  DTensor dx1(mem.x.shape()), dx2(mem.x.shape()), ds1(mem.s0.shape()), ds2(mem.s0.shape());
  mem.ps.zero_grad();
  rel.ps.zero_grad();
  std::vector<double> n1, n2;
  mem.layer->backward(mem.w_y.cview(), dx1.view(), ds1.view(), &n1);
  rel.layer->backward(rel.w_y.cview(), dx2.view(), ds2.view(), &n2);
  for (int64_t i = 0; i < dx1.numel(); ++i) EXPECT_EQ(dx1.data()[i], dx2.data()[i]);
  for (int64_t i = 0; i < ds1.numel(); ++i) EXPECT_EQ(ds1.data()[i], ds2.data()[i]);
  auto g1 = mem.ps.grads(), g2 = rel.ps.grads();
  ASSERT_EQ(g1.size(), g2.size());
  for (size_t i = 0; i < g1.size(); ++i) EXPECT_EQ(g1[i], g2[i]) << i;
  EXPECT_EQ(n1, n2);
}

TEST(Attentive, AdmitRelevantRule) {
  int32_t idx[3] = {-1, -1, -1};
  double sc[3] = {0, 0, 0};
  // Empty slots fill first, in order, whatever the score.
  EXPECT_EQ(DLayer::admit_relevant(3, idx, sc, 0, 0.5), 0);
  EXPECT_EQ(DLayer::admit_relevant(3, idx, sc, 1, 0.2), 1);
  EXPECT_EQ(DLayer::admit_relevant(3, idx, sc, 2, 0.9), 2);
  // Full: lower or equal to the lowest (0.2) is dropped (strictly higher needed).
  EXPECT_EQ(DLayer::admit_relevant(3, idx, sc, 3, 0.1), -1);
  EXPECT_EQ(DLayer::admit_relevant(3, idx, sc, 4, 0.2), -1);
  EXPECT_EQ(idx[1], 1);
  // Higher replaces the lowest-scored member (slot 1), not the oldest.
  EXPECT_EQ(DLayer::admit_relevant(3, idx, sc, 5, 0.3), 1);
  EXPECT_EQ(idx[0], 0);
  EXPECT_EQ(idx[1], 5);
  EXPECT_EQ(idx[2], 2);
  EXPECT_EQ(sc[1], 0.3);
  // Ties among the lowest: the first such slot goes.
  sc[0] = 0.3;
  EXPECT_EQ(DLayer::admit_relevant(3, idx, sc, 6, 0.4), 0);
  EXPECT_EQ(idx[0], 6);
  EXPECT_EQ(idx[1], 5);
  // ρ = 0: nothing is ever admitted.
  EXPECT_EQ(DLayer::admit_relevant(0, idx, sc, 7, 100.0), -1);
}

TEST(Attentive, ForwardBookkeepingReplaysFromAttention) {
  // Rebuild every relevant set from the recorded α's alone (score = attention received
  // while buffered; offer at t = j+ν+1) and compare with what the forward attended.
  const int64_t T = 30, B = 3, nu = 3, rho = 2;
  Fixture f(opts("rel_rnn", nu, rho), T, B, 2, 6, 24, 8.0);
  f.loss();
  const DLayer& l = *f.layer;
  int replacements = 0;
  for (int64_t r = 0; r < B; ++r) {
    std::vector<double> score(T, 0.0);
    std::vector<int32_t> idx(rho, -1);
    std::vector<double> sc(rho, 0.0);
    for (int64_t t = 1; t < T; ++t) {
      if (t - nu - 1 >= 0) {
        const int64_t k = DLayer::admit_relevant(
            rho, idx.data(), sc.data(), static_cast<int32_t>(t - nu - 1), score[t - nu - 1]);
        if (k >= 0 && t - nu - 1 >= rho) ++replacements;
      }
      std::vector<int32_t> expect;
      for (int32_t i : idx)
        if (i >= 0) expect.push_back(i);
      for (int64_t i = std::max<int64_t>(0, t - nu); i < t; ++i)
        expect.push_back(static_cast<int32_t>(i));
      auto got = l.attended(t, r);
      ASSERT_EQ(std::vector<int32_t>(got.begin(), got.end()), expect) << "t=" << t << " r=" << r;
      auto a = l.attention(t, r);
      double sum = 0;
      for (size_t k = 0; k < a.size(); ++k) {
        sum += a[k];
        if (got[k] >= t - nu) score[got[k]] += a[k];
      }
      EXPECT_NEAR(sum, 1.0, 1e-12);
    }
  }
  EXPECT_GT(replacements, 0);
}

TEST(Attentive, StateLayoutAndInitialState) {
  for (const char* kind : {"mem_rnn", "rel_lstm"}) {
    Fixture f(opts(kind), 5, 2, 3, 4, 13);
    f.loss();
    const int64_t H = f.H, S = f.S;
    EXPECT_EQ(S, std::string(kind) == "rel_lstm" ? 3 * H : 2 * H);
    auto fs = f.layer->final_state();
    ASSERT_EQ(fs.shape, (Shape{2, S}));
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t j = 0; j < H; ++j) EXPECT_EQ(fs(r, j), f.y.data()[(4 * 2 + r) * H + j]);
    // The h part of s0 is not read; the s part is.
    const std::vector<double> y0(f.y.data(), f.y.data() + f.y.numel());
    for (int64_t r = 0; r < 2; ++r) f.s0.data()[r * S] += 1.0;
    f.loss();
    EXPECT_EQ(std::vector<double>(f.y.data(), f.y.data() + f.y.numel()), y0);
    f.s0.data()[S - 1] += 1.0;
    f.loss();
    EXPECT_NE(std::vector<double>(f.y.data(), f.y.data() + f.y.numel()), y0);
    // A null s0 is the zero state.
    std::fill_n(f.s0.data(), f.s0.numel(), 0.0);
    f.loss();
    const std::vector<double> yz(f.y.data(), f.y.data() + f.y.numel());
    f.layer->forward(f.x.cview(), core::ViewT<const double>(), f.y.view());
    EXPECT_EQ(std::vector<double>(f.y.data(), f.y.data() + f.y.numel()), yz);
  }
}

TEST(Attentive, ParamNamesAndMemory) {
  core::ParamStoreT<float> ps;
  nn::AttentiveRecurrent<float> rel(ps, "l0", 3, 4, opts("rel_lstm"));
  ps.finalize(0);
  for (const char* n : {"l0.w_x", "l0.w_h", "l0.b", "l0.u_a", "l0.v_a", "l0.v"})
    EXPECT_NE(ps.find(n), nullptr) << n;
  EXPECT_EQ(ps.get("l0.w_h").shape, (Shape{4, 16}));
  EXPECT_EQ(ps.get("l0.v").shape, (Shape{4}));
  // Attention state: rel_* keeps O(κ) per step, mem_rnn O(t): at T = 200 mem_rnn holds more.
  core::ParamStoreT<float> ps2;
  nn::AttentiveRecurrent<float> mem(ps2, "m", 3, 4, opts("mem_rnn"));
  nn::AttentiveRecurrent<float> rr(ps2, "r", 3, 4, opts("rel_rnn"));
  ps2.finalize(0);
  core::Rng rng(1);
  mem.init(rng);
  rr.init(rng);
  core::TensorT<float> x(Shape{200, 2, 3}), y(Shape{200, 2, 4});
  for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] = static_cast<float>(rng.normal());
  mem.forward(x.cview(), {}, y.view());
  rr.forward(x.cview(), {}, y.view());
  for (int64_t i = 0; i < y.numel(); ++i) ASSERT_TRUE(std::isfinite(y.data()[i]));
  EXPECT_EQ(mem.kappa(199), 199);
  EXPECT_EQ(rr.kappa(199), 4);
  EXPECT_GT(mem.held_bytes(), 5 * rr.held_bytes());
}

TEST(Attentive, OptionErrors) {
  core::ParamStoreT<double> ps;
  EXPECT_THROW(DLayer(ps, "a", 2, 3, opts("sab")), core::UsageError);
  EXPECT_THROW(DLayer(ps, "b", 2, 3, opts("rel_rnn", 2, 2, "modrelu")), core::UsageError);
  EXPECT_THROW(DLayer(ps, "c", 2, 3, opts("rel_rnn", 0, 2)), core::UsageError);
  auto o = opts("rel_lstm");
  o.bptt = 5;
  EXPECT_THROW(DLayer(ps, "d", 2, 3, o), core::UsageError);
}

// Large enough that each thread runs the time loops on its own slice of rows (rows x
// attended x H >= 2^16): the result equals the one-thread run (the per-row dL/dv sums
// are added in row order either way; only the GEMMs may round differently).
TEST(Attentive, RowParallelAttentionEqualsOneThread) {
  const int64_t T = 30, B = 48, I = 3, H = 64;
  auto run = [&](int threads, std::vector<double>& out) {
    core::set_threads(threads);
    EXPECT_EQ(core::num_threads(), threads) << "the comparison needs a team of this size";
    Fixture f(opts("rel_lstm", 10, 15), T, B, I, H, 21, 4.0);
    f.loss();
    DTensor dx(f.x.shape()), ds0(f.s0.shape());
    f.ps.zero_grad();
    std::vector<double> dh_norms;
    f.layer->backward(f.w_y.cview(), dx.view(), ds0.view(), &dh_norms);
    out.assign(f.y.data(), f.y.data() + f.y.numel());
    out.insert(out.end(), dx.data(), dx.data() + dx.numel());
    out.insert(out.end(), ds0.data(), ds0.data() + ds0.numel());
    out.insert(out.end(), dh_norms.begin(), dh_norms.end());
    out.insert(out.end(), f.ps.grads().begin(), f.ps.grads().end());
    out.insert(out.end(), f.selection.begin(), f.selection.end());
  };
  const int before = core::num_threads();
  std::vector<double> one, two;
  run(1, one);
  run(2, two);
  core::set_threads(before);
  ASSERT_EQ(one.size(), two.size());
  for (size_t i = 0; i < one.size(); ++i)
    ASSERT_NEAR(one[i], two[i], 1e-12 * (1 + std::abs(one[i]))) << i;
}
