#include "nn/mixers/slstm.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "backend/gemm.hpp"
#include "core/buffer.hpp"
#include "core/check.hpp"
#include "nn/fast_math.hpp"
#include "nn/mixers/mixer_math.hpp"
#include "nn/simd.hpp"

namespace seqbench::nn {

using backend::gemm;
using backend::Trans;
using mixer_math::heads_width;
using mixer_math::log_sigmoid;

template <class T>
SlstmMixer<T>::SlstmMixer(const MixerConfig& cfg, core::ParamStoreT<T>& ps, const std::string& name,
                          int64_t input, int64_t output)
    : o_(output),
      h_(cfg.heads),
      d_(heads_width(cfg, output)),
      w_(ps, name + ".w", input, 4 * output, true),
      r_(&ps.add(name + ".r", core::Shape{4 * output, output / cfg.heads})) {}

template <class T>
void SlstmMixer<T>::init(core::Rng& rng) {
  const int64_t O = o_, H = h_, d = d_;
  w_.init(rng);
  T* b = w_.b()->value;
  std::fill_n(b, 4 * O, T(0));
  for (int64_t h = 0; h < H; ++h)
    std::fill_n(b + O + h * d, d, T(H == 1 ? 3.0 : 3.0 + 3.0 * double(h) / double(H - 1)));
  const double br = 1.0 / std::sqrt(double(d));
  for (int64_t i = 0; i < r_->numel(); ++i) r_->value[i] = T(rng.uniform(-br, br));
}

template <class T>
size_t SlstmMixer<T>::estimate_bytes(int64_t B, int64_t N) const {
  const int64_t O = o_, BN = B * N;
  return size_t(BN * 4 * O + 4 * BN * O + B * 4 * O + BN * 4 * O + B * 3 * O) * sizeof(T);
}

template <class T>
size_t SlstmMixer<T>::held_bytes() const {
  size_t n = core::bytes_of(step_buf_);
  for (const auto* t : {&pre_, &c_, &nrm_, &m_, &hp_, &final_, &dpre_, &carry_})
    n += core::bytes_of(*t);
  return n;
}

template <class T>
void SlstmMixer<T>::transpose_r(std::vector<T>& rt) const {
  const int64_t O = o_, H = h_, d = d_;
  const T* R = r_->value;
  core::grow(rt, 4 * O * d);
  for (int64_t g = 0; g < 4; ++g)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < d; ++i)
        for (int64_t j = 0; j < d; ++j)
          rt[size_t(((g * H + h) * d + j) * d + i)] = R[(g * O + h * d + i) * d + j];
}

template <class T>
void SlstmMixer<T>::cell(const T* rt, T* acc, T* pre, const T* hprev, const T* cprev,
                         const T* nprev, const T* mprev, T* c, T* n, T* m, T* h) const {
  const int64_t O = o_, H = h_, d = d_;
  // pre += R h_prev, block-diagonal per head: each unit's sum over j in order, as a vector
  // over the head's units (rt holds each block transposed).
  if (hprev)
    for (int64_t g = 0; g < 4; ++g)
      for (int64_t hd = 0; hd < H; ++hd) {
        std::fill_n(acc, d, T(0));
        add_rows(d, d, rt + (g * H + hd) * d * d, d, hprev + hd * d, acc);
        T* pg = pre + g * O + hd * d;
#pragma omp simd
        for (int64_t i = 0; i < d; ++i) pg[i] += acc[i];
      }
  // Units are independent (c, n, m may be cprev's, nprev's, mprev's memory: each unit
  // reads its own before writing it).
#pragma omp simd
  for (int64_t u = 0; u < O; ++u) {
    const T ig = pre[u], lf = log_sigmoid(pre[O + u]);
    const T z = fast_tanh(pre[2 * O + u]), o = sigmoid(pre[3 * O + u]);
    const T mp = mprev ? mprev[u] : T(0), cp = cprev ? cprev[u] : T(0),
            np = nprev ? nprev[u] : T(0);
    // From an empty normaliser (the zero state) m = ĩ, as the official code: i' = 1 then,
    // where max(log f, ĩ) could leave i' = exp(ĩ - log f) = 0 in float and h = 0 / 0. f' may
    // then overflow, so an empty c' or n' contributes 0 without being multiplied by it.
    const T mn = np == T(0) ? ig : std::max(lf + mp, ig);
    const T fs = fast_exp(lf + mp - mn), is = fast_exp(ig - mn);
    c[u] = (cp == T(0) ? T(0) : fs * cp) + is * z;
    n[u] = (np == T(0) ? T(0) : fs * np) + is;
    m[u] = mn;
    h[u] = o * c[u] / n[u];
  }
}

template <class T>
void SlstmMixer<T>::forward(core::ViewT<const T> x, core::ViewT<const T> s0, core::ViewT<T> y) {
  const int64_t B = x.dim(0), N = x.dim(1), I = input_size(), O = o_, S = state_size();
  const int64_t BN = B * N;
  core::check_shape(x, core::Shape{B, N, I}, "Slstm.forward x");
  core::check_shape(y, core::Shape{B, N, O}, "Slstm.forward y");
  if (s0.data) core::check_shape(s0, core::Shape{B, S}, "Slstm.forward s0");
  SB_CHECK(N > 0, "Slstm.forward: no tokens (N = 0)");
  x_ = x;
  s0_ = s0.data;
  b_ = B;
  n_ = N;
  core::ensure_shape(pre_, core::Shape{BN, 4 * O});
  for (auto* t : {&c_, &nrm_, &m_, &hp_}) core::ensure_shape(*t, core::Shape{BN, O});
  core::ensure_shape(final_, core::Shape{B, S});
  w_.forward(x.reshape(core::Shape{BN, I}), pre_.view());

  transpose_r(rt_);
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < B; ++b) {
    const T* st = s0.data ? s0.data + b * S : nullptr;
    std::vector<T> acc(static_cast<size_t>(d_));
    for (int64_t t = 0; t < N; ++t) {
      const int64_t r = b * N + t;
      T* hp = hp_.data() + r * O;
      if (t > 0)
        std::copy_n(y.data + (r - 1) * O, O, hp);
      else if (st)
        std::copy_n(st, O, hp);
      else
        std::fill_n(hp, O, T(0));
      const T* cp = t > 0 ? c_.data() + (r - 1) * O : (st ? st + O : nullptr);
      const T* np = t > 0 ? nrm_.data() + (r - 1) * O : (st ? st + 2 * O : nullptr);
      const T* mp = t > 0 ? m_.data() + (r - 1) * O : (st ? st + 3 * O : nullptr);
      cell(rt_.data(), acc.data(), pre_.data() + r * 4 * O, hp, cp, np, mp, c_.data() + r * O,
           nrm_.data() + r * O, m_.data() + r * O, y.data + r * O);
    }
    const int64_t r = b * N + N - 1;
    T* fin = final_.data() + b * S;
    std::copy_n(y.data + r * O, O, fin);
    std::copy_n(c_.data() + r * O, O, fin + O);
    std::copy_n(nrm_.data() + r * O, O, fin + 2 * O);
    std::copy_n(m_.data() + r * O, O, fin + 3 * O);
  }
}

template <class T>
void SlstmMixer<T>::backward(core::ViewT<const T> dy, core::ViewT<T> dx, core::ViewT<T> ds0) {
  const int64_t B = b_, N = n_, I = input_size(), O = o_, S = state_size(), d = d_, H = h_;
  const int64_t BN = B * N;
  core::check_shape(dy, core::Shape{B, N, O}, "Slstm.backward dy");
  if (dx.data) core::check_shape(dx, core::Shape{B, N, I}, "Slstm.backward dx");
  if (ds0.data) core::check_shape(ds0, core::Shape{B, S}, "Slstm.backward ds0");
  core::ensure_shape(dpre_, core::Shape{BN, 4 * O});
  core::ensure_shape(carry_, core::Shape{B, 3 * O});
  const T* R = r_->value;

#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < B; ++b) {
    const T* st = s0_ ? s0_ + b * S : nullptr;
    T* dhr = carry_.data() + b * 3 * O;  // R^T dpre of the token after
    T* dc = dhr + O;
    T* dn = dc + O;
    std::fill_n(dhr, 3 * O, T(0));
    for (int64_t t = N - 1; t >= 0; --t) {
      const int64_t r = b * N + t;
      const T* pre = pre_.data() + r * 4 * O;
      const T* c = c_.data() + r * O;
      const T* n = nrm_.data() + r * O;
      const T* m = m_.data() + r * O;
      const T* cp = t > 0 ? c_.data() + (r - 1) * O : (st ? st + O : nullptr);
      const T* np = t > 0 ? nrm_.data() + (r - 1) * O : (st ? st + 2 * O : nullptr);
      const T* mp = t > 0 ? m_.data() + (r - 1) * O : (st ? st + 3 * O : nullptr);
      const T* dyr = dy.data + r * O;
      T* dp = dpre_.data() + r * 4 * O;
#pragma omp simd
      for (int64_t u = 0; u < O; ++u) {
        const T dh = dyr[u] + dhr[u];
        const T o = sigmoid(pre[3 * O + u]), z = fast_tanh(pre[2 * O + u]);
        const T lf = log_sigmoid(pre[O + u]);
        const T ht = c[u] / n[u];
        dp[3 * O + u] = dh * ht * o * (T(1) - o);
        T dcu = dc[u] + dh * o / n[u];
        T dnu = dn[u] - dh * o * ht / n[u];
        const T mpu = mp ? mp[u] : T(0), cpu = cp ? cp[u] : T(0), npu = np ? np[u] : T(0);
        const T fs = fast_exp(lf + mpu - m[u]), is = fast_exp(pre[u] - m[u]);
        dp[2 * O + u] = dcu * is * (T(1) - z * z);
        dp[u] = (dcu * z + dnu) * is;
        const T dlf = (cpu == T(0) ? T(0) : dcu * cpu * fs) + (npu == T(0) ? T(0) : dnu * npu * fs);
        dp[O + u] = dlf * sigmoid(-pre[O + u]);  // d log σ(x) / dx = σ(-x)
        dc[u] = dcu * fs;
        dn[u] = dnu * fs;
        if (t == 0 && ds0.data) ds0.data[b * S + 3 * O + u] = dlf;
      }
      // dh_{t-1} = R^T dpre (block-diagonal per head): each unit's sum over (g, i) in
      // order, as a vector over the head's units (R's rows are contiguous in them).
      for (int64_t h = 0; h < H; ++h) {
        T* dst = dhr + h * d;
        std::fill_n(dst, d, T(0));
        for (int64_t g = 0; g < 4; ++g)
          add_rows(d, d, R + (g * O + h * d) * d, d, dp + g * O + h * d, dst);
      }
    }
    if (ds0.data) {
      std::copy_n(dhr, O, ds0.data + b * S);
      std::copy_n(dc, O, ds0.data + b * S + O);
      std::copy_n(dn, O, ds0.data + b * S + 2 * O);
    }
  }
  const auto x2 = x_.reshape(core::Shape{BN, I});
  const core::ViewT<T> dx2 = dx.data ? dx.reshape(core::Shape{BN, I}) : core::ViewT<T>();
  w_.backward(x2, dpre_.cview(), dx2);
  // dR (block g, head h) += dpre[:, g O + h d ..]^T h_prev[:, h d ..]
  for (int64_t g = 0; g < 4; ++g)
    for (int64_t h = 0; h < H; ++h)
      gemm<T>(Trans::T, Trans::N, d, d, BN, T(1), dpre_.data() + g * O + h * d, 4 * O,
              hp_.data() + h * d, O, T(1), r_->grad + (g * O + h * d) * d, d);
}

template <class T>
void SlstmMixer<T>::step(core::ViewT<const T> x, core::ViewT<T> state, core::ViewT<T> y) {
  const int64_t B = x.dim(0), I = input_size(), O = o_, S = state_size();
  core::check_shape(x, core::Shape{B, I}, "Slstm.step x");
  core::check_shape(state, core::Shape{B, S}, "Slstm.step state");
  core::check_shape(y, core::Shape{B, O}, "Slstm.step y");
  // The pre-activations, then the cell's d floats of scratch: no allocation per token.
  core::grow(step_buf_, B * 4 * O + d_);
  core::ViewT<T> pre(step_buf_.data(), core::Shape{B, 4 * O});
  T* acc = step_buf_.data() + B * 4 * O;
  w_.forward(x, pre);
  transpose_r(rt_);
  for (int64_t b = 0; b < B; ++b) {
    T* s = state.data + b * S;
    cell(rt_.data(), acc, pre.data + b * 4 * O, s, s + O, s + 2 * O, s + 3 * O, s + O,
         s + 2 * O, s + 3 * O, s);
    std::copy_n(s, O, y.data + b * O);
  }
}

template class SlstmMixer<float>;
template class SlstmMixer<double>;

SEQBENCH_MIXER_FACTORY(kSlstmMixer, SlstmMixer);

}  // namespace seqbench::nn
