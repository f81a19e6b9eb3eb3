#include "report/png.hpp"

#include <png.h>

#include <string_view>

#include "core/check.hpp"
#include "core/fs.hpp"

namespace seqbench::report {

std::vector<uint8_t> encode_png(int width, int height, const std::vector<uint8_t>& rgb) {
  SB_CHECK(width > 0 && height > 0 && rgb.size() == size_t(width) * size_t(height) * 3,
           "encode_png: {} bytes for a {}x{} RGB image (expected {})", rgb.size(), width, height,
           size_t(width) * size_t(height) * 3);
  // libpng's simplified API encodes into memory and reports errors in image.message,
  // with no setjmp on our side.
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = png_uint_32(width);
  image.height = png_uint_32(height);
  image.format = PNG_FORMAT_RGB;
  png_alloc_size_t size = PNG_IMAGE_PNG_SIZE_MAX(image);  // enough for any encoding
  std::vector<uint8_t> out(size);
  const int ok = png_image_write_to_memory(&image, out.data(), &size, 0, rgb.data(), 0, nullptr);
  SB_CHECK(ok, "encode_png: libpng could not encode a {}x{} RGB image: {}", width, height,
           image.message);
  out.resize(size);
  return out;
}

void write_png(const std::string& path, int width, int height, const std::vector<uint8_t>& rgb) {
  const std::vector<uint8_t> png = encode_png(width, height, rgb);
  core::write_file_atomic(path,
                          std::string_view(reinterpret_cast<const char*>(png.data()), png.size()));
}

}  // namespace seqbench::report
