#include "report/json.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

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
  EXPECT_EQ(JsonObject().str(), "{}");
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

TEST(Json, WholeDoublesPrintAsIntegersAndOthersInShortForm) {
  // summary.json gets every number as a double parsed from its runs.csv cell.
  JsonObject o;
  o.set("updates", 1000.0).set("neg", -3.0).set("e16", 1e16).set("small", 1e-05).set("rss", 61.25);
  EXPECT_EQ(o.str(),
            "{\"updates\": 1000, \"neg\": -3, \"e16\": 1e+16, \"small\": 1e-05, \"rss\": 61.25}");
}

TEST(Json, DoublesReadBackToTheSameValue) {
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-300, 300);
  for (int i = 0; i < 2000; ++i) {
    const double v = std::ldexp(mantissa(gen), exponent(gen));
    const std::string text = JsonObject().set("v", v).str();
    EXPECT_EQ(nlohmann::json::parse(text)["v"].get<double>(), v) << text;
  }
}

TEST(Json, StringsAreEscaped) {
  JsonObject o;
  o.set("q\"k", std::string("a\"b\\c\nd\te\x01\x7f"
                            "é±"));
  EXPECT_EQ(o.str(), "{\"q\\\"k\": \"a\\\"b\\\\c\\nd\\te\\u0001\x7f"
                     "é±\"}");
  // Bytes that are not UTF-8 (a file name from a foreign system, say) become U+FFFD
  // instead of making the file invalid JSON.
  EXPECT_EQ(JsonObject().set("m", std::string("a\xff" "b")).str(), "{\"m\": \"a\xef\xbf\xbd" "b\"}");
}
