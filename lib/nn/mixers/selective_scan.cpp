#include "nn/mixers/selective_scan.hpp"
#include "nn/mixers/mixer_math.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "backend/gemm.hpp"
#include "core/buffer.hpp"
#include "core/check.hpp"
#include "nn/fast_math.hpp"
#include "nn/parallel.hpp"
#include "nn/simd.hpp"

namespace seqbench::nn {

using backend::Trans;
using mixer_math::silu;
using mixer_math::silu_grad;
using mixer_math::softplus;

namespace {

int64_t positive(int64_t v, const char* key, const std::string& name, const char* hint) {
  if (v < 1)
    throw core::UsageError(fmt::format("{} = {} must be positive for the mamba mixer {} (hint: {})",
                                       key, v, name, hint));
  return v;
}

// One token of the scan for one batch row, all E channels: h = exp(Δ A) ⊙ h_prev + Δ u B,
// and y = h C + D ⊙ u when y is given. h may alias h_prev (in place). forward, step and
// backward's recomputation all call this, so they round alike.
template <class T>
void scan_token(int64_t E, int64_t N, const T* A, const T* D, const T* hp, T* h, const T* dl,
                const T* u, const T* bv, const T* cv, T* y) {
  for (int64_t e = 0; e < E; ++e) {
    const T d = dl[e], du = d * u[e];
    const T* ae = A + e * N;
    const T* hpe = hp + e * N;
    T* he = h + e * N;
#pragma omp simd
    for (int64_t n = 0; n < N; ++n) he[n] = fast_exp(d * ae[n]) * hpe[n] + du * bv[n];
    if (y) y[e] = dot(N, cv, he) + D[e] * u[e];
  }
}

// Δ (rows, E) = softplus(δ W_dt^T + b_dt), δ the first R columns of xdbl (rows, P).
template <class T>
void delta_forward(int64_t rows, int64_t E, int64_t R, int64_t P, const T* xdbl, const T* w,
                   const T* bias, T* delta) {
  for (int64_t r = 0; r < rows; ++r) std::copy_n(bias, E, delta + r * E);
  backend::gemm<T>(Trans::N, Trans::T, rows, E, R, T(1), xdbl, P, w, R, T(1), delta, E);
  for (int64_t i = 0; i < rows * E; ++i) delta[i] = softplus(delta[i]);
}

}  // namespace

template <class T>
SelectiveScan<T>::SelectiveScan(const MixerConfig& cfg, core::ParamStoreT<T>& ps,
                                const std::string& name, int64_t input, int64_t output)
    : in_(positive(input, "model.hidden / model.d_model (the mixer's input width)", name,
                   "a positive width")),
      out_(positive(output, "model.hidden / model.d_model", name, "a positive width")),
      e_(positive(cfg.expand, "model.mixer.expand", name, "Mamba uses 2") * out_),
      n_(positive(cfg.d_state, "model.mixer.d_state", name, "Mamba uses 16")),
      k_(positive(cfg.conv, "model.mixer.conv", name, "Mamba uses 4")),
      r_((in_ + 15) / 16),
      p_(r_ + 2 * n_),
      chunk_(positive(cfg.chunk, "model.mixer.chunk", name, "64")),
      in_proj_(ps, name + ".in_proj", in_, 2 * e_, false),
      conv_w_(&ps.add(name + ".conv.w", core::Shape{e_, k_})),
      conv_b_(&ps.add(name + ".conv.b", core::Shape{e_})),
      x_proj_(ps, name + ".x_proj", e_, p_, false),
      dt_w_(&ps.add(name + ".dt_proj.w", core::Shape{e_, r_})),
      dt_b_(&ps.add(name + ".dt_proj.b", core::Shape{e_})),
      a_log_(&ps.add(name + ".A_log", core::Shape{e_, n_})),
      d_(&ps.add(name + ".D", core::Shape{e_})),
      out_proj_(ps, name + ".out_proj", e_, out_, false) {}

template <class T>
int64_t SelectiveScan<T>::param_count(const MixerConfig& cfg, int64_t input, int64_t output) {
  const int64_t E = cfg.expand * output, R = (input + 15) / 16;
  return E * (2 * input + output + cfg.conv + 2 * R + 3 * cfg.d_state + 3);
}

template <class T>
void SelectiveScan<T>::init(core::Rng& rng) {
  const int64_t E = e_, N = n_;
  in_proj_.init(rng);
  const double ac = 1.0 / std::sqrt(double(k_));
  for (auto* p : {conv_w_, conv_b_})
    for (int64_t i = 0; i < p->numel(); ++i) p->value[i] = T(rng.uniform(-ac, ac));
  x_proj_.init(rng);
  const double ad = 1.0 / std::sqrt(double(r_));
  for (int64_t i = 0; i < dt_w_->numel(); ++i) dt_w_->value[i] = T(rng.uniform(-ad, ad));
  const double lo = std::log(0.001), hi = std::log(0.1);
  for (int64_t e = 0; e < E; ++e) {
    const double dt = std::max(std::exp(rng.uniform(lo, hi)), 1e-4);
    dt_b_->value[e] = T(dt + std::log(-std::expm1(-dt)));  // softplus^-1(dt)
  }
  for (int64_t e = 0; e < E; ++e)
    for (int64_t n = 0; n < N; ++n) a_log_->value[e * N + n] = T(std::log(double(n + 1)));
  for (int64_t e = 0; e < E; ++e) d_->value[e] = T(1);
  out_proj_.init(rng);
}

template <class T>
typename SelectiveScan<T>::Sizes SelectiveScan<T>::sizes(int64_t B, int64_t L) const {
  const int64_t E = e_, N = n_, P = p_, BL = B * L;
  Sizes s;
  s.lc = std::min(chunk_, L);
  s.chunks = (L + chunk_ - 1) / chunk_;
  // xz, c, u, xdbl, Δ, y, g; checkpoints; final state; A.
  s.forward = BL * (2 * E + 5 * E + P) + B * s.chunks * E * N + B * state_size() + E * N;
  // du, dxz, dxdbl.
  s.backward = BL * (3 * E + P);
  // Recomputed chunk states, h / dh, dA, dD, dw_c, db_c; two rows of N for one channel.
  s.slot = s.lc * E * N + 2 * E * N + 2 * E + E * k_ + 2 * N;
  s.slots = std::max(1, omp_get_max_threads());
  return s;
}

template <class T>
size_t SelectiveScan<T>::estimate_bytes(int64_t B, int64_t N) const {
  const Sizes s = sizes(B, N);
  return size_t(s.forward + s.backward + s.slots * s.slot) * sizeof(T);
}

template <class T>
size_t SelectiveScan<T>::held_bytes() const {
  size_t n = 0;
  for (const auto* v : {&xz_, &c_, &u_, &xdbl_, &delta_, &y_, &g_, &ck_, &final_, &a_, &du_, &dxz_,
                        &dxdbl_, &ws_, &step_ws_})
    n += core::bytes_of(*v);
  return n;
}

template <class T>
void SelectiveScan<T>::refresh_a() {
  core::grow(a_, e_ * n_);
  for (int64_t i = 0; i < e_ * n_; ++i) a_[i] = -std::exp(a_log_->value[i]);
}

template <class T>
const T* SelectiveScan<T>::conv_input(int64_t b, int64_t tau) const {
  if (tau >= 0) return xz_.data() + (b * l_ + tau) * 2 * e_;
  if (!s0_) return nullptr;
  return s0_ + b * state_size() + e_ * n_ + (k_ - 1 + tau) * e_;
}

template <class T>
void SelectiveScan<T>::conv_forward_row(int64_t b) {
  const int64_t E = e_, K = k_, L = l_;
  const T* w = conv_w_->value;
  for (int64_t t = 0; t < L; ++t) {
    T* c = c_.data() + (b * L + t) * E;
    std::copy_n(conv_b_->value, E, c);
    for (int64_t j = 0; j < K; ++j) {
      const T* src = conv_input(b, t - K + 1 + j);
      if (!src) continue;
      for (int64_t e = 0; e < E; ++e) c[e] += w[e * K + j] * src[e];
    }
    T* u = u_.data() + (b * L + t) * E;
    for (int64_t e = 0; e < E; ++e) u[e] = silu(c[e]);
  }
}

template <class T>
void SelectiveScan<T>::scan_forward_row(int64_t b, T* h) {
  const int64_t E = e_, N = n_, P = p_, L = l_, S = state_size(), EN = E * N;
  const int64_t chunks = (L + chunk_ - 1) / chunk_;
  if (s0_)
    std::copy_n(s0_ + b * S, EN, h);
  else
    std::fill_n(h, EN, T(0));
  for (int64_t t = 0; t < L; ++t) {
    if (t % chunk_ == 0) std::copy_n(h, EN, ck_.data() + (b * chunks + t / chunk_) * EN);
    const int64_t r = b * L + t;
    const T* xd = xdbl_.data() + r * P;
    scan_token(E, N, a_.data(), d_->value, h, h, delta_.data() + r * E, u_.data() + r * E, xd + r_,
               xd + r_ + N, y_.data() + r * E);
  }
  T* fin = final_.data() + b * S;
  std::copy_n(h, EN, fin);
  for (int64_t j = 0; j < k_ - 1; ++j) {
    const T* src = conv_input(b, L - (k_ - 1) + j);
    T* dst = fin + EN + j * E;
    if (src)
      std::copy_n(src, E, dst);
    else
      std::fill_n(dst, E, T(0));
  }
}

template <class T>
void SelectiveScan<T>::forward(core::ViewT<const T> x, core::ViewT<const T> s0, core::ViewT<T> y) {
  SB_CHECK(x.shape.rank == 3, "SelectiveScan.forward: x must be (B, N, I), got {}", x.shape.str());
  const int64_t B = x.dim(0), L = x.dim(1), E = e_, N = n_, P = p_, BL = B * L;
  core::check_shape(x, core::Shape{B, L, in_}, "SelectiveScan.forward x");
  core::check_shape(y, core::Shape{B, L, out_}, "SelectiveScan.forward y");
  if (s0.data) core::check_shape(s0, core::Shape{B, state_size()}, "SelectiveScan.forward s0");
  b_ = B;
  l_ = L;
  x_ = x.data;
  s0_ = s0.data;
  const Sizes sz = sizes(B, L);
  core::grow(xz_, BL * 2 * E);
  for (auto* v : {&c_, &u_, &delta_, &y_, &g_}) core::grow(*v, BL * E);
  core::grow(xdbl_, BL * P);
  core::grow(ck_, B * sz.chunks * E * N);
  core::grow(final_, B * state_size());
  core::grow(ws_, sz.slots * sz.slot);
  refresh_a();

  in_proj_.forward(x.reshape(core::Shape{BL, in_}), core::ViewT<T>(xz_.data(), {BL, 2 * E}));
  const bool nested = omp_in_parallel();
  for_row_slices(B, BL * E * k_ >= kRowParallelMin, [&](int64_t r0, int64_t r1) {
    for (int64_t b = r0; b < r1; ++b) conv_forward_row(b);
  });
  x_proj_.forward(core::ViewT<const T>(u_.data(), {BL, E}), core::ViewT<T>(xdbl_.data(), {BL, P}));
  delta_forward(BL, E, r_, P, xdbl_.data(), dt_w_->value, dt_b_->value, delta_.data());
  for_row_slices(B, BL * E * N >= kRowParallelMin, [&](int64_t r0, int64_t r1) {
    T* slot = ws_.data() + (nested ? 0 : omp_get_thread_num()) * sz.slot;
    for (int64_t b = r0; b < r1; ++b) scan_forward_row(b, slot + sz.lc * E * N);
  });
  for (int64_t r = 0; r < BL; ++r) {
    const T* z = xz_.data() + r * 2 * E + E;
    for (int64_t e = 0; e < E; ++e) g_[r * E + e] = y_[r * E + e] * silu(z[e]);
  }
  out_proj_.forward(core::ViewT<const T>(g_.data(), {BL, E}), y.reshape(core::Shape{BL, out_}));
}

template <class T>
core::ViewT<const T> SelectiveScan<T>::final_state() const {
  return core::ViewT<const T>(final_.data(), core::Shape{b_, state_size()});
}

// Slot layout: [chunk states (lc, E, N) | dh (E, N) | dA (E, N) | dD (E) | dw_c (E, K) |
// db_c (E)].
template <class T>
void SelectiveScan<T>::scan_backward_row(int64_t b, T* slot, T* ds0) {
  const int64_t E = e_, N = n_, P = p_, R = r_, L = l_, EN = E * N;
  const int64_t lc = std::min(chunk_, L), chunks = (L + chunk_ - 1) / chunk_;
  T* hs = slot;
  T* dh = hs + lc * EN;
  T* dA = dh + EN;
  T* dD = dA + EN;
  T* gn = slot + lc * EN + 2 * EN + 2 * E + E * k_;  // past dD, dw_c, db_c: (N) twice
  T* gan = gn + N;
  const T* A = a_.data();
  const T* D = d_->value;
  std::fill_n(dh, EN, T(0));
  for (int64_t k = chunks - 1; k >= 0; --k) {
    const int64_t t0 = k * chunk_, t1 = std::min(L, t0 + chunk_);
    const T* h0 = ck_.data() + (b * chunks + k) * EN;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t r = b * L + t;
      const T* xd = xdbl_.data() + r * P;
      scan_token(E, N, A, D, t == t0 ? h0 : hs + (t - t0 - 1) * EN, hs + (t - t0) * EN,
                 delta_.data() + r * E, u_.data() + r * E, xd + R, xd + R + N,
                 static_cast<T*>(nullptr));
    }
    for (int64_t t = t1 - 1; t >= t0; --t) {
      const int64_t r = b * L + t;
      const T* hp = t == t0 ? h0 : hs + (t - t0 - 1) * EN;
      const T* h = hs + (t - t0) * EN;
      const T* xd = xdbl_.data() + r * P;
      const T* bv = xd + R;
      const T* cv = bv + N;
      T* dbv = dxdbl_.data() + r * P + R;
      T* dcv = dbv + N;
      std::fill_n(dbv, 2 * N, T(0));
      const T* dl = delta_.data() + r * E;
      const T* u = u_.data() + r * E;
      T* dyv = g_.data() + r * E;  // dy in, dδ' out
      T* du = du_.data() + r * E;
      for (int64_t e = 0; e < E; ++e) {
        const T dy = dyv[e], d = dl[e], ue = u[e], du_coef = d * ue;
        const T* ae = A + e * N;
        const T* he = h + e * N;
        const T* hpe = hp + e * N;
        T* dhe = dh + e * N;
        T* dae = dA + e * N;
        // The two sums over n (dd, dus) are dot products of rows kept in gn and gan.
#pragma omp simd
        for (int64_t n = 0; n < N; ++n) {
          const T a = fast_exp(d * ae[n]);
          const T g = dhe[n] + cv[n] * dy;  // dL/dh_t in full
          dcv[n] += dy * he[n];
          const T ga = g * hpe[n] * a;  // dL/d(Δ A)
          dae[n] += ga * d;
          dbv[n] += g * du_coef;
          gn[n] = g;
          gan[n] = ga;
          dhe[n] = g * a;  // dL/dh_{t-1}, less its own output's term
        }
        const T dus = dot(N, gn, bv);
        const T dd = dot(N, gan, ae) + dus * ue;
        dD[e] += dy * ue;
        du[e] = D[e] * dy + dus * d;
        dyv[e] = dd * -std::expm1(-d);  // softplus' = σ(pre) = 1 - exp(-Δ)
      }
    }
  }
  if (ds0) std::copy_n(dh, EN, ds0 + b * state_size());
}

template <class T>
void SelectiveScan<T>::conv_backward_row(int64_t b, T* slot, T* ds0) {
  const int64_t E = e_, K = k_, L = l_, EN = E * n_;
  const int64_t lc = std::min(chunk_, L);
  T* dwc = slot + lc * EN + 2 * EN + E;
  T* dbc = dwc + E * K;
  const T* w = conv_w_->value;
  T* dhist = ds0 ? ds0 + b * state_size() + EN : nullptr;
  if (dhist) std::fill_n(dhist, (K - 1) * E, T(0));
  for (int64_t t = 0; t < L; ++t) std::fill_n(dxz_.data() + (b * L + t) * 2 * E, E, T(0));
  for (int64_t t = 0; t < L; ++t) {
    const T* dc = du_.data() + (b * L + t) * E;
    for (int64_t e = 0; e < E; ++e) dbc[e] += dc[e];
    for (int64_t j = 0; j < K; ++j) {
      const int64_t tau = t - K + 1 + j;
      const T* src = conv_input(b, tau);
      T* dst = tau >= 0 ? dxz_.data() + (b * L + tau) * 2 * E
                        : (dhist ? dhist + (K - 1 + tau) * E : nullptr);
      if (src)
        for (int64_t e = 0; e < E; ++e) dwc[e * K + j] += dc[e] * src[e];
      if (dst)
        for (int64_t e = 0; e < E; ++e) dst[e] += w[e * K + j] * dc[e];
    }
  }
}

template <class T>
void SelectiveScan<T>::backward(core::ViewT<const T> dy, core::ViewT<T> dx, core::ViewT<T> ds0) {
  const int64_t B = b_, L = l_, E = e_, N = n_, P = p_, R = r_, K = k_, BL = B * L;
  SB_CHECK(x_ != nullptr, "SelectiveScan.backward called before forward");
  core::check_shape(dy, core::Shape{B, L, out_}, "SelectiveScan.backward dy");
  if (dx.data) core::check_shape(dx, core::Shape{B, L, in_}, "SelectiveScan.backward dx");
  if (ds0.data) core::check_shape(ds0, core::Shape{B, state_size()}, "SelectiveScan.backward ds0");
  const Sizes sz = sizes(B, L);
  core::grow(du_, BL * E);
  core::grow(dxz_, BL * 2 * E);
  core::grow(dxdbl_, BL * P);
  core::grow(ws_, sz.slots * sz.slot);
  // The per-thread parameter-gradient sums start at zero (every slot: the team may be
  // smaller than slots).
  for (int64_t s = 0; s < sz.slots; ++s) {
    T* acc = ws_.data() + s * sz.slot + sz.lc * E * N + E * N;
    std::fill_n(acc, sz.slot - sz.lc * E * N - E * N, T(0));
  }

  // Output gate and projection. g is recomputed (backward leaves the forward's caches
  // as they were); du_ holds dg for a moment.
  for (int64_t r = 0; r < BL; ++r) {
    const T* z = xz_.data() + r * 2 * E + E;
    for (int64_t e = 0; e < E; ++e) g_[r * E + e] = y_[r * E + e] * silu(z[e]);
  }
  out_proj_.backward(core::ViewT<const T>(g_.data(), {BL, E}), dy.reshape(core::Shape{BL, out_}),
                     core::ViewT<T>(du_.data(), {BL, E}));
  for (int64_t r = 0; r < BL; ++r) {
    const T* z = xz_.data() + r * 2 * E + E;
    T* dz = dxz_.data() + r * 2 * E + E;
    for (int64_t e = 0; e < E; ++e) {
      const T dg = du_[r * E + e], s = sigmoid(z[e]);
      g_[r * E + e] = dg * z[e] * s;
      dz[e] = dg * y_[r * E + e] * s * (T(1) + z[e] * (T(1) - s));
    }
  }

  // The reverse scan: du, dδ' (in g_), dB, dC, dA, dD, and ds0's h part.
  const bool nested = omp_in_parallel();
  for_row_slices(B, BL * E * N >= kRowParallelMin, [&](int64_t r0, int64_t r1) {
    T* slot = ws_.data() + (nested ? 0 : omp_get_thread_num()) * sz.slot;
    for (int64_t b = r0; b < r1; ++b) scan_backward_row(b, slot, ds0.data);
  });

  // Δ = softplus(δ W_dt^T + b_dt): dδ into dxdbl's first R columns.
  backend::gemm<T>(Trans::N, Trans::N, BL, R, E, T(1), g_.data(), E, dt_w_->value, R, T(0),
                   dxdbl_.data(), P);
  backend::gemm<T>(Trans::T, Trans::N, E, R, BL, T(1), g_.data(), E, xdbl_.data(), P, T(1),
                   dt_w_->grad, R);
  add_column_sums(BL, E, g_.data(), E, dt_b_->grad);

  // [δ | B | C] = u W_x^T, then u = silu(c).
  x_proj_.backward(core::ViewT<const T>(u_.data(), {BL, E}),
                   core::ViewT<const T>(dxdbl_.data(), {BL, P}), core::ViewT<T>());
  backend::gemm<T>(Trans::N, Trans::N, BL, E, P, T(1), dxdbl_.data(), P, x_proj_.w().value, E, T(1),
                   du_.data(), E);
  for (int64_t i = 0; i < BL * E; ++i) du_[i] *= silu_grad(c_[i]);

  // The causal conv: du_in into dxz's first E columns, ds0's history part, dw_c, db_c.
  for_row_slices(B, BL * E * K >= kRowParallelMin, [&](int64_t r0, int64_t r1) {
    T* slot = ws_.data() + (nested ? 0 : omp_get_thread_num()) * sz.slot;
    for (int64_t b = r0; b < r1; ++b) conv_backward_row(b, slot, ds0.data);
  });

  in_proj_.backward(core::ViewT<const T>(x_, {BL, in_}),
                    core::ViewT<const T>(dxz_.data(), {BL, 2 * E}),
                    dx.data ? dx.reshape(core::Shape{BL, in_}) : core::ViewT<T>());

  // The per-thread sums, added in thread order.
  const int64_t EN = E * N, base = sz.lc * EN + EN;
  for (int64_t i = 0; i < EN; ++i) {
    T s = 0;
    for (int64_t k = 0; k < sz.slots; ++k) s += ws_[k * sz.slot + base + i];
    a_log_->grad[i] += s * a_[i];  // dA/dA_log = -exp(A_log) = A
  }
  for (int64_t i = 0; i < E; ++i) {
    T sd = 0, sb = 0;
    for (int64_t k = 0; k < sz.slots; ++k) {
      sd += ws_[k * sz.slot + base + EN + i];
      sb += ws_[k * sz.slot + base + EN + E + E * K + i];
    }
    d_->grad[i] += sd;
    conv_b_->grad[i] += sb;
  }
  for (int64_t i = 0; i < E * K; ++i) {
    T s = 0;
    for (int64_t k = 0; k < sz.slots; ++k) s += ws_[k * sz.slot + base + EN + E + i];
    conv_w_->grad[i] += s;
  }
}

template <class T>
void SelectiveScan<T>::step(core::ViewT<const T> x, core::ViewT<T> state, core::ViewT<T> y) {
  const int64_t B = x.dim(0), E = e_, N = n_, P = p_, K = k_, S = state_size(), EN = E * N;
  core::check_shape(x, core::Shape{B, in_}, "SelectiveScan.step x");
  core::check_shape(state, core::Shape{B, S}, "SelectiveScan.step state");
  core::check_shape(y, core::Shape{B, out_}, "SelectiveScan.step y");
  core::grow(step_ws_, B * (5 * E + P));
  T* xz = step_ws_.data();
  T* u = xz + B * 2 * E;
  T* xdbl = u + B * E;
  T* dl = xdbl + B * P;
  T* g = dl + B * E;
  refresh_a();
  in_proj_.forward(x, core::ViewT<T>(xz, {B, 2 * E}));
  const T* w = conv_w_->value;
  for (int64_t b = 0; b < B; ++b) {
    T* hist = state.data + b * S + EN;
    const T* uin = xz + b * 2 * E;
    T* ub = u + b * E;
    std::copy_n(conv_b_->value, E, ub);
    for (int64_t j = 0; j < K; ++j) {
      const T* src = j < K - 1 ? hist + j * E : uin;
      for (int64_t e = 0; e < E; ++e) ub[e] += w[e * K + j] * src[e];
    }
    for (int64_t e = 0; e < E; ++e) ub[e] = silu(ub[e]);
    if (K > 1) {
      std::copy(hist + E, hist + (K - 1) * E, hist);
      std::copy_n(uin, E, hist + (K - 2) * E);
    }
  }
  x_proj_.forward(core::ViewT<const T>(u, {B, E}), core::ViewT<T>(xdbl, {B, P}));
  delta_forward(B, E, r_, P, xdbl, dt_w_->value, dt_b_->value, dl);
  for (int64_t b = 0; b < B; ++b) {
    T* h = state.data + b * S;
    const T* xd = xdbl + b * P;
    T* gb = g + b * E;
    scan_token(E, N, a_.data(), d_->value, h, h, dl + b * E, u + b * E, xd + r_, xd + r_ + N, gb);
    const T* z = xz + b * 2 * E + E;
    for (int64_t e = 0; e < E; ++e) gb[e] *= silu(z[e]);
  }
  out_proj_.forward(core::ViewT<const T>(g, {B, E}), y);
}

template class SelectiveScan<float>;
template class SelectiveScan<double>;

SEQBENCH_MIXER_FACTORY(kMambaMixer, SelectiveScan);

}  // namespace seqbench::nn
