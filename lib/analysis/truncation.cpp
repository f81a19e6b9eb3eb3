#include "analysis/truncation.hpp"

#include <algorithm>
#include <cmath>

#include "core/check.hpp"
#include "core/rng.hpp"
#include "nn/cells/rnn.hpp"
#include "nn/init.hpp"
#include "nn/recurrent/recurrent.hpp"
#include "optim/projection.hpp"

namespace seqbench::analysis {

namespace {

using DTensor = core::TensorT<double>;
using Rnn = nn::Recurrent<nn::RnnCell<double>>;

// ∇_θ <w_out, h_last> of a run of rnn over x (len, 1, I) from a zero state.
std::vector<double> output_gradient(Rnn& rnn, core::ParamStoreT<double>& ps,
                                    core::ViewT<const double> x, const DTensor& w_out) {
  const int64_t len = x.dim(0), H = rnn.hidden();
  DTensor y(core::Shape{len, 1, H}), dy(core::Shape{len, 1, H});
  rnn.forward(x, core::ViewT<const double>(), y.view());
  std::copy_n(w_out.data(), H, dy.data() + (len - 1) * H);
  ps.zero_grad();
  rnn.backward(dy.cview(), core::ViewT<double>(), core::ViewT<double>());
  return {ps.grads().begin(), ps.grads().end()};
}

}  // namespace

std::vector<TruncationGapRow> truncation_gradient_gap(const TruncationGapConfig& cfg) {
  SB_CHECK(cfg.k_max >= 1 && cfg.k_max < cfg.T, "k_max must be in [1, T), got {} with T = {}",
           cfg.k_max, cfg.T);
  SB_CHECK(cfg.lambda > 0 && cfg.lambda < 1, "lambda must be in (0, 1), got {}", cfg.lambda);
  const int64_t T = cfg.T, H = cfg.hidden, I = cfg.input;
  std::vector<TruncationGapRow> rows(static_cast<size_t>(cfg.k_max));
  for (int64_t k = 1; k <= cfg.k_max; ++k) {
    rows[size_t(k - 1)].k = k;
    rows[size_t(k - 1)].bound = double(k) * std::pow(cfg.lambda, double(k));
  }
  core::Rng rng(cfg.seed);
  for (int64_t n = 0; n < cfg.instances; ++n) {
    core::ParamStoreT<double> ps;
    Rnn rnn(nn::RnnCell<double>(ps, "rnn", I, H, nn::RnnOptions{"tanh", "xavier"}), 0);
    ps.finalize(0);
    auto& cell = rnn.cell();
    for (int64_t i = 0; i < cell.w_x().numel(); ++i)
      cell.w_x().value[i] = rng.normal() / std::sqrt(double(I));
    nn::orthogonal(rng, cell.w_h().value, H, H, cfg.lambda);  // every singular value = λ
    for (int64_t i = 0; i < cell.b().numel(); ++i) cell.b().value[i] = 0;
    SB_CHECK(std::abs(optim::spectral_norm(cell.w_h().value, H, H) - cfg.lambda) < 1e-9,
             "W_h must have spectral norm λ");
    DTensor x(core::Shape{T, 1, I}), w_out(core::Shape{H});
    for (int64_t i = 0; i < x.numel(); ++i) x[i] = cfg.input_scale * rng.normal();
    for (int64_t i = 0; i < H; ++i) w_out[i] = rng.normal() / std::sqrt(double(H));

    const std::vector<double> full = output_gradient(rnn, ps, x.cview(), w_out);
    for (int64_t k = 1; k <= cfg.k_max; ++k) {
      core::ViewT<const double> last_k(x.data() + (T - k) * I, core::Shape{k, 1, I});
      const std::vector<double> trunc = output_gradient(rnn, ps, last_k, w_out);
      double sq = 0;
      for (size_t i = 0; i < full.size(); ++i) sq += (full[i] - trunc[i]) * (full[i] - trunc[i]);
      rows[size_t(k - 1)].gap += std::sqrt(sq) / double(cfg.instances);
    }
  }
  return rows;
}

double fitted_log_rate(const std::vector<TruncationGapRow>& rows, int64_t k_from, int64_t k_to) {
  // Gaps below 1e-11 of the largest are rounding noise in double: not part of the trend.
  double largest = 0;
  for (const auto& r : rows) largest = std::max(largest, r.gap);
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& r : rows) {
    if (r.k < k_from || r.k > k_to || !(r.gap > 1e-11 * largest)) continue;
    const double x = double(r.k), y = std::log(r.gap / double(r.k));
    n += 1;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  SB_CHECK(n >= 2, "need at least two positive gaps with k in [{}, {}] to fit a slope", k_from,
           k_to);
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

RateFit fit_upper_half(const std::vector<TruncationGapRow>& rows) {
  double largest = 0;
  int64_t usable = 1;
  for (const auto& r : rows) largest = std::max(largest, r.gap);
  for (const auto& r : rows)
    if (r.gap > 1e-11 * largest) usable = std::max(usable, r.k);
  RateFit f;
  f.k_from = std::max<int64_t>(1, usable / 2);
  f.k_to = usable;
  f.log_rate = fitted_log_rate(rows, f.k_from, f.k_to);
  return f;
}

}  // namespace seqbench::analysis
