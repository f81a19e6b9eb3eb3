#include "nn/mixers/deltanet.hpp"
#include "nn/mixers/mixer_math.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "backend/gemm.hpp"
#include "core/buffer.hpp"
#include "nn/fast_math.hpp"
#include "nn/parallel.hpp"
#include "nn/simd.hpp"

namespace seqbench::nn {

using backend::Trans;
using mixer_math::silu;
using mixer_math::silu_grad;
using mixer_math::softplus;

namespace {

constexpr double kL2Eps = 1e-6;   // l2n(a) = a / sqrt(Σ a² + 1e-6)
constexpr double kRmsEps = 1e-5;  // RMS norm of the head outputs

// One token of one head: S (d x d, row i = value index) from src to dst (may be the same
// memory), o = S_t q when o is not null.
//   u_i = src_i·k, w_i = v_i - α u_i, dst_i = α src_i + β w_i k, o_i = dst_i·q
template <class T>
void head_update(int64_t d, const T* src, T* dst, const T* q, const T* k, const T* v, T beta,
                 T alpha, T* o) {
  for (int64_t i = 0; i < d; ++i) {
    const T* s = src + i * d;
    T* t = dst + i * d;
    const T u = dot(d, s, k);
    const T bw = beta * (v[i] - alpha * u);
#pragma omp simd
    for (int64_t j = 0; j < d; ++j) t[j] = alpha * s[j] + bw * k[j];
    if (o) o[i] = dot(d, t, q);
  }
}

// Gradient of a = c · l2n(silu(pre)) (c · l2n(pre) when with_silu is false: the short
// convolution applied the SiLU) w.r.t. pre, given a (the forward's output), its gradient
// da, and pre; written to dpre (may be pre's memory).
template <class T>
void l2n_silu_backward(int64_t d, T c, const T* a, const T* da, T* pre_dpre, bool with_silu) {
  T r2 = 0, dot = 0;
  for (int64_t j = 0; j < d; ++j) {
    const T u = with_silu ? silu(pre_dpre[j]) : pre_dpre[j];
    r2 += u * u;
    dot += a[j] * da[j];  // (c â)·da
  }
  const T r = std::sqrt(r2 + T(kL2Eps));
  // â = a / c; dâ = c da; du = (dâ - â (â·dâ)) / r = c (da - a (a·da) / c²) / r.
  for (int64_t j = 0; j < d; ++j) {
    const T du = c * (da[j] - a[j] * dot / (c * c)) / r;
    pre_dpre[j] = with_silu ? du * silu_grad(pre_dpre[j]) : du;
  }
}

}  // namespace

template <class T>
DeltaNetMixer<T>::DeltaNetMixer(const MixerConfig& cfg, core::ParamStoreT<T>& ps,
                                const std::string& name, int64_t input, int64_t output)
    : in_(input), out_(output), h_(cfg.heads), d_(0), chunk_(cfg.chunk) {
  SB_CHECK(input > 0 && output > 0, "{}: sizes must be positive, got input={} output={}", name,
           input, output);
  if (h_ < 1 || output % h_ != 0)
    throw core::UsageError(fmt::format(
        "{}: model.mixer.heads = {} must divide the deltanet width model.hidden / "
        "model.d_model = {} (hint: pick heads so that width % heads == 0, e.g. heads: 1)",
        name, h_, output));
  if (chunk_ < 1)
    throw core::UsageError(fmt::format(
        "{}: model.mixer.chunk = {} must be at least 1 (hint: chunk: 64)", name, chunk_));
  d_ = output / h_;
  const int64_t O = output, H = h_, I = input;
  w_q_ = &ps.add(name + ".w_q", core::Shape{O, I});
  w_k_ = &ps.add(name + ".w_k", core::Shape{O, I});
  w_v_ = &ps.add(name + ".w_v", core::Shape{O, I});
  w_g_ = &ps.add(name + ".w_g", core::Shape{O, I});
  w_beta_ = &ps.add(name + ".w_beta", core::Shape{H, I});
  w_a_ = &ps.add(name + ".w_a", core::Shape{H, I});
  a_log_ = &ps.add(name + ".A_log", core::Shape{H});
  dt_bias_ = &ps.add(name + ".dt_bias", core::Shape{H});
  w_o_ = &ps.add(name + ".w_o", core::Shape{O, O});
  if (cfg.short_conv > 0)
    conv_ = std::make_unique<ShortConv<T>>(ps, name + ".conv", 3 * O, cfg.short_conv);
  // W_in = [w_q; w_k; w_v; w_g; w_beta; w_a] is one (4O + 2H, I) block of the store.
  SB_CHECK(w_k_->offset == w_q_->offset + O * I && w_v_->offset == w_k_->offset + O * I &&
               w_g_->offset == w_v_->offset + O * I && w_beta_->offset == w_g_->offset + O * I &&
               w_a_->offset == w_beta_->offset + H * I,
           "{}: the input projections are not contiguous in the ParamStore", name);
}

template <class T>
void DeltaNetMixer<T>::init(core::Rng& rng) {
  const double si = 1.0 / std::sqrt(static_cast<double>(in_));
  const double so = 1.0 / std::sqrt(static_cast<double>(out_));
  T* w_in = w_q_->value;
  for (int64_t i = 0; i < proj_width() * in_; ++i) w_in[i] = static_cast<T>(rng.normal() * si);
  for (int64_t i = 0; i < w_o_->numel(); ++i) w_o_->value[i] = static_cast<T>(rng.normal() * so);
  for (int64_t h = 0; h < h_; ++h) {
    a_log_->value[h] = static_cast<T>(std::log(rng.uniform(1.0, 16.0)));
    double dt = std::exp(rng.uniform(std::log(0.001), std::log(0.1)));
    dt = std::max(dt, 1e-4);
    dt_bias_->value[h] = static_cast<T>(dt + std::log(-std::expm1(-dt)));
  }
  if (conv_) conv_->init(rng);
}

template <class T>
void DeltaNetMixer<T>::activate(int64_t rows, const T* p, T* act) const {
  const int64_t O = out_, H = h_, d = d_, Wp = proj_width(), Wa = act_width();
  const T qscale = T(1) / std::sqrt(static_cast<T>(d));
#pragma omp parallel for schedule(static) if (rows * Wa >= kRowParallelMin)
  for (int64_t r = 0; r < rows; ++r) {
    const T* pr = p + r * Wp;
    T* ar = act + r * Wa;
    for (int64_t part = 0; part < 2; ++part) {  // q, k
      const T c = part == 0 ? qscale : T(1);
      for (int64_t h = 0; h < H; ++h) {
        const T* a = pr + part * O + h * d;
        T* q = ar + part * O + h * d;
        T r2 = 0;
        for (int64_t j = 0; j < d; ++j) {
          q[j] = conv_ ? a[j] : silu(a[j]);
          r2 += q[j] * q[j];
        }
        const T s = c / std::sqrt(r2 + T(kL2Eps));
        for (int64_t j = 0; j < d; ++j) q[j] *= s;
      }
    }
    for (int64_t h = 0; h < H; ++h) {
      ar[2 * O + h] = sigmoid(pr[4 * O + h]);
      const T log_alpha =
          -std::exp(a_log_->value[h]) * softplus(pr[4 * O + H + h] + dt_bias_->value[h]);
      ar[2 * O + H + h] = std::exp(log_alpha);
    }
  }
}

template <class T>
void DeltaNetMixer<T>::gate_output(int64_t rows, const T* o, const T* p, T* z) const {
  const int64_t O = out_, H = h_, d = d_, Wp = proj_width();
#pragma omp parallel for schedule(static) if (rows * O >= kRowParallelMin)
  for (int64_t r = 0; r < rows; ++r) {
    const T* orow = o + r * O;
    const T* ag = p + r * Wp + 3 * O;
    T* zr = z + r * O;
    for (int64_t h = 0; h < H; ++h) {
      T ss = 0;
      for (int64_t j = 0; j < d; ++j) ss += orow[h * d + j] * orow[h * d + j];
      const T inv = T(1) / std::sqrt(ss / static_cast<T>(d) + T(kRmsEps));
      for (int64_t j = 0; j < d; ++j) {
        const int64_t c = h * d + j;
        zr[c] = orow[c] * inv * silu(ag[c]);
      }
    }
  }
}

template <class T>
void DeltaNetMixer<T>::forward(core::ViewT<const T> x, core::ViewT<const T> s0, core::ViewT<T> y) {
  SB_CHECK(x.shape.rank == 3, "DeltaNet.forward x: expected (B, N, I), got {}", x.shape.str());
  const int64_t B = x.dim(0), N = x.dim(1), I = in_, O = out_, H = h_, d = d_, d2 = d * d;
  const int64_t S = state_size(), C = chunk_, nC = (N + C - 1) / C, rows = B * N;
  const int64_t Wp = proj_width(), Wa = act_width();
  core::check_shape(x, core::Shape{B, N, I}, "DeltaNet.forward x");
  core::check_shape(y, core::Shape{B, N, O}, "DeltaNet.forward y");
  if (s0.data) core::check_shape(s0, core::Shape{B, S}, "DeltaNet.forward s0");
  x_ = x.data;
  B_ = B;
  N_ = N;
  core::grow(p_, rows * Wp);
  core::grow(act_, rows * Wa);
  core::grow(o_, rows * O);
  core::grow(z_, rows * O);
  const int64_t Sh = heads_size();
  core::grow(ck_, B * nC * Sh);
  core::grow(final_, B * S);
  if (rows == 0) return;

  backend::gemm<T>(Trans::N, Trans::T, rows, Wp, I, T(1), x.data, I, w_q_->value, I, T(0),
                   p_.data(), Wp);
  if (conv_)
    conv_->forward(B, N, p_.data(), Wp, s0.data ? s0.data + Sh : nullptr, S, p_.data(), Wp);
  activate(rows, p_.data(), act_.data());
  if (s0.data)
    std::copy_n(s0.data, B * S, final_.data());
  else
    std::fill_n(final_.data(), B * S, T(0));

  const T* P = p_.data();
  const T* A = act_.data();
  T* Ob = o_.data();
  T* ck = ck_.data();
  T* fin = final_.data();
#pragma omp parallel for schedule(static) if (B * H >= 2 && rows * H * d2 >= kRowParallelMin)
  for (int64_t bh = 0; bh < B * H; ++bh) {
    const int64_t b = bh / H, h = bh % H;
    T* st = fin + b * S + h * d2;
    for (int64_t t = 0; t < N; ++t) {
      if (t % C == 0) std::copy_n(st, d2, ck + (b * nC + t / C) * Sh + h * d2);
      const int64_t r = b * N + t;
      const T* pr = P + r * Wp;
      const T* ar = A + r * Wa;
      head_update(d, st, st, ar + h * d, ar + O + h * d, pr + 2 * O + h * d, ar[2 * O + h],
                  ar[2 * O + H + h], Ob + r * O + h * d);
    }
  }
  if (conv_) conv_->final_state(fin + Sh, S);
  gate_output(rows, o_.data(), p_.data(), z_.data());
  backend::gemm<T>(Trans::N, Trans::T, rows, O, O, T(1), z_.data(), O, w_o_->value, O, T(0), y.data,
                   O);
}

template <class T>
int64_t DeltaNetMixer<T>::workspace_per_thread(int64_t N) const {
  const int64_t d = d_;
  return (std::min(chunk_, N) + 1) * d * d + 5 * d;
}

template <class T>
void DeltaNetMixer<T>::backward(core::ViewT<const T> dy, core::ViewT<T> dx, core::ViewT<T> ds0) {
  const int64_t B = B_, N = N_, I = in_, O = out_, H = h_, d = d_, d2 = d * d;
  const int64_t S = state_size(), C = chunk_, nC = (N + C - 1) / C, rows = B * N;
  const int64_t Wp = proj_width(), Wa = act_width(), Sh = heads_size();
  SB_CHECK(x_ != nullptr, "DeltaNet.backward called before forward");
  core::check_shape(dy, core::Shape{B, N, O}, "DeltaNet.backward dy");
  if (dx.data) core::check_shape(dx, core::Shape{B, N, I}, "DeltaNet.backward dx");
  if (ds0.data) core::check_shape(ds0, core::Shape{B, S}, "DeltaNet.backward ds0");
  const int threads = omp_get_max_threads();
  const int64_t wsz = workspace_per_thread(N);
  core::grow(ws_, int64_t(threads) * wsz);
  if (rows == 0) {
    if (ds0.data) std::fill_n(ds0.data, B * S, T(0));
    return;
  }

  // Output projection: dw_o += dy^T z, then dz = dy w_o over z.
  backend::gemm<T>(Trans::T, Trans::N, O, O, rows, T(1), dy.data, O, z_.data(), O, T(1), w_o_->grad,
                   O);
  backend::gemm<T>(Trans::N, Trans::N, rows, O, O, T(1), dy.data, O, w_o_->value, O, T(0),
                   z_.data(), O);

  // Gate and RMS norm: dz -> d ag (into P), do (over o).
  T* P = p_.data();
  T* A = act_.data();
  T* Ob = o_.data();
  const T* dZ = z_.data();
#pragma omp parallel for schedule(static) if (rows * O >= kRowParallelMin)
  for (int64_t r = 0; r < rows; ++r) {
    T* orow = Ob + r * O;
    T* ag = P + r * Wp + 3 * O;
    const T* dz = dZ + r * O;
    for (int64_t h = 0; h < H; ++h) {
      T ss = 0;
      for (int64_t j = 0; j < d; ++j) ss += orow[h * d + j] * orow[h * d + j];
      const T inv = T(1) / std::sqrt(ss / static_cast<T>(d) + T(kRmsEps));
      T ndn = 0;  // n·dn
      for (int64_t j = 0; j < d; ++j) {
        const int64_t c = h * d + j;
        ndn += orow[c] * inv * dz[c] * silu(ag[c]);
      }
      const T m = ndn / static_cast<T>(d);
      for (int64_t j = 0; j < d; ++j) {
        const int64_t c = h * d + j;
        const T n = orow[c] * inv, a = ag[c];
        const T dn = dz[c] * silu(a);
        ag[c] = dz[c] * n * silu_grad(a);
        orow[c] = (dn - n * m) * inv;
      }
    }
  }

  // The scan in reverse, per (b, h), recomputing each chunk's states from its checkpoint.
  const T* ck = ck_.data();
  T* ws_all = ws_.data();
  const T qscale = T(1) / std::sqrt(static_cast<T>(d));
#pragma omp parallel for schedule(static) if (B * H >= 2 && rows * H * d2 >= kRowParallelMin)
  for (int64_t bh = 0; bh < B * H; ++bh) {
    const int64_t b = bh / H, h = bh % H;
    T* G = ws_all + int64_t(omp_get_thread_num()) * wsz;
    T* states = G + d2;  // states[j] = S before token t0 + j
    T* dq = states + std::min(C, N) * d2;
    T* dk = dq + d;
    T* cg = dk + d;  // per state row i: β w_i, -α β (g_i·k), α dout_i
    T* cs = cg + d;
    T* cq = cs + d;
    std::fill_n(G, d2, T(0));
    const T A_h = std::exp(a_log_->value[h]), bias_h = dt_bias_->value[h];
    for (int64_t c = nC - 1; c >= 0; --c) {
      const int64_t t0 = c * C, t1 = std::min(N, t0 + C);
      std::copy_n(ck + (b * nC + c) * Sh + h * d2, d2, states);
      for (int64_t t = t0; t + 1 < t1; ++t) {
        const int64_t r = b * N + t;
        const T* pr = P + r * Wp;
        const T* ar = A + r * Wa;
        head_update(d, states + (t - t0) * d2, states + (t - t0 + 1) * d2, ar + h * d,
                    ar + O + h * d, pr + 2 * O + h * d, ar[2 * O + h], ar[2 * O + H + h],
                    static_cast<T*>(nullptr));
      }
      for (int64_t t = t1 - 1; t >= t0; --t) {
        const int64_t r = b * N + t;
        T* pr = P + r * Wp;
        T* ar = A + r * Wa;
        const T* Sp = states + (t - t0) * d2;
        const T* q = ar + h * d;
        const T* k = ar + O + h * d;
        T* v = pr + 2 * O + h * d;  // becomes dv
        const T* dout = Ob + r * O + h * d;
        const T beta = ar[2 * O + h], alpha = ar[2 * O + H + h];
        std::fill_n(dq, d, T(0));
        std::fill_n(dk, d, T(0));
        T dalpha = 0, dbeta = 0, wdo = 0;
        // Per state row i: G_i += dout_i q (dL/dS_t in full), then the row's scalars.
        for (int64_t i = 0; i < d; ++i) {
          const T* s = Sp + i * d;
          T* g = G + i * d;
          const T u = dot(d, s, k);
          const T w = v[i] - alpha * u, doi = dout[i];
#pragma omp simd
          for (int64_t j = 0; j < d; ++j) g[j] += doi * q[j];
          const T gk = dot(d, g, k), gs = dot(d, g, s);
          dalpha += gs - beta * u * gk;
          dbeta += w * gk;
          wdo += w * doi;
          cg[i] = beta * w;
          cs[i] = -alpha * beta * gk;
          cq[i] = alpha * doi;
          v[i] = beta * gk;  // dv
        }
        // dk = Σ_i β w_i G_i - α β (G_i·k) S_i, dq = Σ_i α dout_i S_i: sums of rows.
        add_rows(d, d, G, d, cg, dk);
        add_rows(d, d, Sp, d, cs, dk);
        add_rows(d, d, Sp, d, cq, dq);
        // dL/dS_{t-1} = α (G - β (G k) kᵀ).
        for (int64_t i = 0; i < d; ++i) {
          T* g = G + i * d;
          const T bgk = v[i];
#pragma omp simd
          for (int64_t j = 0; j < d; ++j) g[j] = alpha * (g[j] - bgk * k[j]);
        }
        for (int64_t j = 0; j < d; ++j) dq[j] += beta * wdo * k[j];
        // Through l2n and silu to the projections (written over them in P).
        l2n_silu_backward(d, qscale, q, dq, pr + h * d, !conv_);
        l2n_silu_backward(d, T(1), k, dk, pr + O + h * d, !conv_);
        pr[4 * O + h] = dbeta * beta * (T(1) - beta);
        const T pre = pr[4 * O + H + h] + bias_h;
        const T dlog_alpha = dalpha * alpha;
        pr[4 * O + H + h] = dlog_alpha * (-A_h * sigmoid(pre));
        ar[2 * O + H + h] = dlog_alpha * (-A_h * softplus(pre));  // for d A_log
      }
    }
    if (ds0.data) std::copy_n(G, d2, ds0.data + b * S + h * d2);
  }

  // d A_log, d dt_bias: column sums over all tokens, in row order.
  add_column_sums(rows, H, A + 2 * O + H, Wa, a_log_->grad);
  add_column_sums(rows, H, P + 4 * O + H, Wp, dt_bias_->grad);
  // The short convolution: d [silu(conv(aq)) | .. | v] -> d [aq | ak | v], in place.
  if (conv_) conv_->backward(P, Wp, P, Wp, ds0.data ? ds0.data + Sh : nullptr, S);
  // Input projection.
  backend::gemm<T>(Trans::T, Trans::N, Wp, I, rows, T(1), P, Wp, x_, I, T(1), w_q_->grad, I);
  if (dx.data)
    backend::gemm<T>(Trans::N, Trans::N, rows, I, Wp, T(1), P, Wp, w_q_->value, I, T(0), dx.data,
                     I);
}

template <class T>
core::ViewT<const T> DeltaNetMixer<T>::final_state() const {
  return core::ViewT<const T>(final_.data(), core::Shape{B_, state_size()});
}

template <class T>
void DeltaNetMixer<T>::step(core::ViewT<const T> x, core::ViewT<T> state, core::ViewT<T> y) {
  SB_CHECK(x.shape.rank == 2, "DeltaNet.step x: expected (B, I), got {}", x.shape.str());
  const int64_t B = x.dim(0), I = in_, O = out_, H = h_, d = d_, d2 = d * d, S = state_size();
  const int64_t Wp = proj_width(), Wa = act_width();
  core::check_shape(x, core::Shape{B, I}, "DeltaNet.step x");
  core::check_shape(state, core::Shape{B, S}, "DeltaNet.step state");
  core::check_shape(y, core::Shape{B, O}, "DeltaNet.step y");
  core::grow(sp_, B * Wp);
  core::grow(sact_, B * Wa);
  core::grow(so_, B * O);
  core::grow(sz_, B * O);
  if (B == 0) return;
  backend::gemm<T>(Trans::N, Trans::T, B, Wp, I, T(1), x.data, I, w_q_->value, I, T(0), sp_.data(),
                   Wp);
  if (conv_) conv_->step(B, sp_.data(), Wp, state.data + heads_size(), S, sp_.data(), Wp);
  activate(B, sp_.data(), sact_.data());
  const T* P = sp_.data();
  const T* A = sact_.data();
  T* Ob = so_.data();
  T* st = state.data;
#pragma omp parallel for schedule(static) if (B * H >= 2 && B * H * d2 >= kRowParallelMin)
  for (int64_t bh = 0; bh < B * H; ++bh) {
    const int64_t b = bh / H, h = bh % H;
    const T* pr = P + b * Wp;
    const T* ar = A + b * Wa;
    T* s = st + b * S + h * d2;
    head_update(d, s, s, ar + h * d, ar + O + h * d, pr + 2 * O + h * d, ar[2 * O + h],
                ar[2 * O + H + h], Ob + b * O + h * d);
  }
  gate_output(B, so_.data(), sp_.data(), sz_.data());
  backend::gemm<T>(Trans::N, Trans::T, B, O, O, T(1), sz_.data(), O, w_o_->value, O, T(0), y.data,
                   O);
}

template <class T>
size_t DeltaNetMixer<T>::estimate_bytes(int64_t B, int64_t N) const {
  const int64_t rows = B * N, S = state_size(), nC = (N + chunk_ - 1) / chunk_;
  const int64_t n = rows * (proj_width() + act_width() + 2 * out_) + B * nC * heads_size() +
                    B * S + int64_t(omp_get_max_threads()) * workspace_per_thread(N) +
                    (conv_ ? conv_->held_floats(B, N) : 0);
  return static_cast<size_t>(n) * sizeof(T);
}

template <class T>
size_t DeltaNetMixer<T>::held_bytes() const {
  return core::bytes_of(p_) + core::bytes_of(act_) + core::bytes_of(o_) + core::bytes_of(z_) +
         core::bytes_of(ck_) + core::bytes_of(final_) + core::bytes_of(ws_) + core::bytes_of(sp_) +
         core::bytes_of(sact_) + core::bytes_of(so_) + core::bytes_of(sz_) +
         (conv_ ? conv_->held_bytes() : 0);
}

template class DeltaNetMixer<float>;
template class DeltaNetMixer<double>;

SEQBENCH_MIXER_FACTORY(kDeltaNetMixer, DeltaNetMixer);

}  // namespace seqbench::nn
