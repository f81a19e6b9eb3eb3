// Miller & Hardt (2019), Proposition 2 / Figure 1(b): a λ-contractive recurrent model and
// its truncated counterpart (state restarted from zero k steps back), trained from the same
// initialisation by projected gradient descent with step α_t = α / t, stay close in weight
// space: ‖w_recurrent − w_truncated‖ ≤ α γ k λ^k N^{αβ+1} after N steps (docs/papers.md
// section 3).
//
// One random instance (seeded), computed in double:
//   data     n sequences x (T, n, I), x_t ~ N(0, input_scale²);
//   targets  y = <w*, h*_T> from a random "teacher" tanh RNN with the same shapes and the
//            same construction as the student (W_x Gaussian / sqrt(I), W_h = λ Q, b = 0,
//            w* ~ N(0, 1/H)), so the targets are realisable by a λ-contractive model and
//            the student actually has something to fit (pure Gaussian targets would be
//            orders of magnitude larger than any p_T the small-input RNN can produce);
//   model    h_t = tanh(x_t W_x + h_{t-1} W_h + b), p_T = <w_out, h_T>; θ = (W_x, W_h, b,
//            w_out), w_out trained too (the paper's w is every parameter);
//   init     a second draw of the same construction (W_h = λ Q', so ‖W_h‖_2 = λ);
//   loss     (1/n) Σ_r ½ (p_T,r − y_r)², full batch (deterministic);
//   steps    θ ← θ − (α / t) ∇L(θ), t = 1..N, then W_h ← optim::project_rnn(W_h, H, λ).
// The recurrent model backpropagates through all T steps; the truncated model with window
// k predicts p_T from x[T−k .. T) run from a zero state (k ≥ T: the whole sequence, so it
// is the recurrent model and the gap is exactly 0).
#pragma once

#include <cstdint>
#include <iterator>
#include <vector>

namespace seqbench::analysis {

struct WeightGapConfig {
  double lambda = 0.8;   // projection radius for ‖W_h‖_2 (and ‖W_h‖_2 of teacher and init)
  int64_t T = 40;        // sequence length
  int64_t hidden = 16;   // H
  int64_t input = 4;     // I
  int64_t n = 32;        // sequences in the (full-batch) data set
  double input_scale = 0.1;  // standard deviation of the inputs
  double alpha = 0.5;        // α of the step size α / t
  int64_t steps = 200;       // N
  // truncation windows (k ≥ 1; k ≥ T = no truncation). Built from an array: GCC 12
  // warns falsely (-Wmaybe-uninitialized) on an initializer-list default here at -O3.
  static constexpr int64_t kDefaultKs[] = {2, 4, 8, 16};
  std::vector<int64_t> ks{std::begin(kDefaultKs), std::end(kDefaultKs)};
  uint64_t seed = 1;
  int64_t record_every = 10;  // rows at steps 0, r, 2r, ... and always at N
};

struct WeightGapRow {
  int64_t k = 0;
  int64_t step = 0;  // optimizer steps taken (0 = the shared initialisation)
  double gap = 0;    // ‖θ_recurrent − θ_truncated‖_2 over all parameters
};

// Rows ordered by k (in cfg.ks order), then by step. Throws core::Error for a bad config.
std::vector<WeightGapRow> weight_gap(const WeightGapConfig& cfg);

// The decay of the final weight gap with k: the least-squares slope of log(gap) against k
// over the rows at step `steps` with k < T (k >= T is the recurrent model, gap 0) and a
// positive gap, to compare with log λ. Returns the slope and the windows it was fitted
// on (ascending); throws core::Error when fewer than two windows qualify.
struct WeightGapFit {
  double log_rate = 0;
  std::vector<int64_t> ks;
};
WeightGapFit final_gap_log_rate(const std::vector<WeightGapRow>& rows, int64_t T, int64_t steps);

}  // namespace seqbench::analysis
