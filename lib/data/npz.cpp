#include "data/npz.hpp"

#include <fmt/format.h>
#include <unistd.h>
#include <zip.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "core/input_file.hpp"

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

// ---- .npz (zip, read by libzip) -------------------------------------------------------

namespace {

// Deflate expands at most 1032:1 (RFC 1951: no code shorter than 2 bits yields more
// than a 258-byte match), so a larger stated size is a corrupt directory.
constexpr uint64_t kMaxInflateRatio = 1032;
// Far above any array this suite reads (an ImageNet64 training batch is 1.6 GB); a
// stated size beyond it is refused before its buffer is allocated.
constexpr uint64_t kMaxMemberBytes = uint64_t(64) << 30;

struct ZipEntry {
  std::string name;
  uint64_t index = 0, comp = 0, size = 0;
  uint32_t crc = 0;
  uint16_t method = 0, encryption = 0;
};

std::string zip_message(int code) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  std::string msg = zip_error_strerror(&e);
  zip_error_fini(&e);
  return msg;
}

class ZipFile {
 public:
  explicit ZipFile(const std::string& path) : where_(fmt::format("npz '{}'", path)) {
    if (!core::file_exists(path)) fail(where_, "file not found");
    // A regular file only (a FIFO or a device is refused at once), opened once: libzip
    // reads the descriptor that was checked.
    int fd = -1;
    try {
      fd = core::open_input(path, core::kMaxDataFile, &size_);
    } catch (const core::Error& e) {
      fail(where_, e.what());
    }
    // No zip is shorter than its end record (libzip opens an empty file as an empty archive).
    if (size_ < 22) {
      ::close(fd);
      not_a_zip(path);
    }
    int code = 0;
    za_.reset(zip_fdopen(fd, 0, &code));
    if (!za_) {
      ::close(fd);
      if (code == ZIP_ER_NOZIP) not_a_zip(path);
      fail(where_, fmt::format("{} (libzip: {})",
                               code == ZIP_ER_INCONS ? "corrupt archive" : "cannot be read",
                               zip_message(code)));
    }
    const zip_int64_t n = zip_get_num_entries(za_.get(), 0);
    for (zip_int64_t i = 0; i < n; ++i) {
      zip_stat_t st;
      constexpr uint64_t kNeed = ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_CRC |
                                 ZIP_STAT_COMP_METHOD | ZIP_STAT_ENCRYPTION_METHOD;
      if (zip_stat_index(za_.get(), uint64_t(i), ZIP_FL_ENC_RAW, &st) != 0 || (st.valid & kNeed) != kNeed)
        fail(where_, fmt::format("corrupt archive: entry {} of the central directory is unreadable", i));
      entries_.push_back({st.name, uint64_t(i), st.comp_size, st.size, st.crc, st.comp_method,
                          st.encryption_method});
    }
  }

  const std::vector<ZipEntry>& entries() const { return entries_; }
  const std::string& where() const { return where_; }

  std::string extract(const ZipEntry& e) {
    const std::string where = fmt::format("{} member '{}'", where_, e.name);
    if (e.encryption != ZIP_EM_NONE)
      fail(where, "is encrypted (hint: numpy never encrypts; re-save the archive)");
    if (e.method != ZIP_CM_STORE && e.method != ZIP_CM_DEFLATE)
      fail(where, fmt::format("unsupported compression method {} (hint: stored (0) and deflated "
                              "(8) are read, as np.savez / np.savez_compressed write them)",
                              e.method));
    // The directory's sizes are checked against the file before the buffer is allocated.
    if (e.comp > size_)
      fail(where, fmt::format("truncated: {} compressed bytes, more than the whole file ({} bytes)",
                              e.comp, size_));
    if (e.method == ZIP_CM_STORE && e.comp != e.size)
      fail(where, fmt::format("corrupt archive: stored member of {} bytes has {} compressed",
                              e.size, e.comp));
    if (e.size / kMaxInflateRatio > e.comp + 1)
      fail(where, fmt::format("corrupt archive: {} bytes cannot inflate from {} compressed bytes",
                              e.size, e.comp));
    if (e.size > kMaxMemberBytes)
      fail(where, fmt::format("{} bytes uncompressed, more than the {} GiB this reader accepts",
                              e.size, kMaxMemberBytes >> 30));
    const std::unique_ptr<zip_file_t, int (*)(zip_file_t*)> f(
        zip_fopen_index(za_.get(), e.index, 0), zip_fclose);
    if (!f) fail(where, read_error(zip_get_error(za_.get()), e));
    std::string out(size_t(e.size), '\0');
    uint64_t got = 0;
    zip_int64_t n = 1;
    while (got < e.size && n > 0) {
      n = zip_fread(f.get(), out.data() + got, e.size - got);
      if (n > 0) got += uint64_t(n);
    }
    // One more read meets the end of the data, where libzip compares size and CRC-32.
    char more = 0;
    if (n > 0) n = zip_fread(f.get(), &more, 1);
    if (n < 0) fail(where, read_error(zip_file_get_error(f.get()), e));
    if (got < e.size || n > 0)
      fail(where, fmt::format("corrupt archive: the data {} the {} bytes the directory states",
                              n > 0 ? "runs past" : "ends before", e.size));
    return out;
  }

 private:
  // A file libzip found no end record in: cut short when it starts like a zip.
  [[noreturn]] void not_a_zip(const std::string& path) const {
    char head[4] = {};
    try {
      const int fd = core::open_input(path, core::kMaxDataFile, nullptr);
      if (::pread(fd, head, sizeof head, 0) < 0) head[0] = 0;
      ::close(fd);
    } catch (const core::Error&) {
    }
    if (std::memcmp(head, "PK\x03\x04", 4) == 0)
      fail(where_, fmt::format("truncated: {} bytes and no end of central directory (the "
                               "download was cut short?)", size_));
    fail(where_, "bad magic: not a zip archive (.npz)");
  }

  static std::string read_error(zip_error_t* err, const ZipEntry& e) {
    const std::string msg = zip_error_strerror(err);
    switch (zip_error_code_zip(err)) {
      case ZIP_ER_CRC:
        return fmt::format("CRC mismatch: the data does not have the CRC-32 {:08x} the archive "
                           "states (the file is corrupt; fetch it again)", e.crc);
      case ZIP_ER_ZLIB:
      case ZIP_ER_COMPRESSED_DATA:
        return fmt::format("corrupt deflate stream (libzip: {})", msg);
      case ZIP_ER_EOF:
        return fmt::format("truncated: the member's data lies past the end (libzip: {})", msg);
      case ZIP_ER_INCONS:
        return fmt::format("corrupt archive (libzip: {})", msg);
      default:
        return fmt::format("cannot be read (libzip: {})", msg);
    }
  }

  std::string where_;
  uint64_t size_ = 0;
  std::unique_ptr<zip_t, void (*)(zip_t*)> za_{nullptr, zip_discard};
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

uint64_t npz_inflated_bytes(const std::string& path) {
  ZipFile z(path);
  uint64_t total = 0;
  for (const auto& e : z.entries()) total += e.size;
  return total;
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
