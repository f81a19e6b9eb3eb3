#include "data/npz.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/fs.hpp"
#include "data/imagenet64.hpp"
#include "data/zip_writer.hpp"
#include "test_util.hpp"

using namespace seqbench;
using testutil::message_of;
using testutil::TempDir;
using testutil::ZipMember;

namespace {

template <class T>
std::string raw(const std::vector<T>& v) {
  std::string s(v.size() * sizeof(T), '\0');
  std::memcpy(s.data(), v.data(), s.size());
  return s;
}

bool has(const std::string& msg, const std::string& part) {
  return msg.find(part) != std::string::npos;
}

}  // namespace

TEST(Npy, ReadsEverySupportedDtype) {
  TempDir tmp;
  core::write_file_atomic(tmp / "u1.npy", data::make_npy("|u1", {2, 3}, raw<uint8_t>({0, 1, 2, 253, 254, 255})));
  core::write_file_atomic(tmp / "i8.npy", data::make_npy("<i8", {3}, raw<int64_t>({-5, 0, int64_t(1) << 40})));
  core::write_file_atomic(tmp / "i4.npy", data::make_npy("<i4", {2, 1}, raw<int32_t>({-7, 123456})));
  core::write_file_atomic(tmp / "f4.npy", data::make_npy("<f4", {2}, raw<float>({1.5f, -0.25f})));
  core::write_file_atomic(tmp / "scalar.npy", data::make_npy("<i2", {}, raw<int16_t>({-2})));

  const auto u1 = data::read_npy(tmp / "u1.npy");
  EXPECT_EQ(u1.descr, "|u1");
  EXPECT_EQ(u1.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(u1.as_int64(), (std::vector<int64_t>{0, 1, 2, 253, 254, 255}));
  EXPECT_EQ(data::read_npy(tmp / "i8.npy").as_int64(), (std::vector<int64_t>{-5, 0, int64_t(1) << 40}));
  const auto i4 = data::read_npy(tmp / "i4.npy");
  EXPECT_EQ(i4.shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(i4.as_int64(), (std::vector<int64_t>{-7, 123456}));
  EXPECT_EQ(data::read_npy(tmp / "f4.npy").as_double(), (std::vector<double>{1.5, -0.25}));
  const auto s = data::read_npy(tmp / "scalar.npy");
  EXPECT_TRUE(s.shape.empty());
  EXPECT_EQ(s.as_int64(), (std::vector<int64_t>{-2}));
  // Floats are not silently truncated to integers.
  EXPECT_TRUE(has(message_of([&] { data::read_npy(tmp / "f4.npy").as_int64("labels"); }), "labels"));
}

TEST(Npy, ReadsFormatVersionTwo) {
  // Version 2.0: a 4-byte header length.
  std::string v1 = data::make_npy("<i4", {2}, raw<int32_t>({3, -4}));
  const uint16_t hlen = uint16_t(uint8_t(v1[8]) | (uint8_t(v1[9]) << 8));
  std::string v2 = v1.substr(0, 6) + std::string("\x02\x00", 2);
  testutil::put_le(v2, hlen, 4);
  v2 += v1.substr(10);
  const auto a = data::parse_npy(v2, "v2");
  EXPECT_EQ(a.as_int64(), (std::vector<int64_t>{3, -4}));
}

TEST(Npy, ErrorsNameTheFileAndTheProblem) {
  TempDir tmp;
  const std::string good = data::make_npy("<i4", {4}, raw<int32_t>({1, 2, 3, 4}));
  core::write_file_atomic(tmp / "magic.npy", "\x93NUMPX" + good.substr(6));
  core::write_file_atomic(tmp / "short.npy", good.substr(0, good.size() - 3));
  core::write_file_atomic(tmp / "header.npy", good.substr(0, 20));
  core::write_file_atomic(tmp / "c8.npy", data::make_npy("<c8", {1}, std::string(8, '\0')));
  core::write_file_atomic(tmp / "be.npy", data::make_npy(">i4", {1}, std::string(4, '\0')));
  std::string fortran = data::make_npy("<i4", {1}, std::string(4, '\0'));
  fortran.replace(fortran.find("False"), 5, "True ");
  core::write_file_atomic(tmp / "fortran.npy", fortran);

  const auto msg = [&](const char* f) { return message_of([&] { data::read_npy(tmp / f); }); };
  EXPECT_TRUE(has(msg("magic.npy"), "bad magic")) << msg("magic.npy");
  EXPECT_TRUE(has(msg("magic.npy"), "magic.npy"));
  EXPECT_TRUE(has(msg("short.npy"), "truncated")) << msg("short.npy");
  EXPECT_TRUE(has(msg("header.npy"), "truncated")) << msg("header.npy");
  EXPECT_TRUE(has(msg("c8.npy"), "unsupported dtype '<c8'")) << msg("c8.npy");
  EXPECT_TRUE(has(msg("be.npy"), "big-endian")) << msg("be.npy");
  EXPECT_TRUE(has(msg("fortran.npy"), "fortran_order True")) << msg("fortran.npy");
  EXPECT_TRUE(has(msg("missing.npy"), "not found")) << msg("missing.npy");
  for (const char* f : {"magic.npy", "short.npy", "c8.npy", "be.npy", "fortran.npy"})
    EXPECT_EQ(msg(f).find('\n'), std::string::npos) << "one line: " << msg(f);
}

TEST(Npz, ReadsStoredAndDeflatedMembers) {
  TempDir tmp;
  std::vector<uint8_t> pixels(3000);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = uint8_t((i * 7) % 13);  // compressible
  const std::string data = data::make_npy("|u1", {10, 300}, raw(pixels));
  const std::string labels = data::make_npy("<i8", {10}, raw<int64_t>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  const std::string zip = testutil::zip_archive(
      {{"data.npy", data, true, 0}, {"labels.npy", labels, false, 0}});
  ASSERT_LT(zip.size(), data.size()) << "the deflated member should be smaller";
  core::write_file_atomic(tmp / "b.npz", zip);

  EXPECT_EQ(data::npz_members(tmp / "b.npz"), (std::vector<std::string>{"data.npy", "labels.npy"}));
  // What loading it holds (the memory estimate counts this, not the smaller file).
  EXPECT_EQ(data::npz_inflated_bytes(tmp / "b.npz"), data.size() + labels.size());
  const auto d = data::read_npz_member(tmp / "b.npz", "data");
  EXPECT_EQ(d.shape, (std::vector<int64_t>{10, 300}));
  EXPECT_EQ(std::vector<uint8_t>(d.u8(), d.u8() + 3000), pixels);
  EXPECT_EQ(data::read_npz_member(tmp / "b.npz", "labels.npy").as_int64()[9], 10);
  const auto all = data::read_npz(tmp / "b.npz");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all.at("labels").as_int64()[0], 1);
  EXPECT_EQ(all.at("data").bytes, d.bytes);
}

TEST(Npz, ErrorsNameTheFileMemberAndProblem) {
  TempDir tmp;
  const std::string arr = data::make_npy("<i4", {64}, std::string(256, '\x01'));
  const std::string good = testutil::zip_archive({{"x.npy", arr, true, 0}});
  core::write_file_atomic(tmp / "good.npz", good);
  core::write_file_atomic(tmp / "notzip.npz", std::string(100, 'a'));
  core::write_file_atomic(tmp / "cut.npz", good.substr(0, good.size() / 2));
  core::write_file_atomic(tmp / "crc.npz", testutil::zip_archive({{"x.npy", arr, false, 0x1234}}));
  core::write_file_atomic(tmp / "crc_deflated.npz", testutil::zip_archive({{"x.npy", arr, true, 1}}));
  // Garbage in place of the deflate stream (after the local header's 30 bytes, the name
  // and the extra field): 0xff starts a block of the reserved type 3.
  std::string bad = good;
  const size_t at = 30 + size_t(uint8_t(good[26])) + size_t(uint8_t(good[28]));
  for (size_t i = at; i < at + 8; ++i) bad[i] = '\xff';
  core::write_file_atomic(tmp / "deflate.npz", bad);
  core::write_file_atomic(tmp / "dtype.npz",
                          testutil::zip_archive({{"x.npy", data::make_npy("<c16", {1}, std::string(16, '\0')), false, 0}}));

  const auto msg = [&](const char* f, const char* member = "x") {
    return message_of([&] { data::read_npz_member(tmp / f, member); });
  };
  EXPECT_EQ(msg("good.npz"), "(no exception)");
  EXPECT_TRUE(has(msg("good.npz", "y"), "missing member 'y' (has: x)")) << msg("good.npz", "y");
  EXPECT_TRUE(has(msg("good.npz", "y"), "good.npz"));
  EXPECT_TRUE(has(msg("notzip.npz"), "bad magic")) << msg("notzip.npz");
  EXPECT_TRUE(has(msg("cut.npz"), "truncated")) << msg("cut.npz");
  EXPECT_TRUE(has(msg("crc.npz"), "CRC mismatch")) << msg("crc.npz");
  EXPECT_TRUE(has(msg("crc.npz"), "member 'x.npy'")) << msg("crc.npz");
  EXPECT_TRUE(has(msg("crc_deflated.npz"), "CRC mismatch")) << msg("crc_deflated.npz");
  EXPECT_TRUE(has(msg("deflate.npz"), "corrupt deflate stream")) << msg("deflate.npz");
  EXPECT_TRUE(has(msg("dtype.npz"), "unsupported dtype '<c16'")) << msg("dtype.npz");
  EXPECT_TRUE(has(msg("nothere.npz"), "not found")) << msg("nothere.npz");
  for (const char* f : {"notzip.npz", "cut.npz", "crc.npz", "deflate.npz", "dtype.npz"})
    EXPECT_EQ(msg(f).find('\n'), std::string::npos) << "one line: " << msg(f);
}

TEST(Npz, ReadsNumpysZip64LocalHeaders) {
  // Written by Python's zipfile the way np.savez and np.savez_compressed call it (each
  // member opened with force_zip64: sizes in a zip64 extra field of the local header).
  const std::string f = std::string(SEQBENCH_SOURCE_DIR) + "/fuzz/corpus/npz/zip64_like_numpy.npz";
  const auto all = data::read_npz(f);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all.at("a").as_int64(), (std::vector<int64_t>{1, -2, 300000}));
  EXPECT_EQ(all.at("b").shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(all.at("b").as_int64(), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(Npz, DirectorySizesAreCheckedBeforeAnythingIsAllocated) {
  TempDir tmp;
  const std::string arr = data::make_npy("<i4", {64}, std::string(256, '\x01'));
  // One member; its central directory entry starts where the end record (the last 22
  // bytes) says. Patches a 4-byte field of that entry.
  const auto patched = [&](bool deflate, size_t field, uint32_t v, size_t field2 = 0) {
    std::string z = testutil::zip_archive({{"x.npy", arr, deflate, 0}});
    const size_t eocd = z.size() - 22;
    const size_t cd = uint8_t(z[eocd + 16]) | size_t(uint8_t(z[eocd + 17])) << 8;
    for (size_t at : {field, field2})
      if (at) z.replace(cd + at, 4, std::string{char(v), char(v >> 8), char(v >> 16), char(v >> 24)});
    return z;
  };
  core::write_file_atomic(tmp / "ratio.npz", patched(true, 24, 0xfff00000u));  // uncompressed size
  core::write_file_atomic(tmp / "past.npz", patched(false, 20, 0xfff00000u, 24));  // both sizes
  // Method 12 (bzip2); the 4-byte write also zeroes the two bytes after it (the time).
  core::write_file_atomic(tmp / "method.npz", patched(false, 10, 12));
  const auto msg = [&](const char* f) { return message_of([&] { data::read_npz(tmp / f); }); };
  EXPECT_TRUE(has(msg("ratio.npz"), "cannot inflate from")) << msg("ratio.npz");
  EXPECT_TRUE(has(msg("past.npz"), "truncated")) << msg("past.npz");
  EXPECT_TRUE(has(msg("method.npz"), "unsupported compression method 12")) << msg("method.npz");
  for (const char* f : {"ratio.npz", "past.npz", "method.npz"}) {
    EXPECT_TRUE(has(msg(f), "member 'x.npy'")) << msg(f);
    EXPECT_EQ(msg(f).find('\n'), std::string::npos) << "one line: " << msg(f);
  }
}

TEST(Imagenet, PlanarRowsBecomeInterleavedPixels) {
  // One 2x2 RGB image: R plane 0..3, G plane 10..13, B plane 20..23.
  const std::vector<uint8_t> planar{0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23};
  std::vector<uint8_t> out(12);
  data::planar_to_interleaved(planar.data(), 1, 2, 3, out.data());
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 10, 20, 1, 11, 21, 2, 12, 22, 3, 13, 23}));
}

TEST(Imagenet, ReadsBatchesInOrderUpToTheCap) {
  TempDir tmp;
  // Batch k holds 3 images of side 2; image i's planar bytes are 100 k + 10 i + j.
  for (int k = 1; k <= 2; ++k) {
    std::string bytes;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 12; ++j) bytes.push_back(char(100 * (k - 1) + 10 * i + j));
    const std::string zip = testutil::zip_archive(
        {{"data.npy", data::make_npy("|u1", {3, 12}, bytes), k == 2, 0},
         {"labels.npy", data::make_npy("<i8", {3}, raw<int64_t>({k, k, k})), false, 0}});
    core::write_file_atomic(tmp / ("train_data_batch_" + std::to_string(k) + ".npz"), zip);
  }
  const auto all = data::load_imagenet_train(tmp.path, 2);
  EXPECT_EQ(all.count, 6);
  EXPECT_EQ(all.channels, 3);
  EXPECT_EQ(all.tokens_per_image(), 12);
  EXPECT_EQ(all.image(3)[0], 100);  // batch 2 image 0, R of pixel 0
  EXPECT_EQ(all.image(3)[1], 104);  // its G of pixel 0
  EXPECT_EQ(all.labels[4], 2);
  const auto capped = data::load_imagenet_train(tmp.path, 2, 4);
  EXPECT_EQ(capped.count, 4);
  EXPECT_EQ(capped.image(3)[2], 108);
  // A side that does not fit the rows is a one-line error with a hint.
  const std::string m = message_of([&] { data::load_imagenet_train(tmp.path, 3); });
  EXPECT_TRUE(has(m, "data.image_side")) << m;
  EXPECT_TRUE(has(message_of([&] { data::load_imagenet_val(tmp.path, 2); }), "val_data.npz"));
}
