// The PNG writer: what it writes is decoded again by libpng's reader (which also checks
// every chunk's CRC) and compared pixel by pixel.
#include "report/png.hpp"

#include <gtest/gtest.h>
#include <png.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "test_util.hpp"

using namespace seqbench;

namespace {

struct Decoded {
  bool ok = false;
  std::string message;
  uint32_t width = 0, height = 0, format = 0;  // format as stored in the file
  std::vector<uint8_t> rgb;
};

Decoded decode(const void* bytes, size_t n) {
  Decoded d;
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (png_image_begin_read_from_memory(&image, bytes, n)) {
    d.width = image.width;
    d.height = image.height;
    d.format = image.format;
    image.format = PNG_FORMAT_RGB;
    d.rgb.resize(PNG_IMAGE_SIZE(image));
    d.ok = png_image_finish_read(&image, nullptr, d.rgb.data(), 0, nullptr) != 0;
  }
  d.message = image.message;
  png_image_free(&image);
  return d;
}

}  // namespace

TEST(Png, DecodesToTheSamePixels) {
  const int w = 300, h = 250;
  std::vector<uint8_t> rgb(size_t(w) * h * 3);
  for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = uint8_t(i * 7 + i / 3);
  const std::vector<uint8_t> png = report::encode_png(w, h, rgb);
  const std::vector<uint8_t> sig{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  ASSERT_TRUE(std::equal(sig.begin(), sig.end(), png.begin()));
  const Decoded d = decode(png.data(), png.size());
  ASSERT_TRUE(d.ok) << d.message;
  EXPECT_EQ(d.width, uint32_t(w));
  EXPECT_EQ(d.height, uint32_t(h));
  EXPECT_EQ(d.format, uint32_t(PNG_FORMAT_RGB)) << "8-bit RGB, no alpha, no palette";
  EXPECT_TRUE(d.rgb == rgb);
  // A changed byte inside the image data fails the chunk's CRC (or the deflate stream).
  std::vector<uint8_t> bad = png;
  bad[bad.size() / 2] ^= 0x40;
  EXPECT_FALSE(decode(bad.data(), bad.size()).ok);
}

TEST(Png, CompressesAndWritesTheFileAtomically) {
  // A flat picture (a MiniGrid frame is mostly one colour) deflates to a fraction.
  const int w = 64, h = 48;
  std::vector<uint8_t> rgb(size_t(w) * h * 3, 0x50);
  for (int x = 0; x < w; ++x) rgb[size_t(10 * w + x) * 3 + 1] = 0xff;  // a green row
  testutil::TempDir tmp;
  const std::string path = tmp / "frame.png";
  report::write_png(path, w, h, rgb);
  const std::string file = core::read_file(path);
  EXPECT_LT(file.size(), rgb.size() / 10);
  const Decoded d = decode(file.data(), file.size());
  ASSERT_TRUE(d.ok) << d.message;
  EXPECT_TRUE(d.rgb == rgb);
  for (const auto& e : std::filesystem::directory_iterator(tmp.path))
    EXPECT_EQ(e.path().filename(), "frame.png") << "no temporary file is left behind";
}

TEST(Png, RejectsAWrongBufferSize) {
  EXPECT_THROW(report::encode_png(2, 2, std::vector<uint8_t>(11)), core::Error);
  EXPECT_THROW(report::encode_png(0, 2, std::vector<uint8_t>()), core::Error);
}
