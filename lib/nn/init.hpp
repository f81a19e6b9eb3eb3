// Weight initialisations for recurrent cells. Every matrix is row-major and written
// straight into a parameter's values; the arithmetic runs in double whatever T is, so
// a float model gets the same (rounded) matrix as a double one from the same seed.
//
// Random draws happen in a documented order so tests (and anyone reproducing a run)
// can redraw the same numbers from the same seed:
//   xavier_uniform  rows*cols uniforms, row-major
//   orthogonal      rows*cols standard normals, row-major, for the (rows, cols) matrix G
//   henaff          n/2 (rounded down) uniforms θ_0, θ_1, ...
//   chrono          H uniforms u_0, u_1, ... (one per unit)
#pragma once

#include <cstdint>

#include "core/rng.hpp"

namespace seqbench::nn {

// w (rows, cols) ~ U(-a, a), a = sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio 2010).
// The fans are separate from the shape because a fused gate matrix (I, 4H) has fan_out H
// per gate, not 4H.
template <class T>
void xavier_uniform(core::Rng& rng, T* w, int64_t fan_in, int64_t fan_out, int64_t rows,
                    int64_t cols);

// w (rows, cols) = gain * Q as torch.nn.init.orthogonal_ builds it: G (rows, cols) is
// standard normal; if rows < cols G is transposed; G = Q R is its reduced QR
// (Householder, in double); Q's columns are multiplied by sign(diag R) so that R has a
// positive diagonal (the QR is then unique and Q is Haar-distributed); if G was
// transposed Q is transposed back. Result: rows >= cols gives W^T W = gain^2 I
// (orthonormal columns), rows < cols gives W W^T = gain^2 I (orthonormal rows).
// A zero diagonal entry of R (probability 0) keeps its column's sign instead of
// zeroing it, as torch's sign() would.
template <class T>
void orthogonal(core::Rng& rng, T* w, int64_t rows, int64_t cols, double gain = 1.0);

// Chrono initialisation of LSTM gate biases (Tallec & Ollivier 2018), for dependencies up
// to about tmax steps: b (4H) in the gate order (i, f, c̃, o) gets b_f[j] = log(u_j) with
// u_j ~ U(1, tmax - 1), and b_i[j] = -b_f[j]; the c̃ and o biases are left as they are.
// The forget gates then start with time constants spread over 1 .. tmax steps.
template <class T>
void chrono_lstm_biases(core::Rng& rng, T* b, int64_t hidden, double tmax);

// w (n, n) = scale * I (Le et al. 2015, IRNN).
template <class T>
void identity(T* w, int64_t n, double scale = 1.0);

// w (n, n) = expm(A) for the block-diagonal skew-symmetric A of Henaff et al. 2016, as
// henaff_init in the expRNN / nnRNN / relevancy-screening code builds it:
//   A[2i, 2i+1] = θ_i, A[2i+1, 2i] = -θ_i, θ_i ~ U(-π, π), i < n/2; everything else 0
// (n odd: the last row and column of A are zero, so W's last diagonal entry is 1).
// expm(A) is computed in general (expm below), which for this A are the rotation
// blocks [[cos θ, sin θ], [-sin θ, cos θ]]; W is orthogonal.
template <class T>
void henaff(core::Rng& rng, T* w, int64_t n);

// dst (n, n) = exp(a) for a general a (n, n), in double: scaling and squaring with a
// Taylor series (a is scaled by 2^-s until its 1-norm is <= 1/2, the series is summed
// until a term no longer changes the sum, then squared s times). Costs about 20 GEMMs
// of size n. dst must not alias a.
void expm(const double* a, double* dst, int64_t n);

}  // namespace seqbench::nn
