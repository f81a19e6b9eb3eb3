// The PNG writer: signature, chunk layout and CRCs, and the pixels read back from the
// stored deflate blocks (the encoder's only compression mode).
#include "report/png.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/check.hpp"

using namespace seqbench;

namespace {

uint32_t be32(const std::vector<uint8_t>& b, size_t at) {
  return uint32_t(b[at]) << 24 | uint32_t(b[at + 1]) << 16 | uint32_t(b[at + 2]) << 8 | b[at + 3];
}

uint32_t crc32_ref(const uint8_t* p, size_t n) {  // bitwise, independent of the encoder's table
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

}  // namespace

TEST(Png, ChunksCrcsAndPixelsRoundTrip) {
  const int w = 300, h = 250;  // > 65535 bytes of scanlines: several stored blocks
  std::vector<uint8_t> rgb(size_t(w) * h * 3);
  for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = uint8_t(i * 7 + i / 3);
  const std::vector<uint8_t> png = report::encode_png(w, h, rgb);
  const std::vector<uint8_t> sig{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  ASSERT_TRUE(std::equal(sig.begin(), sig.end(), png.begin()));
  size_t at = 8;
  std::vector<std::string> types;
  std::vector<uint8_t> idat;
  while (at < png.size()) {
    const uint32_t len = be32(png, at);
    const std::string type(png.begin() + long(at + 4), png.begin() + long(at + 8));
    types.push_back(type);
    EXPECT_EQ(be32(png, at + 8 + len), crc32_ref(png.data() + at + 4, len + 4)) << type;
    if (type == "IHDR") {
      EXPECT_EQ(be32(png, at + 8), uint32_t(w));
      EXPECT_EQ(be32(png, at + 12), uint32_t(h));
      EXPECT_EQ(png[at + 16], 8);  // bit depth
      EXPECT_EQ(png[at + 17], 2);  // truecolour
    }
    if (type == "IDAT") idat.assign(png.begin() + long(at + 8), png.begin() + long(at + 8 + len));
    at += 12 + len;
  }
  EXPECT_EQ(types, (std::vector<std::string>{"IHDR", "IDAT", "IEND"}));
  // Inflate the stored blocks.
  ASSERT_GE(idat.size(), 6u);
  EXPECT_EQ(idat[0], 0x78);
  std::vector<uint8_t> raw;
  size_t p = 2;
  for (bool last = false; !last;) {
    last = idat[p] & 1;
    EXPECT_EQ(idat[p] >> 1, 0) << "stored block";
    const size_t n = idat[p + 1] | size_t(idat[p + 2]) << 8;
    EXPECT_EQ(n ^ 0xFFFF, idat[p + 3] | size_t(idat[p + 4]) << 8);
    raw.insert(raw.end(), idat.begin() + long(p + 5), idat.begin() + long(p + 5 + n));
    p += 5 + n;
  }
  ASSERT_EQ(raw.size(), size_t(h) * (1 + size_t(w) * 3));
  for (int y = 0; y < h; ++y) {
    ASSERT_EQ(raw[size_t(y) * (1 + w * 3)], 0) << "filter byte of row " << y;
    for (int i = 0; i < w * 3; ++i)
      ASSERT_EQ(raw[size_t(y) * (1 + w * 3) + 1 + i], rgb[size_t(y) * w * 3 + i]);
  }
  uint32_t a = 1, b = 0;
  for (uint8_t v : raw) a = (a + v) % 65521, b = (b + a) % 65521;
  EXPECT_EQ(be32(idat, p), (b << 16) | a) << "Adler-32";
}

TEST(Png, RejectsAWrongBufferSize) {
  EXPECT_THROW(report::encode_png(2, 2, std::vector<uint8_t>(11)), core::Error);
}
