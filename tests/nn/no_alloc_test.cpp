// No heap allocation inside the time loop: after a first forward+backward at a shape
// (which sizes every workspace), a second forward+backward of the same shape allocates
// nothing through operator new, for every recurrent model on our backend. (oneDNN's LSTM
// primitive is not tested: its own execution allocates about once per time step, 37
// allocations per forward+backward at T=12 and 49 at T=24 with oneDNN 2.6; see
// docs/performance.md.) The stability projections after an optimizer step (Jacobi SVD in double, once per
// update, outside the time loop) are not counted. Counted by
// replacing the global operator new for this test binary (counting only while a
// CountAllocations object is alive on this thread, so gtest's own allocations between
// the measurements do not matter).
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "core/param_store.hpp"
#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "nn/model_config.hpp"
#include "nn/seq_model.hpp"

namespace {

thread_local bool g_counting = false;
thread_local long g_count = 0;

struct CountAllocations {
  CountAllocations() {
    g_count = 0;
    g_counting = true;
  }
  ~CountAllocations() { g_counting = false; }
  long count() const { return g_count; }
};

void* counted_alloc(std::size_t n) {
  if (g_counting) ++g_count;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}

}  // namespace

void* operator new(std::size_t n) { return counted_alloc(n); }
void* operator new[](std::size_t n) { return counted_alloc(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

using namespace seqbench;

namespace {

struct Case {
  std::string cell;
  int64_t bptt;
};

class NoAlloc : public ::testing::TestWithParam<Case> {};

// Allocations of the second forward+backward of a layer at length T.
long allocations_per_step(const Case& c, int64_t T, bool with_probe = true) {
  nn::ModelConfig cfg;
  cfg.cell = c.cell;
  cfg.hidden = 16;
  cfg.nu = 3;
  cfg.rho = 2;
  const int64_t B = 3, I = 5;
  core::ParamStore ps;
  auto layer = nn::make_recurrent(cfg, ps, "rnn", I, c.bptt);
  ps.finalize(0);
  core::Rng rng(3);
  layer->init(rng);
  const int64_t H = layer->hidden();
  core::Tensor x(core::Shape{T, B, I}), y(core::Shape{T, B, H}), dy(core::Shape{T, B, H}),
      dx(core::Shape{T, B, I});
  for (auto* t : {&x, &dy})
    for (int64_t i = 0; i < t->numel(); ++i) (*t)[i] = float(rng.normal());
  std::vector<double> norms;
  norms.reserve(static_cast<size_t>(T));
  auto step = [&] {
    layer->forward(x.cview(), core::ConstView(), y.view());
    layer->backward(dy.cview(), dx.view(), core::View(), with_probe ? &norms : nullptr);
  };
  step();
  layer->after_update();
  CountAllocations count;
  step();
  return count.count();
}

TEST(NoAlloc, TheCounterSeesAnAllocation) {
  CountAllocations probe;
  std::vector<float> v(10);
  EXPECT_EQ(probe.count(), 1);
}

TEST_P(NoAlloc, SecondStepAtTheSameShapeAllocatesNothing) {
  const Case& c = GetParam();
  EXPECT_EQ(allocations_per_step(c, 12), 0) << c.cell << " allocated in its second step at T=12";
  EXPECT_EQ(allocations_per_step(c, 24), 0) << c.cell << " allocated in its second step at T=24";
  EXPECT_EQ(allocations_per_step(c, 24, false), 0) << c.cell << " (no probe) allocated";
}

std::string name(const ::testing::TestParamInfo<Case>& info) {
  return info.param.cell + (info.param.bptt ? "_bptt" : "");
}

INSTANTIATE_TEST_SUITE_P(
    Cells, NoAlloc,
    ::testing::Values(Case{"lstm", 0}, Case{"lstm", 4},
                      Case{"rnn", 0}, Case{"momentum_lstm", 0},
                      Case{"adam_lstm", 0}, Case{"rmsprop_lstm", 0},
                      Case{"sr_lstm", 0}, Case{"momentum_rnn", 0},
                      Case{"stable_rnn", 0}, Case{"stable_lstm", 0},
                      Case{"mem_rnn", 0}, Case{"rel_rnn", 0},
                      Case{"rel_lstm", 0}, Case{"sab", 4}),
    name);

}  // namespace
