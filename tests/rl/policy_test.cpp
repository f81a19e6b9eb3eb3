// The MiniGrid agent (lib/rl/conv, lib/rl/policy): finite-difference checks (double) of
// the convolution, max-pool and the whole policy (heads, core with masks, conv stack),
// the convolution's layout against PyTorch's, masks as resets, acting == chunked training.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "gradcheck.hpp"
#include "rl/conv.hpp"
#include "rl/policy.hpp"

using namespace seqbench;
using core::Shape;

namespace {

std::vector<double> normal_vec(core::Rng& rng, int64_t n, double scale = 1.0) {
  std::vector<double> v(static_cast<size_t>(n));
  gradcheck::fill_normal(rng, v.data(), n, scale);
  return v;
}

// Checks up to `per_param` entries of every parameter (evenly spread) against central
// differences of f; grads hold the analytic gradient of the same f.
void check_params(core::ParamStoreT<double>& ps, const std::function<double()>& f,
                  int64_t per_param = 12, double rtol = 1e-5, double atol = 1e-7) {
  for (auto& p : ps.params()) {
    const int64_t n = p.numel();
    const int64_t stride = std::max<int64_t>(1, n / per_param);
    for (int64_t i = 0; i < n; i += stride) {
      double a = p.grad[i];
      // One entry at a time (expect_gradient wants a contiguous block).
      const double keep = p.value[i];
      p.value[i] = keep + 1e-6;
      const double fp = f();
      p.value[i] = keep - 1e-6;
      const double fm = f();
      p.value[i] = keep;
      const double fd = (fp - fm) / 2e-6;
      EXPECT_LE(std::abs(a - fd), atol + rtol * std::max(std::abs(a), std::abs(fd)))
          << p.name << "[" << i << "] analytic " << a << " vs finite difference " << fd;
    }
  }
}

}  // namespace

TEST(Conv2dGrad, InputsWeightsBias) {
  core::ParamStoreT<double> ps;
  rl::Conv2dT<double> conv(ps, "c", 3, 4, 2, 4, 3);  // (4, 3, 3) -> (3, 2, 4)
  ps.finalize(0);
  core::Rng rng(3);
  conv.init(rng);
  const int64_t n = 2;
  EXPECT_EQ(conv.out_x(), 3);
  EXPECT_EQ(conv.out_y(), 2);
  std::vector<double> x = normal_vec(rng, n * conv.in_size()), y(size_t(n * conv.out_size())),
                      w = normal_vec(rng, n * conv.out_size()), dx(x.size());
  auto loss = [&] {
    conv.forward(n, x.data(), y.data());
    return gradcheck::dot(w.data(), y.data(), n * conv.out_size());
  };
  loss();
  ps.zero_grad();
  conv.backward(n, w.data(), dx.data());
  gradcheck::expect_gradient("dx", x.data(), dx.data(), n * conv.in_size(), loss);
  for (auto& p : ps.params()) {
    std::vector<double> a(p.grad, p.grad + p.numel());
    gradcheck::expect_gradient(p.name, p.value, a.data(), p.numel(), loss);
  }
}

TEST(Conv2dForward, EqualsPyTorchLayoutDirectSum) {
  // out[n][x][y][o] = b[o] + Σ_{ci,dx,dy} W_torch[o][ci][dx][dy] · in[n][x+dx][y+dy][ci], with
  // W_torch[o][ci][dx][dy] = w[o][(dx·k + dy)·Ci + ci] (the documented permutation).
  const int64_t Ci = 3, Co = 5, k = 2, X = 7, Y = 7, n = 3;
  core::ParamStoreT<double> ps;
  rl::Conv2dT<double> conv(ps, "c", Ci, Co, k, X, Y);
  ps.finalize(0);
  core::Rng rng(4);
  conv.init(rng);
  std::vector<double> x = normal_vec(rng, n * X * Y * Ci), y(size_t(n * conv.out_size()));
  conv.forward(n, x.data(), y.data());
  const double* w = conv.linear().w().value;
  const double* b = conv.linear().b()->value;
  const auto torch_w = [&](int64_t o, int64_t ci, int64_t dx, int64_t dy) {
    return w[o * k * k * Ci + (dx * k + dy) * Ci + ci];
  };
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ox = 0; ox < X - 1; ++ox)
      for (int64_t oy = 0; oy < Y - 1; ++oy)
        for (int64_t o = 0; o < Co; ++o) {
          double s = b[o];
          for (int64_t ci = 0; ci < Ci; ++ci)
            for (int64_t dx = 0; dx < k; ++dx)
              for (int64_t dy = 0; dy < k; ++dy)
                s += torch_w(o, ci, dx, dy) * x[size_t(((i * X + ox + dx) * Y + oy + dy) * Ci + ci)];
          EXPECT_NEAR(y[size_t(((i * 6 + ox) * 6 + oy) * Co + o)], s, 1e-12);
        }
}

TEST(MaxPool2d, ForwardPicksWindowMaximumFloorsOddSizes) {
  rl::MaxPool2dT<double> pool(1, 2, 5, 4);  // 5x4 -> 2x2 (the last row is dropped)
  EXPECT_EQ(pool.out_x(), 2);
  EXPECT_EQ(pool.out_y(), 2);
  std::vector<double> x(20), y(4);
  for (int i = 0; i < 20; ++i) x[size_t(i)] = double((i * 7) % 20);  // distinct values
  pool.forward(1, x.data(), y.data());
  for (int ox = 0; ox < 2; ++ox)
    for (int oy = 0; oy < 2; ++oy) {
      double m = -1;
      for (int dx = 0; dx < 2; ++dx)
        for (int dy = 0; dy < 2; ++dy) m = std::max(m, x[size_t((2 * ox + dx) * 4 + 2 * oy + dy)]);
      EXPECT_EQ(y[size_t(ox * 2 + oy)], m);
    }
}

TEST(MaxPool2dGrad, RoutesToTheWinner) {
  rl::MaxPool2dT<double> pool(3, 2, 6, 6);
  core::Rng rng(5);
  const int64_t n = 2;
  std::vector<double> x = normal_vec(rng, n * pool.in_size()), y(size_t(n * pool.out_size())),
                      w = normal_vec(rng, n * pool.out_size()), dx(x.size());
  auto loss = [&] {
    pool.forward(n, x.data(), y.data());
    return gradcheck::dot(w.data(), y.data(), n * pool.out_size());
  };
  loss();
  pool.backward(n, w.data(), dx.data());
  gradcheck::expect_gradient("dx", x.data(), dx.data(), n * pool.in_size(), loss);
  int nonzero = 0;
  for (double d : dx) nonzero += d != 0.0;
  EXPECT_EQ(nonzero, n * pool.out_size()) << "one winner per window";
}

TEST(Relu, ForwardAndBackward) {
  std::vector<double> x{-1.0, 0.0, 2.0}, dy{1.0, 1.0, 1.0};
  rl::relu_forward<double>(3, x.data());
  EXPECT_EQ(x, (std::vector<double>{0.0, 0.0, 2.0}));
  rl::relu_backward<double>(3, x.data(), dy.data());
  EXPECT_EQ(dy, (std::vector<double>{0.0, 0.0, 1.0}));
}

// ---------------------------------------------------------------------------------------
// The whole policy.

namespace {

struct Chunk {
  int64_t L, N;
  std::vector<uint8_t> image, mission;
  std::vector<double> mem0, mask;
};

Chunk random_chunk(core::Rng& rng, int64_t L, int64_t N, int64_t M) {
  Chunk c{L, N, {}, {}, {}, {}};
  for (int64_t i = 0; i < L * N * rl::kImageSize; ++i)
    c.image.push_back(static_cast<uint8_t>(rng.randint(11)));
  for (int64_t i = 0; i < L * N; ++i)
    for (int64_t j = 0; j < rl::kMissionSize; ++j)
      c.mission.push_back(static_cast<uint8_t>(j == i % rl::kMissionSize));
  c.mem0 = normal_vec(rng, N * M, 0.5);
  c.mask.assign(size_t(L * N), 1.0);
  return c;
}

rl::AgentConfig agent(const std::string& core, int64_t hidden = 8) {
  rl::AgentConfig a;
  a.core = core;
  a.hidden = hidden;
  a.nu = 2;
  a.rho = 1;
  return a;
}

}  // namespace

class PolicyGrad : public ::testing::TestWithParam<const char*> {};

TEST_P(PolicyGrad, ParametersAndInitialMemoryWithResetsAndMission) {
  const std::string core = GetParam();
  core::ParamStoreT<double> ps;
  const int64_t L = 3, N = 3, H = 8;
  rl::PolicyT<double> pol(ps, agent(core, H), /*use_mission=*/true, /*window=*/L);
  ps.finalize(0);
  core::Rng rng(6);
  pol.init(rng);
  const int64_t M = pol.memory_size();
  Chunk c = random_chunk(rng, L, N, M);
  if (core == "rel_lstm")
    for (int64_t r = 0; r < N; ++r) c.mem0[size_t(r * M + 3 * H)] = 0.0;  // window count 0
  if (core == "adam_lstm")  // its second-moment state m must stay >= 0 (sqrt(m + eps))
    for (double& x : c.mem0) x = std::abs(x);
  c.mask[size_t(0 * N + 0)] = 0.0;  // row 0 starts a new episode: its memory is not read
  c.mask[size_t(1 * N + 1)] = 0.0;  // row 1 restarts at step 1; row 2 runs through
  const std::vector<double> wl = normal_vec(rng, L * N * rl::kNumActions);
  const std::vector<double> wv = normal_vec(rng, L * N);
  std::vector<double> logits(wl.size()), values(wv.size()), dmem0(size_t(N * M) + 1);
  auto f = [&] {
    pol.forward(L, N, c.image.data(), c.mission.data(), c.mem0.data(), c.mask.data(),
                logits.data(), values.data());
    return gradcheck::dot(wl.data(), logits.data(), int64_t(wl.size())) +
           gradcheck::dot(wv.data(), values.data(), int64_t(wv.size()));
  };
  f();
  ps.zero_grad();
  pol.backward(wl.data(), wv.data(), M > 0 ? dmem0.data() : nullptr);
  check_params(ps, f);
  if (M == 0) return;
  // rel_lstm reads only the state part [h | c | s] of its memory in training (the window
  // is empty at a chunk start), and not even h (nn/recurrent/attentive.hpp).
  const int64_t checked = core == "rel_lstm" ? 3 * H : M;
  std::vector<double> a(dmem0.begin(), dmem0.begin() + N * M);
  for (int64_t r = 1; r < N; ++r)
    gradcheck::expect_gradient("dmem0 row " + std::to_string(r), c.mem0.data() + r * M,
                               a.data() + r * M, checked, f);
  for (int64_t j = 0; j < M; ++j) EXPECT_EQ(a[size_t(j)], 0.0) << "row 0 was masked at step 0";
}

INSTANTIATE_TEST_SUITE_P(Cores, PolicyGrad,
                         ::testing::Values("none", "lstm", "momentum_lstm", "adam_lstm", "rel_lstm"),
                         [](const auto& p) { return std::string(p.param); });

class PolicyActing : public ::testing::TestWithParam<const char*> {};

// Stepping act() through a chunk computes exactly what the chunked training forward
// computes (PPO's first-epoch ratio is 1), with resets in the middle of the chunk.
TEST_P(PolicyActing, ActStepsEqualChunkForward) {
  const std::string core = GetParam();
  core::ParamStoreT<double> ps;
  const int64_t L = 4, N = 3;
  rl::PolicyT<double> pol(ps, agent(core), false, L);
  ps.finalize(0);
  core::Rng rng(7);
  pol.init(rng);
  const int64_t M = pol.memory_size();
  Chunk c = random_chunk(rng, L, N, M);
  if (core == "rel_lstm") std::fill(c.mem0.begin(), c.mem0.end(), 0.0);  // a fresh window
  c.mask[size_t(2 * N + 1)] = 0.0;
  c.mask[size_t(0 * N + 2)] = 0.0;
  std::vector<double> logits(size_t(L * N * rl::kNumActions)), values(size_t(L * N));
  std::vector<double> mem_out(size_t(L * N * M) + 1);
  pol.forward(L, N, c.image.data(), nullptr, c.mem0.data(), c.mask.data(), logits.data(),
              values.data(), pol.supports_shifted_chunks() ? mem_out.data() : nullptr);
  std::vector<double> mem = c.mem0;
  std::vector<double> lg(static_cast<size_t>(N * rl::kNumActions), 0.0);
  std::vector<double> v(static_cast<size_t>(N), 0.0);
  for (int64_t t = 0; t < L; ++t) {
    pol.act(N, c.image.data() + t * N * rl::kImageSize, nullptr, c.mask.data() + t * N,
            mem.data(), t, lg.data(), v.data());
    for (int64_t i = 0; i < N * rl::kNumActions; ++i)
      EXPECT_NEAR(lg[size_t(i)], logits[size_t(t * N * rl::kNumActions + i)], 1e-12) << t;
    for (int64_t r = 0; r < N; ++r) EXPECT_NEAR(v[size_t(r)], values[size_t(t * N + r)], 1e-12);
    if (pol.supports_shifted_chunks()) {
      for (int64_t i = 0; i < N * M; ++i) {
        EXPECT_NEAR(mem[size_t(i)], mem_out[size_t(t * N * M + i)], 1e-12) << "memory after step " << t;
      }
    }
  }
  if (core == "rel_lstm") {
    for (int64_t r = 0; r < N; ++r) {
      EXPECT_EQ(mem[size_t(r * M + 3 * 8)], 0.0) << "the window restarts after phase L-1";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cores, PolicyActing,
                         ::testing::Values("none", "lstm", "momentum_lstm", "rel_lstm"),
                         [](const auto& p) { return std::string(p.param); });

TEST(PolicyMask, ResetRowEqualsFreshStartOtherRowsUntouched) {
  core::ParamStoreT<double> ps;
  const int64_t L = 3, N = 2;
  rl::PolicyT<double> pol(ps, agent("lstm"), false, L);
  ps.finalize(0);
  core::Rng rng(8);
  pol.init(rng);
  const int64_t M = pol.memory_size(), A = rl::kNumActions;
  Chunk c = random_chunk(rng, L, N, M);
  std::vector<double> la(size_t(L * N * A)), va(size_t(L * N));
  c.mask[size_t(1 * N + 0)] = 0.0;
  pol.forward(L, N, c.image.data(), nullptr, c.mem0.data(), c.mask.data(), la.data(), va.data());
  // Row 0 from step 1 on = a fresh sequence (zero memory) over steps 1..2.
  std::vector<uint8_t> img0;
  for (int64_t t = 1; t < L; ++t)
    img0.insert(img0.end(), c.image.begin() + (t * N + 0) * rl::kImageSize,
                c.image.begin() + (t * N + 1) * rl::kImageSize);
  std::vector<double> zero(static_cast<size_t>(M), 0.0), ones(2, 1.0), vb(2, 0.0);
  std::vector<double> lb(static_cast<size_t>(2 * A), 0.0);
  pol.forward(2, 1, img0.data(), nullptr, zero.data(), ones.data(), lb.data(), vb.data());
  for (int64_t t = 1; t < L; ++t)
    for (int64_t j = 0; j < A; ++j)
      EXPECT_NEAR(la[size_t((t * N + 0) * A + j)], lb[size_t((t - 1) * A + j)], 1e-12);
  // Row 1 without the reset in row 0: identical outputs.
  std::vector<double> lc(la.size()), vc(va.size());
  c.mask[size_t(1 * N + 0)] = 1.0;
  pol.forward(L, N, c.image.data(), nullptr, c.mem0.data(), c.mask.data(), lc.data(), vc.data());
  for (int64_t t = 0; t < L; ++t) {
    for (int64_t j = 0; j < A; ++j) EXPECT_EQ(la[size_t((t * N + 1) * A + j)], lc[size_t((t * N + 1) * A + j)]);
    if (t >= 1) {
      EXPECT_NE(va[size_t(t * N)], vc[size_t(t * N)]) << "row 0 did depend on its memory";
    }
  }
}

TEST(PolicyInit, HeadsHaveUnitRowsAndZeroBiasesShapesAsACModel) {
  core::ParamStore ps;
  rl::Policy pol(ps, agent("lstm", 64), false, 16);
  ps.finalize(0);
  core::Rng rng(9);
  pol.init(rng);
  EXPECT_EQ(pol.memory_size(), 128);  // ACModel's memory = cat(h, c)
  for (const char* name : {"actor.0", "actor.2", "critic.0", "critic.2"}) {
    auto& w = ps.get(std::string(name) + ".w");
    auto& b = ps.get(std::string(name) + ".b");
    for (int64_t o = 0; o < w.shape[0]; ++o) {
      double sq = 0;
      for (int64_t i = 0; i < w.shape[1]; ++i) sq += double(w.value[o * w.shape[1] + i]) * w.value[o * w.shape[1] + i];
      EXPECT_NEAR(sq, 1.0, 1e-5) << name;
    }
    for (int64_t o = 0; o < b.numel(); ++o) EXPECT_EQ(b.value[o], 0.f);
  }
  EXPECT_EQ(ps.get("conv1.w").shape, (Shape{16, 12}));
  EXPECT_EQ(ps.get("conv2.w").shape, (Shape{32, 64}));
  EXPECT_EQ(ps.get("conv3.w").shape, (Shape{64, 128}));
  EXPECT_EQ(ps.get("actor.2.w").shape, (Shape{7, 64}));
  EXPECT_EQ(ps.get("critic.2.w").shape, (Shape{1, 64}));
  // rl-starter-files' ACModel with memory and without text, parameter for parameter.
  const int64_t conv = (16 * 12 + 16) + (32 * 64 + 32) + (64 * 128 + 64);
  const int64_t lstm = 4 * 64 * (64 + 64) + 4 * 64;  // PyTorch has two biases: +256 there
  const int64_t heads = 2 * (64 * 64 + 64) + (7 * 64 + 7) + (64 + 1);
  EXPECT_EQ(ps.size(), conv + lstm + heads);
}

TEST(PolicyConfig, MissionAutoAndUnknownCore) {
  EXPECT_TRUE(rl::uses_mission("auto", "GoToObject-6x6-N2"));
  EXPECT_TRUE(rl::uses_mission("auto", "KeyCorridorS3R1"));
  EXPECT_FALSE(rl::uses_mission("auto", "DoorKey-5x5"));
  EXPECT_TRUE(rl::uses_mission("on", "DoorKey-5x5"));
  EXPECT_FALSE(rl::uses_mission("off", "GoToObject-6x6-N2"));
  core::ParamStore ps;
  EXPECT_THROW(rl::Policy(ps, agent("gru"), false, 16), core::UsageError);
}

TEST(SampleActions, FollowsTheSoftmax) {
  const int64_t n = 20000, A = 3;
  std::vector<float> logits;
  for (int64_t i = 0; i < n; ++i) logits.insert(logits.end(), {0.f, std::log(2.f), std::log(5.f)});
  core::Rng rng(10);
  std::vector<int32_t> act(n);
  std::vector<float> lp(n);
  rl::sample_actions(n, A, logits.data(), rng, act.data(), lp.data());
  std::vector<int> count(3, 0);
  for (int64_t i = 0; i < n; ++i) ++count[size_t(act[size_t(i)])];
  EXPECT_NEAR(count[0] / double(n), 1.0 / 8, 0.01);
  EXPECT_NEAR(count[1] / double(n), 2.0 / 8, 0.01);
  EXPECT_NEAR(count[2] / double(n), 5.0 / 8, 0.01);
  EXPECT_NEAR(lp[0], std::log(double(act[0] == 0 ? 1 : act[0] == 1 ? 2 : 5) / 8), 1e-6);
}
