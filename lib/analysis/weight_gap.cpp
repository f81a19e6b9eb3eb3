#include "analysis/weight_gap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <utility>

#include "core/check.hpp"
#include "core/param_store.hpp"
#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "nn/cells/rnn.hpp"
#include "nn/init.hpp"
#include "nn/recurrent/recurrent.hpp"
#include "optim/projection.hpp"

namespace seqbench::analysis {

namespace {

using DTensor = core::TensorT<double>;
using Rnn = nn::Recurrent<nn::RnnCell<double>>;

// tanh RNN + linear readout; every parameter (w_x, w_h, b, w_out) lives in one store so
// that ps.values() is θ and ps.grads() is ∇_θ L.
class Model {
 public:
  Model(int64_t I, int64_t H, int64_t n, int64_t T)
      : rnn_(nn::RnnCell<double>(ps_, "rnn", I, H, nn::RnnOptions{"tanh", "xavier"}), 0),
        w_out_(&ps_.add("w_out", core::Shape{H})),
        y_(core::Shape{T, n, H}),
        dy_(core::Shape{T, n, H}),
        p_(core::Shape{n}) {
    ps_.finalize(0);
  }

  core::ParamStoreT<double>& ps() { return ps_; }
  nn::RnnCell<double>& cell() { return rnn_.cell(); }
  double* w_out() { return w_out_->value; }

  // x (len, n, I), len ≤ T, from a zero state -> p (n): p_r = <w_out, h_len,r>.
  const double* predict(core::ViewT<const double> x) {
    const int64_t len = x.dim(0), n = x.dim(1), H = rnn_.hidden();
    rnn_.forward(x, core::ViewT<const double>(), core::ViewT<double>(y_.data(), {len, n, H}));
    const double* h_last = y_.data() + (len - 1) * n * H;  // (n, H)
    for (int64_t r = 0; r < n; ++r) {
      double s = 0;
      for (int64_t j = 0; j < H; ++j) s += w_out_->value[j] * h_last[r * H + j];
      p_[r] = s;
    }
    return p_.data();
  }

  // x (len, n, I), target (n) -> ps.grads() = ∇_θ (1/n) Σ_r ½ (p_r − target_r)².
  void gradient(core::ViewT<const double> x, const double* target) {
    const int64_t len = x.dim(0), n = x.dim(1), H = rnn_.hidden();
    predict(x);
    ps_.zero_grad();
    std::fill_n(dy_.data(), len * n * H, 0.0);
    const double* h_last = y_.data() + (len - 1) * n * H;  // (n, H)
    double* dy_last = dy_.data() + (len - 1) * n * H;      // (n, H)
    for (int64_t r = 0; r < n; ++r) {
      const double dp = (p_[r] - target[r]) / double(n);
      for (int64_t j = 0; j < H; ++j) {
        dy_last[r * H + j] = dp * w_out_->value[j];
        w_out_->grad[j] += dp * h_last[r * H + j];
      }
    }
    rnn_.backward(core::ViewT<const double>(dy_.data(), {len, n, H}), core::ViewT<double>(),
                  core::ViewT<double>());
  }

  // θ ← θ − step ∇L, then ‖w_h‖_2 ≤ lambda.
  void descend(double step, double lambda) {
    auto v = ps_.values();
    auto g = ps_.grads();
    for (size_t i = 0; i < v.size(); ++i) v[i] -= step * g[i];
    optim::project_rnn(cell().w_h().value, rnn_.hidden(), lambda);
  }

 private:
  core::ParamStoreT<double> ps_;  // declared first: the cell registers into it
  Rnn rnn_;
  core::ParamT<double>* w_out_;
  DTensor y_, dy_;  // (T, n, H) hidden states and their gradients
  DTensor p_;       // (n) predictions
};

// The construction shared by teacher and student init: W_x ~ N(0, 1/I), W_h = λ Q with Q
// Haar-orthogonal (every singular value λ), b = 0, w_out ~ N(0, 1/H).
void draw(Model& m, core::Rng& rng, int64_t I, int64_t H, double lambda) {
  auto& cell = m.cell();
  for (int64_t i = 0; i < cell.w_x().numel(); ++i)
    cell.w_x().value[i] = rng.normal() / std::sqrt(double(I));
  nn::orthogonal(rng, cell.w_h().value, H, H, lambda);
  std::fill_n(cell.b().value, H, 0.0);
  for (int64_t j = 0; j < H; ++j) m.w_out()[j] = rng.normal() / std::sqrt(double(H));
}

void check_config(const WeightGapConfig& c) {
  auto require = [](bool ok, const std::string& msg) {
    if (!ok) throw core::UsageError("weight_gap: " + msg);
  };
  require(c.lambda > 0 && c.lambda < 1,
          fmt::format("lambda must be in (0, 1) (a contractive model), got {}", c.lambda));
  require(c.T >= 1 && c.hidden >= 1 && c.input >= 1 && c.n >= 1,
          fmt::format("T, hidden, input and n must be >= 1, got {}, {}, {}, {}", c.T, c.hidden,
                      c.input, c.n));
  require(c.input_scale >= 0 && c.alpha >= 0,
          fmt::format("input_scale and alpha must be >= 0, got {} and {}", c.input_scale,
                      c.alpha));
  require(c.steps >= 0, fmt::format("steps must be >= 0, got {}", c.steps));
  require(c.record_every >= 1,
          fmt::format("record_every must be >= 1, got {}", c.record_every));
  require(!c.ks.empty(), "ks is empty; give at least one truncation window, e.g. {2, 4, 8}");
  for (const int64_t k : c.ks)
    require(k >= 1, fmt::format("every k must be >= 1 (k >= T means no truncation), got {}", k));
}

}  // namespace

std::vector<WeightGapRow> weight_gap(const WeightGapConfig& cfg) {
  check_config(cfg);
  const int64_t T = cfg.T, H = cfg.hidden, I = cfg.input, n = cfg.n, N = cfg.steps;

  std::vector<int64_t> record;
  for (int64_t s = 0; s <= N; s += cfg.record_every) record.push_back(s);
  if (record.back() != N) record.push_back(N);

  core::Rng rng(cfg.seed);
  DTensor x(core::Shape{T, n, I});
  DTensor y(core::Shape{n});
  {
    Model teacher(I, H, n, T);
    draw(teacher, rng, I, H, cfg.lambda);
    for (int64_t i = 0; i < x.numel(); ++i) x[i] = cfg.input_scale * rng.normal();
    std::copy_n(teacher.predict(x.cview()), n, y.data());
  }
  std::vector<double> init;
  {
    Model student(I, H, n, T);
    draw(student, rng, I, H, cfg.lambda);
    init.assign(student.ps().values().begin(), student.ps().values().end());
  }

  // Trains a fresh model from init on the last `window` inputs and calls at(step, θ) at
  // every recorded step.
  auto train = [&](int64_t window, auto&& at) {
    Model m(I, H, n, T);
    std::copy(init.begin(), init.end(), m.ps().values().begin());
    const core::ViewT<const double> xs(x.data() + (T - window) * n * I, {window, n, I});
    size_t next = 0;
    for (int64_t t = 0;; ++t) {
      if (next < record.size() && record[next] == t) at(next++, m.ps().values());
      if (t == N) break;
      m.gradient(xs, y.data());
      m.descend(cfg.alpha / double(t + 1), cfg.lambda);
    }
  };

  std::vector<std::vector<double>> recurrent(record.size());
  train(T, [&](size_t i, std::span<double> theta) {
    recurrent[i].assign(theta.begin(), theta.end());
  });

  std::vector<WeightGapRow> rows;
  rows.reserve(cfg.ks.size() * record.size());
  for (const int64_t k : cfg.ks) {
    train(std::min(k, T), [&](size_t i, std::span<double> theta) {
      double sq = 0;
      for (size_t j = 0; j < theta.size(); ++j) {
        const double d = recurrent[i][j] - theta[j];
        sq += d * d;
      }
      rows.push_back(WeightGapRow{k, record[i], std::sqrt(sq)});
    });
  }
  return rows;
}

WeightGapFit final_gap_log_rate(const std::vector<WeightGapRow>& rows, int64_t T, int64_t steps) {
  std::vector<std::pair<int64_t, double>> points;  // (k, log gap)
  for (const auto& r : rows)
    if (r.step == steps && r.k < T && r.gap > 0) points.emplace_back(r.k, std::log(r.gap));
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end(),
                           [](const auto& a, const auto& b) { return a.first == b.first; }),
               points.end());
  SB_CHECK(points.size() >= 2,
           "need at least two windows k < T = {} with a positive gap after {} steps to fit a "
           "slope, got {}",
           T, steps, points.size());
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  WeightGapFit fit;
  for (const auto& [k, y] : points) {
    const double x = double(k);
    n += 1;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
    fit.ks.push_back(k);
  }
  fit.log_rate = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  return fit;
}

}  // namespace seqbench::analysis
