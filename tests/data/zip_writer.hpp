// A minimal zip writer for tests: builds .npz archives byte by byte (local headers, the
// central directory, the end record), members stored or deflated with zlib (raw deflate),
// so the npz reader is tested against archives whose every byte the test controls.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace seqbench::testutil {

struct ZipMember {
  std::string name;   // stored name, e.g. "data.npy"
  std::string bytes;  // uncompressed content
  bool deflate = false;
  uint32_t crc_xor = 0;  // != 0 corrupts the stored CRC (both headers)
};

inline void put_le(std::string& out, uint64_t v, int n) {
  for (int k = 0; k < n; ++k) out.push_back(char((v >> (8 * k)) & 0xff));
}

inline std::string raw_deflate(const std::string& src) {
  z_stream zs{};
  if (deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2 failed");
  std::string out(deflateBound(&zs, uLong(src.size())), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(src.data()));
  zs.avail_in = uInt(src.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = uInt(out.size());
  const int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) throw std::runtime_error("deflate did not finish");
  return out;
}

inline std::string zip_archive(const std::vector<ZipMember>& members) {
  std::string out, cd;
  for (const auto& m : members) {
    const std::string data = m.deflate ? raw_deflate(m.bytes) : m.bytes;
    const uint32_t crc =
        uint32_t(crc32(0L, reinterpret_cast<const Bytef*>(m.bytes.data()), uInt(m.bytes.size()))) ^
        m.crc_xor;
    const uint64_t offset = out.size();
    const auto common = [&](std::string& h) {
      put_le(h, 20, 2);                    // version needed
      put_le(h, 0, 2);                     // flags
      put_le(h, m.deflate ? 8 : 0, 2);     // method
      put_le(h, 0, 2);                     // time
      put_le(h, 0x21, 2);                  // date (1980-01-01)
      put_le(h, crc, 4);
      put_le(h, data.size(), 4);
      put_le(h, m.bytes.size(), 4);
      put_le(h, m.name.size(), 2);
      put_le(h, 0, 2);                     // extra
    };
    put_le(out, 0x04034b50, 4);
    common(out);
    out += m.name + data;
    put_le(cd, 0x02014b50, 4);
    put_le(cd, 20, 2);  // version made by
    common(cd);
    put_le(cd, 0, 2);   // comment
    put_le(cd, 0, 2);   // disk
    put_le(cd, 0, 2);   // internal attributes
    put_le(cd, 0, 4);   // external attributes
    put_le(cd, offset, 4);
    cd += m.name;
  }
  const uint64_t cd_at = out.size();
  out += cd;
  put_le(out, 0x06054b50, 4);
  put_le(out, 0, 2);
  put_le(out, 0, 2);
  put_le(out, members.size(), 2);
  put_le(out, members.size(), 2);
  put_le(out, cd.size(), 4);
  put_le(out, cd_at, 4);
  put_le(out, 0, 2);
  return out;
}

}  // namespace seqbench::testutil
