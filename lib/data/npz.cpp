#include "data/npz.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "core/check.hpp"
#include "core/fs.hpp"

namespace seqbench::data {

namespace {

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw core::Error(fmt::format("{}: {}", where, what));
}

uint64_t le(const std::string& b, size_t at, int n) {
  uint64_t v = 0;
  for (int k = n - 1; k >= 0; --k) v = (v << 8) | static_cast<unsigned char>(b[at + size_t(k)]);
  return v;
}

// ---- .npy header ---------------------------------------------------------------------

// The value after `'key':` in the header dict, with leading blanks skipped; npos when the
// key is absent.
size_t dict_value(const std::string& h, const char* key) {
  for (const char q : {'\'', '"'}) {
    const std::string k = std::string(1, q) + key + q;
    size_t at = h.find(k);
    if (at == std::string::npos) continue;
    at = h.find(':', at + k.size());
    if (at == std::string::npos) return at;
    ++at;
    while (at < h.size() && (h[at] == ' ' || h[at] == '\t')) ++at;
    return at;
  }
  return std::string::npos;
}

const char* const kDtypes[] = {"u1", "i1", "b1", "u2", "i2", "u4", "i4", "u8", "i8", "f4", "f8"};

void check_descr(std::string& descr, const std::string& where) {
  const char* hint = "(hint: supported dtypes are |u1 |i1 |b1 <u2 <i2 <u4 <i4 <u8 <i8 <f4 <f8)";
  if (descr.size() != 3) fail(where, fmt::format("unsupported dtype '{}' {}", descr, hint));
  if (descr[0] == '>' && descr[2] != '1')
    fail(where, fmt::format("big-endian dtype '{}' is not supported (hint: save it with "
                            "arr.astype(arr.dtype.newbyteorder('<')))", descr));
  if (descr[0] == '=' || descr[0] == '>' || (descr[0] == '<' && descr[2] == '1'))
    descr[0] = descr[2] == '1' ? '|' : '<';  // native order on a little-endian machine
  const std::string tail = descr.substr(1);
  const bool known = std::any_of(std::begin(kDtypes), std::end(kDtypes),
                                 [&](const char* d) { return tail == d; });
  if (!known || (descr[0] != '<' && descr[0] != '|') || (descr[0] == '|' && descr[2] != '1'))
    fail(where, fmt::format("unsupported dtype '{}' {}", descr, hint));
}

}  // namespace

int64_t NpyArray::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t NpyArray::word_bytes() const { return descr.size() == 3 ? descr[2] - '0' : 0; }

std::vector<int64_t> NpyArray::as_int64(const std::string& what) const {
  SB_CHECK(kind() != 'f', "{} has float dtype '{}', expected integers (hint: check which array "
                          "is passed)", what, descr);
  const int64_t n = numel(), w = word_bytes();
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t u = le(bytes, size_t(i * w), int(w));
    if (kind() == 'i' && w < 8) {
      const uint64_t sign = uint64_t(1) << (8 * w - 1);
      out[size_t(i)] = int64_t((u ^ sign) - sign);  // sign-extend
    } else {
      out[size_t(i)] = int64_t(u);
    }
  }
  return out;
}

std::vector<double> NpyArray::as_double() const {
  const int64_t n = numel();
  std::vector<double> out(static_cast<size_t>(n));
  if (descr == "<f4") {
    for (int64_t i = 0; i < n; ++i) {
      float f;
      std::memcpy(&f, bytes.data() + i * 4, 4);
      out[size_t(i)] = f;
    }
  } else if (descr == "<f8") {
    std::memcpy(out.data(), bytes.data(), size_t(n) * 8);
  } else {
    const auto ints = as_int64();
    for (int64_t i = 0; i < n; ++i)
      out[size_t(i)] = kind() == 'u' ? double(uint64_t(ints[size_t(i)])) : double(ints[size_t(i)]);
  }
  return out;
}

NpyArray parse_npy(std::string b, const std::string& where) {
  static const char kMagic[] = "\x93NUMPY";
  if (b.size() < 6 || std::memcmp(b.data(), kMagic, 6) != 0)
    fail(where, "bad magic: not an .npy array (expected \\x93NUMPY at the start)");
  if (b.size() < 10) fail(where, fmt::format("truncated: {} bytes, shorter than the .npy preamble", b.size()));
  const int major = static_cast<unsigned char>(b[6]);
  if (major < 1 || major > 3)
    fail(where, fmt::format("unsupported .npy format version {}.{} (hint: 1.0, 2.0 and 3.0 are read)",
                            major, int(static_cast<unsigned char>(b[7]))));
  const size_t len_bytes = major == 1 ? 2 : 4;
  if (b.size() < 8 + len_bytes) fail(where, "truncated: the .npy header length is cut short");
  const uint64_t hlen = le(b, 8, int(len_bytes));
  const uint64_t start = 8 + len_bytes + hlen;
  if (b.size() < start)
    fail(where, fmt::format("truncated: {} bytes, shorter than the {}-byte .npy header", b.size(), start));
  const std::string h = b.substr(8 + len_bytes, size_t(hlen));

  NpyArray a;
  size_t at = dict_value(h, "descr");
  if (at == std::string::npos || at >= h.size())
    fail(where, "corrupt .npy header: no 'descr' key");
  if (h[at] != '\'' && h[at] != '"')
    fail(where, "unsupported dtype: structured arrays are not read (hint: save plain arrays)");
  const size_t end = h.find(h[at], at + 1);
  if (end == std::string::npos) fail(where, "corrupt .npy header: unterminated 'descr'");
  a.descr = h.substr(at + 1, end - at - 1);
  check_descr(a.descr, where);

  at = dict_value(h, "fortran_order");
  if (at == std::string::npos) fail(where, "corrupt .npy header: no 'fortran_order' key");
  if (h.compare(at, 4, "True") == 0)
    fail(where, "fortran_order True is not supported (hint: save np.ascontiguousarray(arr))");
  if (h.compare(at, 5, "False") != 0) fail(where, "corrupt .npy header: bad 'fortran_order'");

  at = dict_value(h, "shape");
  if (at == std::string::npos || at >= h.size() || h[at] != '(')
    fail(where, "corrupt .npy header: no 'shape' tuple");
  const size_t close = h.find(')', at);
  if (close == std::string::npos) fail(where, "corrupt .npy header: unterminated 'shape'");
  const std::string tuple = h.substr(at + 1, close - at - 1);
  size_t p = 0;
  while (p < tuple.size()) {
    while (p < tuple.size() && (tuple[p] == ' ' || tuple[p] == ',')) ++p;
    if (p >= tuple.size()) break;
    if (tuple[p] < '0' || tuple[p] > '9')
      fail(where, fmt::format("corrupt .npy header: bad shape '({})'", tuple));
    int64_t d = 0;
    while (p < tuple.size() && tuple[p] >= '0' && tuple[p] <= '9') {
      if (d > (int64_t(1) << 50)) fail(where, fmt::format("corrupt .npy header: shape '({})' too large", tuple));
      d = d * 10 + (tuple[p++] - '0');
    }
    a.shape.push_back(d);
  }
  // Counted in long double so that a corrupt shape cannot overflow before the check.
  long double need = (long double)a.word_bytes();
  for (int64_t d : a.shape) need *= (long double)d;
  const uint64_t have = b.size() - start;
  if (need > (long double)have)
    fail(where, fmt::format("truncated: {} bytes of data, shape ({}) of {} needs {:.0f}", have,
                            tuple, a.descr, double(need)));
  if (need < (long double)have)
    fail(where, fmt::format("{} bytes of data, more than shape ({}) of {} holds ({:.0f})", have,
                            tuple, a.descr, double(need)));
  b.erase(0, size_t(start));  // in place: large arrays are not copied
  a.bytes = std::move(b);
  return a;
}

NpyArray read_npy(const std::string& path) {
  if (!core::file_exists(path)) fail(fmt::format("'{}'", path), "file not found");
  return parse_npy(core::read_file(path), fmt::format("'{}'", path));
}

std::string make_npy(const std::string& descr, const std::vector<int64_t>& shape,
                     const std::string& bytes) {
  std::string tuple;
  for (int64_t d : shape) tuple += fmt::format("{}, ", d);
  if (shape.size() > 1) tuple.resize(tuple.size() - 2);
  else if (shape.size() == 1) tuple.pop_back();
  std::string h = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, tuple);
  // numpy pads the preamble + header to a multiple of 64 bytes, ending in '\n'.
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += char(h.size() & 0xff);
  out += char(h.size() >> 8);
  return out + h + bytes;
}

// ---- .npz (zip) ------------------------------------------------------------------------

namespace {

struct ZipEntry {
  std::string name;
  uint16_t flags = 0, method = 0;
  uint32_t crc = 0;
  uint64_t comp = 0, size = 0, offset = 0;
};

class ZipFile {
 public:
  explicit ZipFile(const std::string& path) : path_(path), where_(fmt::format("npz '{}'", path)) {
    if (!core::file_exists(path)) fail(where_, "file not found");
    f_.open(path, std::ios::binary);
    if (!f_) fail(where_, "cannot be opened");
    f_.seekg(0, std::ios::end);
    size_ = uint64_t(f_.tellg());
    read_directory();
  }

  const std::vector<ZipEntry>& entries() const { return entries_; }
  const std::string& where() const { return where_; }

  std::string read_at(uint64_t at, uint64_t n, const char* what) {
    if (at > size_ || n > size_ - at)
      fail(where_, fmt::format("truncated: {} at byte {} (+{}) lies past the end ({} bytes)", what,
                               at, n, size_));
    std::string out(size_t(n), '\0');
    f_.clear();
    f_.seekg(std::streamoff(at));
    f_.read(out.data(), std::streamsize(n));
    if (!f_) fail(where_, fmt::format("read error at byte {}", at));
    return out;
  }

  std::string extract(const ZipEntry& e) {
    const std::string where = fmt::format("{} member '{}'", where_, e.name);
    if (e.flags & 1) fail(where, "is encrypted (hint: numpy never encrypts; re-save the archive)");
    const std::string lh = read_at(e.offset, 30, "a local file header");
    if (le(lh, 0, 4) != 0x04034b50) fail(where, "corrupt archive: bad local header signature");
    const uint64_t data_at = e.offset + 30 + le(lh, 26, 2) + le(lh, 28, 2);
    std::string out;
    if (e.method == 0) {
      if (e.comp != e.size)
        fail(where, fmt::format("corrupt archive: stored member of {} bytes has {} compressed",
                                e.size, e.comp));
      out = read_at(data_at, e.size, "the member's data");
    } else if (e.method == 8) {
      out = inflate_member(e, data_at, where);
    } else {
      fail(where, fmt::format("unsupported compression method {} (hint: stored (0) and deflated "
                              "(8) are read, as np.savez / np.savez_compressed write them)",
                              e.method));
    }
    uLong crc = crc32_z(0L, Z_NULL, 0);
    crc = crc32_z(crc, reinterpret_cast<const Bytef*>(out.data()), out.size());
    if (uint32_t(crc) != e.crc)
      fail(where, fmt::format("CRC mismatch: the data has CRC-32 {:08x}, the archive says {:08x} "
                              "(the file is corrupt; fetch it again)", uint32_t(crc), e.crc));
    return out;
  }

 private:
  std::string inflate_member(const ZipEntry& e, uint64_t data_at, const std::string& where) {
    if (data_at > size_ || e.comp > size_ - data_at)
      fail(where, fmt::format("truncated: {} compressed bytes at byte {} lie past the end ({} bytes)",
                              e.comp, data_at, size_));
    // Deflate expands at most 1032:1 (RFC 1951's longest match per 258-byte code), so a
    // larger size is a corrupt directory, refused before its buffer is allocated.
    if (e.size / 1032 > e.comp + 1)
      fail(where, fmt::format("corrupt archive: {} bytes cannot inflate from {} compressed bytes",
                              e.size, e.comp));
    std::string out(size_t(e.size), '\0');
    z_stream zs{};
    if (inflateInit2(&zs, -15) != Z_OK) fail(where, "zlib inflateInit2 failed");
    constexpr uint64_t kChunk = uint64_t(1) << 20;
    std::string in;
    uint64_t fed = 0, produced = 0;
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
      if (zs.avail_in == 0) {
        if (fed == e.comp) break;  // input used up before the end of the stream
        const uint64_t n = std::min(kChunk, e.comp - fed);
        in = read_at(data_at + fed, n, "compressed data");
        fed += n;
        zs.next_in = reinterpret_cast<Bytef*>(in.data());
        zs.avail_in = uInt(n);
      }
      const uint64_t room = std::min<uint64_t>(e.size - produced, uint64_t(1) << 30);
      zs.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
      zs.avail_out = uInt(room);
      rc = inflate(&zs, Z_NO_FLUSH);
      produced += room - zs.avail_out;
      if (rc == Z_BUF_ERROR && room == 0) break;  // more output than the archive says
      if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
        const std::string msg = zs.msg ? zs.msg : "error " + std::to_string(rc);
        inflateEnd(&zs);
        fail(where, fmt::format("corrupt deflate stream (zlib: {})", msg));
      }
    }
    inflateEnd(&zs);
    if (rc != Z_STREAM_END)
      fail(where, fmt::format("corrupt deflate stream: it ends early or runs past {} bytes", e.size));
    if (produced != e.size)
      fail(where, fmt::format("corrupt deflate stream: {} bytes, the archive says {}", produced, e.size));
    return out;
  }

  void read_directory() {
    if (size_ < 22) {
      const std::string head = read_at(0, size_, "the file");
      if (head.size() >= 4 && le(head, 0, 4) == 0x04034b50)
        fail(where_, fmt::format("truncated: {} bytes, no end of central directory", size_));
      fail(where_, "bad magic: not a zip archive (.npz)");
    }
    const uint64_t tail_n = std::min<uint64_t>(size_, 22 + 65535 + 20);
    const std::string tail = read_at(size_ - tail_n, tail_n, "the archive's end");
    size_t eocd = std::string::npos;
    for (size_t i = tail.size() - 22 + 1; i-- > 0;)
      if (le(tail, i, 4) == 0x06054b50) {
        eocd = i;
        break;
      }
    if (eocd == std::string::npos) {
      const std::string head = read_at(0, 4, "the first bytes");
      if (le(head, 0, 4) == 0x04034b50)
        fail(where_, "truncated: no end of central directory (the download was cut short?)");
      fail(where_, "bad magic: not a zip archive (.npz)");
    }
    uint64_t count = le(tail, eocd + 10, 2), cd_size = le(tail, eocd + 12, 4),
             cd_at = le(tail, eocd + 16, 4);
    if ((count == 0xffff || cd_size == 0xffffffff || cd_at == 0xffffffff) && eocd >= 20 &&
        le(tail, eocd - 20, 4) == 0x07064b50) {
      const uint64_t z64_at = le(tail, eocd - 20 + 8, 8);
      const std::string z = read_at(z64_at, 56, "the zip64 end of central directory");
      if (le(z, 0, 4) != 0x06064b50) fail(where_, "corrupt archive: bad zip64 end record");
      count = le(z, 32, 8);
      cd_size = le(z, 40, 8);
      cd_at = le(z, 48, 8);
    }
    const std::string cd = read_at(cd_at, cd_size, "the central directory");
    size_t p = 0;
    for (uint64_t i = 0; i < count; ++i) {
      if (p + 46 > cd.size() || le(cd, p, 4) != 0x02014b50)
        fail(where_, "corrupt archive: bad central directory entry");
      ZipEntry e;
      e.flags = uint16_t(le(cd, p + 8, 2));
      e.method = uint16_t(le(cd, p + 10, 2));
      e.crc = uint32_t(le(cd, p + 16, 4));
      e.comp = le(cd, p + 20, 4);
      e.size = le(cd, p + 24, 4);
      const size_t name_n = le(cd, p + 28, 2), extra_n = le(cd, p + 30, 2),
                   comment_n = le(cd, p + 32, 2);
      e.offset = le(cd, p + 42, 4);
      if (p + 46 + name_n + extra_n + comment_n > cd.size())
        fail(where_, "corrupt archive: central directory entry runs past its end");
      e.name = cd.substr(p + 46, name_n);
      // Zip64 extra field: the 64-bit values of the fields saturated at 0xffffffff, in order.
      size_t x = p + 46 + name_n;
      const size_t x_end = x + extra_n;
      while (x + 4 <= x_end) {
        const uint64_t id = le(cd, x, 2), n = le(cd, x + 2, 2);
        if (id == 1) {
          size_t v = x + 4;
          for (uint64_t* field : {&e.size, &e.comp, &e.offset})
            if (*field == 0xffffffff && v + 8 <= x + 4 + n && v + 8 <= x_end) {
              *field = le(cd, v, 8);
              v += 8;
            }
        }
        x += 4 + n;
      }
      entries_.push_back(std::move(e));
      p += 46 + name_n + extra_n + comment_n;
    }
  }

  std::string path_, where_;
  std::ifstream f_;
  uint64_t size_ = 0;
  std::vector<ZipEntry> entries_;
};

std::string key_of(const std::string& stored) {
  return stored.size() > 4 && stored.compare(stored.size() - 4, 4, ".npy") == 0
             ? stored.substr(0, stored.size() - 4)
             : stored;
}

}  // namespace

std::vector<std::string> npz_members(const std::string& path) {
  ZipFile z(path);
  std::vector<std::string> names;
  for (const auto& e : z.entries()) names.push_back(e.name);
  return names;
}

NpyArray read_npz_member(const std::string& path, const std::string& name) {
  ZipFile z(path);
  std::string have;
  for (const auto& e : z.entries()) {
    if (e.name == name || e.name == name + ".npy")
      return parse_npy(z.extract(e), fmt::format("{} member '{}'", z.where(), e.name));
    have += (have.empty() ? "" : ", ") + key_of(e.name);
  }
  fail(z.where(), fmt::format("missing member '{}' (has: {})", name, have.empty() ? "none" : have));
}

std::map<std::string, NpyArray> read_npz(const std::string& path) {
  ZipFile z(path);
  std::map<std::string, NpyArray> out;
  for (const auto& e : z.entries())
    out[key_of(e.name)] = parse_npy(z.extract(e), fmt::format("{} member '{}'", z.where(), e.name));
  return out;
}

}  // namespace seqbench::data
