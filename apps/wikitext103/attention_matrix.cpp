#include "apps/wikitext103/attention_matrix.hpp"

#include <algorithm>
#include <cmath>

#include "core/check.hpp"

namespace seqbench::apps {

std::vector<double> attention_matrix(nn::Attention<float>& core, core::ConstView q,
                                     core::ConstView k, core::ConstView bias) {
  SB_CHECK(q.shape.rank == 4, "attention_matrix: q must be (B, H, N, D), got {}", q.shape.str());
  core::check_shape(k, q.shape, "attention_matrix: k");
  const int64_t B = q.dim(0), H = q.dim(1), N = q.dim(2), D = q.dim(3);
  std::vector<double> P(size_t(B * H * N * N), 0.0);
  core::Tensor vb(q.shape), ob(q.shape);
  const bool held = core.holding_assignment();
  core.hold_assignment(true);  // the structure of the last forward, not a new draw
  for (int64_t c = 0; c * D < N; ++c) {
    vb.zero();
    for (int64_t bh = 0; bh < B * H; ++bh)
      for (int64_t d = 0; d < D && c * D + d < N; ++d) vb.data()[(bh * N + c * D + d) * D + d] = 1;
    core.forward(q, k, vb.cview(), ob.view(), bias);
    for (int64_t bh = 0; bh < B * H; ++bh)
      for (int64_t t = 0; t < N; ++t)
        for (int64_t d = 0; d < D && c * D + d < N; ++d)
          P[size_t((bh * N + t) * N + c * D + d)] = ob.data()[(bh * N + t) * D + d];
  }
  core.hold_assignment(held);
  return P;
}

double attention_matrix_error(const std::vector<double>& P, core::ConstView v, core::ConstView o) {
  const int64_t BH = v.dim(0) * v.dim(1), N = v.dim(2), D = v.dim(3);
  core::check_shape(o, v.shape, "attention_matrix_error: o");
  SB_CHECK(int64_t(P.size()) == BH * N * N, "attention_matrix_error: P has {} entries, expected {}",
           P.size(), BH * N * N);
  double worst = 0;
  for (int64_t bh = 0; bh < BH; ++bh) {
    const double* p = P.data() + bh * N * N;
    const float* V = v.data + bh * N * D;
    const float* O = o.data + bh * N * D;
    for (int64_t t = 0; t < N; ++t)
      for (int64_t d = 0; d < D; ++d) {
        double s = 0;
        for (int64_t j = 0; j < N; ++j) s += p[t * N + j] * V[j * D + d];
        worst = std::max(worst, std::abs(s - O[t * D + d]) / (1.0 + std::abs(O[t * D + d])));
      }
  }
  return worst;
}

}  // namespace seqbench::apps
