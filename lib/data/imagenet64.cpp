#include "data/imagenet64.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "data/npz.hpp"

namespace seqbench::data {

ImageSet ImageSet::slice(int64_t from, int64_t n) const {
  SB_CHECK(from >= 0 && n >= 0 && from + n <= count, "image slice [{}, {}) of a set of {}", from,
           from + n, count);
  ImageSet s;
  s.count = n;
  s.side = side;
  s.channels = channels;
  const int64_t p = tokens_per_image();
  s.tokens.assign(tokens.begin() + from * p, tokens.begin() + (from + n) * p);
  if (!labels.empty()) s.labels.assign(labels.begin() + from, labels.begin() + from + n);
  s.digest = digest;
  return s;
}

void planar_to_interleaved(const uint8_t* src, int64_t n, int64_t side, int64_t channels,
                           uint8_t* dst) {
  const int64_t plane = side * side, per = plane * channels;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t p = 0; p < plane; ++p) dst[i * per + p * channels + c] = src[i * per + c * plane + p];
}

std::string imagenet_file(const std::string& dir, const std::string& stem) {
  for (const std::string& name : {stem + ".npz", stem})
    if (core::file_exists(dir + "/" + name)) return dir + "/" + name;
  return {};
}

ImageSet read_imagenet_npz(const std::string& path, int64_t side, int64_t max_images) {
  const DataDigest digest = check_files({path});
  const NpyArray data = read_npz_member(path, "data");
  const int64_t per = 3 * side * side;
  SB_CHECK(data.descr == "|u1" && data.shape.size() == 2 && data.shape[1] == per,
           "ImageNet npz '{}': 'data' is {} of shape ({}), expected |u1 (N, {}) for {}x{} RGB "
           "images (hint: set data.image_side to the files' side, 64 or 32)",
           path, data.descr, fmt::join(data.shape, ", "), per, side, side);
  const NpyArray labels = read_npz_member(path, "labels");
  SB_CHECK(labels.shape.size() == 1 && labels.shape[0] == data.shape[0],
           "ImageNet npz '{}': 'labels' has shape ({}), expected ({}) like 'data' (hint: the "
           "file is corrupt or not a Downsampled ImageNet batch)",
           path, fmt::join(labels.shape, ", "), data.shape[0]);
  const int64_t n = max_images > 0 ? std::min(max_images, data.shape[0]) : data.shape[0];
  ImageSet s;
  s.count = n;
  s.side = side;
  s.channels = 3;
  s.tokens.resize(size_t(n * per));
  planar_to_interleaved(data.u8(), n, side, 3, s.tokens.data());
  s.labels = labels.as_int64(fmt::format("ImageNet npz '{}' member 'labels'", path));
  s.labels.resize(size_t(n));
  s.digest = digest;
  return s;
}

namespace {
constexpr const char* kImagenetHint =
    "hint: put train_data_batch_1.npz ... train_data_batch_10.npz and val_data.npz of "
    "Downsampled ImageNet there, see docs/experiments/imagenet64.md";

void append(ImageSet& all, const ImageSet& s) {
  if (all.count == 0) {
    all = s;
    return;
  }
  all.digest.merge(s.digest);
  all.tokens.insert(all.tokens.end(), s.tokens.begin(), s.tokens.end());
  all.labels.insert(all.labels.end(), s.labels.begin(), s.labels.end());
  all.count += s.count;
}
}  // namespace

ImageSet load_imagenet_train(const std::string& dir, int64_t side, int64_t max_images) {
  ImageSet all;
  for (int k = 1; k <= 10 && (max_images <= 0 || all.count < max_images); ++k) {
    const std::string path = imagenet_file(dir, fmt::format("train_data_batch_{}", k));
    if (path.empty()) {
      SB_CHECK(k > 1, "ImageNet directory '{}' has no train_data_batch_1.npz ({})", dir,
               kImagenetHint);
      break;
    }
    append(all, read_imagenet_npz(path, side, max_images > 0 ? max_images - all.count : 0));
  }
  return all;
}

ImageSet load_imagenet_val(const std::string& dir, int64_t side, int64_t max_images) {
  const std::string path = imagenet_file(dir, "val_data");
  SB_CHECK(!path.empty(), "ImageNet directory '{}' has no val_data.npz ({})", dir, kImagenetHint);
  return read_imagenet_npz(path, side, max_images);
}

ImageSet from_idx(const MnistSet& set) {
  SB_CHECK(set.images.rows == set.images.cols, "IDX images are {}x{}, expected square images",
           set.images.rows, set.images.cols);
  ImageSet s;
  s.count = set.images.count;
  s.side = set.images.rows;
  s.channels = 1;
  s.tokens = set.images.pixels;
  s.labels.assign(set.labels.begin(), set.labels.end());
  return s;
}

}  // namespace seqbench::data
