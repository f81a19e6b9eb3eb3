// MomentumRNN cells (nn/cells/momentum.hpp) driven by Recurrent<Cell>, in double:
//  - finite-difference gradients for every kind (inputs, parameters, initial state);
//  - truncated BPTT equals chunkwise full BPTT (momentum, adam);
//  - forward equals a naive reference written from the update rules (every kind, with
//    the Nesterov restart coefficients written out by hand);
//  - reductions: MomentumLSTM(μ = 0, s = 1) == LstmCell, MomentumRNN(μ = 0, s = 1) == a
//    plain tanh RNN (outputs and gradients);
//  - both initialisations, option errors, the float instantiation.
#include "nn/cells/momentum.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "gradcheck.hpp"
#include "nn/cell_check.hpp"
#include "nn/cells/lstm.hpp"
#include "nn/recurrent/recurrent.hpp"

using namespace seqbench;
using core::Shape;
using DTensor = core::TensorT<double>;
using MLstm = nn::MomentumLstmCell<double>;
using MRnn = nn::MomentumRnnCell<double>;

namespace {

nn::MomentumOptions opts(const std::string& kind, double mu = 0.6, double s = 0.6,
                         double beta = 0.1, double eps = 1e-16, int64_t restart = 2) {
  nn::MomentumOptions o;
  o.kind = kind;
  o.mu = mu;
  o.s = s;
  o.beta = beta;
  o.eps = eps;
  o.restart = restart;
  return o;
}

std::function<MLstm(core::ParamStoreT<double>&)> make_lstm(int64_t in, int64_t hidden,
                                                           nn::MomentumOptions o) {
  return [=](core::ParamStoreT<double>& ps) { return MLstm(ps, "mlstm", in, hidden, o); };
}
std::function<MRnn(core::ParamStoreT<double>&)> make_rnn(int64_t in, int64_t hidden,
                                                         nn::MomentumOptions o) {
  return [=](core::ParamStoreT<double>& ps) { return MRnn(ps, "mrnn", in, hidden, o); };
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// expect_gradients with the second-moment part m of the initial state made positive
// (|m| + 0.1), for AdamLSTM with the paper's ε = 1e-16, where a negative m_0 could make
// m_t + ε negative. Same checks as cellcheck::expect_gradients otherwise.
void expect_adam_gradients_positive_m(nn::MomentumOptions o, int64_t T, int64_t B, int64_t I,
                                      int64_t H, uint64_t seed) {
  cellcheck::Fixture<MLstm> f(make_lstm(I, H, o), T, B, 0, seed, 0.5);
  ASSERT_EQ(f.S, 10 * H);
  for (int64_t r = 0; r < B; ++r)
    for (int64_t k = 0; k < 4 * H; ++k) {
      double& m = f.s0[r * f.S + 6 * H + k];
      m = std::abs(m) + 0.1;
    }
  f.loss();
  DTensor dx(f.x.shape()), ds0(f.s0.shape());
  f.ps.zero_grad();
  f.rnn->backward(f.w_y.cview(), dx.view(), ds0.view());
  auto loss = [&] { return f.loss(); };
  gradcheck::expect_gradient("dx", f.x.data(), dx.data(), dx.numel(), loss);
  gradcheck::expect_gradient("ds0", f.s0.data(), ds0.data(), ds0.numel(), loss);
  for (auto& p : f.ps.params()) {
    std::vector<double> analytic(p.grad, p.grad + p.numel());
    gradcheck::expect_gradient(p.name, p.value, analytic.data(), p.numel(), loss);
  }
}

// Naive reference of the LSTM-family rules, written from the equations (not from the
// cell's code). coef[t] is the coefficient of v_{t-1} at step t. Returns the states
// s_1..s_T, (T, B, S) with S = 6H or 10H.
std::vector<double> reference_lstm(MLstm& cell, const std::vector<double>& coef, bool adam,
                                   const DTensor& x, const DTensor& s0) {
  const int64_t T = x.dim(0), B = x.dim(1), I = x.dim(2), H = cell.hidden(), G = 4 * H;
  const int64_t S = adam ? 10 * H : 6 * H;
  const auto& o = cell.options();
  std::vector<double> out(static_cast<size_t>(T * B * S));
  std::vector<double> prev(s0.data(), s0.data() + B * S), cur(static_cast<size_t>(B * S));
  std::vector<double> a(static_cast<size_t>(G));
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t r = 0; r < B; ++r) {
      const double* sp = prev.data() + r * S;
      double* sc = cur.data() + r * S;
      for (int64_t k = 0; k < G; ++k) {
        double p = cell.b_x().value[k];
        for (int64_t q = 0; q < I; ++q) p += x[(t * B + r) * I + q] * cell.w_x().value[q * G + k];
        double rec = cell.b_h().value[k];
        for (int64_t q = 0; q < H; ++q) rec += sp[q] * cell.w_h().value[q * G + k];
        const double v = coef[static_cast<size_t>(t)] * sp[2 * H + k] + o.s * p;
        sc[2 * H + k] = v;
        if (adam) {
          const double m = o.beta * sp[6 * H + k] + (1 - o.beta) * p * p;
          sc[6 * H + k] = m;
          a[static_cast<size_t>(k)] = v / std::sqrt(m + o.eps) + rec;
        } else {
          a[static_cast<size_t>(k)] = v + rec;
        }
      }
      for (int64_t j = 0; j < H; ++j) {
        const double i = sigmoid(a[j]), f = sigmoid(a[H + j]), g = std::tanh(a[2 * H + j]),
                     og = sigmoid(a[3 * H + j]);
        const double c = f * sp[H + j] + i * g;
        sc[H + j] = c;
        sc[j] = og * std::tanh(c);
      }
    }
    std::copy(cur.begin(), cur.end(), out.begin() + t * B * S);
    prev = cur;
  }
  return out;
}

// Runs Recurrent<MLstm> forward over the whole sequence (one call, so t counts from 0 to
// T-1) and compares h at every step and the whole final state with reference_lstm.
void expect_forward_matches_reference(nn::MomentumOptions o, const std::vector<double>& coef,
                                      bool adam) {
  const int64_t T = static_cast<int64_t>(coef.size()), B = 2, I = 3, H = 3;
  core::ParamStoreT<double> ps;
  nn::Recurrent<MLstm> rnn(MLstm(ps, "m", I, H, o), 0, 1.0);
  ps.finalize(0);
  core::Rng rng(42);
  rnn.init(rng);
  const int64_t S = rnn.state_size();
  ASSERT_EQ(S, adam ? 10 * H : 6 * H);
  DTensor x(Shape{T, B, I}), s0(Shape{B, S}), y(Shape{T, B, H});
  gradcheck::fill_normal(rng, x);
  gradcheck::fill_normal(rng, s0, 0.5);
  if (adam)
    for (int64_t r = 0; r < B; ++r)
      for (int64_t k = 0; k < 4 * H; ++k) s0[r * S + 6 * H + k] = std::abs(s0[r * S + 6 * H + k]);
  rnn.forward(x.cview(), s0.cview(), y.view());
  const auto ref = reference_lstm(rnn.cell(), coef, adam, x, s0);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t r = 0; r < B; ++r)
      for (int64_t j = 0; j < H; ++j)
        EXPECT_NEAR(y[(t * B + r) * H + j], ref[static_cast<size_t>((t * B + r) * S + j)], 1e-12)
            << o.kind << " h at t=" << t;
  const auto fin = rnn.final_state();
  for (int64_t i = 0; i < B * S; ++i)
    EXPECT_NEAR(fin.data[i], ref[static_cast<size_t>((T - 1) * B * S + i)], 1e-12)
        << o.kind << " final state entry " << i;
  for (int64_t t = 0; t < T; ++t)
    EXPECT_DOUBLE_EQ(rnn.cell().v_coefficient(t), coef[static_cast<size_t>(t)]) << "t=" << t;
}

}  // namespace

// ----------------------------------------------------------------------------------------
// Gradients

TEST(MomentumLstmGrad, MomentumMatchesFiniteDifferences) {
  cellcheck::expect_gradients<MLstm>(make_lstm(1, 1, opts("momentum")), 1, 1, 3);
  cellcheck::expect_gradients<MLstm>(make_lstm(3, 4, opts("momentum")), 5, 2, 17);
  cellcheck::expect_gradients<MLstm>(make_lstm(2, 3, opts("momentum", 0.9, 1.0)), 6, 3, 29);
}

TEST(MomentumLstmGrad, NesterovRestartMatchesFiniteDifferences) {
  for (int64_t restart : {2, 3, 0})
    cellcheck::expect_gradients<MLstm>(
        make_lstm(3, 3, opts("nesterov_restart", 0.0, 0.6, 0.1, 1e-16, restart)), 7, 2,
        100 + static_cast<uint64_t>(restart));
}

// The generic check draws m_0 from N(0, 0.5^2); ε = 0.5 keeps m_t + ε > 0 for any
// |m_0| < ε / β = 5 (10 sigma), since m_1 >= β m_0.
TEST(MomentumLstmGrad, AdamMatchesFiniteDifferences) {
  cellcheck::expect_gradients<MLstm>(make_lstm(3, 3, opts("adam", 0.6, 0.6, 0.1, 0.5)), 5, 2, 7);
  cellcheck::expect_gradients<MLstm>(make_lstm(1, 1, opts("adam", 0.6, 0.6, 0.1, 0.5)), 1, 1, 8);
}

TEST(MomentumLstmGrad, RmsPropMatchesFiniteDifferences) {
  cellcheck::expect_gradients<MLstm>(make_lstm(3, 3, opts("rmsprop", 0.6, 0.6, 0.1, 0.5)), 5, 2, 9);
}

TEST(MomentumLstmGrad, AdamWithPaperEpsilonMatchesFiniteDifferences) {
  expect_adam_gradients_positive_m(opts("adam", 0.6, 0.6, 0.5, 1e-16), 5, 2, 3, 3, 21);
  expect_adam_gradients_positive_m(opts("rmsprop", 0.6, 1.0, 0.5, 1e-16), 5, 2, 2, 2, 22);
}

TEST(MomentumRnnGrad, MatchesFiniteDifferences) {
  cellcheck::expect_gradients<MRnn>(make_rnn(1, 1, opts("momentum")), 1, 1, 5);
  cellcheck::expect_gradients<MRnn>(make_rnn(3, 4, opts("momentum")), 6, 2, 6);
  cellcheck::expect_gradients<MRnn>(make_rnn(2, 3, opts("nesterov_restart", 0, 1.0, 0, 0, 3)), 7, 2,
                                    7);
}

TEST(MomentumTruncated, EqualsChunkwiseFullBptt) {
  cellcheck::expect_truncation_is_chunkwise<MLstm>(make_lstm(3, 4, opts("momentum")), 7, 2, 3, 5);
  cellcheck::expect_truncation_is_chunkwise<MLstm>(
      make_lstm(3, 4, opts("adam", 0.6, 0.6, 0.1, 0.5)), 7, 2, 3, 6);
  cellcheck::expect_truncation_is_chunkwise<MRnn>(make_rnn(3, 4, opts("momentum")), 7, 2, 3, 7);
}

// ----------------------------------------------------------------------------------------
// Forward against the equations

TEST(MomentumLstmForward, MomentumMatchesReference) {
  expect_forward_matches_reference(opts("momentum", 0.6, 0.7), std::vector<double>(5, 0.6), false);
}

TEST(MomentumLstmForward, AdamMatchesReference) {
  expect_forward_matches_reference(opts("adam", 0.6, 0.7, 0.1, 1e-16), std::vector<double>(5, 0.6),
                                   true);
}

TEST(MomentumLstmForward, RmsPropIgnoresMu) {
  // μ = 0.6 is given but RMSPropLSTM forces μ = 0.
  expect_forward_matches_reference(opts("rmsprop", 0.6, 0.7, 0.3, 1e-16),
                                   std::vector<double>(5, 0.0), true);
}

TEST(MomentumLstmForward, NesterovRestartCoefficients) {
  // k = 1, 2, ..., restart, 1, 2, ...; coefficient (k - 1) / (k + 2).
  expect_forward_matches_reference(opts("nesterov_restart", 0.6, 0.7, 0.1, 1e-16, 2),
                                   {0.0, 0.25, 0.0, 0.25, 0.0, 0.25}, false);
  expect_forward_matches_reference(opts("nesterov_restart", 0.6, 0.7, 0.1, 1e-16, 3),
                                   {0.0, 0.25, 0.4, 0.0, 0.25, 0.4, 0.0}, false);
  expect_forward_matches_reference(opts("nesterov_restart", 0.6, 0.7, 0.1, 1e-16, 0),
                                   {0.0, 0.25, 0.4, 0.5, 4.0 / 7.0}, false);
}

// ----------------------------------------------------------------------------------------
// Reductions

TEST(MomentumLstmReduction, MuZeroStepOneIsTheLstm) {
  const int64_t T = 6, B = 3, I = 4, H = 5;
  core::ParamStoreT<double> ps_m, ps_l;
  nn::Recurrent<MLstm> mom(MLstm(ps_m, "m", I, H, opts("momentum", 0.0, 1.0)), 0, 1.0);
  nn::Recurrent<nn::LstmCell<double>> lstm(nn::LstmCell<double>(ps_l, "l", I, H), 0, 1.0);
  ps_m.finalize(0);
  ps_l.finalize(0);
  core::Rng rng(3);
  mom.init(rng);
  auto& mc = mom.cell();
  auto& lc = lstm.cell();
  std::copy_n(mc.w_x().value, I * 4 * H, lc.w_x().value);
  std::copy_n(mc.w_h().value, H * 4 * H, lc.w_h().value);
  for (int64_t k = 0; k < 4 * H; ++k) lc.b().value[k] = mc.b_x().value[k] + mc.b_h().value[k];

  DTensor x(Shape{T, B, I}), s0m(Shape{B, 6 * H}), s0l(Shape{B, 2 * H}), dy(Shape{T, B, H});
  gradcheck::fill_normal(rng, x);
  gradcheck::fill_normal(rng, s0m, 0.5);  // v_0 random too: μ = 0 must ignore it
  gradcheck::fill_normal(rng, dy);
  for (int64_t r = 0; r < B; ++r)
    std::copy_n(s0m.data() + r * 6 * H, 2 * H, s0l.data() + r * 2 * H);

  DTensor ym(Shape{T, B, H}), yl(Shape{T, B, H});
  mom.forward(x.cview(), s0m.cview(), ym.view());
  lstm.forward(x.cview(), s0l.cview(), yl.view());
  for (int64_t i = 0; i < ym.numel(); ++i) EXPECT_NEAR(ym[i], yl[i], 1e-12) << "y " << i;

  DTensor dxm(x.shape()), dxl(x.shape()), ds0m(s0m.shape()), ds0l(s0l.shape());
  ps_m.zero_grad();
  ps_l.zero_grad();
  mom.backward(dy.cview(), dxm.view(), ds0m.view());
  lstm.backward(dy.cview(), dxl.view(), ds0l.view());
  for (int64_t i = 0; i < dxm.numel(); ++i) EXPECT_NEAR(dxm[i], dxl[i], 1e-12) << "dx " << i;
  for (int64_t r = 0; r < B; ++r) {
    for (int64_t j = 0; j < 2 * H; ++j)
      EXPECT_NEAR(ds0m[r * 6 * H + j], ds0l[r * 2 * H + j], 1e-12) << "ds0 (h, c)";
    for (int64_t k = 0; k < 4 * H; ++k) EXPECT_EQ(ds0m[r * 6 * H + 2 * H + k], 0.0) << "ds0 v";
  }
  for (int64_t i = 0; i < I * 4 * H; ++i) EXPECT_NEAR(mc.w_x().grad[i], lc.w_x().grad[i], 1e-12);
  for (int64_t i = 0; i < H * 4 * H; ++i) EXPECT_NEAR(mc.w_h().grad[i], lc.w_h().grad[i], 1e-12);
  for (int64_t k = 0; k < 4 * H; ++k) {
    EXPECT_NEAR(mc.b_x().grad[k], lc.b().grad[k], 1e-12);
    EXPECT_NEAR(mc.b_h().grad[k], lc.b().grad[k], 1e-12);
  }
}

TEST(MomentumRnnReduction, MuZeroStepOneIsThePlainTanhRnn) {
  const int64_t T = 5, B = 2, I = 3, H = 4;
  core::ParamStoreT<double> ps;
  nn::Recurrent<MRnn> rnn(MRnn(ps, "r", I, H, opts("momentum", 0.0, 1.0)), 0, 0.0);
  ps.finalize(0);
  core::Rng rng(8);
  rnn.init(rng);
  const double* wx = rnn.cell().w_x().value;
  const double* wh = rnn.cell().w_h().value;
  const double* bb = rnn.cell().b().value;
  DTensor x(Shape{T, B, I}), s0(Shape{B, 2 * H}), dy(Shape{T, B, H}), y(Shape{T, B, H});
  gradcheck::fill_normal(rng, x);
  gradcheck::fill_normal(rng, s0, 0.5);
  gradcheck::fill_normal(rng, dy);
  rnn.forward(x.cview(), s0.cview(), y.view());

  // Plain RNN: h_t = tanh(x_t w_x + h_{t-1} w_h + b); hs[t + 1] = h_t.
  std::vector<double> hs(static_cast<size_t>((T + 1) * B * H));
  for (int64_t r = 0; r < B; ++r) std::copy_n(s0.data() + r * 2 * H, H, hs.data() + r * H);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t r = 0; r < B; ++r)
      for (int64_t j = 0; j < H; ++j) {
        double a = bb[j];
        for (int64_t q = 0; q < I; ++q) a += x[(t * B + r) * I + q] * wx[q * H + j];
        for (int64_t q = 0; q < H; ++q) a += hs[(t * B + r) * H + q] * wh[q * H + j];
        hs[((t + 1) * B + r) * H + j] = std::tanh(a);
      }
  for (int64_t i = 0; i < y.numel(); ++i) EXPECT_NEAR(y[i], hs[B * H + i], 1e-12) << "y " << i;

  // Its BPTT by hand: da_t = (dy_t + dh_t) (1 - h_t^2), dx_t = da_t w_x^T, dh_{t-1} = da_t w_h^T.
  DTensor dx(x.shape()), ds0(s0.shape());
  ps.zero_grad();
  rnn.backward(dy.cview(), dx.view(), ds0.view());
  std::vector<double> dh(static_cast<size_t>(B * H), 0.0), da(static_cast<size_t>(B * H));
  std::vector<double> dwh(static_cast<size_t>(H * H), 0.0);
  for (int64_t t = T - 1; t >= 0; --t) {
    for (int64_t r = 0; r < B; ++r)
      for (int64_t j = 0; j < H; ++j) {
        const double h = hs[((t + 1) * B + r) * H + j];
        da[r * H + j] = (dy[(t * B + r) * H + j] + dh[r * H + j]) * (1 - h * h);
      }
    for (int64_t r = 0; r < B; ++r) {
      for (int64_t q = 0; q < I; ++q) {
        double s = 0;
        for (int64_t j = 0; j < H; ++j) s += da[r * H + j] * wx[q * H + j];
        EXPECT_NEAR(dx[(t * B + r) * I + q], s, 1e-12) << "dx t=" << t;
      }
      for (int64_t q = 0; q < H; ++q) {
        double s = 0;
        for (int64_t j = 0; j < H; ++j) {
          s += da[r * H + j] * wh[q * H + j];
          dwh[q * H + j] += hs[(t * B + r) * H + q] * da[r * H + j];
        }
        dh[r * H + q] = s;
      }
    }
  }
  for (int64_t r = 0; r < B; ++r)
    for (int64_t j = 0; j < H; ++j) {
      EXPECT_NEAR(ds0[r * 2 * H + j], dh[r * H + j], 1e-12) << "ds0 h";
      EXPECT_EQ(ds0[r * 2 * H + H + j], 0.0) << "ds0 v (μ = 0)";
    }
  for (int64_t i = 0; i < H * H; ++i) EXPECT_NEAR(rnn.cell().w_h().grad[i], dwh[i], 1e-12);
}

TEST(MomentumRnnForward, MomentumMatchesReference) {
  const int64_t T = 4, B = 2, I = 2, H = 3;
  const double mu = 0.6, s = 0.7;
  core::ParamStoreT<double> ps;
  nn::Recurrent<MRnn> rnn(MRnn(ps, "r", I, H, opts("momentum", mu, s)), 0, 0.0);
  ps.finalize(0);
  core::Rng rng(12);
  rnn.init(rng);
  auto& c = rnn.cell();
  DTensor x(Shape{T, B, I}), s0(Shape{B, 2 * H}), y(Shape{T, B, H});
  gradcheck::fill_normal(rng, x);
  gradcheck::fill_normal(rng, s0, 0.5);
  rnn.forward(x.cview(), s0.cview(), y.view());
  std::vector<double> st(s0.data(), s0.data() + B * 2 * H), nx(st.size());
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t r = 0; r < B; ++r)
      for (int64_t j = 0; j < H; ++j) {
        double wx = 0, rec = c.b().value[j];
        for (int64_t q = 0; q < I; ++q) wx += x[(t * B + r) * I + q] * c.w_x().value[q * H + j];
        for (int64_t q = 0; q < H; ++q) rec += st[r * 2 * H + q] * c.w_h().value[q * H + j];
        const double v = mu * st[r * 2 * H + H + j] + s * wx;
        nx[r * 2 * H + H + j] = v;
        nx[r * 2 * H + j] = std::tanh(rec + v);
      }
    st = nx;
    for (int64_t r = 0; r < B; ++r)
      for (int64_t j = 0; j < H; ++j)
        EXPECT_NEAR(y[(t * B + r) * H + j], st[r * 2 * H + j], 1e-12) << "t=" << t;
  }
  for (int64_t i = 0; i < B * 2 * H; ++i) EXPECT_NEAR(rnn.final_state().data[i], st[i], 1e-12);
}

// ----------------------------------------------------------------------------------------
// Initialisation

TEST(MomentumInit, DefaultIsPyTorchUniformWithForgetBiasOnBh) {
  const int64_t I = 3, H = 4;
  core::ParamStoreT<double> ps;
  MLstm c(ps, "m", I, H, opts("adam"));
  ps.finalize(0);
  core::Rng rng(1);
  c.init(rng, 2.0);
  const double a = 0.5;  // 1/sqrt(H)
  for (auto* p : {&c.w_x(), &c.w_h(), &c.b_x()})
    for (int64_t i = 0; i < p->numel(); ++i) EXPECT_LE(std::abs(p->value[i]), a) << p->name;
  for (int64_t k = 0; k < 4 * H; ++k) {
    const double shift = (k >= H && k < 2 * H) ? 2.0 : 0.0;
    EXPECT_LE(std::abs(c.b_h().value[k] - shift), a) << "b_h " << k;
  }
}

TEST(MomentumInit, PaperInitIsOrthogonalInputEyeRecurrentAndForgetBiasInBoth) {
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{3, 4}, {10, 2}};
  for (auto [I, H] : shapes) {
    const int64_t G = 4 * H;
    core::ParamStoreT<double> ps;
    MLstm c(ps, "m", I, H, opts("momentum"));
    ps.finalize(0);
    core::Rng rng(2);
    c.init(rng, 1.5);
    c.init_momentum_paper(rng, 1.5);
    const double* w = c.w_x().value;  // (I, G)
    // The smaller side is orthonormal: rows when I <= G, columns otherwise.
    const bool rows = I <= G;
    const int64_t n = rows ? I : G, len = rows ? G : I;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = 0; q < n; ++q) {
        double d = 0;
        for (int64_t k = 0; k < len; ++k)
          d += rows ? w[p * G + k] * w[q * G + k] : w[k * G + p] * w[k * G + q];
        EXPECT_NEAR(d, p == q ? 1.0 : 0.0, 1e-10) << "I=" << I << " H=" << H;
      }
    for (int64_t j = 0; j < H; ++j)
      for (int64_t k = 0; k < G; ++k)
        EXPECT_EQ(c.w_h().value[j * G + k], k == j ? 1.0 : 0.0) << "w_h " << j << "," << k;
    for (int64_t k = 0; k < G; ++k) {
      const double want = (k >= H && k < 2 * H) ? 1.5 : 0.0;
      EXPECT_EQ(c.b_x().value[k], want);
      EXPECT_EQ(c.b_h().value[k], want);
    }
  }
  core::ParamStoreT<double> ps;
  MRnn r(ps, "r", 3, 4, opts("momentum"));
  ps.finalize(0);
  core::Rng rng(4);
  r.init(rng);
  r.init_momentum_paper(rng);
  for (int64_t p = 0; p < 3; ++p)
    for (int64_t q = 0; q < 3; ++q) {
      double d = 0;
      for (int64_t k = 0; k < 4; ++k) d += r.w_x().value[p * 4 + k] * r.w_x().value[q * 4 + k];
      EXPECT_NEAR(d, p == q ? 1.0 : 0.0, 1e-10);
    }
  for (int64_t j = 0; j < 4; ++j) {
    EXPECT_EQ(r.b().value[j], 0.0);
    for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(r.w_h().value[j * 4 + k], j == k ? 1.0 : 0.0);
  }
}

// ----------------------------------------------------------------------------------------
// Options and sizes

TEST(MomentumCellOptions, BadOptionsAreUsageErrors) {
  core::ParamStoreT<double> ps;
  EXPECT_THROW(MLstm(ps, "a", 2, 2, opts("heavy_ball")), core::UsageError);
  EXPECT_THROW(MLstm(ps, "b", 2, 2, opts("adam", 0.6, 0.6, 1.0)), core::UsageError);
  EXPECT_THROW(MLstm(ps, "c", 2, 2, opts("rmsprop", 0.6, 0.6, 0.1, 0.0)), core::UsageError);
  EXPECT_THROW(MLstm(ps, "d", 2, 2, opts("nesterov_restart", 0.6, 0.6, 0.1, 1e-16, -1)),
               core::UsageError);
  EXPECT_THROW(MRnn(ps, "e", 2, 2, opts("adam")), core::UsageError);
  try {
    MLstm(ps, "layer0", 2, 2, opts("nesterov"));
    FAIL() << "no throw";
  } catch (const core::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("layer0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("nesterov_restart"), std::string::npos) << e.what();
  }
}

TEST(MomentumCellOptions, SizesAndParameterNames) {
  core::ParamStoreT<double> ps;
  MLstm m(ps, "enc.0", 3, 5, opts("momentum"));
  MLstm a(ps, "enc.1", 3, 5, opts("adam"));
  MRnn r(ps, "enc.2", 3, 5, opts("momentum"));
  EXPECT_EQ(m.state_size(), 30);
  EXPECT_EQ(m.cache_size(), 25);
  EXPECT_EQ(a.state_size(), 50);
  EXPECT_EQ(a.cache_size(), 65);
  EXPECT_EQ(m.proj_size(), 20);
  EXPECT_EQ(r.state_size(), 10);
  EXPECT_EQ(r.proj_size(), 5);
  EXPECT_EQ(ps.get("enc.0.w_x").shape, (Shape{3, 20}));
  EXPECT_EQ(ps.get("enc.0.w_h").shape, (Shape{5, 20}));
  EXPECT_EQ(ps.get("enc.0.b_x").shape, (Shape{20}));
  EXPECT_EQ(ps.get("enc.0.b_h").shape, (Shape{20}));
  EXPECT_EQ(ps.get("enc.2.w_x").shape, (Shape{3, 5}));
  EXPECT_EQ(ps.get("enc.2.w_h").shape, (Shape{5, 5}));
  EXPECT_EQ(ps.get("enc.2.b").shape, (Shape{5}));
}

// The float instantiation computes what the double one does (same seed, same init).
TEST(MomentumFloat, MatchesDouble) {
  const int64_t T = 6, B = 2, I = 3, H = 4;
  for (const char* kind : {"momentum", "adam", "nesterov_restart"}) {
    core::ParamStoreT<double> psd;
    core::ParamStoreT<float> psf;
    nn::Recurrent<MLstm> d(MLstm(psd, "m", I, H, opts(kind)), 0, 1.0);
    nn::Recurrent<nn::MomentumLstmCell<float>> f(
        nn::MomentumLstmCell<float>(psf, "m", I, H, opts(kind)), 0, 1.0);
    psd.finalize(0);
    psf.finalize(0);
    core::Rng r1(5), r2(5);
    d.cell().init_momentum_paper(r1, 1.0);
    f.cell().init_momentum_paper(r2, 1.0);
    DTensor xd(Shape{T, B, I}), yd(Shape{T, B, H}), dyd(Shape{T, B, H}), dxd(xd.shape());
    core::Rng r3(6);
    gradcheck::fill_normal(r3, xd);
    gradcheck::fill_normal(r3, dyd);
    core::Tensor xf(xd.shape()), yf(yd.shape()), dyf(dyd.shape()), dxf(xd.shape());
    for (int64_t i = 0; i < xd.numel(); ++i) xf[i] = static_cast<float>(xd[i]);
    for (int64_t i = 0; i < dyd.numel(); ++i) dyf[i] = static_cast<float>(dyd[i]);
    d.forward(xd.cview(), core::ViewT<const double>(), yd.view());
    f.forward(xf.cview(), core::ViewT<const float>(), yf.view());
    for (int64_t i = 0; i < yd.numel(); ++i) EXPECT_NEAR(yf[i], yd[i], 1e-4) << kind << " y";
    d.backward(dyd.cview(), dxd.view(), core::ViewT<double>());
    f.backward(dyf.cview(), dxf.view(), core::ViewT<float>());
    for (int64_t i = 0; i < dxd.numel(); ++i)
      EXPECT_NEAR(dxf[i], dxd[i], 1e-3 * (1 + std::abs(dxd[i]))) << kind << " dx";
  }
}
