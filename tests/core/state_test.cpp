// The state container (core/state): every typed put/get round-trips bit for bit (also
// through a checkpoint file), text of another kind is refused naming the key and the
// origin, arrays are checked against the shape the reader expects, scopes prefix keys
// and array names.
#include "core/state.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "train/checkpoint.hpp"

using namespace seqbench;
using core::Shape;
using core::State;
using testutil::message_of;

namespace {

uint64_t bits(double v) { return std::bit_cast<uint64_t>(v); }

// "d3" (fmt, not "d" + std::to_string(i), which trips GCC 12's -Wrestrict false positive).
std::string indexed(const char* prefix, size_t i) { return fmt::format("{}{}", prefix, i); }

// Doubles whose bits must survive: signed zeros, denormals, extremes, inf, NaNs.
std::vector<double> awkward_doubles() {
  using L = std::numeric_limits<double>;
  return {0.0,
          -0.0,
          0.1,
          -1.0 / 3.0,
          1.0,
          L::denorm_min(),
          -L::denorm_min(),
          L::min() / 3.0,  // a denormal with many bits
          L::min(),
          L::max(),
          -L::max(),
          L::epsilon(),
          L::infinity(),
          -L::infinity(),
          L::quiet_NaN(),
          -L::quiet_NaN(),
          std::bit_cast<double>(uint64_t(0x7ff8000000000001)),  // payload
          std::bit_cast<double>(uint64_t(0xfff0000000000001)),  // signalling, negative
          std::bit_cast<double>(uint64_t(0x7ff7ffffffffffff))};
}

// Reads every typed value of `s` back (the writer is in the test below).
void expect_values(const State& st) {
  const auto d = awkward_doubles();
  for (size_t i = 0; i < d.size(); ++i)
    EXPECT_EQ(bits(st.get_double(indexed("d", i))), bits(d[i]))
        << i << ": " << st.get_string(indexed("d", i));
  EXPECT_EQ(st.get_int("i_min"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(st.get_int("i_max"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(st.get_int("i_neg"), -1);
  EXPECT_EQ(st.get_u64("u_max"), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(st.get_u64("u_zero"), 0u);
  EXPECT_TRUE(st.get_bool("yes"));
  EXPECT_FALSE(st.get_bool("no"));
  EXPECT_EQ(st.get_string("text"), "quotes \" backslash \\ newline\n tab\t é");
  EXPECT_EQ(st.get_string("empty"), "");
  const std::vector<double> list = st.get_doubles("list");
  ASSERT_EQ(list.size(), d.size());
  for (size_t i = 0; i < d.size(); ++i) EXPECT_EQ(bits(list[i]), bits(d[i])) << i;
  EXPECT_TRUE(st.get_doubles("none").empty());
  core::Rng r(42);
  for (int i = 0; i < 5; ++i) r.next_u64();
  EXPECT_EQ(st.get_rng("rng").state(), r.state());
  EXPECT_EQ(st.get_rng("rng").next_u64(), r.next_u64());
}

State written() {
  State st;
  const auto d = awkward_doubles();
  for (size_t i = 0; i < d.size(); ++i) st.put_double(indexed("d", i), d[i]);
  st.put_int("i_min", std::numeric_limits<int64_t>::min());
  st.put_int("i_max", std::numeric_limits<int64_t>::max());
  st.put_int("i_neg", -1);
  st.put_u64("u_max", std::numeric_limits<uint64_t>::max());
  st.put_u64("u_zero", 0);
  st.put_bool("yes", true);
  st.put_bool("no", false);
  st.put_string("text", "quotes \" backslash \\ newline\n tab\t é");
  st.put_string("empty", "");
  st.put_doubles("list", d);
  st.put_doubles("none", {});
  core::Rng r(42);
  for (int i = 0; i < 5; ++i) r.next_u64();
  st.put_rng("rng", r);
  return st;
}

}  // namespace

TEST(State, EveryTypedValueRoundTripsBitForBit) {
  const State st = written();
  expect_values(st);
  // And through a checkpoint file.
  testutil::TempDir dir;
  train::save_checkpoint(dir / "s.sbck", st);
  const State back = train::load_checkpoint(dir / "s.sbck");
  EXPECT_EQ(back.meta, st.meta);
  expect_values(back);
}

TEST(State, EncodingsAreTheOnesCheckpointsHaveAlwaysHad) {
  // What the trainer and the experiments wrote before the container existed: fmt's "{:a}"
  // for doubles, decimal integers, "1"/"0", the RNG's words in decimal.
  State st;
  st.put_double("a", 0.1);
  st.put_double("b", -1.0);
  st.put_double("c", -0.0);
  st.put_double("d", std::numeric_limits<double>::denorm_min());
  st.put_double("e", std::numeric_limits<double>::infinity());
  st.put_double("f", std::numeric_limits<double>::quiet_NaN());
  st.put_double("g", 31.0);
  st.put_int("h", -1);
  st.put_u64("i", 18446744073709551615u);
  st.put_bool("j", true);
  st.put_doubles("k", std::vector<double>{7.0, -0.125});
  core::Rng r;
  r.set_state({1, 2, 18446744073709551615u, 0});
  st.put_rng("l", r);
  const std::vector<std::pair<std::string, std::string>> want{
      {"a", "0x1.999999999999ap-4"},
      {"b", "-0x1p+0"},
      {"c", "-0x0p+0"},
      {"d", "0x0.0000000000001p-1022"},
      {"e", "inf"},
      {"f", "nan"},
      {"g", "0x1.fp+4"},
      {"h", "-1"},
      {"i", "18446744073709551615"},
      {"j", "1"},
      {"k", "0x1.cp+2 -0x1p-3"},
      {"l", "1 2 18446744073709551615 0"}};
  EXPECT_EQ(st.meta, want);
  // Decimal text reads too (never written).
  st.put_string("dec", "0.1");
  EXPECT_EQ(st.get_double("dec"), 0.1);
}

TEST(State, TextOfAnotherKindIsRefusedNamingTheKeyAndTheOrigin) {
  State st("run/checkpoint.sbck");
  const std::vector<std::string> not_numbers{"",       "abc",     "12x",      " 1",   "1 ",
                                             "+1",     "--1",     "0x",       "0x1p", "0x-1p+0",
                                             "nan(0)", "nan(0x)", "infinity", "1e999"};
  for (size_t i = 0; i < not_numbers.size(); ++i)
    st.put_string(indexed("bad", i), not_numbers[i]);
  st.put_string("half", "0.5");
  st.put_string("neg", "-3");
  st.put_string("big", "18446744073709551616");
  for (size_t i = 0; i < not_numbers.size(); ++i) {
    const std::string k = indexed("bad", i);
    const std::string m = message_of([&] { st.get_double(k); });
    EXPECT_NE(m.find("'run/checkpoint.sbck': meta '" + k + "' is '" + not_numbers[i] +
                     "', not a number"),
              std::string::npos)
        << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_NE(message_of([&] { st.get_int(k); }).find("'" + k + "'"), std::string::npos);
    EXPECT_NE(message_of([&] { st.get_rng(k); }).find("'" + k + "'"), std::string::npos);
  }
  std::string m = message_of([&] { st.get_int("half"); });
  EXPECT_NE(m.find("meta 'half' is '0.5', not a whole number"), std::string::npos) << m;
  EXPECT_NE(m.find("run/checkpoint.sbck"), std::string::npos) << m;
  m = message_of([&] { st.get_u64("neg"); });
  EXPECT_NE(m.find("meta 'neg' is '-3', not a whole number >= 0"), std::string::npos) << m;
  EXPECT_NE(message_of([&] { st.get_int("big"); }).find("not a whole number"), std::string::npos);
  EXPECT_NE(message_of([&] { st.get_bool("neg"); }).find("meta 'neg' is '-3', not a flag"),
            std::string::npos);

  // An RNG state is exactly four whole numbers separated by single spaces.
  for (const char* text : {"1 2 3", "1 2 3 4 5", "1 2 3 x", "1  2 3 4", "1 2 3 4 ", " 1 2 3 4",
                           "1 2 3 -4", "1 2 3 18446744073709551616", "0x1 2 3 4"}) {
    State r("x.sbck");
    r.put_string("data_rng", text);
    m = message_of([&] { r.get_rng("data_rng"); });
    EXPECT_NE(m.find("'x.sbck': meta 'data_rng' is '" + std::string(text) +
                     "', not a random-number state"),
              std::string::npos)
        << m;
  }
  // A list of doubles: single spaces between hex floats.
  for (const char* text : {"0x1p+0  0x1p+0", "0x1p+0 ", " 0x1p+0", "0x1p+0 x"}) {
    State l;
    l.put_string("stats", text);
    m = message_of([&] { l.get_doubles("stats"); });
    EXPECT_NE(m.find("in-memory state: meta 'stats'"), std::string::npos) << m;
    EXPECT_NE(m.find("not a list of numbers"), std::string::npos) << m;
  }
  // A long value is shortened in the message.
  st.put_string("long", std::string(1000, 'z'));
  m = message_of([&] { st.get_double("long"); });
  EXPECT_LT(m.size(), 400u) << m;
}

TEST(State, MissingKeysAndArraysAreNamedWithTheOrigin) {
  State st("run/checkpoint.sbck");
  st.put_int("step", 3);
  st.put_array("w", Shape{2}, {1.f, 2.f});
  std::string m = message_of([&] { st.get_int("epoch"); });
  EXPECT_NE(m.find("'run/checkpoint.sbck' has no meta key 'epoch' (keys: step"), std::string::npos)
      << m;
  m = message_of([&] { st.array("v"); });
  EXPECT_NE(m.find("'run/checkpoint.sbck' has no array 'v' (1 arrays: w"), std::string::npos) << m;
  EXPECT_TRUE(st.has("step"));
  EXPECT_FALSE(st.has("epoch"));
  EXPECT_TRUE(st.has_array("w"));
  EXPECT_FALSE(st.has_array("v"));
  // A state in memory says so.
  m = message_of([&] { State().get_string("k"); });
  EXPECT_NE(m.find("in-memory state has no meta key 'k'"), std::string::npos) << m;
  // The compatibility name of get_string.
  EXPECT_EQ(st.meta_at("step"), "3");
}

TEST(State, KeysAndArrayNamesAreUniqueAndArraysMatchTheirShape) {
  State st;
  st.put_int("k", 1);
  EXPECT_NE(message_of([&] { st.put_double("k", 2.0); }).find("meta key 'k' written twice"),
            std::string::npos);
  EXPECT_EQ(st.get_int("k"), 1);
  st.put_array("a", Shape{2}, {1.f, 2.f});
  EXPECT_NE(message_of([&] { st.put_array("a", Shape{1}, {0.f}); }).find("array 'a' added twice"),
            std::string::npos);
  EXPECT_NE(message_of([&] { st.put_array("b", Shape{3}, {0.f}); })
                .find("array 'b' has 1 values but shape (3) needs 3"),
            std::string::npos);
  EXPECT_THROW(st.put_string("", "x"), core::Error);
  EXPECT_EQ(st.meta.size(), 1u);
  EXPECT_EQ(st.arrays.size(), 1u);
}

TEST(State, ArraysAreReadOnlyInTheShapeTheReaderExpects) {
  State st("run/checkpoint.sbck");
  std::vector<float> w(12);
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(i) - 0.5f;
  w[3] = -0.0f;
  w[4] = std::numeric_limits<float>::denorm_min();
  w[5] = std::numeric_limits<float>::quiet_NaN();
  st.put_array("w", Shape{3, 4}, w);
  st.put_array("scalar", Shape{}, {2.5f});
  const std::vector<float>& got = st.get_array("w", Shape{3, 4});
  ASSERT_EQ(got.size(), w.size());
  EXPECT_EQ(0, std::memcmp(got.data(), w.data(), w.size() * sizeof(float)));
  std::vector<float> into(12);
  st.get_array("w", Shape{3, 4}, into);
  EXPECT_EQ(0, std::memcmp(into.data(), w.data(), w.size() * sizeof(float)));
  EXPECT_EQ(st.get_array("scalar", Shape{})[0], 2.5f);
  // Same size, other shape: refused, naming the array, the origin and both shapes.
  const std::string m = message_of([&] { st.get_array("w", Shape{4, 3}); });
  EXPECT_NE(m.find("'run/checkpoint.sbck': array 'w' has shape (3, 4), expected (4, 3)"),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  EXPECT_NE(message_of([&] { st.get_array("w", Shape{12}, into); }).find("expected (12)"),
            std::string::npos);
  EXPECT_NE(
      message_of([&] { st.get_array("scalar", Shape{1}); }).find("has shape (), expected (1)"),
      std::string::npos);
  // The room to read into must fit the shape.
  std::vector<float> small(5);
  EXPECT_THROW(st.get_array("w", Shape{3, 4}, small), core::Error);
}

TEST(State, ScopesPrefixKeysAndArrayNamesAndNest) {
  State st("ck.sbck");
  const core::Scope ppo = st.scope("ppo");
  ppo.put_int("frames", 128);
  ppo.scope("env0").put_rng("rng", core::Rng(7));
  ppo.scope("env0").put_array("actions", Shape{2}, {1.f, 0.f});
  st.scope("wikitext103").scope("model").put_u64("draws", 6);
  st.scope("").put_bool("top", true);  // an empty name: the same scope
  EXPECT_EQ(ppo.prefix(), "ppo.");
  EXPECT_EQ(ppo.scope("env0").key("rng"), "ppo.env0.rng");
  const std::vector<std::string> keys{"ppo.frames", "ppo.env0.rng", "wikitext103.model.draws",
                                      "top"};
  ASSERT_EQ(st.meta.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(st.meta[i].first, keys[i]);
  EXPECT_EQ(st.arrays[0].name, "ppo.env0.actions");

  // Reading through a const scope, and through the writing scope.
  const State& cst = st;
  const core::ConstScope in = cst.scope("ppo");
  EXPECT_EQ(in.get_int("frames"), 128);
  EXPECT_EQ(in.scope("env0").get_rng("rng").state(), core::Rng(7).state());
  EXPECT_EQ(in.scope("env0").get_array("actions", Shape{2})[0], 1.f);
  EXPECT_EQ(ppo.get_int("frames"), 128);
  const core::ConstScope from_writer = ppo;
  EXPECT_TRUE(from_writer.has("frames"));
  EXPECT_FALSE(in.has("top"));
  // A missing key is named in full.
  const std::string m = message_of([&] { in.scope("env1").get_rng("rng"); });
  EXPECT_NE(m.find("'ck.sbck' has no meta key 'ppo.env1.rng'"), std::string::npos) << m;
  const std::string a = message_of([&] { in.scope("env0").get_array("actions", Shape{3}); });
  EXPECT_NE(a.find("array 'ppo.env0.actions' has shape (2), expected (3)"), std::string::npos)
      << a;
}

TEST(State, EncodeAndDecodeHelpers) {
  for (const double v : awkward_doubles()) {
    double back = 1.0;
    ASSERT_TRUE(core::decode_double(core::encode_double(v), back)) << core::encode_double(v);
    EXPECT_EQ(bits(back), bits(v)) << core::encode_double(v);
  }
  double untouched = 3.0;
  EXPECT_FALSE(core::decode_double("x", untouched));
  EXPECT_EQ(untouched, 3.0);
  core::Rng::State w{};
  EXPECT_TRUE(core::decode_rng(core::encode_rng(core::Rng(5)), w));
  EXPECT_EQ(w, core::Rng(5).state());
  EXPECT_FALSE(core::decode_rng("1 2 3", w));
}
