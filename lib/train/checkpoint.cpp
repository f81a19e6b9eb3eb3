#include "train/checkpoint.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <optional>
#include <set>
#include <string_view>
#include <system_error>

#include <nlohmann/json.hpp>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "core/input_file.hpp"
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

struct Fd {
  int fd;
  ~Fd() { ::close(fd); }
};

// Ordered, so that meta comes back in the order it was written.
using Json = nlohmann::ordered_json;

// The header as JSON. A JSON object silently keeps the last of two equal keys, so a meta
// key that appears twice is caught while parsing: the keys one level inside "meta".
Json parse_header(const std::string& header, const std::string& path) {
  std::set<std::string> meta_keys;
  std::string top;  // the top-level key whose value is being read
  const auto on_event = [&](int depth, Json::parse_event_t event, Json& parsed) {
    if (event != Json::parse_event_t::key) return true;
    const auto& key = parsed.get_ref<const std::string&>();
    if (depth == 1) top = key;
    if (depth == 2 && top == "meta" && !meta_keys.insert(key).second)
      fail(path, fmt::format("malformed header: meta key '{}' repeated", key));
    return true;
  };
  try {
    return Json::parse(header, on_event);
  } catch (const Json::exception& e) {
    // nlohmann-json's messages are one line: "[json.exception.parse_error.101] parse
    // error at line L, column C: ..."
    fail(path, fmt::format("malformed header: {}", e.what()));
  }
}

// The whole number >= 0 under key, or nullopt when it is missing or something else.
std::optional<uint64_t> whole(const Json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_unsigned()) return std::nullopt;
  return it->get<uint64_t>();
}

// What the header's "sha256" covers: every meta entry and every array (name, shape and
// values), so a flipped bit anywhere in them is caught on load. Layout 2 (the header's
// "sha256_layout": 2, written since the fix) is the one docs/formats.md gives. Layout 1
// is what earlier builds wrote: their separator around the shape was an empty string
// (fmt::format("\0{}\0", ...) stops at the first NUL), so the shapes were left out;
// their checkpoints still load, checked that way.
constexpr uint64_t kSha256Layout = 2;
std::string content_sha256(const Checkpoint& ck, uint64_t layout = kSha256Layout) {
  data::Sha256 h;
  const std::string_view nul("\0", 1);
  for (const auto& [k, v] : ck.meta) {
    h.update(k);
    h.update(nul);
    h.update(v);
    h.update(nul);
  }
  for (const NamedArray& a : ck.arrays) {
    h.update(a.name);
    if (layout >= 2) {
      h.update(nul);
      h.update(a.shape.str());
      h.update(nul);
    }
    h.update(std::string_view(reinterpret_cast<const char*>(a.data.data()),
                              a.data.size() * sizeof(float)));
  }
  return h.hex();
}
}  // namespace

void save_checkpoint(const std::string& path, const Checkpoint& ck, const std::string& previous) {
  std::set<std::string> keys, names;
  Json meta = Json::object();
  for (const auto& [k, v] : ck.meta) {
    SB_CHECK(keys.insert(k).second, "saving '{}': meta key '{}' appears twice", path, k);
    meta[k] = v;
  }
  Json arrays = Json::array();
  uint64_t offset = 0;
  for (const NamedArray& a : ck.arrays) {
    SB_CHECK(names.insert(a.name).second, "saving '{}': array '{}' appears twice", path, a.name);
    SB_CHECK(static_cast<int64_t>(a.data.size()) == a.shape.numel(),
             "saving '{}': array '{}' has {} values but shape {} needs {}", path, a.name,
             a.data.size(), a.shape.str(), a.shape.numel());
    Json shape = Json::array();
    for (int d = 0; d < a.shape.rank; ++d) shape.push_back(a.shape[d]);
    arrays.push_back(
        {{"name", a.name}, {"shape", std::move(shape)}, {"offset", offset}, {"count", a.data.size()}});
    offset += a.data.size() * sizeof(float);
  }
  const Json root = {{"meta", std::move(meta)},
                     {"arrays", std::move(arrays)},
                     {"data_bytes", offset},
                     {"sha256", content_sha256(ck)},
                     {"sha256_layout", kSha256Layout}};
  std::string header;
  try {
    header = root.dump() + "\n";
  } catch (const Json::exception& e) {  // a string that is not UTF-8
    throw core::Error(fmt::format("saving '{}': {}", path, e.what()));
  }
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
  if (previous.empty())
    core::write_file_atomic(path, parts);
  else
    core::write_file_atomic_keep_previous(path, parts, previous);
}

Checkpoint load_checkpoint(const std::string& path) {
  // A regular file only: a FIFO or a device in its place is refused before any read.
  int raw_fd = -1;
  try {
    raw_fd = core::open_input(path, core::kMaxCheckpointFile, nullptr);
  } catch (const core::Error& e) {
    throw core::Error(fmt::format("checkpoint: {}", e.what()));
  }
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
  const Json root = parse_header(header, path);
  const auto member = [&](const char* key) { return root.is_object() ? root.find(key) : root.end(); };
  const auto meta = member("meta"), arrays = member("arrays"), sha = member("sha256");
  const std::optional<uint64_t> total = root.is_object() ? whole(root, "data_bytes") : std::nullopt;
  if (meta == root.end() || !meta->is_object() || arrays == root.end() || !arrays->is_array() ||
      !total)
    fail(path,
         "malformed header: expected an object with \"meta\", \"arrays\" and \"data_bytes\"");
  data_bytes = *total;
  for (const auto& [key, value] : meta->items()) {
    if (!value.is_string())
      fail(path, fmt::format("malformed header: meta '{}' is not a string", key));
    ck.meta.emplace_back(key, value.get<std::string>());
  }
  if (sha != root.end()) {
    if (!sha->is_string()) fail(path, "malformed header: sha256 is not a string");
    recorded_sha = sha->get<std::string>();
  }
  // Absent in checkpoints of earlier builds (layout 1, shapes not covered).
  uint64_t layout = 1;
  if (member("sha256_layout") != root.end()) {
    const std::optional<uint64_t> l = whole(root, "sha256_layout");
    if (!l || *l < 1 || *l > kSha256Layout)
      fail(path, fmt::format("malformed header: sha256_layout {} is not one this build reads (1 to {})",
                             member("sha256_layout")->dump(), kSha256Layout));
    layout = *l;
  }
  for (const Json& a : *arrays) {
    const auto name = a.is_object() ? a.find("name") : a.end();
    const auto shape = a.is_object() ? a.find("shape") : a.end();
    const std::optional<uint64_t> count = a.is_object() ? whole(a, "count") : std::nullopt;
    const std::optional<uint64_t> offset = a.is_object() ? whole(a, "offset") : std::nullopt;
    if (name == a.end() || !name->is_string() || shape == a.end() || !shape->is_array() ||
        !count || !offset)
      fail(path, "malformed header: each array needs name, shape, offset and count");
    NamedArray arr;
    arr.name = name->get<std::string>();
    if (ck.has_array(arr.name))
      fail(path, fmt::format("malformed header: array '{}' repeated", arr.name));
    if (shape->size() > 4)
      fail(path, fmt::format("malformed header: array '{}' has rank {} (at most 4)", arr.name,
                             shape->size()));
    for (const Json& dim : *shape) {
      if (!dim.is_number_integer())
        fail(path, fmt::format("malformed header: array '{}' has a dimension {} that is not a "
                               "whole number",
                               arr.name, dim.dump()));
      if (dim.is_number_unsigned() ? dim.get<uint64_t>() > uint64_t(INT64_MAX) : dim.get<int64_t>() < 0)
        fail(path,
             fmt::format("malformed header: array '{}' has a negative dimension", arr.name));
      arr.shape.d[arr.shape.rank++] = dim.get<int64_t>();
    }
    if (static_cast<int64_t>(*count) != arr.shape.numel())
      fail(path, fmt::format("malformed header: array '{}' has count {} but shape {}", arr.name,
                             *count, arr.shape.str()));
    if (*offset % sizeof(float) != 0 || *offset > data_bytes ||
        *count > (data_bytes - *offset) / sizeof(float))
      fail(path, fmt::format("malformed header: array '{}' (offset {}, {} values) lies outside "
                             "the {} data bytes",
                             arr.name, *offset, *count, data_bytes));
    offsets.push_back(*offset);
    ck.arrays.push_back(std::move(arr));
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
    const std::string actual = content_sha256(ck, layout);
    if (actual != recorded_sha)
      fail(path, fmt::format("damaged: its contents have sha256 {}, the header records {} "
                             "(hint: a flipped bit on disk or a partial copy; restore the file "
                             "from a backup or start the run again)",
                             actual, recorded_sha));
  }
  return ck;
}

}  // namespace seqbench::train
