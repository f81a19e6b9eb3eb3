// Sparse Attentive Backtracking (SAB; Ke et al. 2018, arXiv 1809.03702), the SAB
// baseline of Kerg et al. 2020 (docs/papers.md section 1): an LSTM with truncated BPTT whose
// hidden state is topped up by a sparse, top-k attention over every attk-th past state;
// gradients reach those states through the attention whatever the distance.
//
// Equations (per batch row; row-vector convention; w_a = [w_q | w_m], each H long):
//   ĥ_t, c_t = LSTM(x_t, h_{t-1}, c_{t-1})            (nn::LstmCell, gates i f c~ o)
//   memory   M_t = {h_i : i ≡ 0 (mod attk), i < t}     (n_t = ceil(t / attk) entries)
//   scores   e_i = w_aᵀ tanh([ĥ_t ; h_i]) = w_qᵀ tanh(ĥ_t) + w_mᵀ tanh(h_i),   i ∈ M_t
//   weights  n_t <= ktop:  a_i = e_i for every i (raw scores, not normalised)
//            n_t >  ktop:  p = the ktop-th largest score, δ = e_p + ε,
//                          w_i = max(e_i - δ, 0), a_i = w_i / (Σ_j w_j + ε),  ε = 1e-7
//                          (only the ktop - 1 scores above e_p can be non-zero)
//   summary  r_t = Σ_i a_i h_i        (0 when n_t = 0)
//   output   h_t = ĥ_t + r_t          (y_t = h_t; the cell state c_t is not changed)
// h_t (with its summary) is what the next step's LSTM reads and what enters the memory.
// Because tanh acts on the concatenation, the query term w_qᵀ tanh(ĥ_t) is the same for
// every memory: once n_t > ktop it cancels in e_i - δ, so the query only matters while
// the memory holds <= ktop states. This is the reference's math, kept on purpose.
//
// Selection (discrete; a constant in backward): the ktop largest scores, ties to the
// lower memory index; stored largest first, so the pivot p is last. Backward sends
// gradient only into the selected memories: value gradient a_i dr into the non-zero
// ones, score gradient into all ktop (the pivot through δ). Σ_i de_i = 0 on the sparse
// branch, so w_q and ĥ_t then get no attention gradient (the cancellation above).
//
// Truncation (trunc = k > 0, as nn::Recurrent): at every cut t = k, 2k, ... (t > 0) no
// gradient flows from step t's LSTM into [h_{t-1} | c_{t-1}]; gradients through the
// attention (into every selected h_i) and through the outputs are never cut. trunc = 0
// means full BPTT. The parameters' gradient is that of this truncated graph.
//
// Deviations from the reference implementation (nke001/sparse_attentive_backtracking_
// release, layers_torch.py, self_LSTM_sparse_attn), each deliberate:
//   - memory: the reference starts with the initial h and appends h_i when
//     (i+1) % attk == 0; here the memory is h_i with i % attk == 0 (h_0 first) and the
//     initial state is never a memory.
//   - truncation: the reference detaches before step i when (i+1) % trunc == 0; here
//     the cut is before step t when t % trunc == 0 (nn::Recurrent's convention).
//   - output: the reference's classifier reads [h_t ; r_t]; this layer outputs h_t only
//     (which already contains r_t), like every SequenceLayer.
//   - the reference's auxiliary predict_m head (self_LSTM_sparse_attn_predict) is not
//     implemented.
//
// State row (S = 2H): [h | c]. As input, s0 = [h_{-1} | c_{-1}] is what step 0's LSTM
// reads (all of it, so ds0 is a full gradient); as output, [h_{T-1} | c_{T-1}].
//
// Parameters (declared in the constructor): name.w_x (I, 4H), name.w_h (H, 4H), name.b
// (4H) (nn::LstmCell, ldigo), name.w_a (2H) = [w_q | w_m] (the reference's w_t).
// Init: LstmCell's PyTorch-style U(-1/sqrt(H), 1/sqrt(H)) plus forget_bias on the forget
// gate; w_a ~ N(0, 0.01²) as the reference.
//
// Kept between forward and backward (T time, B batch, H hidden, N = ceil(T/attk)
// memory slots, K = Σ_t min(n_t, ktop) selected entries per row):
//   xp_     (T, B, 4H)   input projections (overwritten by dL/da_t in backward)
//   states_ (T+1, B, 2H) [h_t | c_t] after the summary, s_0 = the initial state
//   cache_  (T, B, 5H)   the LSTM cell's per-step cache
//   hhat_   (T, B, H)    ĥ_t (the query needs tanh(ĥ_t) again in backward)
//   ms_     (N, B)       w_mᵀ tanh(h_i) per memory slot, computed once per state
//   sel_idx_, sel_a_ (B·K)  selected time indices and their a; zsum_ (T, B) Σw + ε
//   workspaces: order_ (N), score_ (N), da_/de_ (ktop) per row; backward: dh_ (T, B, H)
//   accumulator into every h_t, dms_ (N, B) score-gradient accumulator per memory,
//   ds_/ds_prev_ (B, 2H); allocated when first needed and kept, so held_bytes() counts
//   what the buffers hold now, not a peak.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/param_store.hpp"
#include "nn/cells/lstm.hpp"
#include "nn/sequence_layer.hpp"

namespace seqbench::nn {

struct SabOptions {
  int64_t trunc = 10;  // truncated-BPTT window of the LSTM path, >= 0 (0 = full BPTT)
  int64_t attk = 5;    // every attk-th state is remembered, >= 1
  int64_t ktop = 5;    // top-k of the memory attended, >= 1
  double forget_bias = 0;
};

template <class T>
class SabLayer : public SequenceLayer<T> {
 public:
  static constexpr double kEps = 1e-7;  // the reference's eps (10e-8)

  // Declares the parameters listed above under `name`. Throws core::UsageError for
  // trunc < 0, attk < 1 or ktop < 1.
  SabLayer(core::ParamStoreT<T>& ps, const std::string& name, int64_t input, int64_t hidden,
           SabOptions opt = {});

  int64_t input_size() const override { return in_; }
  int64_t hidden() const override { return h_; }
  int64_t state_size() const override { return 2 * h_; }

  // LstmCell::init(rng, forget_bias), then w_a ~ N(0, 0.01²). Call after ps.finalize().
  void init(core::Rng& rng) override;

  // x (T, B, I), s0 (B, 2H) or null data -> y (T, B, H). The caller keeps x alive until
  // backward.
  void forward(core::ViewT<const T> x, core::ViewT<const T> s0, core::ViewT<T> y) override;
  // dy (T, B, H) -> dx (T, B, I), ds0 (B, 2H) (each skipped when null); parameter
  // gradients accumulate; dh_norms[t] = ||dL/dh_t|| (total derivative of the truncated
  // graph: output, LSTM recurrence within the chunk, every later step that attended
  // to h_t). One backward per forward.
  void backward(core::ViewT<const T> dy, core::ViewT<T> dx, core::ViewT<T> ds0,
                std::vector<double>* dh_norms = nullptr) override;
  core::ViewT<const T> final_state() const override;
  size_t held_bytes() const override;

  const SabOptions& options() const { return opt_; }

  // Debug/test access to the last forward: the memory size n_t at step t, and for row
  // r the selected time indices (largest score first; all n_t in memory order when
  // n_t <= ktop) and their weights a.
  int64_t memory_size(int64_t t) const;
  std::span<const int32_t> attended(int64_t t, int64_t r) const;
  std::span<const T> attention(int64_t t, int64_t r) const;

  // The sparsifier on one row of n scores e (n >= 1). order (n) receives a permutation
  // of 0..n-1 with the selected K = min(n, ktop) first (n > ktop: by descending score,
  // ties to the lower index, pivot at K-1; n <= ktop: 0..n-1); a (K) their weights as
  // in the equations; returns K and sets *z = Σ w + ε (1 on the raw branch).
  static int64_t sparsify(int64_t n, int64_t ktop, const T* e, int32_t* order, T* a, T* z);
  // Backward of sparsify with the selection fixed: da (K) = dL/da for the selected
  // entries -> de (K) = dL/de for them (every other score gets 0).
  static void sparsify_backward(int64_t n, int64_t ktop, const T* a, T z, const T* da, T* de);

 private:
  void reserve(int64_t steps, int64_t b);

  int64_t in_, h_;
  SabOptions opt_;
  LstmCell<T> lstm_;
  core::ParamT<T>* w_a_;

  int64_t T_ = 0, B_ = 0, n_mem_ = 0;
  core::ViewT<const T> x_;
  std::vector<int64_t> kappa_, sel_off_;  // (T), (T+1): selected per row, offsets (times B)
  std::vector<T> xp_, states_, cache_, hhat_, ms_, sel_a_, zsum_;
  std::vector<int32_t> sel_idx_, order_;
  std::vector<T> score_, da_, de_, dh_, dms_, ds_, ds_prev_;
};

}  // namespace seqbench::nn
