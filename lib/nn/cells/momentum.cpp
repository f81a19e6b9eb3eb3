#include "nn/cells/momentum.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "backend/gemm.hpp"
#include "nn/parallel.hpp"
#include "nn/fast_math.hpp"
#include "nn/cells/input_projection.hpp"
#include "nn/cells/lstm_gates.hpp"
#include "config/check.hpp"
#include "core/check.hpp"
#include "nn/init.hpp"

namespace seqbench::nn {

using backend::Trans;

namespace {

// The coefficient of v_{t-1} for the scheduled-restart (Nesterov) kinds: k runs
// 1, 2, ..., restart, 1, 2, ... over the 0-based steps t of one forward call, as the
// official code's iter_indx (incremented before each step, zeroed after k == restart).
double nesterov_coefficient(int64_t t, int64_t restart) {
  const int64_t k = restart > 0 ? t % restart + 1 : t + 1;
  return static_cast<double>(k - 1) / static_cast<double>(k + 2);
}


// w (rows, cols) = the transpose of torch.nn.init.orthogonal_ applied to a (cols, rows)
// weight, as PyTorch stores x2h.weight (out, in) and we store w_x (in, out).
template <class T>
void orthogonal_transposed(core::Rng& rng, T* w, int64_t rows, int64_t cols) {
  std::vector<T> tmp(static_cast<size_t>(rows * cols));
  orthogonal<T>(rng, tmp.data(), cols, rows);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) w[i * cols + j] = tmp[j * rows + i];
}

template <class T>
void fill_uniform(core::Rng& rng, core::ParamT<T>& p, double a) {
  for (int64_t i = 0; i < p.numel(); ++i) p.value[i] = static_cast<T>(rng.uniform(-a, a));
}

template <class T>
void fill_zero(core::ParamT<T>& p) {
  std::fill_n(p.value, p.numel(), T(0));
}

}  // namespace

MomentumKind parse_momentum_kind(const std::string& kind, const std::string& where) {
  if (kind == "momentum") return MomentumKind::Momentum;
  if (kind == "adam") return MomentumKind::Adam;
  if (kind == "rmsprop") return MomentumKind::RmsProp;
  if (kind == "nesterov_restart") return MomentumKind::NesterovRestart;
  throw core::UsageError(fmt::format(
      "{}: unknown momentum kind '{}' (valid: momentum, adam, rmsprop, nesterov_restart)", where,
      kind));
}

namespace {
// Parses and validates before the cell declares its parameters, so a rejected config
// leaves nothing behind in the ParamStore.
MomentumKind checked_kind(const MomentumOptions& opt, const std::string& name, bool rnn) {
  const MomentumKind kind = parse_momentum_kind(opt.kind, name);
  if (rnn && kind != MomentumKind::Momentum && kind != MomentumKind::NesterovRestart)
    throw core::UsageError(fmt::format(
        "{}: the momentum RNN cell takes kind momentum or nesterov_restart, got '{}' (hint: "
        "adam and rmsprop exist for the LSTM cell)",
        name, opt.kind));
  // Fields this kind does not read are not checked (a momentum cell may carry eps = 0).
  MomentumOptions read = opt;
  const MomentumOptions defaults;
  if (kind != MomentumKind::Adam && kind != MomentumKind::RmsProp) {
    read.beta = defaults.beta;
    read.eps = defaults.eps;
  }
  if (kind != MomentumKind::NesterovRestart) read.restart = defaults.restart;
  config::check(read, name + " momentum");
  return kind;
}
}  // namespace

// ---------------------------------------------------------------------------------------
// MomentumLstmCell

template <class T>
MomentumLstmCell<T>::MomentumLstmCell(core::ParamStoreT<T>& ps, const std::string& name,
                                      int64_t input, int64_t hidden, MomentumOptions opt)
    : in_(input),
      h_(hidden),
      opt_(std::move(opt)),
      kind_(checked_kind(opt_, name, false)),
      w_x_(&ps.add(name + ".w_x", core::Shape{input, 4 * hidden})),
      w_h_(&ps.add(name + ".w_h", core::Shape{hidden, 4 * hidden})),
      b_x_(&ps.add(name + ".b_x", core::Shape{4 * hidden})),
      b_h_(&ps.add(name + ".b_h", core::Shape{4 * hidden})) {
  SB_CHECK(input > 0 && hidden > 0, "{}: sizes must be positive, got input={} hidden={}", name,
           input, hidden);
  if (kind_ == MomentumKind::RmsProp) opt_.mu = 0.0;  // RMSPropLSTM = AdamLSTM with μ = 0
}

template <class T>
double MomentumLstmCell<T>::v_coefficient(int64_t t) const {
  return kind_ == MomentumKind::NesterovRestart ? nesterov_coefficient(t, opt_.restart) : opt_.mu;
}

template <class T>
void MomentumLstmCell<T>::init(core::Rng& rng, double forget_bias) {
  const double a = 1.0 / std::sqrt(static_cast<double>(h_));
  for (auto* p : {w_x_, w_h_, b_x_, b_h_}) fill_uniform(rng, *p, a);
  for (int64_t j = 0; j < h_; ++j) b_h_->value[h_ + j] += static_cast<T>(forget_bias);
}

template <class T>
void MomentumLstmCell<T>::init_momentum_paper(core::Rng& rng, double forget_bias) {
  const int64_t H = h_, G = 4 * H;
  orthogonal_transposed(rng, w_x_->value, in_, G);
  fill_zero(*w_h_);
  for (int64_t j = 0; j < H; ++j) w_h_->value[j * G + j] = T(1);  // eye_(4H, H)^T: i block
  fill_zero(*b_x_);
  fill_zero(*b_h_);
  for (int64_t j = 0; j < H; ++j) {
    b_x_->value[H + j] = static_cast<T>(forget_bias);
    b_h_->value[H + j] = static_cast<T>(forget_bias);
  }
}

template <class T>
void MomentumLstmCell<T>::input_forward(int64_t n, const T* x, T* xp) const {
  project_input(n, in_, 4 * h_, x, w_x_->value, b_x_->value, xp);
}

template <class T>
void MomentumLstmCell<T>::input_backward(int64_t n, const T* x, const T* dxp, T* dx) {
  project_input_backward(n, in_, 4 * h_, x, w_x_->value, dxp, dx, w_x_->grad, b_x_->grad);
}

template <class T>
void MomentumLstmCell<T>::step_forward(int64_t t, int64_t b, const T* xp, const T* s_prev, T* s,
                                       T* cache) const {
  const int64_t H = h_, G = 4 * H, S = state_size(), C = cache_size();
  const T coef = static_cast<T>(v_coefficient(t));
  const T step = static_cast<T>(opt_.s);
  const T beta = static_cast<T>(opt_.beta), eps = static_cast<T>(opt_.eps);
  const bool adam = adaptive();
  const T* bh = b_h_->value;
  const LstmBlocks blocks(b);  // row blocks: the fused step (lstm_gates.hpp)
  for (int64_t r0 = 0; r0 < b; r0 += blocks.rows) {
    const int64_t r1 = std::min(b, r0 + blocks.rows);
    // Recurrent term straight into the cache's gate slots: cache[:, :4H] = h_prev w_h.
    blocks.gemm<T>(r1 - r0, G, H, s_prev + r0 * S, S, w_h_->value, G, cache + r0 * C, C);
    for (int64_t r = r0; r < r1; ++r) {
      T* a = cache + r * C;
      T* tc = a + G;
      const T* p = xp + r * G;
      const T* c_prev = s_prev + r * S + H;
      const T* v_prev = c_prev + H;
      T* h = s + r * S;
      T* c = h + H;
      T* v = c + H;
      if (adam) {
        const T* m_prev = v_prev + G;
        T* m = v + G;
        T* pc = tc + H;    // p_t, kept for backward (dxp overwrites xp there)
        T* root = pc + G;  // sqrt(m_t + ε)
#pragma omp simd
        for (int64_t k = 0; k < G; ++k) {
          const T vk = coef * v_prev[k] + step * p[k];
          const T mk = beta * m_prev[k] + (T(1) - beta) * p[k] * p[k];
          const T rk = std::sqrt(mk + eps);
          v[k] = vk;
          m[k] = mk;
          pc[k] = p[k];
          root[k] = rk;
          a[k] += vk / rk + bh[k];
        }
      } else {
#pragma omp simd
        for (int64_t k = 0; k < G; ++k) {
          const T vk = coef * v_prev[k] + step * p[k];
          v[k] = vk;
          a[k] += vk + bh[k];
        }
      }
      lstm_gates_forward(H, a, c_prev, c, tc, h);
    }
  }
}

template <class T>
void MomentumLstmCell<T>::step_backward(int64_t t, int64_t b, const T* s_prev, T* cache,
                                        const T* ds, T* dxp, T* ds_prev) const {
  const int64_t H = h_, G = 4 * H, S = state_size(), C = cache_size();
  const T coef = static_cast<T>(v_coefficient(t));
  const T step = static_cast<T>(opt_.s);
  const T beta = static_cast<T>(opt_.beta);
  const bool adam = adaptive();
  const LstmBlocks blocks(b);  // row blocks: the fused step (lstm_gates.hpp)
  for (int64_t r0 = 0; r0 < b; r0 += blocks.rows) {
    const int64_t r1 = std::min(b, r0 + blocks.rows);
    for (int64_t r = r0; r < r1; ++r) {
      T* a = cache + r * C;  // gates in, dL/da out
      const T* tc = a + G;
      const T* c_prev = s_prev + r * S + H;
      const T* v_prev = c_prev + H;
      const T* dh = ds + r * S;
      const T* dc = dh + H;
      const T* dv_next = dc + H;  // dL/dv_t through later steps
      T* dp = dxp + r * G;
      T* dc_prev = ds_prev + r * S + H;
      T* dv_prev = dc_prev + H;
      lstm_gates_backward(H, a, tc, c_prev, dh, dc, a, dc_prev);  // dL/da over the gates
      if (adam) {
        const T* pc = tc + H;
        const T* root = pc + G;
        const T* dm_next = dv_next + G;
        T* dm_prev = dv_prev + G;
#pragma omp simd
        for (int64_t k = 0; k < G; ++k) {
          // a = v / r + ..., r = sqrt(m + ε): recompute v_t exactly as forward did.
          const T vk = coef * v_prev[k] + step * pc[k];
          const T rk = root[k];
          const T dv = a[k] / rk + dv_next[k];
          const T dm = -a[k] * vk / (T(2) * rk * rk * rk) + dm_next[k];
          dp[k] = step * dv + T(2) * (T(1) - beta) * pc[k] * dm;
          dv_prev[k] = coef * dv;
          dm_prev[k] = beta * dm;
        }
      } else {
#pragma omp simd
        for (int64_t k = 0; k < G; ++k) {
          const T dv = a[k] + dv_next[k];
          dp[k] = step * dv;
          dv_prev[k] = coef * dv;
        }
      }
    }
    // dh_prev = dA w_h^T into the h part of ds_prev (row stride S); dA sits in the cache.
    blocks.gemm<T>(r1 - r0, H, G, cache + r0 * C, C, w_h_t_.data(), H, ds_prev + r0 * S, S);
  }
}

template <class T>
void MomentumLstmCell<T>::recurrent_weight_backward(int64_t n, const T* s_prev, const T* /*dxp*/,
                                                    const T* cache) {
  const int64_t H = h_, G = 4 * H, S = state_size(), C = cache_size();
  backend::gemm<T>(Trans::T, Trans::N, H, G, n, T(1), s_prev, S, cache, C, T(1), w_h_->grad, G);
  add_column_sums(n, G, cache, C, b_h_->grad);
}

// ---------------------------------------------------------------------------------------
// MomentumRnnCell

template <class T>
MomentumRnnCell<T>::MomentumRnnCell(core::ParamStoreT<T>& ps, const std::string& name,
                                    int64_t input, int64_t hidden, MomentumOptions opt)
    : in_(input),
      h_(hidden),
      opt_(std::move(opt)),
      kind_(checked_kind(opt_, name, true)),
      w_x_(&ps.add(name + ".w_x", core::Shape{input, hidden})),
      w_h_(&ps.add(name + ".w_h", core::Shape{hidden, hidden})),
      b_(&ps.add(name + ".b", core::Shape{hidden})) {
  SB_CHECK(input > 0 && hidden > 0, "{}: sizes must be positive, got input={} hidden={}", name,
           input, hidden);
}

template <class T>
double MomentumRnnCell<T>::v_coefficient(int64_t t) const {
  return kind_ == MomentumKind::NesterovRestart ? nesterov_coefficient(t, opt_.restart) : opt_.mu;
}

template <class T>
void MomentumRnnCell<T>::init(core::Rng& rng, double /*forget_bias*/) {
  const double a = 1.0 / std::sqrt(static_cast<double>(h_));
  for (auto* p : {w_x_, w_h_, b_}) fill_uniform(rng, *p, a);
}

template <class T>
void MomentumRnnCell<T>::init_momentum_paper(core::Rng& rng, double /*forget_bias*/) {
  orthogonal_transposed(rng, w_x_->value, in_, h_);
  identity<T>(w_h_->value, h_);
  fill_zero(*b_);
}

template <class T>
void MomentumRnnCell<T>::input_forward(int64_t n, const T* x, T* xp) const {
  project_input<T>(n, in_, h_, x, w_x_->value, nullptr, xp);
}

template <class T>
void MomentumRnnCell<T>::input_backward(int64_t n, const T* x, const T* dxp, T* dx) {
  project_input_backward<T>(n, in_, h_, x, w_x_->value, dxp, dx, w_x_->grad, nullptr);
}

template <class T>
void MomentumRnnCell<T>::step_forward(int64_t t, int64_t b, const T* xp, const T* s_prev, T* s,
                                      T* cache) const {
  const int64_t H = h_, S = 2 * H;
  const T coef = static_cast<T>(v_coefficient(t));
  const T step = static_cast<T>(opt_.s);
  const T* bias = b_->value;
  backend::gemm<T>(Trans::N, Trans::N, b, H, H, T(1), s_prev, S, w_h_->value, H, T(0), cache, H);
  for (int64_t r = 0; r < b; ++r) {
    T* a = cache + r * H;
    const T* v_prev = s_prev + r * S + H;
    const T* p = xp + r * H;
    T* h = s + r * S;
    T* v = h + H;
    for (int64_t j = 0; j < H; ++j) {
      const T vj = coef * v_prev[j] + step * p[j];
      const T hj = fast_tanh(a[j] + vj + bias[j]);
      v[j] = vj;
      h[j] = hj;
      a[j] = hj;
    }
  }
}

template <class T>
void MomentumRnnCell<T>::step_backward(int64_t t, int64_t b, const T* /*s_prev*/, T* cache,
                                       const T* ds, T* dxp, T* ds_prev) const {
  const int64_t H = h_, S = 2 * H;
  const T coef = static_cast<T>(v_coefficient(t));
  const T step = static_cast<T>(opt_.s);
  for (int64_t r = 0; r < b; ++r) {
    T* a = cache + r * H;  // h_t in, dL/da out
    const T* dh = ds + r * S;
    const T* dv_next = dh + H;
    T* dp = dxp + r * H;
    T* dv_prev = ds_prev + r * S + H;
    for (int64_t j = 0; j < H; ++j) {
      const T da = dh[j] * (T(1) - a[j] * a[j]);
      const T dv = da + dv_next[j];
      a[j] = da;
      dp[j] = step * dv;
      dv_prev[j] = coef * dv;
    }
  }
  backend::gemm<T>(Trans::N, Trans::N, b, H, H, T(1), cache, H, w_h_t_.data(), H, T(0), ds_prev, S);
}

template <class T>
void MomentumRnnCell<T>::recurrent_weight_backward(int64_t n, const T* s_prev, const T* /*dxp*/,
                                                   const T* cache) {
  const int64_t H = h_, S = 2 * H;
  backend::gemm<T>(Trans::T, Trans::N, H, H, n, T(1), s_prev, S, cache, H, T(1), w_h_->grad, H);
  add_column_sums(n, H, cache, H, b_->grad);
}

template class MomentumLstmCell<float>;
template class MomentumLstmCell<double>;
template class MomentumRnnCell<float>;
template class MomentumRnnCell<double>;

}  // namespace seqbench::nn
