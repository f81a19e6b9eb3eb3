// Shared by the attention tests (attention_test.cpp, attention_relpos_test.cpp) and the
// model's causality test: attention configs that are sparse on short sequences, random
// q, k, v inputs, and the pieces of a causality check (perturb every position after t0,
// then compare outputs up to t0 and after it).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "gradcheck.hpp"
#include "nn/attention/attention.hpp"

namespace seqbench::testutil {

using DTensor = core::TensorT<double>;

inline const std::vector<std::string> kAllKinds = {"full",   "local", "routing",
                                                   "random", "smyrf", "lsh"};

inline nn::AttentionConfig make_cfg(const std::string& kind, bool causal, int64_t window,
                                    int64_t clusters, int64_t rounds, bool shared_qk = false,
                                    uint64_t seed = 7) {
  nn::AttentionConfig c;
  c.kind = kind;
  c.causal = causal;
  c.window = window;
  c.clusters = clusters;
  c.rounds = rounds;
  c.shared_qk = shared_qk;
  c.seed = seed;
  return c;
}

// A config that makes `kind` sparse on short sequences (N around 10 to 30).
inline nn::AttentionConfig sparse_cfg(const std::string& kind, bool causal,
                                      bool shared_qk = false) {
  return make_cfg(kind, causal, 3, kind == "lsh" ? 4 : 3, 2, shared_qk);
}

// q, k, v (B, H, N, D) with N(0, 1) entries.
struct Inputs {
  int64_t B, H, N, D;
  DTensor q, k, v;
  // shared_qk: k = q / ‖q‖ row by row (Reformer's shared-QK keys).
  Inputs(int64_t b, int64_t h, int64_t n, int64_t d, uint64_t seed, bool shared_qk = false)
      : B(b), H(h), N(n), D(d), q(core::Shape{b, h, n, d}), k(core::Shape{b, h, n, d}),
        v(core::Shape{b, h, n, d}) {
    core::Rng rng(seed);
    gradcheck::fill_normal(rng, q);
    gradcheck::fill_normal(rng, k);
    gradcheck::fill_normal(rng, v);
    if (shared_qk) normalise_keys();
  }
  void normalise_keys() {
    for (int64_t r = 0; r < B * H * N; ++r) {
      double s = 0;
      for (int64_t j = 0; j < D; ++j) s += q[r * D + j] * q[r * D + j];
      for (int64_t j = 0; j < D; ++j) k[r * D + j] = q[r * D + j] / std::sqrt(s);
    }
  }
  // Redraws q, k and v at every position after t0 (3 N(0, 1)), leaving 0 .. t0 as they are.
  void perturb_after(int64_t t0, uint64_t seed) {
    core::Rng rng(seed);
    for (DTensor* x : {&q, &k, &v})
      for (int64_t r = 0; r < B * H; ++r)
        for (int64_t t = t0 + 1; t < N; ++t)
          for (int64_t j = 0; j < D; ++j) (*x)[(r * N + t) * D + j] = 3.0 * rng.normal();
  }
  core::Shape shape() const { return core::Shape{B, H, N, D}; }
};

inline double max_abs_diff(const DTensor& a, const DTensor& b) {
  double m = 0;
  for (int64_t i = 0; i < a.numel(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

// a and b hold rows of (.., N, C) (any number of leading rows): the largest |a - b| at
// positions t <= t0 and at positions t > t0.
inline std::pair<double, double> past_future_diff(const DTensor& a, const DTensor& b,
                                                  int64_t N, int64_t C, int64_t t0) {
  double past = 0, future = 0;
  for (int64_t r = 0; r < a.numel() / (N * C); ++r)
    for (int64_t t = 0; t < N; ++t)
      for (int64_t j = 0; j < C; ++j) {
        const int64_t i = (r * N + t) * C + j;
        double& m = t <= t0 ? past : future;
        m = std::max(m, std::abs(a[i] - b[i]));
      }
  return {past, future};
}

}  // namespace seqbench::testutil
