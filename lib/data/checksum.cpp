#include "data/checksum.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "core/input_file.hpp"

namespace seqbench::data {

namespace {

using Md = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

Md new_sha256() {
  Md ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
    throw core::Error("sha256: OpenSSL could not start a digest");
  return ctx;
}

std::string finish(EVP_MD_CTX* ctx) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_DigestFinal_ex(ctx, md, &n) != 1) throw core::Error("sha256: OpenSSL digest failed");
  std::string hex;
  hex.reserve(2 * n);
  for (unsigned int i = 0; i < n; ++i) hex += fmt::format("{:02x}", md[i]);
  return hex;
}

bool is_hex64(std::string_view s) {
  return s.size() == 64 &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

// "<dir>/SHA256SUMS" as name -> digest; empty if there is none. Lines are sha256sum's
// "<hex>  <name>" or "<hex> *<name>"; '#' lines and blank lines are skipped, anything
// else is an error (a damaged SHA256SUMS must not pass for "no checksum recorded").
std::map<std::string, std::string> recorded_sums(const std::string& dir) {
  std::map<std::string, std::string> sums;
  const std::string path = dir + "/SHA256SUMS";
  if (!core::file_exists(path)) return sums;
  std::istringstream in(core::read_input(path, core::kMaxTextFile));
  std::string line;
  for (int no = 1; std::getline(in, line); ++no) {
    if (line.empty() || line[0] == '#') continue;
    const std::string_view hex = std::string_view(line).substr(0, 64);
    const bool ok = line.size() > 66 && is_hex64(hex) && line[64] == ' ' &&
                    (line[65] == ' ' || line[65] == '*');
    if (!ok)
      throw core::Error(fmt::format(
          "{}:{}: not a sha256sum line (expected '<64 hex digits>  <file name>'; hint: "
          "regenerate it with `sha256sum FILES > SHA256SUMS` in that directory)",
          path, no));
    std::string h(hex);
    std::transform(h.begin(), h.end(), h.begin(), [](unsigned char c) { return std::tolower(c); });
    sums[line.substr(66)] = h;
  }
  return sums;
}

struct Stamp {
  long long size = -1, mtime_ns = -1;
};

Stamp stamp_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw core::Error(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  return {static_cast<long long>(st.st_size),
          static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec};
}

// The digest cache of one directory: lines "<hex> <size> <mtime_ns> <name>".
struct Cache {
  std::string path;
  std::map<std::string, std::pair<Stamp, std::string>> entries;
  bool dirty = false;

  explicit Cache(const std::string& dir) : path(dir + "/.sha256-cache") {
    if (!core::file_exists(path)) return;
    try {
      std::istringstream in(core::read_file(path));
      std::string hex, name;
      Stamp s;
      while (in >> hex >> s.size >> s.mtime_ns && in.get() == ' ' && std::getline(in, name))
        if (is_hex64(hex)) entries[name] = {s, hex};
    } catch (const core::Error&) {
      entries.clear();  // unreadable: hash again
    }
  }

  void save() {
    if (!dirty) return;
    std::string text;
    for (const auto& [name, e] : entries)
      text += fmt::format("{} {} {} {}\n", e.second, e.first.size, e.first.mtime_ns, name);
    try {
      core::write_file_atomic(path, text);
    } catch (const core::Error&) {
      // Read-only or full: the next load hashes again, nothing is lost.
    }
  }
};

}  // namespace

Sha256::Sha256() : ctx_(new_sha256().release()) {}
Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }
void Sha256::update(std::string_view bytes) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), bytes.data(), bytes.size());
}
std::string Sha256::hex() { return finish(static_cast<EVP_MD_CTX*>(ctx_)); }

std::string sha256_hex(std::string_view bytes) {
  Md ctx = new_sha256();
  EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size());
  return finish(ctx.get());
}

std::string sha256_file(const std::string& path) {
  // A regular file only: /dev/zero or a FIFO as a data file would never end.
  const int fd = core::open_input(path, core::kMaxDataFile, nullptr);
  Md ctx = new_sha256();
  std::vector<char> buf(1 << 20);
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      throw core::Error(fmt::format("cannot read '{}': {}", path, std::strerror(err)));
    }
    EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<size_t>(n));
  }
  ::close(fd);
  return finish(ctx.get());
}

std::string DataDigest::sha256() const {
  if (files.empty()) return {};
  auto sorted = files;
  std::sort(sorted.begin(), sorted.end());
  std::string listing;
  for (const auto& [name, hex] : sorted) listing += hex + "  " + name + "\n";
  return sha256_hex(listing);
}

void DataDigest::merge(const DataDigest& other) {
  files.insert(files.end(), other.files.begin(), other.files.end());
  verified = verified && other.verified;
}

DataDigest check_files(const std::vector<std::string>& paths) {
  DataDigest d;
  std::map<std::string, std::unique_ptr<Cache>> caches;
  std::map<std::string, std::map<std::string, std::string>> sums;
  for (const std::string& path : paths) {
    // A missing file is left to the loader, whose message names it with a hint.
    if (!core::file_exists(path)) continue;
    const std::filesystem::path p(path);
    const std::string dir = p.has_parent_path() ? p.parent_path().string() : std::string(".");
    const std::string name = p.filename().string();
    auto& cache = caches[dir];
    if (!cache) {
      cache = std::make_unique<Cache>(dir);
      sums[dir] = recorded_sums(dir);
    }
    const Stamp now = stamp_of(path);
    std::string hex;
    const auto hit = cache->entries.find(name);
    if (hit != cache->entries.end() && hit->second.first.size == now.size &&
        hit->second.first.mtime_ns == now.mtime_ns) {
      hex = hit->second.second;
    } else {
      hex = sha256_file(path);
      cache->entries[name] = {now, hex};
      cache->dirty = true;
    }
    const auto want = sums[dir].find(name);
    if (want == sums[dir].end()) {
      d.verified = false;
    } else if (want->second != hex) {
      // Forget the digest so that a repaired file is hashed again.
      cache->entries.erase(name);
      cache->dirty = true;
      cache->save();
      throw core::Error(fmt::format(
          "data file '{}' has sha256 {}, but {}/SHA256SUMS records {} (the file is damaged "
          "or was replaced; hint: fetch it again with tools/fetch_data --force, or if you "
          "replaced it on purpose, regenerate SHA256SUMS with sha256sum)",
          path, hex, dir, want->second));
    }
    d.files.emplace_back(name, hex);
  }
  for (auto& [dir, cache] : caches) cache->save();
  return d;
}

}  // namespace seqbench::data
