// Stability projections of Miller & Hardt, "Stable Recurrent Models" (ICLR 2019,
// arXiv 1805.10369), applied to the weights after every optimizer step (projected
// gradient descent). A recurrent model h_t = φ_w(h_{t-1}, x_t) is λ-stable when
// ‖φ_w(h, x) − φ_w(h', x)‖ ≤ λ ‖h − h'‖ for all states and inputs (λ < 1 contractive);
// then a truncated model that restarts from a zero state k steps back is close to it
// (docs/papers.md section 3).
//
// Everything is computed in double whatever the stored scalar T is; results are written
// back to T only where something changed, so a matrix that already satisfies a condition
// is left bit-for-bit as it was. A value within a relative kSlack<T> (1e-12 for double,
// 1e-6 for float) of its bound counts as on the boundary: projecting twice changes
// nothing, and rounding the projected weights to float does not trigger a re-projection.
//
// ---- RNN: spectral-norm ball -----------------------------------------------------------
// Our layout: h_t = φ(x_t w_x + h_{t-1} w_h + b) with row-vector states and w_h (H, H).
// For an elementwise 1-Lipschitz φ (tanh, relu) the state map is ‖w_h‖_2-Lipschitz in
// the Euclidean norm (‖w_h‖_2 = ‖w_hᵀ‖_2, so the row/column convention does not matter),
// hence λ-contractive when ‖w_h‖_2 ≤ λ. The paper's stable RNN projects onto that ball by
// clipping the singular values: W = U Σ Vᵀ → U min(Σ, λ) Vᵀ, which is the Euclidean
// (Frobenius) projection onto {‖W‖_2 ≤ λ}.
//
// ---- LSTM -------------------------------------------------------------------------------
// Paper notation (column vectors, one (H, H) matrix W_□ and (H, I) matrix U_□ per gate):
//   i = σ(W_i h + U_i x + b_i)   f = σ(W_f h + U_f x + b_f)   o = σ(W_o h + U_o x + b_o)
//   z = tanh(W_z h + U_z x + b_z)   c_t = i ⊙ z + f ⊙ c_{t-1}   h_t = o ⊙ tanh(c_t)
// Our layout: w_x (I, 4H), w_h (H, 4H) row-major, gate blocks in order i, f, z(=c̃), o;
// column g*H + j is gate g, unit j, and pre-activations are x_t w_x + h_{t-1} w_h. So
//   W_g = (w_h[:, gH:(g+1)H])ᵀ,   U_g = (w_x[:, gH:(g+1)H])ᵀ,
// and the operator ∞-norm ‖W_g‖_∞ (max over output units of the ℓ1 norm of that unit's
// weights = max row sum of the paper's W_g) is the MAX COLUMN ℓ1 NORM of our gate block:
//   ‖W_g‖_∞ = max_j Σ_k |w_h[k, gH + j]|,   ‖U_f‖_∞ = max_j Σ_k |w_x[k, H + j]|.
// (In PyTorch's weight_hh (4H, H) layout the same quantity is the max ROW ℓ1 norm.)
// All LSTM norms below are these ∞-norms, and "column" always means a column of OUR
// (H, 4H) / (I, 4H) matrices, i.e. the weights into one gate unit.
//
// variant "paper": the ∞-norm contraction condition. On the states the LSTM reaches,
// ‖h‖_∞ ≤ 1 and ‖c‖_∞ ≤ 1 / (1 − λ_f), where the forget gate is bounded by
//   λ_f = σ(‖W_f‖_∞ + ‖U_f‖_∞ B_x + b_f)      (B_x ≥ ‖x_t‖_∞, b_f ≥ ‖b_f‖_∞)
// Using σ' ≤ 1/4, tanh' ≤ 1 and |i|, |o|, |z| ≤ 1, two trajectories driven by the same
// inputs satisfy, with ‖(c, h)‖ = max(‖c‖_∞, ‖h‖_∞):
//   ‖Δc_t‖_∞ ≤ λ_f ‖Δc‖_∞ + L_c ‖Δh‖_∞,   L_c = ‖W_i‖/4 + ‖W_z‖ + ‖W_f‖ / (4 (1 − λ_f))
//   ‖Δh_t‖_∞ ≤ ‖W_o‖/4 ‖Δh‖_∞ + ‖Δc_t‖_∞
// so the state map is λ-contractive in that norm when
//   B(W) := λ_f + ‖W_i‖_∞/4 + ‖W_z‖_∞ + ‖W_f‖_∞ / (4 (1 − λ_f)) + ‖W_o‖_∞/4  ≤  λ.   (*)
// project_lstm leaves the weights alone when (*) holds; otherwise it finds the largest
// s ∈ [0, 1) with B(s·norms) ≤ λ (B is increasing in s; B(0) = σ(b_f) must be < λ) and
// clips every column of gate block g of w_h to ℓ1 ≤ s ‖W_g‖_∞ and every column of the
// forget block of w_x to ℓ1 ≤ s ‖U_f‖_∞ (columns already below their budget are kept), so
// each ∞-norm becomes exactly s times its old value and (*) holds with equality. Biases
// are not touched: B_x and b_f are assumptions the caller states in LstmStability.
// SOURCE CAVEAT: the stored copies of the paper available when this was written hold only
// its first pages, so (*) was not read from the paper's stable-LSTM proposition; it is the
// ∞-norm bound that the official code's constants satisfy (below), derived as above. Check
// it against the paper's appendix on stable LSTMs before quoting it as "the paper's".
//
// variant "official_l1": the official code's projection as docs/papers.md records it (not
// re-checked against the code, which was not findable here): rescale each gate's
// recurrent weights so every column ℓ1 norm (the weights into one gate unit, i.e. the
// ∞-norm rows of the paper's W_g) is at most
//   i: 0.395   f: 0.155   z: 0.099   o: 0.395,   and the input-to-forget weights U_f: 0.25.
// A column above its bound is scaled down to exactly the bound (like torch.renorm with
// p = 1, which divides by norm + 1e-7 and so lands just below it); λ is not used. These
// constants satisfy (*) with B = 0.9933 at B_x = 1, b_f = 0: λ_f = σ(0.155 + 0.25) = 0.600
// and the four h-terms 0.395/4, 0.099, 0.155/(4·0.400), 0.395/4 are each ≈ 0.1, an equal
// split of 1 − λ_f — which is how (*) was identified. For one-hot or otherwise ‖x‖_∞ ≤ 1
// inputs and zero forget bias the official projection is therefore also 0.994-stable.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace seqbench::optim {

// ---- SVD -------------------------------------------------------------------------------

// Thin SVD a = u diag(s) vᵀ by one-sided (Hestenes) Jacobi in double: orthogonalize the
// columns of a (of aᵀ when rows < cols) with plane rotations until every pair has
// |<a_p, a_q>| ≤ 1e-12 ‖a_p‖ ‖a_q‖. k = min(rows, cols); s is sorted descending; a column
// of u (or v) whose singular value is exactly 0 is left zero.
struct Svd {
  int64_t rows = 0, cols = 0, k = 0;
  std::vector<double> u;  // (rows, k) row-major
  std::vector<double> s;  // (k) descending, >= 0
  std::vector<double> v;  // (cols, k) row-major
};
template <class T>
Svd jacobi_svd(const T* a, int64_t rows, int64_t cols);  // a (rows, cols) row-major

// Singular values of a (rows, cols), descending; cheaper than jacobi_svd (no vectors).
template <class T>
std::vector<double> singular_values(const T* a, int64_t rows, int64_t cols);

// ‖a‖_2, the largest singular value (0 for an empty matrix).
template <class T>
double spectral_norm(const T* a, int64_t rows, int64_t cols);

// w (rows, cols) ← U diag(min(σ_i, max_sv)) Vᵀ, the nearest matrix in Frobenius norm with
// ‖w‖_2 ≤ max_sv. Computed as w − Σ_{σ_i > max_sv} (σ_i − max_sv) u_i v_iᵀ, so w is not
// written at all when nothing is clipped. Returns the largest singular value before.
// Cost: a full Jacobi SVD every call, O(n^3) per sweep and ~10 sweeps for n = H; measured
// here on one core at about 0.02 s for H = 128, 0.13 s for H = 256, 1 s for H = 512.
template <class T>
double clip_singular_values(T* w, int64_t rows, int64_t cols, double max_sv);

// Stable RNN (vanilla tanh/relu cell): w_h (H, H) ← its projection onto ‖w_h‖_2 ≤ lambda;
// with a 1-Lipschitz φ the state map is then lambda-contractive in ‖·‖_2 (see above).
// Returns ‖w_h‖_2 before.
template <class T>
double project_rnn(T* w_h, int64_t H, double lambda);

// ---- LSTM ------------------------------------------------------------------------------

struct LstmStability {
  std::string variant = "paper";  // paper | official_l1
  double lambda = 1.0;            // paper: bound on B(W) in (*); must exceed σ(forget_bias_bound)
  double input_bound = 1.0;       // paper: B_x, assumed bound on ‖x_t‖_∞ (1 for one-hot)
  double forget_bias_bound = 0.0;  // paper: assumed bound on ‖b_f‖_∞ (biases are not projected)
};

// The official code's column ℓ1 budgets (docs/papers.md section 3).
inline constexpr double kOfficialL1Wi = 0.395;
inline constexpr double kOfficialL1Wf = 0.155;
inline constexpr double kOfficialL1Wz = 0.099;
inline constexpr double kOfficialL1Wo = 0.395;
inline constexpr double kOfficialL1Uf = 0.25;

// ∞-norms of the paper's gate matrices = max column ℓ1 norms of our gate blocks.
struct LstmGateNorms {
  double w_i = 0, w_f = 0, w_z = 0, w_o = 0;  // recurrent, from w_h (H, 4H)
  double u_f = 0;                             // input-to-forget, from w_x (I, 4H)
};
template <class T>
LstmGateNorms lstm_gate_norms(const T* w_x, int64_t I, const T* w_h, int64_t H);

// B(W) of condition (*) for these norms and the assumptions input_bound, forget_bias_bound
// in s (variant and lambda are ignored). +inf when λ_f rounds to 1.
double lstm_contraction_bound(const LstmGateNorms& n, const LstmStability& s);

// Projects w_x (I, 4H) and w_h (H, 4H) in place as the variant says (see the top of this
// file); only the forget block of w_x is ever changed (w_x may be null when I == 0).
// Throws core::UsageError for an unknown variant or a lambda the bias bound cannot meet.
template <class T>
void project_lstm(T* w_x, int64_t I, T* w_h, int64_t H, const LstmStability& s);

}  // namespace seqbench::optim
