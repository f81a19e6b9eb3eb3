#include "nn/cells/lstm.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>

#include "backend/gemm.hpp"
#include "nn/cells/input_projection.hpp"
#include "nn/cells/lstm_gates.hpp"

namespace seqbench::nn {

using backend::Trans;

namespace {
// Rows per block of the fused step unless SEQBENCH_LSTM_ROWS says otherwise: 0 (unfused)
// on every ISA. Measured (docs/performance.md, "12. The LSTM step in row blocks"): blocks
// of 12 rows were even with the unfused step on AVX-512 (0.98-1.01x at H = 128, 1.06x at
// H = 256) and slower on AVX2 (1.03-1.04x, 1.42x at H = 256); 4, 8 and 16 rows were
// slower on both.
int64_t default_fused_rows() {
  if (const char* v = std::getenv("SEQBENCH_LSTM_ROWS")) {
    char* end = nullptr;
    const long r = std::strtol(v, &end, 10);
    if (end != v && *end == '\0' && r >= 0) return r;
  }
  return 0;
}
std::atomic<int64_t> g_fused_rows{default_fused_rows()};
}  // namespace

int64_t lstm_fused_rows() { return g_fused_rows.load(std::memory_order_relaxed); }

void set_lstm_fused_rows(int64_t rows) {
  g_fused_rows.store(rows < 0 ? default_fused_rows() : rows, std::memory_order_relaxed);
}


template <class T>
LstmCell<T>::LstmCell(core::ParamStoreT<T>& ps, const std::string& name, int64_t input,
                      int64_t hidden)
    : in_(input),
      h_(hidden),
      w_x_(&ps.add(name + ".w_x", core::Shape{input, 4 * hidden})),
      w_h_(&ps.add(name + ".w_h", core::Shape{hidden, 4 * hidden})),
      b_(&ps.add(name + ".b", core::Shape{4 * hidden})) {
  SB_CHECK(input > 0 && hidden > 0, "{}: sizes must be positive, got input={} hidden={}", name,
           input, hidden);
}

template <class T>
void LstmCell<T>::init(core::Rng& rng, double forget_bias) {
  const double a = 1.0 / std::sqrt(static_cast<double>(h_));
  for (auto* p : {w_x_, w_h_, b_})
    for (int64_t i = 0; i < p->numel(); ++i) p->value[i] = static_cast<T>(rng.uniform(-a, a));
  for (int64_t j = 0; j < h_; ++j) b_->value[h_ + j] += static_cast<T>(forget_bias);
}

template <class T>
void LstmCell<T>::input_forward(int64_t n, const T* x, T* xp) const {
  project_input(n, in_, 4 * h_, x, w_x_->value, b_->value, xp);
}

template <class T>
void LstmCell<T>::input_backward(int64_t n, const T* x, const T* dxp, T* dx) {
  project_input_backward(n, in_, 4 * h_, x, w_x_->value, dxp, dx, w_x_->grad, b_->grad);
}

template <class T>
void LstmCell<T>::step_forward(int64_t /*t*/, int64_t b, const T* xp, const T* s_prev, T* s,
                               T* cache) const {
  const int64_t H = h_, S = 2 * H, G = 4 * H, C = 5 * H;
  const LstmBlocks blocks(b);
  for (int64_t r0 = 0; r0 < b; r0 += blocks.rows) {
    const int64_t r1 = std::min(b, r0 + blocks.rows);
    // Recurrent term straight into the cache's gate slots: cache[:, :4H] = h_prev w_h.
    blocks.gemm<T>(r1 - r0, G, H, s_prev + r0 * S, S, w_h_->value, G, cache + r0 * C, C);
    for (int64_t r = r0; r < r1; ++r) {
      T* a = cache + r * C;
      const T* xr = xp + r * G;
      const T* c_prev = s_prev + r * S + H;
      T* h = s + r * S;
      T* c = h + H;
#pragma omp simd
      for (int64_t k = 0; k < G; ++k) a[k] += xr[k];
      lstm_gates_forward(H, a, c_prev, c, a + G, h);
    }
  }
}

template <class T>
void LstmCell<T>::step_backward(int64_t /*t*/, int64_t b, const T* s_prev, T* cache, const T* ds,
                                T* dxp, T* ds_prev) const {
  const int64_t H = h_, S = 2 * H, G = 4 * H, C = 5 * H;
  const LstmBlocks blocks(b);
  for (int64_t r0 = 0; r0 < b; r0 += blocks.rows) {
    const int64_t r1 = std::min(b, r0 + blocks.rows);
    for (int64_t r = r0; r < r1; ++r) {
      const T* a = cache + r * C;
      const T* tc = a + G;
      const T* c_prev = s_prev + r * S + H;
      const T* dh = ds + r * S;
      const T* dc = dh + H;
      T* da = dxp + r * G;
      T* dc_prev = ds_prev + r * S + H;
      lstm_gates_backward(H, a, tc, c_prev, dh, dc, da, dc_prev);
    }
    // dh_prev = dA w_h^T into the h part of ds_prev (row stride S).
    blocks.gemm<T>(r1 - r0, H, G, dxp + r0 * G, G, w_h_t_.data(), H, ds_prev + r0 * S, S);
  }
}

template <class T>
void LstmCell<T>::recurrent_weight_backward(int64_t n, const T* s_prev, const T* dxp,
                                            const T* /*cache*/) {
  const int64_t H = h_, S = 2 * H, G = 4 * H;
  backend::gemm<T>(Trans::T, Trans::N, H, G, n, T(1), s_prev, S, dxp, G, T(1), w_h_->grad, G);
}

template class LstmCell<float>;
template class LstmCell<double>;

}  // namespace seqbench::nn
