// The attention matrix of a sparse attention core, read back exactly from the core itself
// (for the attention analyses of `seqbench report attention`).
//
// With the structure of the core's last forward held, the core runs on one-hot values:
// for block c of Dh keys, v_j = e_(j - c Dh) for the keys j of the block and 0 elsewhere.
// Since the output is linear in v, output row t is then P[t, c Dh .. (c+1) Dh), with
// every combination rule included (routing's average over clusters, the logsumexp
// weights of hash rounds). It takes ceil(N / Dh) forwards.
#pragma once

#include <vector>

#include "core/tensor.hpp"
#include "nn/attention/attention.hpp"

namespace seqbench::apps {

// P (B, H, N, N), row (b, h, t) = query t's distribution over the keys (0 where it does not
// look; causal: 0 after t), of core's last forward on q, k (B, H, N, D). Leaves the core's
// hold_assignment setting as it was. Throws core::Error when the core has no structure for
// this shape (no forward on it before). bias: the relative-position table (H, nb) that
// forward used, if any (MultiHeadAttentionT::core_io(g).bias).
std::vector<double> attention_matrix(nn::Attention<float>& core, core::ConstView q,
                                     core::ConstView k, core::ConstView bias = {});

// max over (b, h, t, d) of |(P V)[t, d] - o[t, d]| / (1 + |o[t, d]|): how well P reproduces
// the core's output o on values v, all (B, H, N, D).
double attention_matrix_error(const std::vector<double>& P, core::ConstView v, core::ConstView o);

}  // namespace seqbench::apps
