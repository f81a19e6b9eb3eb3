// config::check: the constraints of visit() enforced on a struct built in code, with the
// same rules and messages as when the struct is read from YAML.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "config/check.hpp"
#include "config/yaml_config.hpp"
#include "core/check.hpp"
#include "test_util.hpp"

using namespace seqbench;

namespace {

struct Inner {
  double decay = 0.5;
  template <class V>
  void visit(V& v) {
    v("decay", decay, "in [0, 1)", config::range_below(0.0, 1.0).because("0.9 is typical"));
  }
};

struct Outer {
  int64_t n = 1;
  double frac = 1.0;
  double x = 0.0;
  std::string kind = "a";
  std::vector<int64_t> sizes{1, 2};
  std::optional<double> maybe;
  bool flag = false;
  Inner inner;
  template <class V>
  void visit(V& v) {
    v("n", n, "count", config::at_least(1));
    v("frac", frac, "in (0, 1]", config::range_above(0.0, 1.0));
    v("x", x, "any finite number", config::finite());
    v("kind", kind, "a | b", config::one_of({"a", "bee"}));
    v("sizes", sizes, "positive sizes", config::positive());
    v("maybe", maybe, "optional, > 0", config::positive());
    v("flag", flag, "a switch");
    v("inner", inner, "nested");
  }
};

struct Misdeclared {
  bool flag = false;
  template <class V>
  void visit(V& v) {
    v("flag", flag, "a bool cannot have a range", config::positive());
  }
};

std::string check_msg(const Outer& o) {
  return testutil::message_of([&] { config::check(o, "top"); });
}

}  // namespace

TEST(ConfigCheck, DefaultsPass) { EXPECT_EQ(check_msg(Outer{}), "(no exception)"); }

TEST(ConfigCheck, HalfOpenEndsAreEnforcedAtTheOpenEndOnly) {
  Outer o;
  o.inner.decay = 0.0;
  EXPECT_EQ(check_msg(o), "(no exception)");
  o.inner.decay = 1.0;
  EXPECT_EQ(check_msg(o), "top.inner.decay: must be in [0, 1), got 1 (hint: 0.9 is typical)");
  o = Outer{};
  o.frac = 0.0;
  EXPECT_EQ(check_msg(o), "top.frac: must be in (0, 1], got 0");
  o.frac = 1.0;
  EXPECT_EQ(check_msg(o), "(no exception)");
}

TEST(ConfigCheck, EveryKindOfFieldIsChecked) {
  Outer o;
  o.n = 0;
  EXPECT_EQ(check_msg(o), "top.n: must be >= 1, got 0");
  o = Outer{};
  o.sizes = {3, 0};
  EXPECT_EQ(check_msg(o), "top.sizes[1]: must be > 0, got 0");
  o = Outer{};
  o.maybe = -1.0;
  EXPECT_EQ(check_msg(o), "top.maybe: must be > 0, got -1");
  o.maybe.reset();
  EXPECT_EQ(check_msg(o), "(no exception)");
  o.kind = "be";
  EXPECT_EQ(check_msg(o), "top.kind: must be one of a, bee, got 'be' (did you mean 'bee'?)");
  o = Outer{};
  o.x = std::numeric_limits<double>::infinity();
  EXPECT_EQ(check_msg(o), "top.x: must be finite, got inf");
  o.x = std::nan("");
  EXPECT_NE(check_msg(o).find("top.x: must be finite"), std::string::npos);
}

TEST(ConfigCheck, ViolationsAreUsageErrorsAndMisdeclarationsAreBugs) {
  Outer o;
  o.n = -3;
  EXPECT_THROW(config::check(o), core::UsageError);
  EXPECT_EQ(testutil::message_of([&] { config::check(o); }), "n: must be >= 1, got -3");
  Misdeclared m;
  try {
    config::check(m);
    FAIL() << "no throw";
  } catch (const core::UsageError&) {
    FAIL() << "a constraint that does not fit its field is a bug, not a usage error";
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("fix the struct's visit()"), std::string::npos);
  }
}

TEST(ConfigCheck, ReadingYamlAppliesTheSameRuleAndHint) {
  Outer o;
  const std::string msg =
      testutil::message_of([&] { config::apply_override(o, "inner.decay=1"); });
  EXPECT_NE(msg.find("inner.decay: must be in [0, 1), got 1 (hint: 0.9 is typical)"),
            std::string::npos)
      << msg;
  EXPECT_EQ(o.inner.decay, 0.5) << "a rejected source leaves the config as it was";
}
