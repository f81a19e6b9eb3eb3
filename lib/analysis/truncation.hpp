// Miller & Hardt (2019), Lemma 2 / Figure 1: for a λ-contractive recurrent model the
// gradient of the output at time T differs from the gradient of the truncated model
// (state restarted from zero k steps back) by O(k λ^k).
//
// Random instances: a tanh RNN h_t = tanh(x_t W_x + h_{t-1} W_h), with W_h = λ Q for a
// random orthogonal Q (every singular value λ, so the state map is λ-contractive and
// the bound's rate is attained in the near-linear regime), W_x Gaussian, inputs
// x_t ~ N(0, input_scale²), p_T = <w_out, h_T> with w_out Gaussian. With large inputs
// tanh saturates, the effective contraction is below λ and the gap decays faster than
// λ^k (the bound still holds; it is just not tight). For each k the gap is
// ||∇_θ p_T − ∇_θ p_T^k||_2 over all parameters θ = (W_x, W_h, b), computed in double
// with our RnnCell and Recurrent driver (full run vs the last k steps from zero).
#pragma once

#include <cstdint>
#include <vector>

namespace seqbench::analysis {

struct TruncationGapConfig {
  double lambda = 0.8;    // spectral norm of W_h
  int64_t T = 80;         // sequence length
  int64_t hidden = 32;    // H
  int64_t input = 8;      // I
  int64_t k_max = 50;     // gaps for k = 1 .. k_max (k_max < T)
  int64_t instances = 20; // random instances averaged
  double input_scale = 0.01;  // standard deviation of the inputs (small: near-linear regime)
  uint64_t seed = 1;
};

struct TruncationGapRow {
  int64_t k = 0;
  double gap = 0;    // mean over instances of ||∇p_T − ∇p_T^k||
  double bound = 0;  // k λ^k (the shape of Lemma 2's bound, up to the constant γ)
};

std::vector<TruncationGapRow> truncation_gradient_gap(const TruncationGapConfig& cfg);

// Least-squares slope of log(gap) against k over rows with k in [k_from, k_to], after
// removing the log k factor of the bound: fits log(gap / k) = a + k log(rate); returns
// log(rate), to compare with log λ. Gaps below 1e-11 of the largest (rounding noise)
// are left out.
double fitted_log_rate(const std::vector<TruncationGapRow>& rows, int64_t k_from, int64_t k_to);

// The rate `seqbench stability` reports: fitted_log_rate over the upper half of the k
// range whose gaps are above rounding noise, k in [max(1, usable / 2), usable] where
// usable is the largest k with a gap above 1e-11 of the largest. Throws core::Error when
// fewer than two gaps are usable.
struct RateFit {
  int64_t k_from = 0, k_to = 0;
  double log_rate = 0;
};
RateFit fit_upper_half(const std::vector<TruncationGapRow>& rows);

}  // namespace seqbench::analysis
