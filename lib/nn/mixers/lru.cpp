#include "nn/mixers/lru.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <exception>

#include "backend/gemm.hpp"
#include "core/buffer.hpp"
#include "core/check.hpp"
#include "nn/parallel.hpp"

namespace seqbench::nn {

using backend::Trans;

namespace {

// Calls f(slot, r0, r1) for contiguous row slices [r0, r1) of [0, b), one per thread of a
// team of at most `slots` threads when `split` holds, else f(0, 0, b) on this thread. The
// slot indexes the caller's per-thread workspace (< slots). The first exception of any
// slice is rethrown after the region.
template <class F>
void for_slots(int64_t b, int slots, bool split, F&& f) {
  if (!split || slots < 2 || b < 2 || omp_in_parallel()) {
    f(0, int64_t(0), b);
    return;
  }
  std::exception_ptr error;
#pragma omp parallel num_threads(slots)
  {
    const int64_t n = omp_get_num_threads(), i = omp_get_thread_num();
    const int64_t r0 = b * i / n, r1 = b * (i + 1) / n;
    try {
      if (r1 > r0) f(static_cast<int>(i), r0, r1);
    } catch (...) {
#pragma omp critical(seqbench_lru_slots)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

int max_slots() { return std::max(1, omp_get_max_threads()); }

}  // namespace

template <class T>
LruMixer<T>::LruMixer(const MixerConfig& cfg, core::ParamStoreT<T>& ps, const std::string& name,
                      int64_t input, int64_t output)
    : cfg_(cfg), in_(input), out_(output), p_(cfg.d_state) {
  if (input <= 0 || output <= 0)
    throw core::UsageError(
        fmt::format("lru ({}): input and output widths must be positive, got {} and {} (hint: set "
                    "model.hidden / model.d_model to a positive width)",
                    name, input, output));
  if (cfg.d_state <= 0)
    throw core::UsageError(fmt::format(
        "lru ({}): model.mixer.d_state must be positive, got {} (hint: the paper uses 64 to "
        "256 complex units)",
        name, cfg.d_state));
  if (cfg.chunk <= 0)
    throw core::UsageError(fmt::format(
        "lru ({}): model.mixer.chunk must be positive, got {} (hint: 64)", name, cfg.chunk));
  nu_log_ = &ps.add(name + ".nu_log", core::Shape{p_});
  theta_log_ = &ps.add(name + ".theta_log", core::Shape{p_});
  gamma_log_ = &ps.add(name + ".gamma_log", core::Shape{p_});
  b_re_ = &ps.add(name + ".B_re", core::Shape{p_, in_});
  b_im_ = &ps.add(name + ".B_im", core::Shape{p_, in_});
  c_re_ = &ps.add(name + ".C_re", core::Shape{out_, p_});
  c_im_ = &ps.add(name + ".C_im", core::Shape{out_, p_});
  d_ = &ps.add(name + ".D", core::Shape{out_, in_});
}

template <class T>
void LruMixer<T>::init(core::Rng& rng) {
  const double r2min = kRMin * kRMin, r2max = kRMax * kRMax;
  for (int64_t n = 0; n < p_; ++n) {
    const double u1 = rng.uniform();
    double u2 = rng.uniform();
    while (u2 <= 0.0) u2 = rng.uniform();  // θ > 0: theta_log = log θ must be finite
    const double nu_log = std::log(-0.5 * std::log(u1 * (r2max - r2min) + r2min));
    nu_log_->value[n] = static_cast<T>(nu_log);
    theta_log_->value[n] = static_cast<T>(std::log(kMaxPhase * u2));
    // |λ| of the stored (rounded) nu_log, so that g² + |λ|² = 1 holds for what runs.
    const double r = std::exp(-std::exp(static_cast<double>(nu_log_->value[n])));
    gamma_log_->value[n] = static_cast<T>(std::log(std::sqrt(1.0 - r * r)));
  }
  const auto fill = [&](core::ParamT<T>* p, double stddev) {
    for (int64_t i = 0; i < p->numel(); ++i) p->value[i] = static_cast<T>(rng.normal(0.0, stddev));
  };
  const double sb = 1.0 / std::sqrt(2.0 * static_cast<double>(in_));
  const double sc = 1.0 / std::sqrt(static_cast<double>(p_));
  fill(b_re_, sb);
  fill(b_im_, sb);
  fill(c_re_, sc);
  fill(c_im_, sc);
  fill(d_, 1.0 / std::sqrt(static_cast<double>(in_)));
}

template <class T>
std::complex<double> LruMixer<T>::lambda(int64_t n) const {
  SB_CHECK(n >= 0 && n < p_, "lru.lambda({}): unit out of range [0, {})", n, p_);
  const double r = std::exp(-std::exp(static_cast<double>(nu_log_->value[n])));
  const double th = std::exp(static_cast<double>(theta_log_->value[n]));
  return {r * std::cos(th), r * std::sin(th)};
}

template <class T>
void LruMixer<T>::refresh_coefficients() {
  core::grow(coef_, 3 * p_);
  for (int64_t n = 0; n < p_; ++n) {
    const std::complex<double> l = lambda(n);
    coef_[static_cast<size_t>(n)] = static_cast<T>(l.real());
    coef_[static_cast<size_t>(p_ + n)] = static_cast<T>(l.imag());
    coef_[static_cast<size_t>(2 * p_ + n)] =
        static_cast<T>(std::exp(static_cast<double>(gamma_log_->value[n])));
  }
}

template <class T>
int64_t LruMixer<T>::chunk_len(int64_t N) const {
  return std::max<int64_t>(1, std::min(cfg_.chunk, N));
}

template <class T>
int64_t LruMixer<T>::ws_stride(int64_t L) const {
  // U, H, dH (L x 2P each) | δh carry (2P) | δλ (2P) | δg (P) | dB_re, dB_im (P x I) |
  // dC_re, dC_im (O x P)
  return 6 * L * p_ + 5 * p_ + 2 * p_ * in_ + 2 * out_ * p_;
}

template <class T>
void LruMixer<T>::scan_chunk(int64_t len, const T* xc, const T* h0, T* U, T* H) const {
  const int64_t P = p_, P2 = 2 * P, I = in_;
  backend::gemm<T>(Trans::N, Trans::T, len, P, I, T(1), xc, I, b_re_->value, I, T(0), U, P2);
  backend::gemm<T>(Trans::N, Trans::T, len, P, I, T(1), xc, I, b_im_->value, I, T(0), U + P, P2);
  const T* ar = coef_.data();
  const T* ai = ar + P;
  const T* g = ai + P;
  for (int64_t j = 0; j < len; ++j) {
    const T* pr = j == 0 ? h0 : H + (j - 1) * P2;
    const T* pi = pr + P;
    const T* ur = U + j * P2;
    const T* ui = ur + P;
    T* hr = H + j * P2;
    T* hi = hr + P;
#pragma omp simd
    for (int64_t n = 0; n < P; ++n) {
      hr[n] = ar[n] * pr[n] - ai[n] * pi[n] + g[n] * ur[n];
      hi[n] = ar[n] * pi[n] + ai[n] * pr[n] + g[n] * ui[n];
    }
  }
}

template <class T>
void LruMixer<T>::forward(core::ViewT<const T> x, core::ViewT<const T> s0, core::ViewT<T> y) {
  SB_CHECK(x.shape.rank == 3 && x.dim(2) == in_, "lru.forward: x must be (B, N, I={}), got {}", in_,
           x.shape.str());
  const int64_t B = x.dim(0), N = x.dim(1), I = in_, O = out_, P = p_, S = 2 * P;
  SB_CHECK(B > 0 && N > 0, "lru.forward: empty input {}", x.shape.str());
  core::check_shape(y, core::Shape{B, N, O}, "lru.forward y");
  if (s0.data) core::check_shape(s0, core::Shape{B, S}, "lru.forward s0");
  x_ = x;
  b_ = B;
  n_ = N;
  const int64_t L = chunk_len(N), chunks = (N + L - 1) / L, W = ws_stride(L);
  threads_ = max_slots();
  refresh_coefficients();
  core::grow(bnd_, B * chunks * S);
  core::grow(final_, B * S);
  core::grow(ws_, threads_ * W);

  // y = x Dᵀ for all rows; the chunks add Re(C h).
  backend::gemm<T>(Trans::N, Trans::T, B * N, O, I, T(1), x.data, I, d_->value, I, T(0), y.data, O);
  const bool split = B * N * S >= kRowParallelMin;
  for_slots(B, threads_, split, [&](int slot, int64_t r0, int64_t r1) {
    T* U = ws_.data() + slot * W;
    T* H = U + L * S;
    for (int64_t b = r0; b < r1; ++b) {
      T* bnd = bnd_.data() + b * chunks * S;
      if (s0.data)
        std::copy_n(s0.data + b * S, S, bnd);
      else
        std::fill_n(bnd, S, T(0));
      for (int64_t c = 0; c < chunks; ++c) {
        const int64_t t0 = c * L, len = std::min(L, N - t0);
        const T* xc = x.data + (b * N + t0) * I;
        T* yc = y.data + (b * N + t0) * O;
        scan_chunk(len, xc, bnd + c * S, U, H);
        backend::gemm<T>(Trans::N, Trans::T, len, O, P, T(1), H, S, c_re_->value, P, T(1), yc, O);
        backend::gemm<T>(Trans::N, Trans::T, len, O, P, T(-1), H + P, S, c_im_->value, P, T(1), yc,
                         O);
        T* next = c + 1 < chunks ? bnd + (c + 1) * S : final_.data() + b * S;
        std::copy_n(H + (len - 1) * S, S, next);
      }
    }
  });
}

template <class T>
void LruMixer<T>::backward(core::ViewT<const T> dy, core::ViewT<T> dx, core::ViewT<T> ds0) {
  SB_CHECK(x_.data != nullptr, "lru.backward: no forward to differentiate");
  const int64_t B = b_, N = n_, I = in_, O = out_, P = p_, S = 2 * P;
  core::check_shape(dy, core::Shape{B, N, O}, "lru.backward dy");
  if (dx.data) core::check_shape(dx, core::Shape{B, N, I}, "lru.backward dx");
  if (ds0.data) core::check_shape(ds0, core::Shape{B, S}, "lru.backward ds0");
  const int64_t L = chunk_len(N), chunks = (N + L - 1) / L, W = ws_stride(L);
  const int slots = threads_;
  refresh_coefficients();
  const T* x = x_.data;

  // dD += dyᵀ x and dx = dy D over all rows; the chunks add the recurrent part of dx.
  backend::gemm<T>(Trans::T, Trans::N, O, I, B * N, T(1), dy.data, O, x, I, T(1), d_->grad, I);
  if (dx.data)
    backend::gemm<T>(Trans::N, Trans::N, B * N, I, O, T(1), dy.data, O, d_->value, I, T(0), dx.data,
                     I);

  // Each slot's parameter-gradient accumulators start at zero.
  for (int s = 0; s < slots; ++s) {
    T* acc = ws_.data() + s * W + 3 * L * S + S;  // δλ, δg, dB, dC
    std::fill_n(acc, W - 3 * L * S - S, T(0));
  }
  const T* ar = coef_.data();
  const T* ai = ar + P;
  const T* g = ai + P;
  const bool split = B * N * S >= kRowParallelMin;
  for_slots(B, slots, split, [&](int slot, int64_t r0, int64_t r1) {
    T* U = ws_.data() + slot * W;
    T* H = U + L * S;
    T* dH = H + L * S;
    T* carry = dH + L * S;  // δh_{t+1} carried back, already multiplied by conj(λ)
    T* dlr = carry + S;     // δλ re, im
    T* dli = dlr + P;
    T* dg = dli + P;
    T* dbr = dg + P;
    T* dbi = dbr + P * I;
    T* dcr = dbi + P * I;
    T* dci = dcr + O * P;
    for (int64_t b = r0; b < r1; ++b) {
      const T* bnd = bnd_.data() + b * chunks * S;
      std::fill_n(carry, S, T(0));
      for (int64_t c = chunks - 1; c >= 0; --c) {
        const int64_t t0 = c * L, len = std::min(L, N - t0);
        const T* xc = x + (b * N + t0) * I;
        const T* dyc = dy.data + (b * N + t0) * O;
        const T* h0 = bnd + c * S;
        scan_chunk(len, xc, h0, U, H);
        backend::gemm<T>(Trans::N, Trans::N, len, P, O, T(1), dyc, O, c_re_->value, P, T(0), dH, S);
        backend::gemm<T>(Trans::N, Trans::N, len, P, O, T(-1), dyc, O, c_im_->value, P, T(0),
                         dH + P, S);
        backend::gemm<T>(Trans::T, Trans::N, O, P, len, T(1), dyc, O, H, S, T(1), dcr, P);
        backend::gemm<T>(Trans::T, Trans::N, O, P, len, T(-1), dyc, O, H + P, S, T(1), dci, P);
        T* cr = carry;
        T* ci = carry + P;
        for (int64_t j = len - 1; j >= 0; --j) {
          const T* pr = j == 0 ? h0 : H + (j - 1) * S;
          const T* pi = pr + P;
          const T* ur = U + j * S;
          const T* ui = ur + P;
          T* er = dH + j * S;  // in: ∂L/∂h_t through y_t; out: δu_t
          T* ei = er + P;
#pragma omp simd
          for (int64_t n = 0; n < P; ++n) {
            const T dr = er[n] + cr[n], di = ei[n] + ci[n];  // δh_t
            dlr[n] += dr * pr[n] + di * pi[n];
            dli[n] += di * pr[n] - dr * pi[n];
            dg[n] += dr * ur[n] + di * ui[n];
            er[n] = g[n] * dr;
            ei[n] = g[n] * di;
            cr[n] = ar[n] * dr + ai[n] * di;  // conj(λ) δh_t
            ci[n] = ar[n] * di - ai[n] * dr;
          }
        }
        if (dx.data) {
          T* dxc = dx.data + (b * N + t0) * I;
          backend::gemm<T>(Trans::N, Trans::N, len, I, P, T(1), dH, S, b_re_->value, I, T(1), dxc,
                           I);
          backend::gemm<T>(Trans::N, Trans::N, len, I, P, T(1), dH + P, S, b_im_->value, I, T(1),
                           dxc, I);
        }
        backend::gemm<T>(Trans::T, Trans::N, P, I, len, T(1), dH, S, xc, I, T(1), dbr, I);
        backend::gemm<T>(Trans::T, Trans::N, P, I, len, T(1), dH + P, S, xc, I, T(1), dbi, I);
      }
      if (ds0.data) std::copy_n(carry, S, ds0.data + b * S);
    }
  });

  // Sum the slots in order, then the chain rule to nu_log, theta_log, gamma_log.
  const int64_t acc_len = 3 * P + 2 * P * I + 2 * O * P;
  for (int s = 1; s < slots; ++s) {
    const T* src = ws_.data() + s * W + 3 * L * S + S;
    T* dst = ws_.data() + 3 * L * S + S;
    for (int64_t i = 0; i < acc_len; ++i) dst[i] += src[i];
  }
  const T* acc = ws_.data() + 3 * L * S + S;
  const T* dlr = acc;
  const T* dli = dlr + P;
  const T* dg = dli + P;
  const T* dbr = dg + P;
  const T* dbi = dbr + P * I;
  const T* dcr = dbi + P * I;
  const T* dci = dcr + O * P;
  for (int64_t n = 0; n < P; ++n) {
    const std::complex<double> l = lambda(n);
    const double e = std::exp(static_cast<double>(nu_log_->value[n]));
    const double th = std::exp(static_cast<double>(theta_log_->value[n]));
    const double gn = std::exp(static_cast<double>(gamma_log_->value[n]));
    const double lr = static_cast<double>(dlr[n]), li = static_cast<double>(dli[n]);
    nu_log_->grad[n] += static_cast<T>(-e * (lr * l.real() + li * l.imag()));
    theta_log_->grad[n] += static_cast<T>(th * (li * l.real() - lr * l.imag()));
    gamma_log_->grad[n] += static_cast<T>(gn * static_cast<double>(dg[n]));
  }
  for (int64_t i = 0; i < P * I; ++i) {
    b_re_->grad[i] += dbr[i];
    b_im_->grad[i] += dbi[i];
  }
  for (int64_t i = 0; i < O * P; ++i) {
    c_re_->grad[i] += dcr[i];
    c_im_->grad[i] += dci[i];
  }
}

template <class T>
core::ViewT<const T> LruMixer<T>::final_state() const {
  return core::ViewT<const T>(final_.data(), core::Shape{b_, 2 * p_});
}

template <class T>
void LruMixer<T>::step(core::ViewT<const T> x, core::ViewT<T> state, core::ViewT<T> y) {
  SB_CHECK(x.shape.rank == 2 && x.dim(1) == in_, "lru.step: x must be (B, I={}), got {}", in_,
           x.shape.str());
  const int64_t B = x.dim(0), I = in_, O = out_, P = p_, S = 2 * P;
  core::check_shape(state, core::Shape{B, S}, "lru.step state");
  core::check_shape(y, core::Shape{B, O}, "lru.step y");
  refresh_coefficients();
  core::grow(step_u_, B * S);
  T* U = step_u_.data();
  backend::gemm<T>(Trans::N, Trans::T, B, P, I, T(1), x.data, I, b_re_->value, I, T(0), U, S);
  backend::gemm<T>(Trans::N, Trans::T, B, P, I, T(1), x.data, I, b_im_->value, I, T(0), U + P, S);
  const T* ar = coef_.data();
  const T* ai = ar + P;
  const T* g = ai + P;
  for (int64_t b = 0; b < B; ++b) {
    T* hr = state.data + b * S;
    T* hi = hr + P;
    const T* ur = U + b * S;
    const T* ui = ur + P;
#pragma omp simd
    for (int64_t n = 0; n < P; ++n) {
      const T pr = hr[n], pi = hi[n];
      hr[n] = ar[n] * pr - ai[n] * pi + g[n] * ur[n];
      hi[n] = ar[n] * pi + ai[n] * pr + g[n] * ui[n];
    }
  }
  backend::gemm<T>(Trans::N, Trans::T, B, O, I, T(1), x.data, I, d_->value, I, T(0), y.data, O);
  backend::gemm<T>(Trans::N, Trans::T, B, O, P, T(1), state.data, S, c_re_->value, P, T(1), y.data,
                   O);
  backend::gemm<T>(Trans::N, Trans::T, B, O, P, T(-1), state.data + P, S, c_im_->value, P, T(1),
                   y.data, O);
}

template <class T>
size_t LruMixer<T>::estimate_bytes(int64_t B, int64_t N) const {
  const int64_t L = chunk_len(N), chunks = (N + L - 1) / L, S = 2 * p_;
  const int64_t elems = 3 * p_ + B * chunks * S + B * S + max_slots() * ws_stride(L);
  return static_cast<size_t>(elems) * sizeof(T);
}

template <class T>
size_t LruMixer<T>::held_bytes() const {
  return core::bytes_of(coef_) + core::bytes_of(bnd_) + core::bytes_of(final_) +
         core::bytes_of(ws_) + core::bytes_of(step_u_);
}

template class LruMixer<float>;
template class LruMixer<double>;

SEQBENCH_MIXER_FACTORY(kLruMixer, LruMixer);

}  // namespace seqbench::nn
