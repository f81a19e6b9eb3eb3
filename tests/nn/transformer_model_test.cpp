// The whole Transformer LM (nn/attention/transformer): finite-difference gradients of the
// cross-entropy w.r.t. every parameter in double (full heads; local + routing heads with
// qk_norm, GELU, untied output, sinusoidal positions and held dropout); causality of the
// logits (changing tokens after t0 leaves logits <= t0 unchanged, assignments rebuilt)
// for full, local + routing and the hashing kinds, and of the gradient; routing
// centroids move in training only; state() / set_state() reproduce the next training
// step exactly; float against double; errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "gradcheck.hpp"
#include "nn/attention/transformer.hpp"
#include "nn/attention_inputs.hpp"
#include "nn/loss.hpp"
#include "nn/registry.hpp"
#include "nn/tiny_lm.hpp"
#include "test_util.hpp"

using namespace seqbench;
using core::Shape;

namespace {

nn::TransformerConfig tiny(const std::string& attention) {
  return testutil::tiny_lm_config(attention);
}
using testutil::random_ids;
template <class T>
using Lm = testutil::TinyLm<T>;

}  // namespace

namespace {
struct GradCase {
  const char* name;
  nn::TransformerConfig cfg;
};
}  // namespace

class TransformerLMGrad : public ::testing::TestWithParam<GradCase> {};

TEST_P(TransformerLMGrad, CrossEntropyGradientOfEveryParameter) {
  const auto& cfg = GetParam().cfg;
  const int64_t B = 2, N = 7, V = 6;
  Lm<double> lm(cfg, V, N, 5);
  core::Rng rng(6);
  for (auto& p : lm.ps.params())  // LN gains / biases and output bias away from 1 / 0
    if (p.name.find(".ln") != std::string::npos || p.name == "lm.out.b")
      for (int64_t i = 0; i < p.numel(); ++i) p.value[i] += 0.2 * rng.normal();
  testutil::expect_lm_gradients(lm, B, N, V, rng);
}

namespace {

GradCase full_case() {
  auto c = tiny("full");
  c.activation = "relu";
  return {"full_tied_learned", c};
}
GradCase routing_case() {
  auto c = tiny("local:1,routing:1");
  c.qk_norm = true;
  c.activation = "gelu";
  c.tie_embeddings = false;
  c.positions = "sinusoidal";
  c.dropout = 0.1;
  return {"local_routing_qknorm_untied_dropout", c};
}
GradCase shared_commitment_case() {
  auto c = tiny("routing:1,lsh:1");
  c.qk_norm = true;
  c.shared_qk = true;
  c.commitment = 0.2;
  return {"routing_lsh_shared_qk_commitment", c};
}
GradCase hashing_case() {
  auto c = tiny("smyrf:1,lsh:1");
  c.rounds = 2;
  c.routing_layers = 1;  // layer 0 is local:2
  c.positions = "none";
  return {"smyrf_lsh_last_layer", c};
}

// A sequence mixer in place of attention (chunk 3 < N, so the chunked forms carry state).
GradCase mixer_case(const char* name) {
  auto c = tiny(name);
  c.mixer.heads = 2;
  c.mixer.d_state = 3;
  c.mixer.chunk = 3;
  c.positions = "none";
  return {name, c};
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Models, TransformerLMGrad,
                         ::testing::Values(full_case(), routing_case(), hashing_case(),
                                           shared_commitment_case(), mixer_case("gla"),
                                           mixer_case("mamba"), mixer_case("deltanet"),
                                           mixer_case("mlstm"), mixer_case("slstm")),
                         [](const auto& p) { return std::string(p.param.name); });

class TransformerLMCausal : public ::testing::TestWithParam<const char*> {};

TEST_P(TransformerLMCausal, LaterTokensDoNotChangeEarlierLogits) {
  const int64_t B = 2, N = 16, V = 11;
  auto cfg = tiny(GetParam());
  cfg.clusters = 4;
  cfg.rounds = 2;
  if (nn::transformer_mixer(cfg)) {
    cfg.mixer.chunk = 5;
    cfg.mixer.heads = 2;
  } else {
    cfg.qk_norm = true;
  }
  Lm<double> lm(cfg, V, N, 8);
  core::Rng rng(9);
  const auto ids = random_ids(rng, B * N, V);
  for (int64_t t0 : {0, 4, 9, 14}) {
    SCOPED_TRACE("t0=" + std::to_string(t0));
    auto other = ids;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = t0 + 1; t < N; ++t)
        other[size_t(b * N + t)] = int32_t((ids[size_t(b * N + t)] + 1 + rng.randint(V - 1)) % V);
    core::TensorT<double> la(Shape{B * N, V}), lb(Shape{B * N, V});
    // The same draw index for both: random / hashing kinds draw the same projections,
    // and every structure is rebuilt from the changed inputs.
    lm.model.set_draws(100);
    lm.model.forward(ids.data(), B, N, la.view(), false);
    lm.model.set_draws(100);
    lm.model.forward(other.data(), B, N, lb.view(), false);
    const auto [past, future] = testutil::past_future_diff(la, lb, N, V, t0);
    EXPECT_LT(past, 1e-12);
    EXPECT_GT(future, 1e-4);
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, TransformerLMCausal,
                         ::testing::Values("full", "local:1,routing:1", "random:1,smyrf:1",
                                           "lsh:2", "linear_attention", "retention", "gla",
                                           "lru", "mamba", "deltanet", "mlstm", "slstm"),
                         [](const auto& p) {
                           std::string s = p.param;
                           for (char& c : s)
                             if (c == ':' || c == ',') c = '_';
                           return s;
                         });

TEST(TransformerLM, GradientReachesOnlyPositionsUpToTheScoredOne) {
  const int64_t B = 2, N = 12, V = 7, t0 = 6;
  Lm<double> lm(tiny("local:1,routing:1"), V, N, 12);
  core::Rng rng(13);
  const auto ids = random_ids(rng, B * N, V), targets = random_ids(rng, B * N, V);
  std::vector<double> mask(size_t(B * N), 0.0);
  for (int64_t b = 0; b < B; ++b) mask[size_t(b * N + t0)] = 1.0;
  core::TensorT<double> logits(Shape{B * N, V}), dlogits(Shape{B * N, V});
  lm.model.forward(ids.data(), B, N, logits.view(), false);
  nn::softmax_cross_entropy<double>(logits.cview(), targets.data(), mask.data(), dlogits.view());
  std::vector<double> norms;
  lm.model.backward(dlogits.cview(), &norms);
  ASSERT_EQ(int64_t(norms.size()), N);
  for (int64_t t = 0; t < N; ++t) {
    if (t <= t0)
      EXPECT_GT(norms[size_t(t)], 1e-8) << t;
    else
      EXPECT_EQ(norms[size_t(t)], 0.0) << t;
  }
}

TEST(TransformerLM, CentroidsMoveInTrainingOnly) {
  const int64_t B = 2, N = 12, V = 7;
  Lm<double> lm(tiny("local:1,routing:1"), V, N, 14);
  core::Rng rng(15);
  const auto ids = random_ids(rng, B * N, V);
  core::TensorT<double> logits(Shape{B * N, V});
  const auto centroids = [&] {
    core::State st;
    lm.model.save_state(st);
    return st.arrays;
  };
  const auto c0 = centroids();
  ASSERT_EQ(c0.size(), 2u);  // one routing group per layer
  EXPECT_EQ(c0[0].name, "l0.g1.centroids");
  EXPECT_EQ(c0[0].shape, (Shape{1, 2, 4}));
  lm.model.forward(ids.data(), B, N, logits.view(), false);
  EXPECT_EQ(centroids()[0].data, c0[0].data);
  EXPECT_EQ(centroids()[1].data, c0[1].data);
  lm.model.forward(ids.data(), B, N, logits.view(), true);
  const auto c1 = centroids();
  EXPECT_NE(c1[0].data, c0[0].data);
  EXPECT_NE(c1[1].data, c0[1].data);
  lm.model.hold_randomness(true);
  lm.model.forward(ids.data(), B, N, logits.view(), true);
  EXPECT_EQ(centroids()[1].data, c1[1].data);
}

TEST(TransformerLM, StateReproducesTheNextTrainingStep) {
  const int64_t B = 2, N = 10, V = 9;
  auto cfg = tiny("local:1,routing:1");
  cfg.heads = 4;
  cfg.attention = "local:1,routing:1,random:1,lsh:1";
  cfg.dropout = 0.2;
  cfg.ema_decay = 0.3;  // centroids move far in 3 steps, so they decide assignments
  Lm<float> a(cfg, V, N, 16);
  core::Rng rng(17);
  const auto ids = random_ids(rng, B * N, V);
  core::Tensor la(Shape{B * N, V}), lb(Shape{B * N, V}), lc(Shape{B * N, V});
  for (int i = 0; i < 3; ++i) a.model.forward(ids.data(), B, N, la.view(), true);
  core::State st;
  a.model.save_state(st.scope("lm"));  // under a scope, as an experiment writes it
  EXPECT_EQ(st.meta.size(), 2u);
  EXPECT_TRUE(st.has("lm.dropout_rng"));
  EXPECT_TRUE(st.has("lm.draws"));
  // b: same parameters, fresh state + the saved one; c: same parameters, fresh state.
  Lm<float> b(cfg, V, N, 16), c(cfg, V, N, 16);
  std::copy(a.ps.values().begin(), a.ps.values().end(), b.ps.values().begin());
  std::copy(a.ps.values().begin(), a.ps.values().end(), c.ps.values().begin());
  b.model.load_state(st.scope("lm"));
  core::State st_b;
  b.model.save_state(st_b.scope("lm"));
  EXPECT_EQ(st_b.meta, st.meta);
  ASSERT_EQ(st_b.arrays.size(), st.arrays.size());
  for (size_t i = 0; i < st.arrays.size(); ++i)
    EXPECT_EQ(st_b.arrays[i].data, st.arrays[i].data) << st.arrays[i].name;
  a.model.forward(ids.data(), B, N, la.view(), true);
  b.model.forward(ids.data(), B, N, lb.view(), true);
  c.model.forward(ids.data(), B, N, lc.view(), true);
  float diff_b = 0, diff_c = 0;
  for (int64_t i = 0; i < la.numel(); ++i) {
    diff_b = std::max(diff_b, std::abs(la[i] - lb[i]));
    diff_c = std::max(diff_c, std::abs(la[i] - lc[i]));
  }
  EXPECT_EQ(diff_b, 0.0f);
  EXPECT_GT(diff_c, 1e-5f);  // without the state the step differs (masks, draws, centroids)
  core::State st2, st_a;
  b.model.save_state(st2);
  a.model.save_state(st_a);
  EXPECT_EQ(st2.meta, st_a.meta);

  core::State broken = st;
  broken.arrays.clear();
  EXPECT_NE(testutil::message_of([&] { c.model.load_state(broken.scope("lm")); })
                .find("lm.l0.g1.centroids"),
            std::string::npos);
  broken = st;
  broken.meta.pop_back();
  EXPECT_NE(testutil::message_of([&] { c.model.load_state(broken.scope("lm")); }).find("lm.draws"),
            std::string::npos);
  // Centroids of another shape (another clusters setting) are refused naming both shapes.
  broken = st;
  const Shape want = st.arrays[0].shape;
  broken.arrays[0].shape = Shape{want[0], want[1] + 1, want[2]};
  const std::string m = testutil::message_of([&] { c.model.load_state(broken.scope("lm")); });
  EXPECT_NE(m.find(broken.arrays[0].shape.str()), std::string::npos) << m;
  EXPECT_NE(m.find(want.str()), std::string::npos) << m;
}

TEST(TransformerLM, EvaluationIsDeterministicForAGivenDrawCount) {
  const int64_t B = 1, N = 12, V = 7;
  auto cfg = tiny("random:1,smyrf:1");
  cfg.rounds = 2;
  cfg.dropout = 0.3;
  Lm<double> lm(cfg, V, N, 18);
  core::Rng rng(19);
  const auto ids = random_ids(rng, B * N, V);
  core::TensorT<double> l1(Shape{B * N, V}), l2(Shape{B * N, V}), l3(Shape{B * N, V});
  lm.model.set_draws(7);
  lm.model.forward(ids.data(), B, N, l1.view(), false);
  lm.model.forward(ids.data(), B, N, l3.view(), false);  // draw 8: other random clusters
  lm.model.set_draws(7);
  lm.model.forward(ids.data(), B, N, l2.view(), false);
  double d12 = 0, d13 = 0;
  for (int64_t i = 0; i < l1.numel(); ++i) {
    d12 = std::max(d12, std::abs(l1[i] - l2[i]));
    d13 = std::max(d13, std::abs(l1[i] - l3[i]));
  }
  EXPECT_EQ(d12, 0.0);
  EXPECT_GT(d13, 1e-6);
  EXPECT_EQ(lm.model.draws(), 8u);
}

TEST(TransformerLM, FloatMatchesDouble) {
  const int64_t B = 2, N = 9, V = 8;
  const auto cfg = tiny("local:1,routing:1");
  Lm<double> d(cfg, V, N, 20);
  Lm<float> f(cfg, V, N, 20);
  core::Rng rng(21);
  const auto ids = random_ids(rng, B * N, V);
  core::TensorT<double> ld(Shape{B * N, V});
  core::Tensor lf(Shape{B * N, V});
  d.model.forward(ids.data(), B, N, ld.view(), false);
  f.model.forward(ids.data(), B, N, lf.view(), false);
  double worst = 0, scale = 0;
  for (int64_t i = 0; i < ld.numel(); ++i) {
    worst = std::max(worst, std::abs(ld[i] - double(lf[i])));
    scale = std::max(scale, std::abs(ld[i]));
  }
  EXPECT_GT(scale, 1e-3);
  EXPECT_LT(worst, 1e-4 * std::max(1.0, scale));
  EXPECT_NE(d.model.describe().find("l1 local:1,routing:1"), std::string::npos)
      << d.model.describe();
}

TEST(TransformerLM, MixerRefusesAttentionKeysAndAttentionRefusesMixerKeys) {
  auto c = tiny("gla");
  c.qk_norm = true;
  std::string msg = testutil::message_of([&] { nn::check_rules(c); });
  EXPECT_NE(msg.find("model.qk_norm applies to attention heads, and model.attention is the "
                     "mixer 'gla'"),
            std::string::npos)
      << msg;
  c = tiny("full");
  c.mixer.d_state = 8;
  msg = testutil::message_of([&] { nn::check_rules(c); });
  EXPECT_NE(msg.find("model.mixer applies to the sequence mixers"), std::string::npos) << msg;
  // Every mixer of the cell registry is a value of model.attention, listed in its doc.
  for (const auto& name : nn::mixer_names()) {
    EXPECT_NE(nn::head_groups_doc().find(name), std::string::npos) << name;
    EXPECT_NO_THROW(nn::check_rules(tiny(name))) << name;
  }
}

TEST(TransformerLM, ShapeAndInputErrors) {
  const int64_t V = 5, N = 4;
  Lm<float> lm(tiny("full"), V, N, 22);
  std::vector<int32_t> ids(10, 1);
  core::Tensor logits(Shape{10, V});
  EXPECT_NE(testutil::message_of([&] { lm.model.forward(ids.data(), 2, 5, logits.view(), false); })
                .find("max_len"),
            std::string::npos);
  ids[3] = 7;
  core::Tensor l8(Shape{8, V});
  EXPECT_THROW(lm.model.forward(ids.data(), 2, 4, l8.view(), false), core::Error);
  core::ParamStore ps;
  auto bad = tiny("full");
  bad.heads = 3;
  EXPECT_THROW(nn::TransformerLMT<float>(bad, ps, "x", V, N, 1), core::UsageError);
}
