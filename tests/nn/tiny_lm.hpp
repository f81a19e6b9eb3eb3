// A tiny Transformer LM for the model-level tests (transformer_model_test.cpp,
// attention_relpos_test.cpp): its config, random token ids, the model with its
// parameter store, initialised from a seed, and the finite-difference check of every
// parameter's gradient.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/param_store.hpp"
#include "core/rng.hpp"
#include "gradcheck.hpp"
#include "nn/loss.hpp"
#include "nn/attention/transformer.hpp"

namespace seqbench::testutil {

// 2 layers, d_model 8, 2 heads, window 3, 2 clusters, no dropout; init_std 0.3 is large
// enough that attention is far from uniform.
inline nn::TransformerConfig tiny_lm_config(const std::string& attention,
                                            int64_t relative_positions = 0) {
  nn::TransformerConfig c;
  c.layers = 2;
  c.d_model = 8;
  c.heads = 2;
  c.d_ff = 12;
  c.attention = attention;
  c.window = 3;
  c.clusters = 2;
  c.rounds = 1;
  c.dropout = 0.0;
  c.init_std = 0.3;
  c.relative_positions = relative_positions;
  return c;
}

inline std::vector<int32_t> random_ids(core::Rng& rng, int64_t n, int64_t V) {
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (auto& x : ids) x = int32_t(rng.randint(V));
  return ids;
}

template <class T>
struct TinyLm {
  core::ParamStoreT<T> ps;
  nn::TransformerLMT<T> model;
  TinyLm(const nn::TransformerConfig& cfg, int64_t V, int64_t max_len, uint64_t seed)
      : model(cfg, ps, "lm", V, max_len, seed) {
    ps.finalize(0);
    core::Rng rng(seed);
    model.init(rng);
  }
  core::ParamT<T>* find(const std::string& name) {
    for (auto& p : ps.params())
      if (p.name == name) return &p;
    return nullptr;
  }
};

// The training objective's gradient (cross-entropy of random targets plus the model's
// aux_loss, the commitment term) with respect to every parameter of lm, against finite
// differences, on random ids (B, N) < V drawn from rng; dropout masks and attention
// structures are drawn once and then held.
inline void expect_lm_gradients(TinyLm<double>& lm, int64_t B, int64_t N, int64_t V,
                                core::Rng& rng) {
  const auto ids = random_ids(rng, B * N, V), targets = random_ids(rng, B * N, V);
  core::TensorT<double> logits(core::Shape{B * N, V}), dlogits(core::Shape{B * N, V});
  lm.model.forward(ids.data(), B, N, logits.view(), true);  // draws masks and structures
  lm.model.hold_randomness(true);
  auto loss = [&] {
    lm.model.forward(ids.data(), B, N, logits.view(), true);
    return nn::softmax_cross_entropy<double>(logits.cview(), targets.data(), nullptr,
                                             core::ViewT<double>())
               .loss +
           lm.model.aux_loss();
  };
  lm.ps.zero_grad();
  lm.model.forward(ids.data(), B, N, logits.view(), true);
  nn::softmax_cross_entropy<double>(logits.cview(), targets.data(), nullptr, dlogits.view());
  lm.model.backward(dlogits.cview());
  for (auto& p : lm.ps.params()) {
    std::vector<double> a(p.grad, p.grad + p.numel());
    gradcheck::expect_gradient(p.name, p.value, a.data(), p.numel(), loss);
  }
}

}  // namespace seqbench::testutil
