// Images as sequences of 8-bit tokens for pixel-level autoregressive models (the Image
// Transformer's and the Routing Transformer's ImageNet64 experiment).
//
// Token order: raster order over pixels (row by row, left to right) with the channels of
// each pixel interleaved: r, g, b of pixel (0, 0), then r, g, b of pixel (0, 1), ...
// An image of side S with C channels is S*S*C tokens, each a subpixel value 0..255.
//
// Downsampled ImageNet (Chrabaszcz et al. 2017), 64x64 (or 32x32) variant, npz batches:
//   train_data_batch_1.npz ... train_data_batch_10.npz, val_data.npz (the ".npz" may be
//   missing from the names); members 'data' uint8 (N, 3 S S) channel-planar (the R plane
//   S x S, then G, then B) and 'labels' integers (N) (1..1000 in the release; kept as
//   they are). The planar rows are turned into the interleaved token order on loading.
// IDX images (MNIST, Fashion-MNIST, lib/data/mnist.hpp) are one channel: row-major pixels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/mnist.hpp"

namespace seqbench::data {

struct ImageSet {
  int64_t count = 0, side = 0, channels = 0;
  std::vector<uint8_t> tokens;  // (count, side side channels), the token order above
  std::vector<int64_t> labels;  // (count)
  DataDigest digest;            // the files read, checked against their SHA256SUMS

  int64_t tokens_per_image() const { return side * side * channels; }
  const uint8_t* image(int64_t i) const { return tokens.data() + i * tokens_per_image(); }
  // Images [from, from + n) as a set of their own.
  ImageSet slice(int64_t from, int64_t n) const;
};

// src (n, C, S, S) planar -> dst (n, S, S, C) interleaved.
void planar_to_interleaved(const uint8_t* src, int64_t n, int64_t side, int64_t channels,
                           uint8_t* dst);

// One ImageNet npz batch: 'data' must be uint8 (N, 3 side side); 'labels' (N) integers.
// max_images > 0 keeps the first max_images. Throws core::Error naming the file.
ImageSet read_imagenet_npz(const std::string& path, int64_t side, int64_t max_images = 0);

// The training batches in order 1, 2, ..., 10 (stopping at the first missing one, at
// least batch 1 must exist) until max_images are read (0 = all).
ImageSet load_imagenet_train(const std::string& dir, int64_t side, int64_t max_images = 0);
// val_data.npz.
ImageSet load_imagenet_val(const std::string& dir, int64_t side, int64_t max_images = 0);
// The path of batch k (1-based) or of "val_data" in dir, with or without ".npz"; empty
// when neither exists.
std::string imagenet_file(const std::string& dir, const std::string& stem);

// One channel images from an MNIST-style split.
ImageSet from_idx(const MnistSet& set);

}  // namespace seqbench::data
