#include "train/checkpoint.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <set>
#include <string_view>
#include <system_error>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "data/checksum.hpp"

namespace seqbench::train {
namespace {

// The data section is the in-memory float layout written verbatim; a big-endian port
// would need a byte swap here and in load.
static_assert(std::endian::native == std::endian::little,
              "checkpoint I/O assumes a little-endian host");
static_assert(sizeof(float) == 4);

constexpr char kMagic[8] = {'S', 'E', 'Q', 'B', 'C', 'K', 'P', 'T'};
constexpr uint32_t kVersion = 1;
constexpr size_t kPreamble = 16;  // magic + version + header length
constexpr size_t kAlign = 64;     // data section alignment (lets readers mmap it)
constexpr uint32_t kMaxHeader = 1u << 30;

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

uint32_t get_u32(const unsigned char* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw core::Error(fmt::format("checkpoint '{}': {}", path, what));
}

// Reads exactly n bytes at offset; returns how many were available.
size_t pread_full(int fd, void* dst, size_t n, off_t offset, const std::string& path) {
  size_t got = 0;
  auto* p = static_cast<char*>(dst);
  while (got < n) {
    ssize_t r = ::pread(fd, p + got, n - got, offset + static_cast<off_t>(got));
    if (r < 0) {
      if (errno == EINTR) continue;
      fail(path, fmt::format("read error: {}",
                             std::error_code(errno, std::generic_category()).message()));
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

// JSON string literal. Escapes DEL and control characters too, because the header is read
// back as YAML, which does not allow them raw. (report/ has the same helper, but train/
// sits below report/ in the dependency order.)
std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\u{:04x}", c);
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

struct Fd {
  int fd;
  ~Fd() { ::close(fd); }
};

}  // namespace

namespace {
// What the header's "sha256" covers: every meta entry and every array (name, shape and
// values), so a flipped bit anywhere in them is caught on load.
std::string content_sha256(const Checkpoint& ck) {
  data::Sha256 h;
  for (const auto& [k, v] : ck.meta) {
    h.update(k);
    h.update(std::string_view("\0", 1));
    h.update(v);
    h.update(std::string_view("\0", 1));
  }
  for (const NamedArray& a : ck.arrays) {
    h.update(a.name);
    h.update(fmt::format("\0{}\0", a.shape.str()));
    h.update(std::string_view(reinterpret_cast<const char*>(a.data.data()),
                              a.data.size() * sizeof(float)));
  }
  return h.hex();
}
}  // namespace

void save_checkpoint(const std::string& path, const Checkpoint& ck) {
  std::set<std::string> keys, names;
  std::string header = "{\"meta\": {";
  for (size_t i = 0; i < ck.meta.size(); ++i) {
    const auto& [k, v] = ck.meta[i];
    SB_CHECK(keys.insert(k).second, "saving '{}': meta key '{}' appears twice", path, k);
    header += fmt::format("{}\n  {}: {}", i ? "," : "", json_quote(k), json_quote(v));
  }
  header += ck.meta.empty() ? "},\n\"arrays\": [" : "\n},\n\"arrays\": [";
  uint64_t offset = 0;
  for (size_t i = 0; i < ck.arrays.size(); ++i) {
    const NamedArray& a = ck.arrays[i];
    SB_CHECK(names.insert(a.name).second, "saving '{}': array '{}' appears twice", path, a.name);
    SB_CHECK(static_cast<int64_t>(a.data.size()) == a.shape.numel(),
             "saving '{}': array '{}' has {} values but shape {} needs {}", path, a.name,
             a.data.size(), a.shape.str(), a.shape.numel());
    std::string shape;
    for (int d = 0; d < a.shape.rank; ++d) shape += fmt::format("{}{}", d ? ", " : "", a.shape[d]);
    header += fmt::format("{}\n  {{\"name\": {}, \"shape\": [{}], \"offset\": {}, \"count\": {}}}",
                          i ? "," : "", json_quote(a.name), shape, offset, a.data.size());
    offset += a.data.size() * sizeof(float);
  }
  header += fmt::format("{}],\n\"data_bytes\": {},\n\"sha256\": \"{}\"}}\n",
                        ck.arrays.empty() ? "" : "\n", offset, content_sha256(ck));
  // Trailing spaces are JSON whitespace; they put the data section on a 64-byte boundary.
  header.append((kAlign - (kPreamble + header.size()) % kAlign) % kAlign, ' ');
  SB_CHECK(header.size() <= kMaxHeader, "saving '{}': header too large ({} bytes)", path,
           header.size());

  std::string preamble(kMagic, sizeof kMagic);
  put_u32(preamble, kVersion);
  put_u32(preamble, static_cast<uint32_t>(header.size()));
  preamble += header;
  std::vector<std::string_view> parts{preamble};
  for (const NamedArray& a : ck.arrays)
    parts.emplace_back(reinterpret_cast<const char*>(a.data.data()), a.data.size() * sizeof(float));
  core::write_file_atomic(path, parts);
}

Checkpoint load_checkpoint(const std::string& path) {
  int raw_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (raw_fd < 0)
    throw core::Error(fmt::format("cannot read checkpoint '{}': {}", path,
                                  std::error_code(errno, std::generic_category()).message()));
  Fd fd{raw_fd};
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0 || !S_ISREG(st.st_mode)) fail(path, "not a regular file");
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);

  unsigned char pre[kPreamble];
  const size_t got = pread_full(fd.fd, pre, kPreamble, 0, path);
  if (std::memcmp(pre, kMagic, std::min(got, sizeof kMagic)) != 0)
    fail(path, "not a seqbench checkpoint (bad magic; expected the file to start with SEQBCKPT)");
  if (got < kPreamble)
    fail(path, fmt::format("truncated: expected {} preamble bytes, found {}", kPreamble, got));
  const uint32_t version = get_u32(pre + 8);
  if (version != kVersion)
    fail(path, fmt::format("unsupported checkpoint version {} (this build reads version {}; "
                           "hint: use the seqbench version that wrote it)",
                           version, kVersion));
  const uint32_t header_len = get_u32(pre + 12);
  if (header_len > kMaxHeader)
    fail(path, fmt::format("malformed header: length {} is implausible", header_len));
  if (header_len > file_size - kPreamble)
    fail(path, fmt::format("truncated: expected {} header bytes, found {}", header_len,
                           file_size - kPreamble));
  std::string header(header_len, '\0');
  const size_t header_got = pread_full(fd.fd, header.data(), header_len, kPreamble, path);
  if (header_got < header_len)
    fail(path,
         fmt::format("truncated: expected {} header bytes, found {}", header_len, header_got));

  Checkpoint ck;
  ck.origin = path;
  uint64_t data_bytes = 0;
  std::string recorded_sha;
  std::vector<uint64_t> offsets;
  try {
    YAML::Node root = YAML::Load(header);
    if (!root.IsMap() || !root["meta"].IsMap() || !root["arrays"].IsSequence() ||
        !root["data_bytes"].IsScalar())
      fail(path,
           "malformed header: expected an object with \"meta\", \"arrays\" and "
           "\"data_bytes\"");
    for (const auto& kv : root["meta"]) {
      const std::string key = kv.first.as<std::string>();
      if (ck.has(key))
        fail(path, fmt::format("malformed header: meta key '{}' repeated", key));
      if (!kv.second.IsScalar())
        fail(path, fmt::format("malformed header: meta '{}' is not a string", key));
      ck.meta.emplace_back(key, kv.second.as<std::string>());
    }
    data_bytes = root["data_bytes"].as<uint64_t>();
    if (root["sha256"]) recorded_sha = root["sha256"].as<std::string>();
    for (const auto& a : root["arrays"]) {
      if (!a.IsMap() || !a["name"].IsScalar() || !a["shape"].IsSequence() ||
          !a["offset"].IsScalar() || !a["count"].IsScalar())
        fail(path, "malformed header: each array needs name, shape, offset and count");
      NamedArray arr;
      arr.name = a["name"].as<std::string>();
      if (ck.has_array(arr.name))
        fail(path, fmt::format("malformed header: array '{}' repeated", arr.name));
      const YAML::Node shape = a["shape"];
      if (shape.size() > 4)
        fail(path, fmt::format("malformed header: array '{}' has rank {} (at most 4)", arr.name,
                               shape.size()));
      for (const auto& dim : shape) {
        const int64_t d = dim.as<int64_t>();
        if (d < 0)
          fail(path,
               fmt::format("malformed header: array '{}' has a negative dimension", arr.name));
        arr.shape.d[arr.shape.rank++] = d;
      }
      const uint64_t count = a["count"].as<uint64_t>();
      const uint64_t offset = a["offset"].as<uint64_t>();
      if (static_cast<int64_t>(count) != arr.shape.numel())
        fail(path, fmt::format("malformed header: array '{}' has count {} but shape {}", arr.name,
                               count, arr.shape.str()));
      if (offset % sizeof(float) != 0 || offset > data_bytes ||
          count > (data_bytes - offset) / sizeof(float))
        fail(path, fmt::format("malformed header: array '{}' (offset {}, {} values) lies outside "
                               "the {} data bytes",
                               arr.name, offset, count, data_bytes));
      offsets.push_back(offset);
      ck.arrays.push_back(std::move(arr));
    }
  } catch (const YAML::Exception& e) {
    // yaml-cpp's messages are one line: "yaml-cpp: error at line L, column C: ..."
    fail(path, fmt::format("malformed header: {}", e.what()));
  }

  const uint64_t data_start = kPreamble + header_len;
  const uint64_t found = file_size - data_start;
  if (found < data_bytes)
    fail(path, fmt::format("truncated: expected {} data bytes, found {}", data_bytes, found));
  if (found > data_bytes)
    fail(path, fmt::format("expected {} data bytes, found {} (trailing bytes; file corrupt?)",
                           data_bytes, found));
  for (size_t i = 0; i < ck.arrays.size(); ++i) {
    NamedArray& a = ck.arrays[i];
    a.data.resize(static_cast<size_t>(a.shape.numel()));
    const size_t bytes = a.data.size() * sizeof(float);
    if (pread_full(fd.fd, a.data.data(), bytes, static_cast<off_t>(data_start + offsets[i]), path) <
        bytes)
      fail(path, fmt::format("truncated while reading array '{}'", a.name));
  }
  // Checkpoints written before the checksum was added have none: they load, unverified.
  if (recorded_sha.empty())
    fmt::print(stderr, "seqbench: warning: {} has no checksum (written by an older seqbench); loading it unverified\n",
               path);
  if (!recorded_sha.empty()) {
    const std::string sha = content_sha256(ck);
    if (sha != recorded_sha)
      fail(path, fmt::format("damaged: its contents have sha256 {}, the header records {} "
                             "(hint: a flipped bit on disk or a partial copy; restore the file "
                             "from a backup or start the run again)",
                             sha, recorded_sha));
  }
  return ck;
}

}  // namespace seqbench::train
