// Test .npz archives written by libzip, members stored or deflated. libzip writes only
// sound archives, so the one defect the tests need beyond cutting or overwriting bytes,
// a wrong CRC-32, is patched into the bytes afterwards.
#pragma once

#include <zip.h>
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

inline std::string zip_archive(const std::vector<ZipMember>& members) {
  const auto check = [](bool ok, const char* what) {
    if (!ok) throw std::runtime_error(std::string("zip_archive: ") + what + " failed");
  };
  zip_error_t err;
  zip_error_init(&err);
  zip_source_t* buf = zip_source_buffer_create(nullptr, 0, 0, &err);
  check(buf != nullptr, "zip_source_buffer_create");
  zip_source_keep(buf);  // the archive's bytes stay in it after zip_close
  zip_t* za = zip_open_from_source(buf, ZIP_TRUNCATE, &err);
  check(za != nullptr, "zip_open_from_source");
  for (const auto& m : members) {
    zip_source_t* src = zip_source_buffer(za, m.bytes.data(), m.bytes.size(), 0);
    const zip_int64_t i = src ? zip_file_add(za, m.name.c_str(), src, 0) : -1;
    check(i >= 0, "zip_file_add");
    check(zip_set_file_compression(za, uint64_t(i), m.deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) == 0 &&
              zip_file_set_mtime(za, uint64_t(i), 315532800, 0) == 0,  // 1980-01-01: same bytes each run
          "zip_set_file_compression");
  }
  check(zip_close(za) == 0, "zip_close");
  zip_stat_t st;
  check(zip_source_stat(buf, &st) == 0 && zip_source_open(buf) == 0, "reading the archive back");
  std::string out(size_t(st.size), '\0');
  check(zip_source_read(buf, out.data(), st.size) == zip_int64_t(st.size), "zip_source_read");
  zip_source_close(buf);
  zip_source_free(buf);
  // The CRC appears in the local header and in the central directory: change both.
  for (const auto& m : members) {
    if (!m.crc_xor) continue;
    std::string crc;
    put_le(crc, crc32(0L, reinterpret_cast<const Bytef*>(m.bytes.data()), uInt(m.bytes.size())), 4);
    int found = 0;
    for (size_t at = 0; (at = out.find(crc, at)) != std::string::npos; at += 4, ++found)
      for (int k = 0; k < 4; ++k) out[at + size_t(k)] ^= char((m.crc_xor >> (8 * k)) & 0xff);
    check(found == 2, "finding the CRC in both headers");
  }
  return out;
}

}  // namespace seqbench::testutil
