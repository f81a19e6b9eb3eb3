// The memory estimate (lib/train/memory_estimate.hpp) against what the layers really
// hold: after one training step every recurrent layer's held_bytes() equals the
// estimate (the oneDNN LSTM and the Transformer within a stated factor), parameter counts
// are exact, and the parts, the limit check and the size parser behave.
#include "train/memory_estimate.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/check.hpp"
#include "core/memory.hpp"
#include "core/param_store.hpp"
#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "core/threads.hpp"
#include "nn/model_config.hpp"
#include "nn/seq_model.hpp"
#include "nn/attention/transformer.hpp"

using namespace seqbench;

namespace {

struct Cell {
  std::string cell;
  int64_t bptt = 0;
  std::string nonlinearity = "tanh";
};

// The layer after one forward and backward (with the probe when probe) of T x B.
struct Stepped {
  core::ParamStore ps;
  std::unique_ptr<nn::SequenceLayer<float>> layer;
};
void step(const nn::ModelConfig& cfg, int64_t I, int64_t T, int64_t B, bool probe, int64_t bptt,
          Stepped& s) {
  s.layer = nn::make_recurrent(cfg, s.ps, "rnn", I, bptt);
  s.ps.finalize(0);
  core::Rng rng(5);
  s.layer->init(rng);
  const int64_t H = s.layer->hidden();
  core::Tensor x(core::Shape{T, B, I}), y(core::Shape{T, B, H}), dy(core::Shape{T, B, H}),
      dx(core::Shape{T, B, I});
  for (auto* t : {&x, &dy})
    for (int64_t i = 0; i < t->numel(); ++i) (*t)[i] = float(rng.normal());
  std::vector<double> norms;
  s.layer->forward(x.cview(), core::ConstView(), y.view());
  s.layer->backward(dy.cview(), dx.view(), core::View(), probe ? &norms : nullptr);
}

class RecurrentEstimate : public ::testing::TestWithParam<Cell> {};

}  // namespace

TEST_P(RecurrentEstimate, EqualsTheBytesTheLayerHoldsAfterATrainingStep) {
  const Cell& c = GetParam();
  nn::ModelConfig cfg;
  cfg.cell = c.cell;
  cfg.hidden = 12;
  cfg.nu = 4;
  cfg.rho = 3;
  cfg.attk = 3;
  cfg.ktop = 2;
  cfg.nonlinearity = c.nonlinearity;
  const int64_t I = 5;
  // Lengths below and above the attentive buffers and SAB's cap of ktop memories.
  for (const int64_t T : {2, 9, 23})
    for (const bool probe : {false, true}) {
      Stepped s;
      step(cfg, I, T, 3, probe, c.bptt, s);
      EXPECT_EQ(double(s.layer->held_bytes()), train::recurrent_layer_bytes(cfg, I, T, 3, probe))
          << c.cell << " T=" << T << " probe=" << probe;
      EXPECT_EQ(s.ps.size(), train::recurrent_params(cfg, I)) << c.cell;
    }
}

INSTANTIATE_TEST_SUITE_P(Cells, RecurrentEstimate,
                         ::testing::Values(Cell{"lstm"}, Cell{"lstm", 4}, Cell{"stable_lstm"},
                                           Cell{"rnn"}, Cell{"rnn", 0, "modrelu"},
                                           Cell{"stable_rnn"}, Cell{"momentum_rnn"},
                                           Cell{"momentum_lstm"}, Cell{"adam_lstm"},
                                           Cell{"rmsprop_lstm"}, Cell{"sr_lstm"}, Cell{"mem_rnn"},
                                           Cell{"rel_rnn"}, Cell{"rel_lstm"}, Cell{"sab", 4}),
                         [](const ::testing::TestParamInfo<Cell>& p) {
                           return p.param.cell + (p.param.bptt ? "_bptt" : "") +
                                  (p.param.nonlinearity != "tanh" ? "_" + p.param.nonlinearity
                                                                  : "");
                         });

// The oneDNN primitive reserves more than a run touches (workspace and scratchpad for
// every case it supports): the estimate, calibrated on peak RSS (MemoryCli's RSS test
// checks it), is below what held_bytes() reports and above a quarter of it.
TEST(RecurrentEstimateOnednn, IsBelowWhatThePrimitiveReserves) {
  nn::ModelConfig cfg;
  cfg.cell = "lstm";
  cfg.backend = "onednn";
  for (const int64_t H : {16, 64, 200})
    for (const int64_t T : {5, 40}) {
      cfg.hidden = H;
      Stepped s;
      step(cfg, 7, T, 8, false, 0, s);
      const double held = double(s.layer->held_bytes());
      const double est = train::recurrent_layer_bytes(cfg, 7, T, 8, false);
      EXPECT_LT(est, held) << "H=" << H << " T=" << T;
      EXPECT_GT(est, held / 4) << "H=" << H << " T=" << T;
      EXPECT_EQ(s.ps.size(), train::recurrent_params(cfg, 7));
    }
}

namespace {

struct LmCase {
  std::string name;
  nn::TransformerConfig cfg;
};

nn::TransformerConfig lm_config(const std::string& attention) {
  nn::TransformerConfig c;
  c.layers = 2;
  c.d_model = 32;
  c.heads = 4;
  c.d_ff = 64;
  c.attention = attention;
  c.window = 8;
  c.clusters = 4;
  c.rounds = 2;
  c.dropout = 0.1;
  return c;
}

class TransformerEstimate : public ::testing::TestWithParam<LmCase> {};

}  // namespace

// The model's held_bytes() leaves out a few small buffers the estimate counts (layer-norm
// statistics, sinusoidal positions): the estimate is within a factor of 1.3 of it.
TEST_P(TransformerEstimate, IsCloseToWhatTheModelHoldsAfterATrainingStep) {
  const nn::TransformerConfig& cfg = GetParam().cfg;
  const int64_t B = 3, N = 48, V = 50;
  core::ParamStore ps;
  nn::TransformerLM lm(cfg, ps, "lm", V, N, 7);
  ps.finalize(0);
  core::Rng rng(8);
  lm.init(rng);
  std::vector<int32_t> ids(size_t(B * N));
  for (auto& id : ids) id = int32_t(rng.randint(V));
  core::Tensor logits(core::Shape{B * N, V}), dlogits(core::Shape{B * N, V});
  for (int64_t i = 0; i < dlogits.numel(); ++i) dlogits[i] = float(rng.normal()) * 0.01f;
  lm.forward(ids.data(), B, N, logits.view(), true);
  lm.backward(dlogits.cview());
  EXPECT_EQ(ps.size(), train::transformer_params(cfg, V, N)) << GetParam().name;
  const double held = double(lm.held_bytes());
  const double est = train::transformer_activation_bytes(cfg, N, B, N, core::num_threads());
  EXPECT_GT(est, held / 1.3) << GetParam().name << ": held " << held << ", estimate " << est;
  EXPECT_LT(est, held * 1.3) << GetParam().name << ": held " << held << ", estimate " << est;
}

INSTANTIATE_TEST_SUITE_P(Kinds, TransformerEstimate,
                         ::testing::Values(LmCase{"full", lm_config("full")},
                                           LmCase{"local", lm_config("local")},
                                           LmCase{"routing", lm_config("local:2,routing:2")},
                                           LmCase{"random", lm_config("random")},
                                           LmCase{"smyrf", lm_config("smyrf")},
                                           LmCase{"lsh", lm_config("lsh")},
                                           LmCase{"untied_sinusoidal_qknorm",
                                                  [] {
                                                    auto c = lm_config("routing");
                                                    c.tie_embeddings = false;
                                                    c.positions = "sinusoidal";
                                                    c.qk_norm = true;
                                                    c.shared_qk = true;
                                                    c.commitment = 1e-4;
                                                    c.relative_positions = 5;
                                                    return c;
                                                  }()}),
                         [](const ::testing::TestParamInfo<LmCase>& p) { return p.param.name; });

TEST(MemoryEstimate, PartsAddUpAndNameTheKeysThatDriveTheSize) {
  nn::ModelConfig m;
  m.hidden = 256;
  optim::OptimConfig adam;
  adam.name = "adam";
  train::MemoryEstimate e;
  train::add_recurrent(e, m, adam, 10, 1000, 64, false, 0, {"task.T=1000", "train.batch=64"});
  uint64_t sum = 0;
  for (const auto& p : e.parts) sum += p.bytes;
  EXPECT_EQ(e.total(), sum);
  const int64_t n = train::recurrent_params(m, 10);
  // Values, gradients, two Adam moments, and the checkpoint's two copies of values and
  // moments.
  EXPECT_EQ(e.parts[0].bytes + e.parts[1].bytes + e.parts[2].bytes + e.parts[3].bytes,
            uint64_t(n) * 4 * (1 + 1 + 2 + 2 * 3));
  // Activations dominate at T = 1000: the keys of their size come first.
  const auto keys = e.driving_keys();
  ASSERT_FALSE(keys.empty());
  EXPECT_EQ(keys[0], "model.hidden=256");
  EXPECT_NE(std::find(keys.begin(), keys.end(), "task.T=1000"), keys.end());

  // SGD without momentum keeps no slot; with momentum one; rmsprop one, or two.
  optim::OptimConfig o;
  o.name = "sgd";
  EXPECT_EQ(train::optimizer_slots(o), 0);
  o.momentum = 0.9;
  EXPECT_EQ(train::optimizer_slots(o), 1);
  o.name = "rmsprop";
  EXPECT_EQ(train::optimizer_slots(o), 2);
  o.momentum = 0;
  EXPECT_EQ(train::optimizer_slots(o), 1);
}

TEST(MemoryEstimate, SizesTooLargeForAnyMachineSaturateInsteadOfOverflowing) {
  nn::ModelConfig m;
  m.cell = "mem_rnn";  // T^2 attention entries per row
  m.hidden = 65536;
  train::MemoryEstimate e;
  train::add_recurrent(e, m, optim::OptimConfig{}, 65536, 10'000'000, 1'000'000, true, 0, {});
  EXPECT_EQ(e.total(), std::numeric_limits<uint64_t>::max());
  EXPECT_THROW(train::check_memory(e, {uint64_t(1) << 40, "--max-memory"}), core::UsageError);
}

TEST(MemoryEstimate, CheckRefusesAboveTheLimitInOneLineNamingTheKeys) {
  train::MemoryEstimate e;
  e.add("activations", 3e9, {"model.hidden=4096", "task.T=100000"});
  e.add("parameters", 1e6, {"model.hidden=4096"});
  EXPECT_NO_THROW(train::check_memory(e, {uint64_t(4e9), "--max-memory"}));
  EXPECT_NO_THROW(train::check_memory(e, {0, "unknown"}));  // no limit known: no check
  try {
    train::check_memory(e, {uint64_t(1) << 30, "--max-memory"});
    FAIL() << "no error";
  } catch (const core::UsageError& err) {
    const std::string msg = err.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_NE(msg.find("memory estimate 2.79 GiB is above the limit of 1.00 GiB (--max-memory)"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("model.hidden=4096, task.T=100000"), std::string::npos) << msg;
    EXPECT_EQ(err.exit_code(), core::kExitUsage);
  }
  const std::string comment = train::memory_comment(e, {uint64_t(1) << 30, "--max-memory"});
  EXPECT_EQ(comment.rfind("# memory estimate: 2.79 GiB (limit 1.00 GiB, --max-memory; a run "
                          "would be refused)\n",
                          0),
            0u)
      << comment;
  size_t lines = 0;
  for (size_t at = 0; (at = comment.find('\n', at)) != std::string::npos; ++at) {
    ++lines;
    if (at + 1 < comment.size()) {
      EXPECT_EQ(comment[at + 1], '#') << comment;
    }
  }
  EXPECT_EQ(lines, 3u) << comment;
}

TEST(MemorySize, ParsesSuffixesAsPowersOf1024AndRefusesTheRest) {
  EXPECT_EQ(core::parse_size("123456"), 123456u);
  EXPECT_EQ(core::parse_size("512M"), 512u << 20);
  EXPECT_EQ(core::parse_size("4G"), uint64_t(4) << 30);
  EXPECT_EQ(core::parse_size("1.5GiB"), uint64_t(3) << 29);
  EXPECT_EQ(core::parse_size("2 tb"), uint64_t(2) << 40);
  EXPECT_EQ(core::parse_size("100kB"), 102400u);
  EXPECT_EQ(core::parse_size("7B"), 7u);
  EXPECT_EQ(core::parse_size("1E"), core::kMaxMemorySize);
  for (const char* bad : {"", "G", "0", "-1G", "1.2.3G", "4X", "4 G B", "2E", "1e3", "0.1"})
    EXPECT_FALSE(core::parse_size(bad).has_value()) << bad;
  EXPECT_EQ(core::format_bytes(3), "3 B");
  EXPECT_EQ(core::format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(core::format_bytes(uint64_t(300) << 20), "300 MiB");
  EXPECT_GT(core::available_memory().bytes, 0u);
}

TEST(Threads, AboveTheCoresTheCountIsCappedWithAWarningUnlessForced) {
  const int cores = core::available_cores();
  ASSERT_GE(cores, 1);
  std::string warning;
  EXPECT_EQ(core::cap_threads(cores, false, "train.threads", warning), cores);
  EXPECT_EQ(core::cap_threads(0, false, "train.threads", warning), 0);
  EXPECT_TRUE(warning.empty()) << warning;
  EXPECT_EQ(core::cap_threads(cores + 3, true, "train.threads", warning), cores + 3);
  EXPECT_TRUE(warning.empty()) << warning;
  EXPECT_EQ(core::cap_threads(cores + 3, false, "train.threads", warning), cores);
  EXPECT_NE(warning.find(fmt::format("train.threads: {} threads is more than the {} core",
                                     cores + 3, cores)),
            std::string::npos)
      << warning;
  EXPECT_NE(warning.find("--force-threads"), std::string::npos) << warning;
}
