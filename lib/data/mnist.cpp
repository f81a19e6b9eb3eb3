#include "data/mnist.hpp"

#include <cstdint>

#include "core/check.hpp"
#include "core/fs.hpp"

namespace seqbench::data {

namespace {

constexpr const char* kFetchHint = "hint: run tools/fetch_data mnist, see docs/data.md";

uint32_t read_be32(const std::string& bytes, size_t at) {
  const auto b = [&](size_t k) { return uint32_t(static_cast<unsigned char>(bytes[at + k])); };
  return (b(0) << 24) | (b(1) << 16) | (b(2) << 8) | b(3);
}

// The file's bytes after checking that it exists, that its header fits and that its
// magic is `magic`. `what` names the kind of file in messages ("IDX images").
std::string read_idx(const std::string& path, uint32_t magic, size_t header_bytes,
                     const char* what) {
  SB_CHECK(core::file_exists(path), "{} file '{}' not found ({})", what, path, kFetchHint);
  std::string bytes = core::read_file(path);
  // gzip starts 1f 8b: the downloads are .gz and are easily passed as they are.
  SB_CHECK(!(bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
             static_cast<unsigned char>(bytes[1]) == 0x8b),
           "{} file '{}' is gzip-compressed (hint: gunzip it; the loader reads raw IDX)", what,
           path);
  // The magic first: a labels file passed as images is a mix-up, not a truncated file.
  const uint32_t got = bytes.size() >= 4 ? read_be32(bytes, 0) : 0;
  SB_CHECK(bytes.size() < 4 || got == magic,
           "{} file '{}' has magic 0x{:08x}, expected 0x{:08x} (hint: images are *-idx3-ubyte "
           "(0x00000803), labels *-idx1-ubyte (0x00000801); check which file is passed)",
           what, path, got, magic);
  SB_CHECK(bytes.size() >= header_bytes,
           "{} file '{}' is truncated: {} bytes, shorter than its {}-byte header ({})", what,
           path, bytes.size(), header_bytes, kFetchHint);
  return bytes;
}

}  // namespace

IdxImages read_idx_images(const std::string& path) {
  constexpr size_t kHeader = 16;
  const std::string bytes = read_idx(path, kIdxImagesMagic, kHeader, "IDX images");
  const uint64_t count = read_be32(bytes, 4), rows = read_be32(bytes, 8),
                 cols = read_be32(bytes, 12);
  SB_CHECK(rows > 0 && cols > 0, "IDX images file '{}' has image size {}x{} ({})", path, rows,
           cols, kFetchHint);
  // rows * cols < 2^64 as both are < 2^32; compare count against the payload by division
  // so that a corrupt header cannot overflow the product.
  const uint64_t per_image = rows * cols, payload = bytes.size() - kHeader;
  const bool size_matches = count <= payload / per_image && count * per_image == payload;
  if (!size_matches) {
    const bool too_short = count > payload / per_image || count * per_image > payload;
    const std::string expected = count <= UINT64_MAX / per_image
                                     ? fmt::format("{}", count * per_image)
                                     : std::string("over 2^64");
    SB_CHECK(size_matches,
             "IDX images file '{}' is {}: {} bytes of pixels, the header says {} images of {}x{} "
             "({} bytes) ({})",
             path, too_short ? "truncated" : "longer than its header says", payload, count, rows,
             cols, expected, kFetchHint);
  }
  IdxImages out;
  out.count = int64_t(count);
  out.rows = int64_t(rows);
  out.cols = int64_t(cols);
  out.pixels.assign(bytes.begin() + kHeader, bytes.end());
  return out;
}

std::vector<uint8_t> read_idx_labels(const std::string& path) {
  constexpr size_t kHeader = 8;
  const std::string bytes = read_idx(path, kIdxLabelsMagic, kHeader, "IDX labels");
  const uint64_t count = read_be32(bytes, 4), payload = bytes.size() - kHeader;
  SB_CHECK(count == payload, "IDX labels file '{}' is {}: {} bytes of labels, the header says {} ({})",
           path, count > payload ? "truncated" : "longer than its header says", payload, count,
           kFetchHint);
  return std::vector<uint8_t>(bytes.begin() + kHeader, bytes.end());
}

namespace {

MnistSet load_split(const std::string& dir, const char* images_name, const char* labels_name) {
  const std::string images_path = dir + "/" + images_name, labels_path = dir + "/" + labels_name;
  MnistSet set;
  set.images = read_idx_images(images_path);
  set.labels = read_idx_labels(labels_path);
  SB_CHECK(int64_t(set.labels.size()) == set.images.count,
           "MNIST '{}' has {} images but '{}' has {} labels (hint: the files come from different "
           "splits or downloads; re-run tools/fetch_data mnist)",
           images_path, set.images.count, labels_path, set.labels.size());
  for (size_t i = 0; i < set.labels.size(); ++i)
    SB_CHECK(set.labels[i] < 10,
             "MNIST labels file '{}': label {} at index {} is not a digit 0..9 (hint: the file is "
             "corrupt or not MNIST; re-run tools/fetch_data mnist)",
             labels_path, int(set.labels[i]), i);
  return set;
}

}  // namespace

Mnist load_mnist(const std::string& dir) {
  SB_CHECK(core::file_exists(dir), "MNIST directory '{}' does not exist ({})", dir, kFetchHint);
  Mnist m;
  m.digest = check_files({dir + "/" + kMnistTrainImages, dir + "/" + kMnistTrainLabels,
                          dir + "/" + kMnistTestImages, dir + "/" + kMnistTestLabels});
  m.train = load_split(dir, kMnistTrainImages, kMnistTrainLabels);
  m.test = load_split(dir, kMnistTestImages, kMnistTestLabels);
  SB_CHECK(m.train.images.rows == m.test.images.rows && m.train.images.cols == m.test.images.cols,
           "MNIST in '{}': train images are {}x{} but test images are {}x{} (hint: the files "
           "come from different data sets)",
           dir, m.train.images.rows, m.train.images.cols, m.test.images.rows, m.test.images.cols);
  return m;
}

}  // namespace seqbench::data
