#include "train/checkpoint.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "data/checksum.hpp"

#include "test_util.hpp"

using namespace seqbench;
using train::Checkpoint;

using testutil::TempDir;
using testutil::message_of;

namespace {

std::vector<float> iota(int64_t n, float scale) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = scale * float(i) - 1.5f;
  return v;
}

Checkpoint sample() {
  Checkpoint ck;
  ck.put_string("step", "1234");
  ck.put_u64("rng.s0", std::numeric_limits<uint64_t>::max());
  ck.put_string("note", "quotes \" backslash \\ newline\n tab\t unicode é± ctrl\x01");
  ck.put_string("empty", "");
  ck.put_array("enc.0.lstm.w_hh", core::Shape{4, 3}, iota(12, 0.25f));
  ck.put_array("enc.0.lstm.b", core::Shape{7}, iota(7, -1e-3f));
  ck.put_array("scalar", core::Shape{}, {3.5f});
  ck.put_array("empty", core::Shape{0, 5}, {});
  ck.put_array("cube", core::Shape{2, 1, 3, 2}, iota(12, 1e6f));
  ck.arrays[0].data[5] = std::numeric_limits<float>::denorm_min();
  ck.arrays[0].data[6] = -0.0f;
  return ck;
}

}  // namespace

TEST(Checkpoint, RoundTripKeepsMetaOrderAndArraysBitExact) {
  TempDir dir;
  const std::string p = dir / "checkpoint.sbck";
  const Checkpoint ck = sample();
  train::save_checkpoint(p, ck);
  const Checkpoint back = train::load_checkpoint(p);
  EXPECT_EQ(back.origin, p);
  EXPECT_EQ(back.meta, ck.meta);
  EXPECT_EQ(back.get_string("rng.s0"), "18446744073709551615");
  EXPECT_EQ(std::stoull(back.get_string("rng.s0")), std::numeric_limits<uint64_t>::max());
  ASSERT_EQ(back.arrays.size(), ck.arrays.size());
  for (size_t i = 0; i < ck.arrays.size(); ++i) {
    EXPECT_EQ(back.arrays[i].name, ck.arrays[i].name);
    EXPECT_EQ(back.arrays[i].shape, ck.arrays[i].shape) << back.arrays[i].shape.str();
    ASSERT_EQ(back.arrays[i].data.size(), ck.arrays[i].data.size());
    // memcmp for bit-exactness (NaN, -0); never on an empty array, whose data() may be
    // null (UB even for 0 bytes; UBSan reports it).
    if (!ck.arrays[i].data.empty()) {
      EXPECT_EQ(0, std::memcmp(back.arrays[i].data.data(), ck.arrays[i].data.data(),
                               ck.arrays[i].data.size() * sizeof(float)));
    }
  }
  EXPECT_EQ(back.array("scalar").shape.rank, 0);
  EXPECT_EQ(back.array("scalar").data[0], 3.5f);
}

TEST(Checkpoint, LayoutMatchesTheDocumentedFormat) {
  TempDir dir;
  const std::string p = dir / "c.sbck";
  Checkpoint ck;
  ck.put_array("a", core::Shape{2}, {1.0f, 2.0f});
  ck.put_array("b", core::Shape{1, 1}, {-3.0f});
  train::save_checkpoint(p, ck);
  const std::string bytes = core::read_file(p);
  ASSERT_GE(bytes.size(), 16u);
  EXPECT_EQ(bytes.substr(0, 8), "SEQBCKPT");
  auto u32 = [&](size_t at) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(bytes[at + i]);
    return v;
  };
  EXPECT_EQ(u32(8), 1u);
  const uint32_t n = u32(12);
  EXPECT_EQ((16 + n) % 64, 0u);  // data section aligned
  const std::string header = bytes.substr(16, n);
  const auto json = nlohmann::ordered_json::parse(header);  // JSON, padded with spaces
  std::vector<std::string> keys;
  for (const auto& [k, v] : json.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"meta", "arrays", "data_bytes", "sha256", "sha256_layout"}));
  EXPECT_EQ(json["sha256_layout"], 2);
  EXPECT_EQ(json["arrays"][1],
            nlohmann::ordered_json::parse(R"({"name": "b", "shape": [1, 1], "offset": 8, "count": 1})"))
      << header;
  EXPECT_EQ(json["data_bytes"], 12) << header;
  ASSERT_EQ(bytes.size(), 16 + n + 12);
  float third;
  std::memcpy(&third, bytes.data() + 16 + n + 8, 4);
  EXPECT_EQ(third, -3.0f);
}

TEST(Checkpoint, MissingKeysAndArraysNameTheFile) {
  TempDir dir;
  const std::string p = dir / "c.sbck";
  train::save_checkpoint(p, sample());
  const Checkpoint ck = train::load_checkpoint(p);
  std::string m = message_of([&] { ck.get_string("epoch"); });
  EXPECT_NE(m.find("'" + p + "' has no meta key 'epoch'"), std::string::npos) << m;
  EXPECT_NE(m.find("step, rng.s0"), std::string::npos) << m;
  std::string a = message_of([&] { ck.array("dec.w"); });
  EXPECT_NE(a.find("'" + p + "' has no array 'dec.w'"), std::string::npos) << a;
  EXPECT_TRUE(ck.has("step"));
  EXPECT_FALSE(ck.has_array("dec.w"));
}

TEST(Checkpoint, SaveRejectsInconsistentArrays) {
  TempDir dir;
  Checkpoint ck;
  ck.put_array("w", core::Shape{2}, {1.0f, 2.0f});
  EXPECT_THROW(ck.put_array("w", core::Shape{1}, {1.0f}), core::Error);
  EXPECT_THROW(ck.put_array("v", core::Shape{3}, {1.0f}), core::Error);
  ck.arrays.push_back({"w", core::Shape{1}, {0.0f}});  // bypassing put_array
  EXPECT_THROW(train::save_checkpoint(dir / "bad.sbck", ck), core::Error);
  EXPECT_FALSE(core::file_exists(dir / "bad.sbck"));
}

class CorruptCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    train::save_checkpoint(good_, sample());
    bytes_ = core::read_file(good_);
    header_len_ = static_cast<unsigned char>(bytes_[12]) | static_cast<unsigned char>(bytes_[13])
                                                               << 8;
  }
  // Writes `bytes` as the checkpoint and returns load_checkpoint's message.
  std::string load_error(const std::string& bytes) {
    core::write_file_atomic(bad_, bytes);
    return message_of([&] { train::load_checkpoint(bad_); });
  }
  void expect_names_path(const std::string& m) {
    EXPECT_NE(m.find("'" + bad_ + "'"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;  // one line
  }
  TempDir dir_;
  std::string good_ = dir_ / "good.sbck";
  std::string bad_ = dir_ / "bad.sbck";
  std::string bytes_;
  size_t header_len_ = 0;
};

TEST_F(CorruptCheckpoint, MissingFile) {
  std::string m = message_of([&] { train::load_checkpoint(dir_ / "nope.sbck"); });
  EXPECT_NE(m.find("'" + (dir_ / "nope.sbck") + "'"), std::string::npos) << m;
  EXPECT_NE(m.find("No such file or directory"), std::string::npos) << m;
}

TEST_F(CorruptCheckpoint, BadMagic) {
  std::string b = bytes_;
  b[0] = 'X';
  std::string m = load_error(b);
  expect_names_path(m);
  EXPECT_NE(m.find("not a seqbench checkpoint"), std::string::npos) << m;
  m = load_error("config: {}\n");  // some other file passed by mistake
  EXPECT_NE(m.find("not a seqbench checkpoint"), std::string::npos) << m;
}

TEST_F(CorruptCheckpoint, UnsupportedVersion) {
  std::string b = bytes_;
  b[8] = 2;
  std::string m = load_error(b);
  expect_names_path(m);
  EXPECT_NE(m.find("unsupported checkpoint version 2"), std::string::npos) << m;
}

TEST_F(CorruptCheckpoint, TruncatedPreambleHeaderAndData) {
  std::string m = load_error(bytes_.substr(0, 10));
  expect_names_path(m);
  EXPECT_NE(m.find("truncated: expected 16 preamble bytes, found 10"), std::string::npos) << m;
  m = load_error(bytes_.substr(0, 16 + 20));
  expect_names_path(m);
  EXPECT_NE(m.find(fmt::format("truncated: expected {} header bytes, found 20", header_len_)),
            std::string::npos)
      << m;
  const size_t data = bytes_.size() - 16 - header_len_;
  m = load_error(bytes_.substr(0, bytes_.size() - 5));
  expect_names_path(m);
  EXPECT_NE(m.find(fmt::format("truncated: expected {} data bytes, found {}", data, data - 5)),
            std::string::npos)
      << m;
  m = load_error(bytes_ + "xx");
  expect_names_path(m);
  EXPECT_NE(m.find("trailing bytes"), std::string::npos) << m;
}

TEST_F(CorruptCheckpoint, MalformedHeader) {
  std::string b = bytes_;
  b[16] = '[';  // '{' -> '[': unbalanced flow collection
  std::string m = load_error(b);
  expect_names_path(m);
  EXPECT_NE(m.find("malformed header"), std::string::npos) << m;

  // Valid JSON with the wrong structure, and an array that points past the data.
  auto with_header = [&](std::string h) {
    h.append((64 - (16 + h.size()) % 64) % 64, ' ');
    std::string out = bytes_.substr(0, 12);
    for (int i = 0; i < 4; ++i) out += static_cast<char>((h.size() >> (8 * i)) & 0xff);
    return out + h + std::string(8, '\0');
  };
  m = load_error(with_header("{\"meta\": {}, \"data_bytes\": 8}"));
  expect_names_path(m);
  EXPECT_NE(m.find("malformed header"), std::string::npos) << m;
  m = load_error(
      with_header("{\"meta\": {}, \"arrays\": [{\"name\": \"w\", \"shape\": [4], \"offset\": 0, "
                  "\"count\": 4}], \"data_bytes\": 8}"));
  expect_names_path(m);
  EXPECT_NE(m.find("array 'w' (offset 0, 4 values) lies outside the 8 data bytes"),
            std::string::npos)
      << m;
  m = load_error(
      with_header("{\"meta\": {}, \"arrays\": [{\"name\": \"w\", \"shape\": [3], \"offset\": 0, "
                  "\"count\": 2}], \"data_bytes\": 8}"));
  EXPECT_NE(m.find("count 2 but shape (3)"), std::string::npos) << m;
  m = load_error(with_header(
      "{\"meta\": {}, \"arrays\": [{\"name\": \"w\", \"shape\": [\"x\"], \"offset\": 0, "
      "\"count\": 2}], \"data_bytes\": 8}"));
  expect_names_path(m);
  EXPECT_NE(m.find("malformed header"), std::string::npos) << m;
}

TEST_F(CorruptCheckpoint, AFlippedBitAnywhereIsCaughtByTheChecksum) {
  const size_t data_start = 16 + header_len_;
  ASSERT_LT(data_start, bytes_.size());
  // In the data section: the file still parses, only the checksum can tell.
  for (const size_t at : {data_start, bytes_.size() - 1}) {
    std::string b = bytes_;
    b[at] ^= 0x04;
    const std::string m = load_error(b);
    expect_names_path(m);
    EXPECT_NE(m.find("damaged: its contents have sha256"), std::string::npos) << m;
  }
  // In a meta value (a digit of a number stays a valid string).
  const size_t digit = bytes_.find_first_of("0123456789", bytes_.find("\"meta\""));
  ASSERT_LT(digit, data_start);
  std::string b = bytes_;
  b[digit] = b[digit] == '7' ? '8' : '7';
  EXPECT_NE(load_error(b).find("damaged"), std::string::npos);
  // The untouched file loads.
  EXPECT_NO_THROW(train::load_checkpoint(good_));
}

TEST_F(CorruptCheckpoint, ACheckpointWithoutAChecksumStillLoads) {
  // Checkpoints written before the checksum existed have no "sha256" key: replace it by
  // spaces (JSON whitespace), keeping every offset, as such a file would read.
  std::string b = bytes_;
  const size_t at = b.find(",\"sha256\":\"");
  ASSERT_NE(at, std::string::npos);
  const size_t end = b.find('"', at + 11) + 1;
  for (size_t i = at; i < end; ++i) b[i] = ' ';
  core::write_file_atomic(bad_, b);
  const Checkpoint ck = train::load_checkpoint(bad_);
  EXPECT_EQ(ck.meta, train::load_checkpoint(good_).meta);
}

// Issue 29, item 6: the checksum covers the shapes, as docs/formats.md says. Before the
// fix its separators came out empty and a shape could change unnoticed ([4, 3] -> [3, 4]
// keeps the count and every byte of the data).
TEST_F(CorruptCheckpoint, AChangedShapeIsCaughtByTheChecksum) {
  std::string b = bytes_;
  const size_t at = b.find("\"shape\":[4,3]");
  ASSERT_NE(at, std::string::npos) << b.substr(16, header_len_);
  b.replace(at, 13, "\"shape\":[3,4]");
  const std::string m = load_error(b);
  expect_names_path(m);
  EXPECT_NE(m.find("damaged: its contents have sha256"), std::string::npos) << m;
}

// A checkpoint of an earlier build: no "sha256_layout", and a checksum over the names,
// meta and values only (layout 1). It still loads, checked that way; a flipped value bit
// is still caught.
TEST_F(CorruptCheckpoint, ACheckpointWithTheEarlierChecksumLayoutStillLoads) {
  const Checkpoint good = train::load_checkpoint(good_);
  data::Sha256 h;
  const std::string_view nul("\0", 1);
  for (const auto& [k, v] : good.meta) {
    h.update(k);
    h.update(nul);
    h.update(v);
    h.update(nul);
  }
  for (const auto& a : good.arrays) {
    h.update(a.name);
    h.update(std::string_view(reinterpret_cast<const char*>(a.data.data()), a.data.size() * sizeof(float)));
  }
  const std::string legacy = h.hex();
  std::string b = bytes_;
  const size_t sha = b.find("\"sha256\":\"") + 10;
  ASSERT_EQ(legacy.size(), 64u);
  b.replace(sha, 64, legacy);
  const size_t layout = b.find(",\"sha256_layout\":2");
  ASSERT_NE(layout, std::string::npos);
  for (size_t i = layout; i < layout + 18; ++i) b[i] = ' ';
  core::write_file_atomic(bad_, b);
  const Checkpoint old = train::load_checkpoint(bad_);
  EXPECT_EQ(old.meta, good.meta);
  b[b.size() - 1] ^= 0x04;
  EXPECT_NE(load_error(b).find("damaged"), std::string::npos);
  // A layout this build does not know is refused as malformed.
  b = bytes_;
  b[b.find(",\"sha256_layout\":2") + 17] = '7';
  EXPECT_NE(load_error(b).find("malformed header: sha256_layout 7"), std::string::npos);
}

TEST_F(CorruptCheckpoint, ARepeatedMetaKeyIsNamed) {
  // JSON keeps the last of two equal keys; the reader refuses them instead.
  std::string h = R"({"meta": {"step": "1", "note": "x", "step": "2"}, "arrays": [], "data_bytes": 0})";
  h.append((64 - (16 + h.size()) % 64) % 64, ' ');
  std::string b = bytes_.substr(0, 12);
  for (int i = 0; i < 4; ++i) b += static_cast<char>((h.size() >> (8 * i)) & 0xff);
  const std::string m = load_error(b + h);
  expect_names_path(m);
  EXPECT_NE(m.find("malformed header: meta key 'step' repeated"), std::string::npos) << m;
}

// The header as builds before nlohmann-json wrote it (one entry per line, spaces after
// the separators, no checksum), taken from docs/formats.md: it reads the same today.
TEST(Checkpoint, AHeaderInTheOlderLayoutReads) {
  TempDir dir;
  std::string h =
      "{\"meta\": {\n  \"step\": \"1234\",\n  \"rng.s0\": \"18446744073709551615\"\n},\n"
      "\"arrays\": [\n  {\"name\": \"w\", \"shape\": [2, 1], \"offset\": 0, \"count\": 2},\n"
      "  {\"name\": \"b\", \"shape\": [], \"offset\": 8, \"count\": 1}\n],\n"
      "\"data_bytes\": 12}\n";
  h.append((64 - (16 + h.size()) % 64) % 64, ' ');
  std::string bytes = "SEQBCKPT";
  for (const uint32_t v : {1u, uint32_t(h.size())})
    for (int i = 0; i < 4; ++i) bytes += static_cast<char>((v >> (8 * i)) & 0xff);
  const float values[3] = {0.5f, -2.0f, 7.25f};
  bytes += h + std::string(reinterpret_cast<const char*>(values), sizeof values);
  core::write_file_atomic(dir / "old.sbck", bytes);
  const Checkpoint ck = train::load_checkpoint(dir / "old.sbck");
  EXPECT_EQ(ck.meta, (std::vector<std::pair<std::string, std::string>>{
                         {"step", "1234"}, {"rng.s0", "18446744073709551615"}}));
  ASSERT_EQ(ck.arrays.size(), 2u);
  EXPECT_EQ(ck.array("w").data, (std::vector<float>{0.5f, -2.0f}));
  EXPECT_EQ(ck.array("b").shape.rank, 0);
  EXPECT_EQ(ck.array("b").data, std::vector<float>{7.25f});
}

TEST(Checkpoint, NumbersInMetaAreCheckedAndNamed) {
  Checkpoint ck;
  ck.origin = "run/checkpoint.sbck";
  ck.put_string("step", "1234");
  ck.put_string("rng", "18446744073709551615");
  ck.put_string("bad", "12x");
  ck.put_string("neg", "-3");
  EXPECT_EQ(ck.get_int("step"), 1234);
  EXPECT_EQ(ck.get_u64("rng"), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(ck.get_int("neg"), -3);
  std::string m = message_of([&] { ck.get_int("bad"); });
  EXPECT_NE(m.find("meta 'bad' is '12x', not a whole number"), std::string::npos) << m;
  EXPECT_NE(m.find("run/checkpoint.sbck"), std::string::npos) << m;
  m = message_of([&] { ck.get_u64("neg"); });
  EXPECT_NE(m.find("not a whole number >= 0"), std::string::npos) << m;
  EXPECT_NE(message_of([&] { ck.get_int("rng"); }).find("not a whole number"), std::string::npos);
}
