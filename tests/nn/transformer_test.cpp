// Transformer parts (nn/ffn, nn/dropout, nn/attention/transformer): the feed-forward block and GELU
// on known values and by finite differences; dropout's mask, scaling, hold and eval
// identity; head-group parsing and per-layer kinds; multi-head attention against a plain
// per-head reference and by finite differences (head groups of several kinds, qk_norm);
// the pre-LN block by finite differences with dropout masks held.
#include "nn/attention/transformer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "gradcheck.hpp"
#include "test_util.hpp"

using namespace seqbench;
using core::Shape;
using DTensor = core::TensorT<double>;

namespace {

void check_param_grads(core::ParamStoreT<double>& ps, const std::function<double()>& loss) {
  for (auto& p : ps.params()) {
    std::vector<double> a(p.grad, p.grad + p.numel());
    gradcheck::expect_gradient(p.name, p.value, a.data(), p.numel(), loss);
  }
}

nn::AttentionConfig base_cfg(int64_t window, int64_t clusters) {
  nn::AttentionConfig c;
  c.window = window;
  c.clusters = clusters;
  c.rounds = 2;
  c.seed = 11;
  return c;
}

}  // namespace

TEST(FeedForward, GeluAndReluOnKnownValues) {
  for (auto act : {nn::Activation::Relu, nn::Activation::Gelu}) {
    core::ParamStoreT<double> ps;
    nn::FeedForwardT<double> ffn(ps, "ffn", 1, 1, act);
    ps.finalize(0);
    // W1 = 1, b1 = 0, W2 = 1, b2 = 0: y = act(x).
    for (auto& p : ps.params()) p.value[0] = p.name.ends_with(".w") ? 1.0 : 0.0;
    DTensor x(Shape{2, 1}), y(Shape{2, 1});
    x[0] = 1.0;
    x[1] = -1.0;
    nn::FeedForwardCache<double> c;
    ffn.forward(x.cview(), y.view(), c);
    if (act == nn::Activation::Relu) {
      EXPECT_DOUBLE_EQ(y[0], 1.0);
      EXPECT_DOUBLE_EQ(y[1], 0.0);
    } else {
      EXPECT_NEAR(y[0], 0.8413447460685429, 1e-12);  // 1 Φ(1)
      EXPECT_NEAR(y[1], -0.15865525393145707, 1e-12);
    }
  }
  EXPECT_THROW(nn::parse_activation("tanh"), core::UsageError);
}

TEST(FeedForwardGrad, InputsAndParametersReluAndGelu) {
  for (auto act : {nn::Activation::Relu, nn::Activation::Gelu}) {
    core::ParamStoreT<double> ps;
    nn::FeedForwardT<double> ffn(ps, "ffn", 4, 6, act);
    ps.finalize(0);
    core::Rng rng(5);
    ffn.init(rng, 0.5, 0.5);
    for (auto& p : ps.params()) gradcheck::fill_normal(rng, p.value, p.numel(), 0.5);
    DTensor x(Shape{5, 4}), y(Shape{5, 4}), w(Shape{5, 4}), dx(Shape{5, 4});
    gradcheck::fill_normal(rng, x);
    gradcheck::fill_normal(rng, w);
    nn::FeedForwardCache<double> c;
    auto loss = [&] {
      ffn.forward(x.cview(), y.view(), c);
      return gradcheck::dot(w.data(), y.data(), y.numel());
    };
    loss();
    ffn.backward(x.cview(), w.cview(), c, dx.view());
    gradcheck::expect_gradient("dx", x.data(), dx.data(), dx.numel(), loss);
    check_param_grads(ps, loss);
  }
}

TEST(Dropout, MaskScalesKeptElementsAndEvalIsIdentity) {
  nn::DropoutT<double> d(0.25);
  core::Rng rng(1);
  const int64_t n = 4000;
  std::vector<double> x(n, 1.0);
  d.forward(x.data(), n, true, rng);
  int64_t kept = 0;
  for (double v : x) {
    EXPECT_TRUE(v == 0.0 || std::abs(v - 1.0 / 0.75) < 1e-15) << v;
    kept += v != 0.0;
  }
  EXPECT_NEAR(double(kept) / n, 0.75, 0.03);
  std::vector<double> g(n, 2.0);
  d.backward(g.data(), n);
  for (int64_t i = 0; i < n; ++i) EXPECT_DOUBLE_EQ(g[i], 2.0 * x[i]);
  // Eval: nothing happens, and backward is the identity too.
  std::vector<double> e(n, 3.0);
  d.forward(e.data(), n, false, rng);
  d.backward(e.data(), n);
  for (double v : e) EXPECT_DOUBLE_EQ(v, 3.0);
  EXPECT_THROW(nn::DropoutT<float>(1.0), core::UsageError);
  EXPECT_THROW(nn::DropoutT<float>(-0.1), core::UsageError);
}

TEST(Dropout, HoldReusesTheMaskAndTheRngDecidesIt) {
  nn::DropoutT<double> a(0.5), b(0.5);
  core::Rng ra(9), rb(9);
  std::vector<double> x1(64, 1.0), x2(64, 1.0), x3(64, 1.0);
  a.forward(x1.data(), 64, true, ra);
  b.forward(x2.data(), 64, true, rb);
  EXPECT_EQ(x1, x2);  // same seed, same mask
  a.hold(true);
  a.forward(x3.data(), 64, true, ra);
  EXPECT_EQ(x1, x3);  // held
  a.hold(false);
  std::vector<double> x4(64, 1.0);
  a.forward(x4.data(), 64, true, ra);
  EXPECT_NE(x1, x4);  // a fresh draw
}

TEST(HeadGroups, ParseAndErrors) {
  auto g = nn::parse_head_groups("full", 4);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].kind, "full");
  EXPECT_EQ(g[0].heads, 4);
  g = nn::parse_head_groups(" local:2, routing:2 ", 4);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(nn::head_groups_str(g), "local:2,routing:2");
  const auto msg = [](const std::string& spec) {
    return testutil::message_of([&] { nn::parse_head_groups(spec, 4); });
  };
  EXPECT_NE(msg("local:2,routng:2").find("unknown kind 'routng'"), std::string::npos);
  EXPECT_NE(msg("local:2,routing:1").find("has 3 heads, not 4"), std::string::npos);
  EXPECT_NE(msg("local,routing:2").find("no head count"), std::string::npos);
  EXPECT_NE(msg("local:x,routing:2").find("not a positive integer"), std::string::npos);
  EXPECT_NE(msg("local:0,routing:4").find("not a positive integer"), std::string::npos);
  EXPECT_NE(msg("").find("model.attention"), std::string::npos);
  EXPECT_THROW(nn::parse_head_groups("full:3", 4), core::UsageError);
}

TEST(HeadGroups, RoutingOnlyInTheLastLayers) {
  nn::TransformerConfig cfg;
  cfg.layers = 3;
  cfg.heads = 4;
  cfg.attention = "local:2,routing:1,smyrf:1";
  cfg.routing_layers = 1;
  EXPECT_EQ(nn::head_groups_str(nn::layer_head_groups(cfg, 0)), "local:4");
  EXPECT_EQ(nn::head_groups_str(nn::layer_head_groups(cfg, 1)), "local:4");
  EXPECT_EQ(nn::head_groups_str(nn::layer_head_groups(cfg, 2)), "local:2,routing:1,smyrf:1");
  cfg.routing_layers = 0;
  EXPECT_EQ(nn::head_groups_str(nn::layer_head_groups(cfg, 0)), "local:2,routing:1,smyrf:1");
  cfg.attention = "full:2,lsh:2";
  cfg.routing_layers = 2;
  EXPECT_EQ(nn::head_groups_str(nn::layer_head_groups(cfg, 0)), "full:2,local:2");
}

TEST(TransformerConfig, ValidateNamesTheKey) {
  const auto msg = [](auto edit) {
    nn::TransformerConfig c;
    edit(c);
    return testutil::message_of([&] { nn::check_rules(c); });
  };
  EXPECT_EQ(msg([](auto&) {}), "(no exception)");
  EXPECT_NE(msg([](auto& c) { c.heads = 3; }).find("model.heads"), std::string::npos);
  EXPECT_NE(msg([](auto& c) { c.routing_layers = 5; }).find("model.routing_layers"),
            std::string::npos);
  EXPECT_NE(msg([](auto& c) { c.attention = "lsh", c.clusters = 3; }).find("model.clusters"),
            std::string::npos);
  EXPECT_NE(msg([](auto& c) { c.attention = "full:2"; }).find("model.attention"),
            std::string::npos);
  EXPECT_NE(msg([](auto& c) { c.dropout = 1.0; }).find("model.dropout"), std::string::npos);
}

// Plain causal multi-head attention from the same parameters: per head h, scores
// q_t . k_s / sqrt(Dh) for s <= t, softmax, weighted v; heads concatenated; output layer.
TEST(MultiHeadAttention, FullHeadsMatchAPlainReference) {
  const int64_t B = 2, N = 7, E = 6, H = 3, D = E / H;
  core::ParamStoreT<double> ps;
  nn::MultiHeadAttentionT<double> mha(ps, "attn", E, {{"full", 1}, {"local", 2}}, base_cfg(N, 2));
  ps.finalize(0);
  core::Rng rng(21);
  for (auto& p : ps.params()) gradcheck::fill_normal(rng, p.value, p.numel(), 0.5);
  DTensor x(Shape{B, N, E}), y(Shape{B, N, E});
  gradcheck::fill_normal(rng, x);
  mha.forward(x.cview(), y.view(), false);  // local with window N covers every past key

  const auto& wqkv = ps.get("attn.qkv.w");
  const auto& bqkv = ps.get("attn.qkv.b");
  const auto& wo = ps.get("attn.out.w");
  const auto& bo = ps.get("attn.out.b");
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> qkv(size_t(N * 3 * E)), cat(size_t(N * E));
    for (int64_t t = 0; t < N; ++t)
      for (int64_t o = 0; o < 3 * E; ++o) {
        double s = bqkv.value[o];
        for (int64_t i = 0; i < E; ++i) s += wqkv.value[o * E + i] * x[(b * N + t) * E + i];
        qkv[size_t(t * 3 * E + o)] = s;
      }
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < N; ++t) {
        std::vector<double> p(size_t(t + 1));
        double mx = -1e300, z = 0;
        for (int64_t s = 0; s <= t; ++s) {
          double d = 0;
          for (int64_t j = 0; j < D; ++j)
            d += qkv[size_t(t * 3 * E + h * D + j)] * qkv[size_t(s * 3 * E + E + h * D + j)];
          p[size_t(s)] = d / std::sqrt(double(D));
          mx = std::max(mx, p[size_t(s)]);
        }
        for (auto& v : p) z += (v = std::exp(v - mx));
        for (int64_t j = 0; j < D; ++j) {
          double o = 0;
          for (int64_t s = 0; s <= t; ++s)
            o += p[size_t(s)] / z * qkv[size_t(s * 3 * E + 2 * E + h * D + j)];
          cat[size_t(t * E + h * D + j)] = o;
        }
      }
    for (int64_t t = 0; t < N; ++t)
      for (int64_t o = 0; o < E; ++o) {
        double s = bo.value[o];
        for (int64_t i = 0; i < E; ++i) s += wo.value[o * E + i] * cat[size_t(t * E + i)];
        EXPECT_NEAR(y[(b * N + t) * E + o], s, 1e-12) << "b " << b << " t " << t << " o " << o;
      }
  }
}

TEST(MultiHeadAttention, LocalWindowAppliesToLocalHeadsOnlyAndEveryCoreIsCausal) {
  core::ParamStore ps;
  nn::MultiHeadAttentionT<float> mha(ps, "attn", 8, {{"local", 2}, {"routing", 2}},
                                     base_cfg(4, 2), nn::MhaOptions{false, 1e-5, 2});
  ASSERT_EQ(mha.groups(), 2);
  EXPECT_EQ(mha.core(0).config().window, 2);
  EXPECT_EQ(mha.core(1).config().window, 4);
  EXPECT_EQ(mha.core(0).heads(), 2);
  EXPECT_EQ(mha.core(1).head_dim(), 2);
  EXPECT_TRUE(mha.core(0).config().causal && mha.core(1).config().causal);
  EXPECT_NE(mha.core(0).config().seed, mha.core(1).config().seed);
}

namespace {
struct MhaCase {
  const char* name;
  std::vector<nn::HeadGroup> groups;
  bool qk_norm;
  bool shared_qk = false;
  double commitment = 0;
};
}  // namespace

class MultiHeadAttentionGrad : public ::testing::TestWithParam<MhaCase> {};

TEST_P(MultiHeadAttentionGrad, InputsAndParametersWithTheAssignmentHeld) {
  const MhaCase& tc = GetParam();
  const int64_t B = 2, N = 9, E = 8;
  core::ParamStoreT<double> ps;
  nn::MhaOptions opt;
  opt.qk_norm = tc.qk_norm;
  opt.shared_qk = tc.shared_qk;
  opt.commitment = tc.commitment;
  nn::MultiHeadAttentionT<double> mha(ps, "attn", E, tc.groups, base_cfg(3, 4), opt);
  ps.finalize(0);
  core::Rng rng(31);
  mha.init(rng, 0.5, 0.5);
  for (const char* b : {"attn.qkv.b", "attn.out.b"}) {
    auto& p = ps.get(b);
    gradcheck::fill_normal(rng, p.value, p.numel(), 0.3);
  }
  DTensor x(Shape{B, N, E}), y(Shape{B, N, E}), w(Shape{B, N, E}), dx(Shape{B, N, E});
  gradcheck::fill_normal(rng, x);
  gradcheck::fill_normal(rng, w);
  mha.forward(x.cview(), y.view(), true);  // builds the structures (and moves centroids)
  mha.hold_assignment(true);
  // The objective includes the commitment term (aux_loss, 0 unless on).
  auto loss = [&] {
    mha.forward(x.cview(), y.view(), true);
    return gradcheck::dot(w.data(), y.data(), y.numel()) + mha.aux_loss();
  };
  loss();
  if (tc.commitment > 0) {
    EXPECT_GT(mha.aux_loss(), 0.0);
  }
  mha.backward(w.cview(), dx.view());
  gradcheck::expect_gradient("dx", x.data(), dx.data(), dx.numel(), loss);
  check_param_grads(ps, loss);
}

INSTANTIATE_TEST_SUITE_P(
    Groups, MultiHeadAttentionGrad,
    ::testing::Values(MhaCase{"full", {{"full", 2}}, false},
                      MhaCase{"local_routing", {{"local", 1}, {"routing", 1}}, false},
                      MhaCase{"local_routing_qknorm", {{"local", 2}, {"routing", 2}}, true},
                      MhaCase{"random_smyrf_lsh", {{"random", 1}, {"smyrf", 2}, {"lsh", 1}}, true},
                      MhaCase{"routing_commitment", {{"local", 1}, {"routing", 1}}, false, false,
                              0.3},
                      MhaCase{"shared_qk_commitment_qknorm",
                              {{"local", 1}, {"routing", 2}, {"lsh", 1}}, true, true, 0.3},
                      MhaCase{"shared_qk", {{"routing", 1}, {"lsh", 1}}, false, true}),
    [](const auto& p) { return std::string(p.param.name); });

TEST(MultiHeadAttention, SharedQkFeedsTheQueriesAsKeysOfRoutingAndLshHeadsOnly) {
  const int64_t B = 1, N = 8, E = 8, D = 2;
  core::ParamStoreT<double> ps;
  nn::MhaOptions opt;
  opt.shared_qk = true;
  nn::MultiHeadAttentionT<double> mha(ps, "attn", E, {{"local", 1}, {"routing", 2}, {"lsh", 1}},
                                      base_cfg(3, 2), opt);
  ps.finalize(0);
  core::Rng rng(51);
  mha.init(rng, 0.5, 0.5);
  ASSERT_EQ(mha.groups(), 3);
  EXPECT_FALSE(mha.shares_qk(0));
  EXPECT_FALSE(mha.core(0).config().shared_qk);
  for (int64_t g : {1, 2}) {
    EXPECT_TRUE(mha.shares_qk(g));
    EXPECT_TRUE(mha.core(g).config().shared_qk);  // own key masked
  }
  DTensor x(Shape{B, N, E}), y(Shape{B, N, E}), y2(Shape{B, N, E}), dx(Shape{B, N, E});
  gradcheck::fill_normal(rng, x);
  mha.forward(x.cview(), y.view(), false);
  const auto io = mha.core_io(1);
  EXPECT_EQ(io.k.data, io.q.data);
  // The shared heads' key rows of Wqkv (rows E + h D .. for heads 1..3) get no gradient
  // and do not change the output; the local head's do both.
  ps.zero_grad();
  mha.backward(y.cview(), dx.view());
  auto& w = ps.get("attn.qkv.w");
  for (int64_t h = 0; h < 4; ++h) {
    double g = 0;
    for (int64_t r = E + h * D; r < E + (h + 1) * D; ++r)
      for (int64_t i = 0; i < E; ++i) g += std::abs(w.grad[r * E + i]);
    if (h == 0) {
      EXPECT_GT(g, 0.0);
    } else {
      EXPECT_EQ(g, 0.0) << "head " << h;
    }
  }
  for (int64_t r = E + D; r < 2 * E; ++r)
    for (int64_t i = 0; i < E; ++i) w.value[r * E + i] += 1.0;
  mha.hold_assignment(true);  // the same LSH projections as before
  mha.forward(x.cview(), y2.view(), false);
  for (int64_t i = 0; i < y.numel(); ++i) EXPECT_EQ(y[i], y2[i]);
}

TEST(TransformerBlockGrad, InputsAndParametersWithDropoutHeld) {
  const int64_t B = 2, N = 6, E = 8;
  nn::TransformerConfig cfg;
  cfg.d_model = E;
  cfg.heads = 2;
  cfg.d_ff = 12;
  cfg.dropout = 0.2;
  cfg.activation = "gelu";
  core::ParamStoreT<double> ps;
  nn::TransformerBlockT<double> blk(ps, "blk", cfg, {{"local", 1}, {"routing", 1}},
                                    base_cfg(2, 2));
  ps.finalize(0);
  core::Rng rng(41), drop(42);
  blk.init(rng, 0.4, 0.4);
  for (auto& p : ps.params())  // non-trivial LN gains and biases too
    if (p.name.find(".ln") != std::string::npos)
      for (int64_t i = 0; i < p.numel(); ++i) p.value[i] += 0.3 * rng.normal();
  DTensor x(Shape{B, N, E}), y(Shape{B, N, E}), w(Shape{B, N, E}), dx(Shape{B, N, E});
  gradcheck::fill_normal(rng, x);
  gradcheck::fill_normal(rng, w);
  blk.forward(x.cview(), y.view(), true, drop);
  blk.hold(true);
  auto loss = [&] {
    blk.forward(x.cview(), y.view(), true, drop);
    return gradcheck::dot(w.data(), y.data(), y.numel());
  };
  const double l0 = loss();
  blk.backward(w.cview(), dx.view());
  gradcheck::expect_gradient("dx", x.data(), dx.data(), dx.numel(), loss);
  check_param_grads(ps, loss);
  // Dropout really was on: the same input in eval mode gives another output.
  blk.forward(x.cview(), y.view(), false, drop);
  EXPECT_GT(std::abs(gradcheck::dot(w.data(), y.data(), y.numel()) - l0), 1e-6);
}
