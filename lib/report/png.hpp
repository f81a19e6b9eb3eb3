// 8-bit RGB PNG files through libpng (deflate-compressed). For small figures rendered by
// the suite itself (MiniGrid frames); gnuplot draws the plots.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace seqbench::report {

// rgb (height, width, 3) row-major -> the bytes of a PNG file.
std::vector<uint8_t> encode_png(int width, int height, const std::vector<uint8_t>& rgb);
// Writes encode_png's bytes to path atomically (core::write_file_atomic).
void write_png(const std::string& path, int width, int height, const std::vector<uint8_t>& rgb);

}  // namespace seqbench::report
