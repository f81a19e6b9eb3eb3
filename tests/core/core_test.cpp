#include <gtest/gtest.h>

#include "core/param_store.hpp"
#include "core/rng.hpp"
#include "core/tensor.hpp"

using namespace seqbench::core;

TEST(Shape, NumelAndStr) {
  Shape s{2, 3, 4};
  EXPECT_EQ(s.numel(), 24);
  EXPECT_EQ(s.str(), "(2, 3, 4)");
  EXPECT_TRUE(s == (Shape{2, 3, 4}));
  EXPECT_FALSE(s == (Shape{2, 3}));
}

TEST(Tensor, ViewIndexingAndSlices) {
  Tensor t(Shape{2, 3});
  for (int i = 0; i < 6; ++i) t[i] = float(i);
  View v = t.view();
  EXPECT_EQ(v(1, 2), 5.f);
  EXPECT_EQ(v.sub(1)[0], 3.f);
  EXPECT_EQ(v.rows(1, 2).shape, (Shape{1, 3}));
  EXPECT_THROW(v.sub(2), Error);
  EXPECT_THROW(v.reshape(Shape{4, 2}), Error);
  EXPECT_THROW(check_shape(v, Shape{3, 2}, "x"), Error);
}

TEST(Check, MessageIsTheHintAloneAndNamesFileAndLineOnlyWhenVerbose) {
  const bool was = verbose_errors();
  set_verbose_errors(false);
  try {
    SB_CHECK(1 == 2, "bad value {} (hint: use {})", 7, 8);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "bad value 7 (hint: use 8)");
  }
  set_verbose_errors(true);
  try {
    SB_CHECK(1 == 2, "bad value {} (hint: use {})", 7, 8);
    FAIL();
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("core_test.cpp:"), std::string::npos) << m;
    EXPECT_NE(m.find("bad value 7 (hint: use 8)"), std::string::npos) << m;
    EXPECT_NE(m.find("[check: 1 == 2]"), std::string::npos) << m;
    EXPECT_EQ(e.exit_code(), kExitError);
  }
  set_verbose_errors(was);
}

TEST(Rng, SameSeedSameNumbersAndStateRoundTrip) {
  Rng a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.next_u64(), b.next_u64());
  EXPECT_NE(a.next_u64(), c.next_u64());
  Rng::State s = a.state();
  double x = a.normal();
  a.set_state(s);
  EXPECT_EQ(a.normal(), x);
}

TEST(Rng, DistributionsHaveRightMoments) {
  Rng r(7);
  const int n = 200000;
  double su = 0, sn = 0, sn2 = 0;
  int64_t lo = 10, hi = -1;
  for (int i = 0; i < n; ++i) {
    su += r.uniform();
    double z = r.normal();
    sn += z;
    sn2 += z * z;
    int64_t k = r.randint(10);
    lo = std::min(lo, k);
    hi = std::max(hi, k);
  }
  EXPECT_NEAR(su / n, 0.5, 0.01);
  EXPECT_NEAR(sn / n, 0.0, 0.01);
  EXPECT_NEAR(sn2 / n, 1.0, 0.02);
  EXPECT_EQ(lo, 0);
  EXPECT_EQ(hi, 9);
}

TEST(ParamStore, ContiguousBlockWithSlots) {
  ParamStore ps;
  Param& a = ps.add("layer.w", Shape{2, 3});
  Param& b = ps.add("layer.b", Shape{3});
  EXPECT_THROW(ps.add("layer.w", Shape{1}), Error);
  ps.finalize(2);
  EXPECT_EQ(ps.size(), 9);
  EXPECT_EQ(b.value, a.value + 6);
  EXPECT_EQ(a.grad, ps.grads().data());
  a.value[0] = 1.f;
  b.grad[2] = 5.f;
  EXPECT_EQ(ps.values()[0], 1.f);
  EXPECT_EQ(ps.grads()[8], 5.f);
  EXPECT_EQ(ps.slot(1).data(), ps.values().data() + 9 * 3);
  ps.zero_grad();
  EXPECT_EQ(b.grad[2], 0.f);
  EXPECT_EQ(&ps.get("layer.b"), &b);
  EXPECT_THROW(ps.get("layer.x"), Error);
  EXPECT_THROW(ps.add("late", Shape{1}), Error);
}
