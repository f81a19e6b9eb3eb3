#include "train/efficiency.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>

#include "backend/gemm.hpp"
#include "core/check.hpp"
#include "core/file_lock.hpp"
#include "core/fs.hpp"
#include "core/threads.hpp"

namespace seqbench::train {

namespace {

// The instruction set the build targets (-march), from the compiler's macros.
const char* build_isa() {
#if defined(__AVX512F__)
  return "avx512";
#elif defined(__AVX2__)
  return "avx2";
#else
  return "generic";
#endif
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) {
        const size_t start = line.find_first_not_of(" \t", colon + 1);
        return start == std::string::npos ? "" : line.substr(start);
      }
    }
  return "unknown";
}

// FNV-1a, 64 bits: a short, stable file name for a key.
uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (const unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// The peak the file at path holds for key, or NaN with why in `why`.
double read_peak(const std::string& path, const std::string& key, std::string& why) {
  const double none = std::numeric_limits<double>::quiet_NaN();
  if (!core::file_exists(path)) return none;
  std::string text;
  try {
    text = core::read_file(path, core::Links::kRefuse);
  } catch (const std::exception& e) {
    why = e.what();
    return none;
  }
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("key") || !j["key"].is_string() || !j.contains("gflops") ||
      !j["gflops"].is_number()) {
    why = fmt::format("{}: not a cached sgemm peak (ignored)", path);
    return none;
  }
  if (j["key"].get<std::string>() != key) {
    why = fmt::format("{}: cached for another machine or setting (ignored)", path);
    return none;
  }
  const double g = j["gflops"].get<double>();
  if (!std::isfinite(g) || g <= 0) {
    why = fmt::format("{}: gflops {} is not a peak (ignored)", path, g);
    return none;
  }
  return g;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

double load_average() {
  std::ifstream in("/proc/loadavg");
  double l = -1;
  in >> l;
  return l;
}

}  // namespace

double lstm_equivalent_flop(int64_t batch, int64_t steps, int64_t input, int64_t hidden) {
  return 6.0 * double(steps) * double(batch) * 4.0 * double(hidden) * double(input + hidden);
}

const std::vector<std::string>& lstm_gemm_cells() {
  static const std::vector<std::string> cells{"lstm",    "momentum_lstm", "adam_lstm",
                                              "rmsprop_lstm", "sr_lstm", "stable_lstm",
                                              "rel_lstm", "sab"};
  return cells;
}

double lstm_equivalent_flop(const std::string& cell, int64_t batch, int64_t steps, int64_t input,
                            int64_t hidden) {
  const auto& cells = lstm_gemm_cells();
  if (std::find(cells.begin(), cells.end(), cell) == cells.end()) return 0;
  return lstm_equivalent_flop(batch, steps, input, hidden);
}

PeakMode peak_mode() {
  const char* v = std::getenv("SEQBENCH_SGEMM_PEAK");
  const std::string s = v ? v : "";
  if (s.empty() || s == "auto") return PeakMode::kAuto;
  if (s == "cached") return PeakMode::kCached;
  if (s == "off") return PeakMode::kOff;
  throw core::UsageError(fmt::format(
      "SEQBENCH_SGEMM_PEAK='{}' is not auto, cached or off (hint: off skips the sgemm peak)", s));
}

std::string peak_cache_dir() {
  const auto var = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? v : "";
  };
  if (const std::string d = var("SEQBENCH_CACHE_DIR"); !d.empty()) return d;
  if (const std::string d = var("XDG_CACHE_HOME"); !d.empty()) return d + "/seqbench";
  if (const std::string d = var("HOME"); !d.empty()) return d + "/.cache/seqbench";
  return "";
}

std::string peak_key(int threads) {
  // The peak's 1536 x 1536 product is oneDNN's under auto (libxsmm takes only small ones):
  // the same peak, and the same cache entry, as onednn.
  const backend::GemmImpl impl = backend::gemm_impl();
  return fmt::format(
      "cpu={}; cores={}; onednn_isa={}; build_isa={}; gemm={}; threads={}", cpu_model(),
      core::available_cores(), backend::onednn_isa(), build_isa(),
      backend::gemm_impl_name(impl == backend::GemmImpl::Auto ? backend::GemmImpl::OneDnn : impl),
      threads);
}

double measure_sgemm_gflops(int64_t n, double min_ms) {
  const size_t nn = size_t(n * n);
  std::vector<float> a(nn), b(nn), c(nn);
  for (size_t i = 0; i < nn; ++i) {
    a[i] = float(int(i % 13) - 6) * 0.1f;
    b[i] = float(int(i % 7) - 3) * 0.1f;
  }
  const auto product = [&] {
    backend::gemm<float>(backend::Trans::N, backend::Trans::N, n, n, n, 1.0f, a.data(), n,
                         b.data(), n, 0.0f, c.data(), n);
  };
  product();  // warm-up: page faults, oneDNN's kernel generation, the thread team
  double best = std::numeric_limits<double>::infinity(), total = 0;
  for (int reps = 0; reps < 3 || (total < min_ms && reps < 50); ++reps) {
    const auto t0 = std::chrono::steady_clock::now();
    product();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, ms);
    total += ms;
  }
  return 2.0 * double(n) * double(n) * double(n) / (best * 1e6);
}

PeakLookup cached_sgemm_peak(const std::string& dir, const std::string& key, PeakMode mode,
                             const std::function<double()>& measure) {
  PeakLookup out;
  if (mode == PeakMode::kOff || dir.empty()) return out;
  out.path = fmt::format("{}/sgemm_peak-{:016x}.json", dir, fnv1a(key));
  out.gflops = read_peak(out.path, key, out.note);
  if (!std::isnan(out.gflops) || mode == PeakMode::kCached) return out;
  try {
    core::make_dirs(dir);
    // One measurement at a time: another process may be measuring (or have just measured).
    const core::FileLock lock(out.path + ".lock");
    std::string ignored;
    out.gflops = read_peak(out.path, key, ignored);
    if (!std::isnan(out.gflops)) return out;
    const double load = load_average();
    out.gflops = measure();
    out.measured = true;
    if (!std::isfinite(out.gflops) || out.gflops <= 0) {
      out.gflops = std::numeric_limits<double>::quiet_NaN();
      return out;
    }
    nlohmann::ordered_json j;
    j["key"] = key;
    j["gflops"] = out.gflops;
    j["measured"] = utc_now();
    j["load_average"] = load;
    core::write_file_atomic(out.path, j.dump(2) + "\n");
  } catch (const std::exception& e) {
    out.note = fmt::format("{}: {} (hint: SEQBENCH_CACHE_DIR names a writable place to cache it)",
                           out.measured ? "sgemm peak measured but not cached" : "no sgemm peak",
                           e.what());
  }
  return out;
}

PeakLookup machine_sgemm_peak(int threads, PeakMode mode) {
  return cached_sgemm_peak(peak_cache_dir(), peak_key(threads), mode,
                           [] { return measure_sgemm_gflops(); });
}

}  // namespace seqbench::train
