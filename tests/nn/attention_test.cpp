// Attention cores (nn/attention): full attention against a plain O(N²) reference; every
// kind equals full attention when its window / clusters cover the sequence; the engine
// against a plain evaluation of each kind's own sparse structure; local attention
// against a banded reference; finite-difference gradients in double for every kind
// (assignment held fixed), causal and not; causality (changing every token after t0
// leaves outputs <= t0 unchanged, assignments included); the no-N×N memory bound; hold;
// float against double; config and shape errors.
#include "nn/attention/attention.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gradcheck.hpp"
#include "nn/attention/kinds.hpp"
#include "nn/attention_inputs.hpp"
#include "test_util.hpp"

using namespace seqbench;
using core::Shape;
using DTensor = core::TensorT<double>;
using DAttention = nn::Attention<double>;

using testutil::Inputs;
using testutil::kAllKinds;
using testutil::make_cfg;
using testutil::max_abs_diff;
using testutil::past_future_diff;
using testutil::sparse_cfg;

namespace {

const std::vector<std::string> kSparseKinds = {"local", "routing", "random", "smyrf", "lsh"};

DTensor run(DAttention& att, const Inputs& in) {
  DTensor o(in.shape());
  att.forward(in.q.cview(), in.k.cview(), in.v.cview(), o.view());
  return o;
}

// Softmax attention of one query row over a list of (key token, score) pairs.
void attend(const std::vector<std::pair<int64_t, double>>& keys, const double* v, int64_t D,
            double* out, double* lse) {
  std::fill(out, out + D, 0.0);
  if (keys.empty()) {
    *lse = -std::numeric_limits<double>::infinity();
    return;
  }
  double mx = -std::numeric_limits<double>::infinity();
  for (const auto& [j, s] : keys) mx = std::max(mx, s);
  double z = 0;
  for (const auto& [j, s] : keys) z += std::exp(s - mx);
  for (const auto& [j, s] : keys)
    for (int64_t c = 0; c < D; ++c) out[c] += std::exp(s - mx) / z * v[j * D + c];
  *lse = mx + std::log(z);
}

double score(const Inputs& in, int64_t s, int64_t t, int64_t j, bool shared_qk) {
  if (shared_qk && t == j) return -1e5;
  const double* q = in.q.data() + (s * in.N + t) * in.D;
  const double* k = in.k.data() + (s * in.N + j) * in.D;
  double d = 0;
  for (int64_t c = 0; c < in.D; ++c) d += q[c] * k[c];
  return d / std::sqrt(static_cast<double>(in.D));
}

// Dense attention with a mask allowed(t, j), one row at a time.
template <class Allowed>
DTensor masked_reference(const Inputs& in, bool shared_qk, Allowed allowed) {
  DTensor o(in.shape());
  for (int64_t s = 0; s < in.B * in.H; ++s)
    for (int64_t t = 0; t < in.N; ++t) {
      std::vector<std::pair<int64_t, double>> keys;
      for (int64_t j = 0; j < in.N; ++j)
        if (allowed(t, j)) keys.emplace_back(j, score(in, s, t, j, shared_qk));
      double lse;
      attend(keys, in.v.data() + s * in.N * in.D, in.D, o.data() + (s * in.N + t) * in.D, &lse);
    }
  return o;
}

DTensor full_reference(const Inputs& in, bool causal, bool shared_qk) {
  return masked_reference(in, shared_qk, [&](int64_t t, int64_t j) { return !causal || j <= t; });
}

// Evaluates the attention's own last structure with plain loops: per occurrence a
// softmax over its group's visible keys (+ its own key where self is set), combined per
// token by the kind's rule. Shares nothing with the engine but the structure.
DTensor structure_reference(const DAttention& att, const Inputs& in) {
  const bool causal = att.config().causal, shared = att.config().shared_qk;
  DTensor o(in.shape());
  const int64_t D = in.D;
  for (int64_t s = 0; s < in.B * in.H; ++s) {
    const nn::AttnStructure& st = att.structure(s);
    const int64_t nocc = static_cast<int64_t>(st.q.size());
    std::vector<double> oo(static_cast<size_t>(nocc * D)), lse(static_cast<size_t>(nocc));
    for (const auto& g : st.groups)
      for (int64_t i = 0; i < g.q_len; ++i) {
        const int64_t occ = g.q_off + i, t = st.q[occ];
        std::vector<std::pair<int64_t, double>> keys;
        for (int64_t j = 0; j < g.k_len; ++j) {
          const int64_t kt = st.k[g.k_off + j];
          if (!causal || kt <= t) keys.emplace_back(kt, score(in, s, t, kt, shared));
        }
        if (!st.self.empty() && st.self[occ]) keys.emplace_back(t, score(in, s, t, t, shared));
        attend(keys, in.v.data() + s * in.N * D, D, oo.data() + occ * D, &lse[occ]);
      }
    // Per token: occurrence count, largest lse, Σ exp(lse - largest).
    const double neg_inf = -std::numeric_limits<double>::infinity();
    std::vector<double> cnt(static_cast<size_t>(in.N), 0.0), mx(static_cast<size_t>(in.N), neg_inf),
        z(static_cast<size_t>(in.N), 0.0);
    for (int64_t occ = 0; occ < nocc; ++occ) {
      cnt[st.q[occ]] += 1;
      mx[st.q[occ]] = std::max(mx[st.q[occ]], lse[occ]);
    }
    for (int64_t occ = 0; occ < nocc; ++occ)
      if (lse[occ] > neg_inf) z[st.q[occ]] += std::exp(lse[occ] - mx[st.q[occ]]);
    for (int64_t occ = 0; occ < nocc; ++occ) {
      const int64_t t = st.q[occ];
      const double w = att.combine() == DAttention::Combine::Average
                           ? 1.0 / cnt[t]
                           : (lse[occ] > neg_inf ? std::exp(lse[occ] - mx[t]) / z[t] : 0.0);
      for (int64_t c = 0; c < D; ++c) o.data()[(s * in.N + t) * D + c] += w * oo[occ * D + c];
    }
  }
  return o;
}


// ---------------------------------------------------------------------------------------

TEST(Attention, FullMatchesPlainReference) {
  for (bool causal : {true, false})
    for (bool shared : {false, true}) {
      Inputs in(2, 2, 70, 5, 1, shared);  // N = 70 crosses the 64-row blocks
      auto att = nn::make_attention<double>(make_cfg("full", causal, 1, 1, 1, shared), 2, 5);
      EXPECT_LT(max_abs_diff(run(*att, in), full_reference(in, causal, shared)), 1e-12)
          << "causal=" << causal << " shared=" << shared;
    }
}

TEST(Attention, EveryKindEqualsFullWhenItCoversTheSequence) {
  const int64_t N = 13;
  for (const auto& kind : kAllKinds)
    for (bool causal : {true, false})
      for (bool shared : {false, true}) {
        // One cluster / bucket, one chunk (w >= N), several rounds where rounds apply.
        auto att = nn::make_attention<double>(make_cfg(kind, causal, N + 2, 1, 3, shared), 2, 4);
        Inputs in(2, 2, N, 4, 3, shared);
        EXPECT_LT(max_abs_diff(run(*att, in), full_reference(in, causal, shared)), 1e-12)
            << kind << " causal=" << causal << " shared=" << shared;
      }
}

TEST(Attention, EngineMatchesPlainEvaluationOfTheStructure) {
  for (const auto& kind : kSparseKinds)
    for (bool causal : {true, false})
      for (bool shared : {false, true}) {
        auto att = nn::make_attention<double>(sparse_cfg(kind, causal, shared), 3, 4);
        Inputs in(2, 3, 23, 4, 5, shared);
        const DTensor o = run(*att, in);
        EXPECT_LT(max_abs_diff(o, structure_reference(*att, in)), 1e-12)
            << kind << " causal=" << causal << " shared=" << shared;
        // Not full attention in disguise.
        EXPECT_GT(max_abs_diff(o, full_reference(in, causal, shared)), 1e-3)
            << kind << " causal=" << causal << " shared=" << shared;
      }
}

TEST(Attention, LocalMatchesBandedReference) {
  const int64_t w = 4;
  for (bool causal : {true, false}) {
    Inputs in(1, 2, 19, 3, 9);
    auto att = nn::make_attention<double>(make_cfg("local", causal, w, 1, 1), 2, 3);
    const DTensor ref = masked_reference(in, false, [&](int64_t t, int64_t j) {
      const int64_t bt = t / w, bj = j / w;
      return causal ? (j <= t && bj >= bt - 1) : (bj >= bt - 1 && bj <= bt + 1);
    });
    EXPECT_LT(max_abs_diff(run(*att, in), ref), 1e-12) << "causal=" << causal;
  }
}

TEST(Attention, StructuresCoverEveryOccurrenceOnceAndBoundTheKeys) {
  const int64_t N = 29, w = 3;
  for (const auto& kind : kSparseKinds)
    for (bool causal : {true, false}) {
      const auto cfg = sparse_cfg(kind, causal);
      auto att = nn::make_attention<double>(cfg, 2, 4);
      Inputs in(2, 2, N, 4, 11);
      run(*att, in);
      for (int64_t s = 0; s < att->slices(); ++s) {
        const auto& st = att->structure(s);
        std::vector<int> covered(st.q.size(), 0), per_token(static_cast<size_t>(N), 0);
        int64_t max_keys = 0;
        for (const auto& g : st.groups) {
          ASSERT_LE(g.q_len, nn::kMaxGroupRows);
          for (int64_t i = 0; i < g.q_len; ++i) ++covered[static_cast<size_t>(g.q_off + i)];
          max_keys = std::max<int64_t>(max_keys, g.k_len);
        }
        for (size_t o = 0; o < st.q.size(); ++o) {
          EXPECT_EQ(covered[o], 1) << kind << " occurrence " << o;
          ++per_token[static_cast<size_t>(st.q[o])];
        }
        // Keys per group: local 2w (3w non-causal); bucketed chunks likewise; clusters w.
        const bool bucketed = kind == "lsh" || (causal && (kind == "routing" || kind == "smyrf"));
        const int64_t bound = (kind == "local" || bucketed) ? (causal ? 2 : 3) * w : w;
        EXPECT_LE(max_keys, bound) << kind << " causal=" << causal;
        // Every token occurs once per round (routing: once; non-causal routing's top-w
        // clusters may take a token several times or not at all).
        if (kind == "routing" && !causal) {
          EXPECT_EQ(static_cast<int64_t>(st.q.size()), cfg.clusters * w);
        } else {
          const int rounds = kind == "local" || kind == "routing" ? 1 : static_cast<int>(cfg.rounds);
          for (int64_t t = 0; t < N; ++t) EXPECT_EQ(per_token[t], rounds) << kind << " t=" << t;
        }
      }
    }
}

// dq, dk, dv by central differences of L = Σ W ⊙ O with the assignment held fixed.
void expect_gradients(const nn::AttentionConfig& cfg, uint64_t seed) {
  SCOPED_TRACE(cfg.kind + (cfg.causal ? " causal" : " non-causal") +
               (cfg.shared_qk ? " shared_qk" : ""));
  const int64_t B = 1, H = 2, N = 11, D = 3;
  Inputs in(B, H, N, D, seed, cfg.shared_qk);
  DTensor wt(in.shape()), o(in.shape());
  core::Rng rng(seed + 100);
  gradcheck::fill_normal(rng, wt);
  auto att = nn::make_attention<double>(cfg, H, D);
  att->forward(in.q.cview(), in.k.cview(), in.v.cview(), o.view());
  att->hold_assignment(true);
  DTensor dq(in.shape()), dk(in.shape()), dv(in.shape());
  dq[0] = 1.0;  // backward accumulates: the expected gradient is this plus dL/dq
  att->backward(wt.cview(), dq.view(), dk.view(), dv.view());
  dq[0] -= 1.0;
  const auto loss = [&] {
    att->forward(in.q.cview(), in.k.cview(), in.v.cview(), o.view());
    return gradcheck::dot(wt.data(), o.data(), o.numel());
  };
  gradcheck::expect_gradient("dq", in.q.data(), dq.data(), dq.numel(), loss);
  gradcheck::expect_gradient("dk", in.k.data(), dk.data(), dk.numel(), loss);
  gradcheck::expect_gradient("dv", in.v.data(), dv.data(), dv.numel(), loss);
}

TEST(Attention, GradientsMatchFiniteDifferences) {
  uint64_t seed = 20;
  for (const auto& kind : kAllKinds)
    for (bool causal : {true, false}) expect_gradients(sparse_cfg(kind, causal), ++seed);
}

TEST(Attention, GradientsMatchFiniteDifferencesWithSharedQkMask) {
  // The self entries are constants (-1e5): no gradient through them, yet a token with
  // nothing else visible (t = 0, causal) still attends to itself.
  uint64_t seed = 40;
  for (const auto& kind : {"full", "lsh", "routing"})
    for (bool causal : {true, false}) expect_gradients(sparse_cfg(kind, causal, true), ++seed);
}

TEST(Attention, GradientsThroughSeveralRoundsAndSelfColumns) {
  // More rounds and small windows: logsumexp weights between rounds and SMYRF's self
  // column (query and key buckets differ) both carry gradient.
  expect_gradients(make_cfg("smyrf", true, 2, 1, 4), 61);
  expect_gradients(make_cfg("smyrf", false, 2, 1, 3), 62);
  expect_gradients(make_cfg("lsh", true, 2, 6, 3), 63);
  expect_gradients(make_cfg("random", true, 2, 1, 3), 64);
  expect_gradients(make_cfg("routing", true, 2, 4, 1), 65);
}

TEST(Attention, CausalKindsDoNotLeakTheFuture) {
  const int64_t B = 2, H = 2, N = 24, D = 4;
  for (const auto& kind : kAllKinds)
    for (int64_t t0 : {0, 5, 11, 17}) {
      SCOPED_TRACE(kind + " t0=" + std::to_string(t0));
      const auto cfg = sparse_cfg(kind, true);
      // Two instances with the same config draw the same hashes and start from the
      // same centroids; only the inputs after t0 differ, assignments are rebuilt.
      auto a = nn::make_attention<double>(cfg, H, D), b = nn::make_attention<double>(cfg, H, D);
      Inputs in(B, H, N, D, 70), other(B, H, N, D, 70);
      other.perturb_after(t0, 71 + static_cast<uint64_t>(t0));
      const DTensor oa = run(*a, in), ob = run(*b, other);
      const auto [past, future] = past_future_diff(oa, ob, N, D, t0);
      EXPECT_LT(past, 1e-12);
      EXPECT_GT(future, 1e-3);  // the perturbation is real
      if (kind == "routing" || kind == "smyrf" || kind == "lsh") {
        // ... and it moved the data-dependent assignment somewhere.
        bool changed = false;
        for (int64_t s = 0; s < B * H; ++s)
          changed = changed || a->structure(s).q != b->structure(s).q ||
                    a->structure(s).k != b->structure(s).k;
        EXPECT_TRUE(changed);
      }
    }
}

TEST(Attention, SparseKindsHoldNoNByNMatrix) {
  const int64_t N = 1024, D = 4;
  for (const auto& kind : kSparseKinds) {
    auto att = nn::make_attention<float>(make_cfg(kind, true, 16, kind == "lsh" ? 64 : 32, 2), 1, D);
    core::TensorT<float> q(Shape{1, 1, N, D}), o(Shape{1, 1, N, D});
    core::Rng rng(3);
    for (int64_t i = 0; i < q.numel(); ++i) q[i] = static_cast<float>(rng.normal());
    att->forward(q.cview(), q.cview(), q.cview(), o.view());
    core::TensorT<float> dq(q.shape()), dk(q.shape()), dv(q.shape());
    att->backward(o.cview(), dq.view(), dk.view(), dv.view());
    EXPECT_LT(att->held_bytes(), N * N * sizeof(float) / 8) << kind;
  }
}

TEST(Attention, HoldAssignmentReusesTheStructure) {
  auto att = nn::make_attention<double>(sparse_cfg("random", true), 2, 4);
  Inputs in(1, 2, 20, 4, 80);
  run(*att, in);
  const auto first = att->structure(0).q;
  run(*att, in);
  EXPECT_NE(att->structure(0).q, first) << "each forward draws a new random assignment";
  EXPECT_EQ(att->draws(), 2u);
  att->hold_assignment(true);
  const auto held = att->structure(0).q;
  run(*att, in);
  EXPECT_EQ(att->structure(0).q, held);
  EXPECT_EQ(att->draws(), 2u);
  // Restoring the draw index replays the same random assignment.
  att->hold_assignment(false);
  att->set_draws(1);
  run(*att, in);
  EXPECT_EQ(att->structure(0).q, held);
  att->hold_assignment(true);
  Inputs longer(1, 2, 21, 4, 81);
  EXPECT_NE(testutil::message_of([&] { run(*att, longer); }).find("hold_assignment(false)"),
            std::string::npos);
}

TEST(Attention, FloatMatchesDouble) {
  for (const std::string kind : {"full", "local", "random"}) {
    const auto cfg = sparse_cfg(kind, true);
    auto ad = nn::make_attention<double>(cfg, 2, 8);
    auto af = nn::make_attention<float>(cfg, 2, 8);
    Inputs in(2, 2, 37, 8, 90);
    const DTensor od = run(*ad, in);
    core::TensorT<float> q(in.shape()), k(in.shape()), v(in.shape()), of(in.shape());
    for (int64_t i = 0; i < q.numel(); ++i) {
      q[i] = static_cast<float>(in.q[i]);
      k[i] = static_cast<float>(in.k[i]);
      v[i] = static_cast<float>(in.v[i]);
    }
    af->forward(q.cview(), k.cview(), v.cview(), of.view());
    double m = 0;
    for (int64_t i = 0; i < od.numel(); ++i) m = std::max(m, std::abs(od[i] - of[i]));
    EXPECT_LT(m, 1e-4) << kind;
  }
}

TEST(Attention, ConfigAndShapeErrors) {
  const auto usage = [](const nn::AttentionConfig& c) {
    try {
      nn::make_attention<double>(c, 1, 4);
    } catch (const core::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(no usage error)");
  };
  EXPECT_NE(usage(make_cfg("dense", true, 4, 2, 1)).find("full, local, routing"),
            std::string::npos);
  EXPECT_NE(usage(make_cfg("local", true, 0, 2, 1)).find("attention.window"), std::string::npos);
  EXPECT_NE(usage(make_cfg("lsh", true, 4, 3, 1)).find("1 or even"), std::string::npos);
  EXPECT_NE(usage(make_cfg("smyrf", true, 4, 2, 0)).find("attention.rounds"), std::string::npos);
  auto bad_decay = make_cfg("routing", true, 4, 2, 1);
  bad_decay.ema_decay = 1.5;
  EXPECT_NE(usage(bad_decay).find("ema_decay"), std::string::npos);

  auto att = nn::make_attention<double>(make_cfg("full", true, 4, 1, 1), 2, 4);
  Inputs in(1, 3, 5, 4, 1);  // 3 heads for a 2-head layer
  EXPECT_NE(testutil::message_of([&] { run(*att, in); }).find("made for H=2"), std::string::npos);
  DTensor g(Shape{1, 2, 5, 4});
  EXPECT_NE(testutil::message_of([&] { att->backward(g.cview(), g.view(), g.view(), g.view()); })
                .find("call forward first"),
            std::string::npos);
}

}  // namespace
