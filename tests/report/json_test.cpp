#include "report/json.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using seqbench::report::JsonObject;

TEST(Json, KeysInInsertionOrderAndTypes) {
  JsonObject o;
  o.set("model", "lstm")  // const char*: a string, not a bool
      .set("steps", int64_t{1000})
      .set("hidden", 128)
      .set("lr", 0.001)
      .set("finished", true)
      .set("big", uint64_t{18446744073709551615u});
  EXPECT_EQ(o.str(),
            "{\"model\": \"lstm\", \"steps\": 1000, \"hidden\": 128, \"lr\": 0.001, "
            "\"finished\": true, \"big\": 18446744073709551615}");
}

TEST(Json, SettingAnExistingKeyReplacesInPlace) {
  JsonObject o;
  o.set("a", 1).set("b", 2).set("a", std::string("x"));
  EXPECT_EQ(o.str(), "{\"a\": \"x\", \"b\": 2}");
  EXPECT_EQ(o.pretty(), "{\n  \"a\": \"x\",\n  \"b\": 2\n}\n");
  EXPECT_EQ(JsonObject().pretty(), "{}\n");
}

TEST(Json, NonFiniteNumbersAreNull) {
  JsonObject o;
  o.set("nan", std::nan(""))
      .set("inf", std::numeric_limits<double>::infinity())
      .set("ninf", -std::numeric_limits<double>::infinity())
      .set("third", 1.0 / 3.0);
  EXPECT_EQ(o.str(),
            "{\"nan\": null, \"inf\": null, \"ninf\": null, \"third\": 0.3333333333333333}");
}

TEST(Json, StringsAreEscaped) {
  JsonObject o;
  o.set("q\"k", std::string("a\"b\\c\nd\te\x01\x7f"
                            "é±"));
  EXPECT_EQ(o.str(), "{\"q\\\"k\": \"a\\\"b\\\\c\\nd\\te\\u0001\\u007fé±\"}");
}
