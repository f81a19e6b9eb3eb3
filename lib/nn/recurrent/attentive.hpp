// Self-attentive recurrent layers of Kerg et al. 2020 ("Untangling tradeoffs between
// recurrence and self-attention", relevancy screening; docs/papers.md section 1):
//   mem_rnn   an RNN that attends to all past hidden states (MemRNN; O(T) per step)
//   rel_rnn   an RNN that attends to a short-term buffer ∪ a relevant set (RelMemRNN)
//   rel_lstm  the same attention with an LSTM whose gates read s_t (RelLSTM)
//
// Equations (per batch row; U = w_x, V = w_h as in nn/cells; row-vector convention):
//   for t >= 1, over the attended set A_t ⊆ {0 .. t-1}:
//     e_i  = vᵀ tanh(s_{t-1} v_a + h_i u_a)           i ∈ A_t    (query: the PREVIOUS s)
//     α    = softmax(e),  c_t = Σ_i α_i h_i,  s_t = ½ (h_{t-1} + c_t)
//   RNN kinds:  h_t = φ(x_t w_x + b + s_t w_h),  φ = tanh | relu
//   rel_lstm:   a_t = x_t w_x + b + s_t w_h (gate order i, f, c~, o as nn::LstmCell),
//               c_t = f ⊙ c_{t-1} + i ⊙ g,  h_t = o ⊙ tanh(c_t) (the cell state is not
//               attended)
//   t = 0 (our convention): no attention, s_0 = s_{-1} := the s part of the initial
//   state (zeros by default). The official code instead sets s to a pre-activation at
//   reset; with a zero initial state both start from a plain first RNN/LSTM step.
// Attended sets:
//   mem_rnn:  A_t = {0 .. t-1}.
//   rel_*:    A_t = relevant set R (≤ ρ filled slots, empty slots masked out) ∪ buffer
//             {max(0, t-ν) .. t-1}. The relevance score of state j is the sum of the
//             attention α it received while in the buffer. At step t (before attending)
//             state j = t-ν-1 leaves the buffer and is offered to R: it takes the first
//             empty slot, else it replaces the lowest-scored member (first such slot on
//             ties) if its own score is strictly higher. Every batch row has its own R.
//             Gradients flow through buffer and relevant-set states alike; the
//             selection (membership, scores) is discrete and a constant in backward.
//   With ν >= T, rel_rnn is mem_rnn (same attended sets in the same order).
//
// State row (S): RNN kinds [h | s] (S = 2H), rel_lstm [h | c | s] (S = 3H). As input
// (s0) the h part is not read (t = 0 has no attention and the RNN reads s, not h), so
// its gradient in ds0 is zero; the c part is c_{-1}, the s part s_{-1} = s_0. As output
// (final_state) the row is [h_{T-1} | c_{T-1} | s_{T-1}].
//
// Parameters (declared in the constructor): name.w_x (I, G), name.w_h (H, G), name.b (G)
// with G = H (RNN) or 4H (LSTM, ldigo as nn::LstmCell), name.u_a (H, H), name.v_a (H, H),
// name.v (H). The recurrent math runs on nn::RnnCell / nn::LstmCell, fed s_t in place of
// h_{t-1}.
//
// Kept between forward and backward (T time, B batch, H hidden, Sc = H (RNN) / 2H (LSTM),
// G = H / 4H, C = H / 5H cell cache, K = Σ_t κ_t attended entries per row where
// κ_t = t for mem_rnn and ≤ ν+ρ for rel_*):
//   xp_    (T, B, G)   input projections (overwritten by dL/da_t in backward)
//   cin_   (T, B, Sc)  what the cell reads at step t: s_t (RNN) or [s_t | c_{t-1}] (LSTM)
//   cout_  (T, B, Sc)  h_t (RNN) or [h_t | c_t] (LSTM)
//   cache_ (T, B, C)   the cell's per-step cache
//   q_     (T, B, H)   the queries s_{t-1} v_a, kept so backward does not redo the GEMM
//   hu_    (T, B, H)   h_i u_a, computed once per state, so that backward recomputes
//                      tanh(s_{t-1} v_a + h_i u_a) instead of caching a κ×H block per step
//   att_idx_, att_alpha_ (B·K)  attended state indices and their α (sparse structure,
//                      never a T×T matrix except for mem_rnn where K = T(T-1)/2)
//   score_ (T, B)      relevance scores (rel_*), slot_idx_/slot_score_ (B, ρ)
//   backward workspaces: dh_, dhu_ (T, B, H) accumulators into every attended h_i, and
//   a few (B, ·) rows; allocated by the first backward and kept, so held_bytes() counts
//   them from then on (it reports what the buffers hold now, not a peak).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/param_store.hpp"
#include "nn/cells/lstm.hpp"
#include "nn/cells/rnn.hpp"
#include "nn/sequence_layer.hpp"

namespace seqbench::nn {

struct AttentiveOptions {
  std::string kind = "rel_rnn";       // mem_rnn | rel_rnn | rel_lstm
  std::string nonlinearity = "tanh";  // tanh | relu (RNN kinds; ignored by rel_lstm)
  int64_t nu = 10;                    // ν: short-term buffer length (rel_*), >= 1
  int64_t rho = 10;                   // ρ: relevant-set size (rel_*), >= 0
  int64_t bptt = 0;                   // only 0 (full BPTT) for now
  double forget_bias = 0.0;           // rel_lstm: added to the forget gate's bias at init
};

template <class T>
class AttentiveRecurrent : public SequenceLayer<T> {
 public:
  enum class Kind { MemRnn, RelRnn, RelLstm };

  // Declares the parameters listed above under `name`. Throws core::UsageError for an
  // unknown kind or nonlinearity, ν < 1 or ρ < 0 (rel_*), or bptt != 0.
  AttentiveRecurrent(core::ParamStoreT<T>& ps, const std::string& name, int64_t input,
                     int64_t hidden, AttentiveOptions opt = {});

  int64_t input_size() const override { return in_; }
  int64_t hidden() const override { return h_; }
  int64_t state_size() const override { return kind_ == Kind::RelLstm ? 3 * h_ : 2 * h_; }

  // PyTorch-style U(-1/sqrt(H), 1/sqrt(H)) for every parameter (biases included), drawn
  // in the order w_x, w_h, b (rel_lstm: nn::LstmCell::init, then forget_bias added),
  // then u_a, v_a, v. Call after ps.finalize().
  void init(core::Rng& rng) override;

  // x (T, B, I), s0 (B, S) or null data -> y (T, B, H). The caller keeps x alive until
  // backward.
  void forward(core::ViewT<const T> x, core::ViewT<const T> s0, core::ViewT<T> y) override;
  // dy (T, B, H) -> dx (T, B, I), ds0 (B, S) (skipped when null); parameter gradients
  // accumulate; dh_norms[t] = ||dL/dh_t|| (total derivative: output, recurrence and
  // every later step that attended to h_t). One backward per forward.
  void backward(core::ViewT<const T> dy, core::ViewT<T> dx, core::ViewT<T> ds0,
                std::vector<double>* dh_norms = nullptr) override;
  core::ViewT<const T> final_state() const override;
  size_t held_bytes() const override;

  Kind kind() const { return kind_; }
  int64_t nu() const { return nu_; }
  int64_t rho() const { return rho_; }

  // Debug/test access to the last forward: the number of states attended at step t
  // (same for every row), and for row r the attended indices (relevant-set slots in slot
  // order, then the buffer oldest first) and their α.
  int64_t kappa(int64_t t) const { return kappa_[static_cast<size_t>(t)]; }
  std::span<const int32_t> attended(int64_t t, int64_t r) const;
  std::span<const T> attention(int64_t t, int64_t r) const;

  // Relevant-set bookkeeping, exposed for tests: offers state `cand` with score
  // `cand_score` to a set of rho slots (slot_idx[k] = -1 means empty). Takes the first
  // empty slot; else replaces the first lowest-scored slot if cand_score is strictly
  // higher. Returns the slot written, or -1 when the candidate is dropped.
  static int64_t admit_relevant(int64_t rho, int32_t* slot_idx, T* slot_score, int32_t cand,
                                T cand_score);

 private:
  static Kind parse_kind(const std::string& name, const std::string& s);
  void reserve(int64_t steps, int64_t b);
  // Whether the time loops give each thread its own slice of batch rows (nn/parallel.hpp).
  bool split_rows(int64_t b) const;
  // Forward attention at step t >= 1 for rows [r0, r1): fills att_idx_/att_alpha_ for
  // step t, writes s_t into cin_ row t and updates relevance scores.
  void attend_forward(int64_t t, int64_t r0, int64_t r1);
  // Backward attention at step t >= 1 for rows [r0, r1): ds (B, H) = dL/ds_t -> dh_,
  // dhu_, dv_rows_, dsq_ (= dL/ds_{t-1} through the query), and dL/dq_t into dh_'s
  // row block t (spent by then; the dv_a GEMM after the loop reads it there).
  void attend_backward(int64_t t, int64_t r0, int64_t r1, const T* ds);

  int64_t in_, h_;
  Kind kind_;
  int64_t nu_, rho_;
  std::optional<RnnCell<T>> rnn_;
  std::optional<LstmCell<T>> lstm_;
  core::ParamT<T>* u_a_;
  core::ParamT<T>* v_a_;
  core::ParamT<T>* v_;
  double forget_bias_;

  int64_t T_ = 0, B_ = 0;
  int64_t sc_ = 0, g_ = 0, cc_ = 0;  // cell state, projection and cache widths
  core::ViewT<const T> x_;
  std::vector<int64_t> kappa_, att_off_;  // (T), (T+1): offsets into att_* (times B)
  std::vector<T> xp_, cin_, cout_, cache_, hu_, att_alpha_, score_, final_;
  std::vector<int32_t> att_idx_, slot_idx_;
  std::vector<T> slot_score_;
  // q_ (T, B, H) the queries s_{t-1} v_a (row block 0 unused). Workspaces: dalpha_
  // (B, κ_max), dv_rows_ (B, H) per-row dL/dv summed over steps, dh_/dhu_ (T, B, H),
  // ds_/ds_prev_ (B, Sc), dsq_ (B, H), dh_sq_ (T, B) per-row squared norms for dh_norms.
  std::vector<T> q_, dalpha_, dv_rows_, dh_, dhu_, ds_, ds_prev_, dsq_;
  std::vector<double> dh_sq_;
  Transposed<T> u_a_t_, v_a_t_;  // u_aᵀ, v_aᵀ for the backward's per-step GEMMs
};

}  // namespace seqbench::nn
