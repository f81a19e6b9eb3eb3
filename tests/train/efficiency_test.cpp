// The LSTM-equivalent FLOP count and the cached sgemm peak (train/efficiency.hpp).
#include "train/efficiency.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/fs.hpp"
#include "test_util.hpp"
#include "train/run_record.hpp"

using namespace seqbench;
using seqbench::testutil::TempDir;

// The whole suite, and every binary it starts, runs with no sgemm peak: nothing is measured
// (it would take a core from the timing-free tests beside it) and the real cache under
// $HOME is never read or written. A test that wants a peak sets its own variables.
namespace {
const bool kSuiteHasNoPeak = [] {
  ::setenv("SEQBENCH_SGEMM_PEAK", "off", 1);
  ::setenv("SEQBENCH_CACHE_DIR", "/nonexistent/seqbench-test-cache", 1);
  return true;
}();

// Sets an environment variable for one scope, then restores it.
struct ScopedEnv {
  std::string name, old;
  bool had = false;
  ScopedEnv(const char* n, const char* value) : name(n) {
    if (const char* v = std::getenv(n)) had = true, old = v;
    ::setenv(n, value, 1);
  }
  ~ScopedEnv() { had ? (void)::setenv(name.c_str(), old.c_str(), 1) : (void)::unsetenv(name.c_str()); }
};
}  // namespace

TEST(Efficiency, TheSuiteRunsWithoutAPeak) {
  ASSERT_TRUE(kSuiteHasNoPeak);
  EXPECT_EQ(train::peak_mode(), train::PeakMode::kOff);
  EXPECT_EQ(train::peak_cache_dir(), "/nonexistent/seqbench-test-cache");
}

TEST(Efficiency, LstmEquivalentFlopOfTheBenchShapes) {
  // pMNIST, B = 100, L = 784, I = 1, H = 128: 6 * 784 * 100 * 512 * 129.
  EXPECT_DOUBLE_EQ(train::lstm_equivalent_flop(100, 784, 1, 128), 31068979200.0);
  // char-PTB, B = 128, L = 150, I = 200, H = 1024: 6 * 150 * 128 * 4096 * 1224.
  EXPECT_DOUBLE_EQ(train::lstm_equivalent_flop(128, 150, 200, 1024), 577555660800.0);
  // The cells with an LSTM's gate GEMMs count; the others are not defined (0).
  EXPECT_DOUBLE_EQ(train::lstm_equivalent_flop("lstm", 100, 784, 1, 128), 31068979200.0);
  EXPECT_DOUBLE_EQ(train::lstm_equivalent_flop("rel_lstm", 100, 784, 1, 128), 31068979200.0);
  for (const char* cell : {"rnn", "momentum_rnn", "mamba", "mlstm", "slstm", "nope"})
    EXPECT_EQ(train::lstm_equivalent_flop(cell, 100, 784, 1, 128), 0.0) << cell;
}

TEST(Efficiency, AchievedGflopsAndPercentOfThePeak) {
  train::Summary s;
  s.update_gflop = 31.0689792;
  s.step_ms = 200;
  EXPECT_NEAR(train::achieved_gflops(s), 155.344896, 1e-9);
  EXPECT_TRUE(std::isnan(train::pct_sgemm_peak(s)));  // no peak
  s.sgemm_peak_gflops = 310.689792;
  EXPECT_NEAR(train::pct_sgemm_peak(s), 50.0, 1e-9);
  s.update_gflop = 0;  // not defined for the cell
  EXPECT_TRUE(std::isnan(train::achieved_gflops(s)));
  EXPECT_TRUE(std::isnan(train::pct_sgemm_peak(s)));
}

TEST(Efficiency, ThePeakIsMeasuredOnceThenReadFromTheCache) {
  TempDir tmp;
  const std::string dir = tmp / "cache";  // created on the first write
  int measured = 0;
  const auto measure = [&] { return ++measured, 123.5; };
  const auto first = train::cached_sgemm_peak(dir, "cpu=x; threads=2", train::PeakMode::kAuto, measure);
  EXPECT_TRUE(first.measured);
  EXPECT_DOUBLE_EQ(first.gflops, 123.5);
  ASSERT_TRUE(std::filesystem::exists(first.path)) << first.path;
  EXPECT_TRUE(first.note.empty()) << first.note;
  const std::string text = core::read_file(first.path);
  EXPECT_NE(text.find("\"key\": \"cpu=x; threads=2\""), std::string::npos) << text;
  for (int i = 0; i < 2; ++i) {
    const auto again = train::cached_sgemm_peak(dir, "cpu=x; threads=2", train::PeakMode::kAuto, measure);
    EXPECT_FALSE(again.measured);
    EXPECT_DOUBLE_EQ(again.gflops, 123.5);
    EXPECT_EQ(again.path, first.path);
  }
  EXPECT_EQ(measured, 1);
  EXPECT_EQ(core::read_file(first.path), text);  // never rewritten
  // Another key (another thread count, machine, library) has its own file and measurement.
  const auto other = train::cached_sgemm_peak(dir, "cpu=x; threads=1", train::PeakMode::kAuto, measure);
  EXPECT_TRUE(other.measured);
  EXPECT_NE(other.path, first.path);
  EXPECT_EQ(measured, 2);
}

TEST(Efficiency, ADamagedOrForeignCacheFileIsMeasuredAgainWithoutACrash) {
  TempDir tmp;
  const std::string key = "cpu=x; threads=2";
  int measured = 0;
  const auto measure = [&] { return ++measured, 50.0; };
  const std::string path = train::cached_sgemm_peak(tmp.path, key, train::PeakMode::kAuto, measure).path;
  for (const std::string& bad : std::vector<std::string>{
           "{not json", "", "[1, 2]", "{\"key\": \"cpu=x; threads=2\"}",
        "{\"key\": \"cpu=x; threads=2\", \"gflops\": \"fast\"}",
        "{\"key\": \"cpu=x; threads=2\", \"gflops\": -3}",
        "{\"key\": \"cpu=y; threads=2\", \"gflops\": 999}", std::string("\0\xff\x01", 3)}) {
    core::write_file_atomic(path, bad);
    // cached: the damaged file is ignored, nothing is measured or written.
    const auto cached = train::cached_sgemm_peak(tmp.path, key, train::PeakMode::kCached, measure);
    EXPECT_TRUE(std::isnan(cached.gflops)) << bad;
    EXPECT_FALSE(cached.measured);
    EXPECT_EQ(core::read_file(path), bad);
    // auto: measured again and the file replaced by a good one.
    const int before = measured;
    const auto redone = train::cached_sgemm_peak(tmp.path, key, train::PeakMode::kAuto, measure);
    EXPECT_TRUE(redone.measured) << bad;
    EXPECT_EQ(measured, before + 1);
    EXPECT_DOUBLE_EQ(redone.gflops, 50.0);
    EXPECT_FALSE(train::cached_sgemm_peak(tmp.path, key, train::PeakMode::kAuto, measure).measured);
  }
}

TEST(Efficiency, OffCachedAndAnUnwritableCache) {
  TempDir tmp;
  int measured = 0;
  const auto measure = [&] { return ++measured, 70.0; };
  // off: nothing read, measured or written, even with a good file there.
  const auto made = train::cached_sgemm_peak(tmp.path, "k", train::PeakMode::kAuto, measure);
  const auto off = train::cached_sgemm_peak(tmp.path, "k", train::PeakMode::kOff, measure);
  EXPECT_TRUE(std::isnan(off.gflops));
  // cached with no file: none, and no file appears.
  const auto none = train::cached_sgemm_peak(tmp.path, "other", train::PeakMode::kCached, measure);
  EXPECT_TRUE(std::isnan(none.gflops));
  EXPECT_FALSE(std::filesystem::exists(none.path));
  EXPECT_DOUBLE_EQ(train::cached_sgemm_peak(tmp.path, "k", train::PeakMode::kCached, measure).gflops, 70.0);
  EXPECT_EQ(measured, 1);
  // A cache directory that cannot be made (a file is in the way): no peak and no error,
  // a note that says where to cache instead.
  core::write_file_atomic(tmp / "file", "x");
  const auto unwritable = train::cached_sgemm_peak(tmp / "file/sub", "k", train::PeakMode::kAuto, measure);
  EXPECT_TRUE(std::isnan(unwritable.gflops));
  EXPECT_NE(unwritable.note.find("SEQBENCH_CACHE_DIR"), std::string::npos) << unwritable.note;
  EXPECT_EQ(measured, 1);
  // A measurement that gives no number is no peak, and nothing is written.
  const auto zero = train::cached_sgemm_peak(tmp.path, "z", train::PeakMode::kAuto, [] { return 0.0; });
  EXPECT_TRUE(std::isnan(zero.gflops));
  EXPECT_FALSE(std::filesystem::exists(zero.path));
  (void)made;
}

TEST(Efficiency, ModeAndCacheDirComeFromTheEnvironment) {
  {
    ScopedEnv mode("SEQBENCH_SGEMM_PEAK", "sometimes");
    EXPECT_EQ(testutil::message_of([] { train::peak_mode(); }),
              "SEQBENCH_SGEMM_PEAK='sometimes' is not auto, cached or off (hint: off skips the "
              "sgemm peak)");
  }
  {
    ScopedEnv mode("SEQBENCH_SGEMM_PEAK", "cached");
    EXPECT_EQ(train::peak_mode(), train::PeakMode::kCached);
  }
  {
    ScopedEnv mode("SEQBENCH_SGEMM_PEAK", "");
    EXPECT_EQ(train::peak_mode(), train::PeakMode::kAuto);
  }
  ScopedEnv explicit_dir("SEQBENCH_CACHE_DIR", "");
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/x/cache");
    EXPECT_EQ(train::peak_cache_dir(), "/x/cache/seqbench");
  }
  ScopedEnv xdg("XDG_CACHE_HOME", "");
  ScopedEnv home("HOME", "/home/someone");
  EXPECT_EQ(train::peak_cache_dir(), "/home/someone/.cache/seqbench");
  // The key names the machine and the run's setting.
  const std::string key = train::peak_key(3);
  for (const char* part : {"cpu=", "cores=", "onednn_isa=", "build_isa=", "gemm=", "threads=3"})
    EXPECT_NE(key.find(part), std::string::npos) << part << " in " << key;
}

TEST(Efficiency, TheMeasurementGivesAPositiveRate) {
  // A small product, no time asked for: only that it yields a number (never how fast).
  const double g = train::measure_sgemm_gflops(64, 0);
  EXPECT_TRUE(std::isfinite(g) && g > 0) << g;
}
