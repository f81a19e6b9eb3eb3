// Relative-position score bias (Attention<T>::forward's bias table, the Transformer's
// model.relative_positions): finite-difference gradients of the table and of q, k, v
// for every kind with the assignment held (causal and not, self columns, several
// batch rows sharing a head's row); a zero table gives exactly the output without one;
// every kind equals a plain biased O(N²) reference when it covers the sequence, with a
// nonzero table; causality with the bias; the hashing never sees the bias; the model
// option starts identical to the model without it, trains the table (cross-entropy
// gradient), survives a checkpoint round trip; config and shape errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gradcheck.hpp"
#include "nn/attention/attention.hpp"
#include "nn/attention_inputs.hpp"
#include "nn/loss.hpp"
#include "nn/tiny_lm.hpp"
#include "nn/attention/transformer.hpp"
#include "test_util.hpp"
#include "train/checkpoint.hpp"
#include "train/trainer.hpp"

using namespace seqbench;
using core::Shape;
using DTensor = core::TensorT<double>;
using testutil::Inputs;
using testutil::kAllKinds;
using testutil::make_cfg;
using testutil::max_abs_diff;
using testutil::past_future_diff;
using testutil::sparse_cfg;

namespace {

// (H, nb) with N(0, scale²) entries; nb = M (causal) or 2M - 1.
DTensor bias_table(int64_t H, int64_t M, bool causal, uint64_t seed, double scale = 1.0) {
  DTensor b(Shape{H, causal ? M : 2 * M - 1});
  core::Rng rng(seed);
  gradcheck::fill_normal(rng, b, scale);
  return b;
}

int64_t bucket(int64_t d, int64_t nb, bool causal) {
  if (causal) return std::clamp<int64_t>(d, 0, nb - 1);
  const int64_t m = (nb + 1) / 2;
  return std::clamp<int64_t>(d, -(m - 1), m - 1) + m - 1;
}

// Dense softmax attention with S_tj = q_t . k_j / sqrt(D) + bias[h, bucket(t - j)].
DTensor biased_reference(const Inputs& in, const DTensor& bias, bool causal) {
  DTensor o(in.shape());
  const int64_t nb = bias.shape()[1], D = in.D;
  for (int64_t s = 0; s < in.B * in.H; ++s) {
    const int64_t h = s % in.H;
    for (int64_t t = 0; t < in.N; ++t) {
      std::vector<double> sc;
      std::vector<int64_t> js;
      for (int64_t j = 0; j < in.N; ++j) {
        if (causal && j > t) continue;
        double d = 0;
        for (int64_t c = 0; c < D; ++c)
          d += in.q[(s * in.N + t) * D + c] * in.k[(s * in.N + j) * D + c];
        sc.push_back(d / std::sqrt(double(D)) + bias[h * nb + bucket(t - j, nb, causal)]);
        js.push_back(j);
      }
      const double mx = *std::max_element(sc.begin(), sc.end());
      double z = 0;
      for (double x : sc) z += std::exp(x - mx);
      for (size_t i = 0; i < sc.size(); ++i)
        for (int64_t c = 0; c < D; ++c)
          o[(s * in.N + t) * D + c] += std::exp(sc[i] - mx) / z * in.v[(s * in.N + js[i]) * D + c];
    }
  }
  return o;
}


// dq, dk, dv and dbias by central differences of L = Σ W ⊙ O, assignment held. B = 2,
// so both batch rows of a head add into its bias row.
void expect_bias_gradients(const nn::AttentionConfig& cfg, int64_t M, uint64_t seed) {
  SCOPED_TRACE(cfg.kind + (cfg.causal ? " causal" : " non-causal") + " M=" + std::to_string(M));
  const int64_t B = 2, H = 2, N = 11, D = 3;
  Inputs in(B, H, N, D, seed);
  DTensor bias = bias_table(H, M, cfg.causal, seed + 1);
  DTensor wt(in.shape()), o(in.shape());
  core::Rng rng(seed + 100);
  gradcheck::fill_normal(rng, wt);
  auto att = nn::make_attention<double>(cfg, H, D);
  att->forward(in.q.cview(), in.k.cview(), in.v.cview(), o.view(), bias.cview());
  att->hold_assignment(true);
  DTensor dq(in.shape()), dk(in.shape()), dv(in.shape()), db(bias.shape());
  db[0] = 1.0;  // backward accumulates: the expected gradient is this plus dL/dbias
  att->backward(wt.cview(), dq.view(), dk.view(), dv.view(), db.view());
  db[0] -= 1.0;
  const auto loss = [&] {
    att->forward(in.q.cview(), in.k.cview(), in.v.cview(), o.view(), bias.cview());
    return gradcheck::dot(wt.data(), o.data(), o.numel());
  };
  gradcheck::expect_gradient("dq", in.q.data(), dq.data(), dq.numel(), loss);
  gradcheck::expect_gradient("dk", in.k.data(), dk.data(), dk.numel(), loss);
  gradcheck::expect_gradient("dv", in.v.data(), dv.data(), dv.numel(), loss);
  gradcheck::expect_gradient("dbias", bias.data(), db.data(), db.numel(), loss);
}

}  // namespace

TEST(AttentionRelpos, GradientsMatchFiniteDifferences) {
  uint64_t seed = 300;
  for (const auto& kind : kAllKinds)
    for (bool causal : {true, false}) expect_bias_gradients(sparse_cfg(kind, causal), 4, ++seed);
  // M larger than any distance (no clipping); M = 2 (distance 0 against all others).
  expect_bias_gradients(make_cfg("full", true, 1, 1, 1), 16, 320);
  expect_bias_gradients(make_cfg("lsh", true, 3, 4, 2), 2, 321);
  // SMYRF's self column (query and key buckets differ) takes the distance-0 bias.
  expect_bias_gradients(make_cfg("smyrf", true, 2, 1, 4), 3, 322);
  expect_bias_gradients(make_cfg("smyrf", false, 2, 1, 3), 3, 323);
}

TEST(AttentionRelpos, ZeroTableGivesExactlyTheOutputWithoutOne) {
  const int64_t B = 2, H = 2, N = 19, D = 4;
  for (const auto& kind : kAllKinds)
    for (bool causal : {true, false}) {
      SCOPED_TRACE(kind + (causal ? " causal" : " non-causal"));
      Inputs in(B, H, N, D, 400);
      DTensor zero(Shape{H, causal ? 5 : 9}), wt(in.shape());
      core::Rng rng(401);
      gradcheck::fill_normal(rng, wt);
      auto a = nn::make_attention<double>(sparse_cfg(kind, causal), H, D);
      auto b = nn::make_attention<double>(sparse_cfg(kind, causal), H, D);
      DTensor oa(in.shape()), ob(in.shape());
      a->forward(in.q.cview(), in.k.cview(), in.v.cview(), oa.view());
      b->forward(in.q.cview(), in.k.cview(), in.v.cview(), ob.view(), zero.cview());
      EXPECT_EQ(max_abs_diff(oa, ob), 0.0);
      DTensor dqa(in.shape()), dka(in.shape()), dva(in.shape());
      DTensor dqb(in.shape()), dkb(in.shape()), dvb(in.shape()), db(zero.shape());
      a->backward(wt.cview(), dqa.view(), dka.view(), dva.view());
      b->backward(wt.cview(), dqb.view(), dkb.view(), dvb.view(), db.view());
      EXPECT_EQ(max_abs_diff(dqa, dqb), 0.0);
      EXPECT_EQ(max_abs_diff(dka, dkb), 0.0);
      EXPECT_EQ(max_abs_diff(dva, dvb), 0.0);
      // The hashing / clustering never sees the bias: same structures.
      for (int64_t s = 0; s < B * H; ++s) {
        EXPECT_EQ(a->structure(s).q, b->structure(s).q);
        EXPECT_EQ(a->structure(s).k, b->structure(s).k);
      }
    }
}

TEST(AttentionRelpos, EveryKindEqualsBiasedFullWhenItCoversTheSequence) {
  const int64_t N = 13, H = 2, D = 4;
  for (const auto& kind : kAllKinds)
    for (bool causal : {true, false})
      for (int64_t M : {1, 5, 20}) {
        SCOPED_TRACE(kind + (causal ? " causal" : " non-causal") + " M=" + std::to_string(M));
        auto att = nn::make_attention<double>(make_cfg(kind, causal, N + 2, 1, 3), H, D);
        Inputs in(2, H, N, D, 500);
        const DTensor bias = bias_table(H, M, causal, 501, 2.0);
        DTensor o(in.shape());
        att->forward(in.q.cview(), in.k.cview(), in.v.cview(), o.view(), bias.cview());
        EXPECT_LT(max_abs_diff(o, biased_reference(in, bias, causal)), 1e-12);
      }
  // Full attention over several 64-row blocks.
  Inputs in(1, H, 150, D, 502);
  const DTensor bias = bias_table(H, 100, true, 503, 2.0);
  auto att = nn::make_attention<double>(make_cfg("full", true, 1, 1, 1), H, D);
  DTensor o(in.shape());
  att->forward(in.q.cview(), in.k.cview(), in.v.cview(), o.view(), bias.cview());
  EXPECT_LT(max_abs_diff(o, biased_reference(in, bias, true)), 1e-12);
}

TEST(AttentionRelpos, CausalKindsDoNotLeakTheFutureWithTheBias) {
  const int64_t B = 2, H = 2, N = 24, D = 4;
  const DTensor bias = bias_table(H, 8, true, 600, 2.0);
  for (const auto& kind : kAllKinds)
    for (int64_t t0 : {0, 7, 15}) {
      SCOPED_TRACE(kind + " t0=" + std::to_string(t0));
      const auto cfg = sparse_cfg(kind, true);
      auto a = nn::make_attention<double>(cfg, H, D), b = nn::make_attention<double>(cfg, H, D);
      Inputs in(B, H, N, D, 601), other(B, H, N, D, 601);
      other.perturb_after(t0, 602 + static_cast<uint64_t>(t0));
      DTensor oa(in.shape()), ob(in.shape());
      a->forward(in.q.cview(), in.k.cview(), in.v.cview(), oa.view(), bias.cview());
      b->forward(other.q.cview(), other.k.cview(), other.v.cview(), ob.view(), bias.cview());
      const auto [past, future] = past_future_diff(oa, ob, N, D, t0);
      EXPECT_LT(past, 1e-12);
      EXPECT_GT(future, 1e-3);
    }
}

TEST(AttentionRelpos, ShapeErrors) {
  const int64_t H = 2, N = 6, D = 3;
  Inputs in(1, H, N, D, 700);
  DTensor o(in.shape()), dq(in.shape()), dk(in.shape()), dv(in.shape());
  auto causal = nn::make_attention<double>(make_cfg("full", true, 1, 1, 1), H, D);
  auto both = nn::make_attention<double>(make_cfg("full", false, 1, 1, 1), H, D);
  DTensor wrong_heads(Shape{H + 1, 4}), even(Shape{H, 4}), ok(Shape{H, 5});
  const auto fwd = [&](nn::Attention<double>& a, const DTensor& b) {
    return testutil::message_of(
        [&] { a.forward(in.q.cview(), in.k.cview(), in.v.cview(), o.view(), b.cview()); });
  };
  EXPECT_NE(fwd(*causal, wrong_heads).find("relative bias must be (H=2, buckets)"),
            std::string::npos);
  EXPECT_NE(fwd(*both, even).find("odd number of buckets"), std::string::npos);
  EXPECT_EQ(fwd(*causal, even), "(no exception)");  // causal: any number of buckets
  EXPECT_EQ(fwd(*both, ok), "(no exception)");
  // A gradient table without a bias in the forward, or of another shape.
  causal->forward(in.q.cview(), in.k.cview(), in.v.cview(), o.view());
  DTensor db(Shape{H, 4});
  EXPECT_NE(testutil::message_of([&] {
              causal->backward(o.cview(), dq.view(), dk.view(), dv.view(), db.view());
            }).find("forward had no relative bias"),
            std::string::npos);
  both->forward(in.q.cview(), in.k.cview(), in.v.cview(), o.view(), ok.cview());
  EXPECT_NE(testutil::message_of([&] {
              both->backward(o.cview(), dq.view(), dk.view(), dv.view(), db.view());
            }).find("dbias"),
            std::string::npos);
}

// ---------------------------------------------------------------- Transformer option

namespace {

nn::TransformerConfig tiny(const std::string& attention, int64_t relpos) {
  return testutil::tiny_lm_config(attention, relpos);
}
using testutil::random_ids;
template <class T>
using Lm = testutil::TinyLm<T>;

}  // namespace

TEST(TransformerRelpos, ConfigErrorNamesTheKey) {
  nn::TransformerConfig c;
  c.relative_positions = -1;
  const std::string msg = testutil::message_of([&] { nn::check_rules(c); });
  EXPECT_NE(msg.find("model.relative_positions"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  c.relative_positions = 0;
  EXPECT_EQ(testutil::message_of([&] { nn::check_rules(c); }), "(no exception)");
  c.relative_positions = 513;
  EXPECT_EQ(testutil::message_of([&] { nn::check_rules(c); }), "(no exception)");
}

TEST(TransformerRelpos, ZeroInitialisedSoTheModelStartsAsWithoutIt) {
  const int64_t B = 2, N = 12, V = 7;
  for (const char* attention : {"full", "local:1,routing:1", "smyrf:1,lsh:1", "random"}) {
    SCOPED_TRACE(attention);
    Lm<double> off(tiny(attention, 0), V, N, 3), on(tiny(attention, 6), V, N, 3);
    for (int64_t l = 0; l < 2; ++l) {
      auto* p = on.find("lm.l" + std::to_string(l) + ".attn.relpos");
      ASSERT_NE(p, nullptr);
      EXPECT_TRUE(p->shape == (Shape{2, 6}));
      for (int64_t i = 0; i < p->numel(); ++i) EXPECT_EQ(p->value[i], 0.0);
    }
    EXPECT_EQ(off.find("lm.l0.attn.relpos"), nullptr);
    core::Rng rng(4);
    const auto ids = random_ids(rng, B * N, V);
    core::TensorT<double> la(Shape{B * N, V}), lb(Shape{B * N, V});
    off.model.forward(ids.data(), B, N, la.view(), true);
    on.model.forward(ids.data(), B, N, lb.view(), true);
    double diff = 0;
    for (int64_t i = 0; i < la.numel(); ++i) diff = std::max(diff, std::abs(la[i] - lb[i]));
    EXPECT_EQ(diff, 0.0);
  }
}

// Cross-entropy gradient of every parameter, the bias tables included (made nonzero),
// for full heads and for local + routing heads with the assignment held.
TEST(TransformerRelpos, CrossEntropyGradientOfEveryParameter) {
  for (const char* attention : {"full", "local:1,routing:1"}) {
    SCOPED_TRACE(attention);
    const int64_t B = 2, N = 7, V = 6;
    auto cfg = tiny(attention, 4);  // distances 0..6 clipped at 3
    cfg.qk_norm = std::string(attention) != "full";
    Lm<double> lm(cfg, V, N, 5);
    core::Rng rng(6);
    for (auto& p : lm.ps.params())
      if (p.name.find(".relpos") != std::string::npos || p.name.find(".ln") != std::string::npos)
        for (int64_t i = 0; i < p.numel(); ++i) p.value[i] += 0.5 * rng.normal();
    testutil::expect_lm_gradients(lm, B, N, V, rng);
  }
}

TEST(TransformerRelpos, CheckpointRoundTripRestoresTheTable) {
  testutil::TempDir dir;
  const int64_t B = 1, N = 10, V = 5;
  const auto cfg = tiny("local:1,routing:1", 8);
  Lm<float> a(cfg, V, N, 11), b(cfg, V, N, 11);
  core::Rng rng(13);
  for (auto& x : b.ps.values()) x = float(rng.normal());  // overwritten by the load
  auto* pa = a.find("lm.l1.attn.relpos");
  ASSERT_NE(pa, nullptr);
  for (int64_t i = 0; i < pa->numel(); ++i) pa->value[i] = float(rng.normal());
  train::Checkpoint ck;
  for (const auto& p : a.ps.params()) {
    auto v = a.ps.values().subspan(size_t(p.offset), size_t(p.numel()));
    ck.put_array(p.name, p.shape, std::vector<float>(v.begin(), v.end()));
  }
  train::save_checkpoint(dir / "m.sbck", ck);
  train::load_parameters(b.ps, train::load_checkpoint(dir / "m.sbck"));
  auto* pb = b.find("lm.l1.attn.relpos");
  ASSERT_NE(pb, nullptr);
  for (int64_t i = 0; i < pa->numel(); ++i) EXPECT_EQ(pa->value[i], pb->value[i]) << i;
  const auto ids = random_ids(rng, B * N, V);
  core::Tensor la(Shape{B * N, V}), lb(Shape{B * N, V});
  a.model.set_draws(0);
  b.model.set_draws(0);
  a.model.forward(ids.data(), B, N, la.view(), false);
  b.model.forward(ids.data(), B, N, lb.view(), false);
  for (int64_t i = 0; i < la.numel(); ++i) EXPECT_EQ(la[i], lb[i]) << i;
}
