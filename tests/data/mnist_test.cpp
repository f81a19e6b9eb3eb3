#include "data/mnist.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "core/fs.hpp"
#include "test_util.hpp"

using namespace seqbench;
using testutil::message_of;
using testutil::TempDir;

namespace {

void put_be32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(char((v >> shift) & 0xff));
}

// An IDX file written byte by byte: magic, dims, payload.
std::string idx_bytes(uint32_t magic, std::initializer_list<uint32_t> dims,
                      const std::vector<uint8_t>& payload) {
  std::string out;
  put_be32(out, magic);
  for (uint32_t d : dims) put_be32(out, d);
  for (uint8_t b : payload) out.push_back(char(b));
  return out;
}

// n images of 2x3 whose pixel (i, r, c) is 10*i + 3*r + c + offset.
std::vector<uint8_t> pixels(int n, int offset) {
  std::vector<uint8_t> p;
  for (int i = 0; i < n; ++i)
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 3; ++c) p.push_back(uint8_t(10 * i + 3 * r + c + offset));
  return p;
}

void write(const std::string& path, const std::string& bytes) {
  core::write_file_atomic(path, bytes);
}

// A complete fake MNIST: 3 train and 2 test images of 2x3.
void write_mnist(const TempDir& dir) {
  write(dir / data::kMnistTrainImages, idx_bytes(0x803, {3, 2, 3}, pixels(3, 0)));
  write(dir / data::kMnistTrainLabels, idx_bytes(0x801, {3}, {7, 0, 9}));
  write(dir / data::kMnistTestImages, idx_bytes(0x803, {2, 2, 3}, pixels(2, 100)));
  write(dir / data::kMnistTestLabels, idx_bytes(0x801, {2}, {4, 1}));
}

}  // namespace

TEST(Idx, ReadsImagesRowMajor) {
  TempDir dir;
  write(dir / "img", idx_bytes(0x803, {2, 2, 3}, pixels(2, 0)));
  const data::IdxImages im = data::read_idx_images(dir / "img");
  EXPECT_EQ(im.count, 2);
  EXPECT_EQ(im.rows, 2);
  EXPECT_EQ(im.cols, 3);
  EXPECT_EQ(im.pixels_per_image(), 6);
  ASSERT_EQ(im.pixels.size(), 12u);
  EXPECT_EQ(im.pixels, pixels(2, 0));
  EXPECT_EQ(im.image(1)[1 * 3 + 2], 10 + 3 + 2);  // image 1, row 1, col 2
}

TEST(Idx, ReadsLabels) {
  TempDir dir;
  write(dir / "lab", idx_bytes(0x801, {4}, {3, 1, 4, 1}));
  EXPECT_EQ(data::read_idx_labels(dir / "lab"), (std::vector<uint8_t>{3, 1, 4, 1}));
}

TEST(Idx, LargeDimensionsAreReadBigEndian) {
  // 0x0102 columns: a little-endian reader would see 0x02010000 and reject the file.
  TempDir dir;
  std::vector<uint8_t> p(0x0102, 0);
  p.back() = 255;
  write(dir / "img", idx_bytes(0x803, {1, 1, 0x0102}, p));
  const data::IdxImages im = data::read_idx_images(dir / "img");
  EXPECT_EQ(im.cols, 258);
  EXPECT_EQ(im.pixels.back(), 255);
}

TEST(Idx, MissingFileNamesItAndTheFetchCommand) {
  TempDir dir;
  const std::string msg = message_of([&] { data::read_idx_images(dir / "nope"); });
  EXPECT_NE(msg.find(dir / "nope"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not found"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tools/fetch_data mnist"), std::string::npos) << msg;
  const std::string msg2 = message_of([&] { data::read_idx_labels(dir / "nope"); });
  EXPECT_NE(msg2.find("not found"), std::string::npos) << msg2;
}

TEST(Idx, WrongMagicIsRejected) {
  TempDir dir;
  write(dir / "lab", idx_bytes(0x801, {2}, {1, 2}));
  write(dir / "img", idx_bytes(0x803, {1, 2, 3}, pixels(1, 0)));
  const std::string msg = message_of([&] { data::read_idx_images(dir / "lab"); });
  EXPECT_NE(msg.find(dir / "lab"), std::string::npos) << msg;
  EXPECT_NE(msg.find("magic 0x00000801, expected 0x00000803"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  const std::string msg2 = message_of([&] { data::read_idx_labels(dir / "img"); });
  EXPECT_NE(msg2.find("magic 0x00000803, expected 0x00000801"), std::string::npos) << msg2;
}

TEST(Idx, GzipFileGetsGunzipHint) {
  TempDir dir;
  write(dir / "img.gz", std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10));
  const std::string msg = message_of([&] { data::read_idx_images(dir / "img.gz"); });
  EXPECT_NE(msg.find("gunzip"), std::string::npos) << msg;
}

TEST(Idx, TruncatedOrOversizedFilesAreRejected) {
  TempDir dir;
  std::string img = idx_bytes(0x803, {2, 2, 3}, pixels(2, 0));
  write(dir / "short", img.substr(0, img.size() - 1));
  write(dir / "long", img + "x");
  write(dir / "header", img.substr(0, 10));
  const std::string msg = message_of([&] { data::read_idx_images(dir / "short"); });
  EXPECT_NE(msg.find(dir / "short"), std::string::npos) << msg;
  EXPECT_NE(msg.find("is truncated: 11 bytes of pixels, the header says 2 images of 2x3 (12 bytes)"),
            std::string::npos)
      << msg;
  EXPECT_NE(message_of([&] { data::read_idx_images(dir / "long"); }).find("longer than its header"),
            std::string::npos);
  EXPECT_NE(message_of([&] { data::read_idx_images(dir / "header"); }).find("shorter than its 16-byte header"),
            std::string::npos);
  // A count so large that count * rows * cols would overflow 64 bits is still just "truncated".
  write(dir / "huge", idx_bytes(0x803, {0xffffffffu, 0xffffffffu, 0xffffffffu}, {1, 2, 3}));
  EXPECT_NE(message_of([&] { data::read_idx_images(dir / "huge"); }).find("is truncated"),
            std::string::npos);
  write(dir / "zero", idx_bytes(0x803, {1, 0, 3}, {}));
  EXPECT_NE(message_of([&] { data::read_idx_images(dir / "zero"); }).find("image size 0x3"),
            std::string::npos);

  write(dir / "lab", idx_bytes(0x801, {5}, {1, 2, 3}));
  const std::string lab = message_of([&] { data::read_idx_labels(dir / "lab"); });
  EXPECT_NE(lab.find("is truncated: 3 bytes of labels, the header says 5"), std::string::npos) << lab;
}

TEST(Mnist, LoadsAllFourFiles) {
  TempDir dir;
  write_mnist(dir);
  const data::Mnist m = data::load_mnist(dir.path);
  EXPECT_EQ(m.train.images.count, 3);
  EXPECT_EQ(m.test.images.count, 2);
  EXPECT_EQ(m.train.images.pixels, pixels(3, 0));
  EXPECT_EQ(m.test.images.pixels, pixels(2, 100));
  EXPECT_EQ(m.train.labels, (std::vector<uint8_t>{7, 0, 9}));
  EXPECT_EQ(m.test.labels, (std::vector<uint8_t>{4, 1}));
}

TEST(Mnist, CountMismatchIsAnError) {
  TempDir dir;
  write_mnist(dir);
  write(dir / data::kMnistTestLabels, idx_bytes(0x801, {3}, {4, 1, 1}));
  const std::string msg = message_of([&] { data::load_mnist(dir.path); });
  EXPECT_NE(msg.find("has 2 images but"), std::string::npos) << msg;
  EXPECT_NE(msg.find("has 3 labels"), std::string::npos) << msg;
  EXPECT_NE(msg.find(data::kMnistTestLabels), std::string::npos) << msg;
}

TEST(Mnist, LabelAboveNineIsAnError) {
  TempDir dir;
  write_mnist(dir);
  write(dir / data::kMnistTrainLabels, idx_bytes(0x801, {3}, {7, 10, 9}));
  const std::string msg = message_of([&] { data::load_mnist(dir.path); });
  EXPECT_NE(msg.find("label 10 at index 1"), std::string::npos) << msg;
}

TEST(Mnist, ImageSizeMismatchBetweenSplitsIsAnError) {
  TempDir dir;
  write_mnist(dir);
  write(dir / data::kMnistTestImages, idx_bytes(0x803, {2, 3, 2}, pixels(2, 0)));
  const std::string msg = message_of([&] { data::load_mnist(dir.path); });
  EXPECT_NE(msg.find("train images are 2x3 but test images are 3x2"), std::string::npos) << msg;
}

TEST(Mnist, MissingDirectoryOrFileIsNamed) {
  TempDir dir;
  const std::string msg = message_of([&] { data::load_mnist(dir / "absent"); });
  EXPECT_NE(msg.find("MNIST directory"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tools/fetch_data mnist"), std::string::npos) << msg;
  write_mnist(dir);
  std::filesystem::remove(dir / data::kMnistTestImages);
  const std::string msg2 = message_of([&] { data::load_mnist(dir.path); });
  EXPECT_NE(msg2.find(dir / data::kMnistTestImages), std::string::npos) << msg2;
  EXPECT_NE(msg2.find("not found"), std::string::npos) << msg2;
}
