// End-to-end tests of the resource limits known before a run (lib/train/memory_estimate.hpp,
// core::cap_threads): a config too large for the memory limit fails with exit 2 naming
// the keys and leaves nothing behind, --max-memory sets the limit, --dump-config shows
// the estimate as YAML comments, --threads above the cores warns and is capped (in runs
// and in sweeps), and the estimate is checked against the peak RSS of real runs.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "cli/cli_util.hpp"
#include "core/memory.hpp"
#include "core/threads.hpp"
#include "sanitized.hpp"

using namespace seqbench;
using clitest::run;
namespace fs = std::filesystem;

namespace {

const std::string kCopy = SEQBENCH_COPY_BIN;
const std::string kFront = SEQBENCH_FRONT_BIN;
const std::string kWikitext = SEQBENCH_WIKITEXT103_BIN;
const std::string kMinigrid = SEQBENCH_MINIGRID_BIN;
const std::string kStability = SEQBENCH_STABILITY_BIN;

const char* kTiny = R"(task: {name: copy, T: 4, copy_len: 3, n_symbols: 4}
model: {hidden: 8}
optim: {name: adam, lr: 0.01}
train: {batch: 4, steps: 4, log_every: 2, eval_every: 0, eval_batches: 1, threads: 1}
output: {dir: results}
)";

// The total of a --dump-config's "# memory estimate: 12.3 MiB ..." line, in bytes.
uint64_t dumped_estimate(const std::string& out) {
  std::smatch m;
  const std::regex re("# memory estimate: ([0-9.]+ [KMGTPE]?i?B)");
  if (!std::regex_search(out, m, re)) return 0;
  return core::parse_size(m[1].str()).value_or(0);
}

// peak_rss_mb of a finished run's summary.json.
double peak_rss_mb(const std::string& run_dir) {
  const std::string json = clitest::slurp(run_dir + "/summary.json");
  std::smatch m;
  const std::regex re("\"peak_rss_mb\": ([0-9.]+)");
  if (!std::regex_search(json, m, re)) return -1;
  return std::stod(m[1].str());
}

}  // namespace

TEST(MemoryCli, AConfigTooLargeForTheMachineFailsNamingTheKeysAndWritesNothing) {
  const std::string dir = clitest::fresh_dir("x");
  // Every key within its bound, the product far beyond any machine (petabytes).
  const std::string huge =
      " --demo --set model.hidden=65536 --set task.T=10000000 --set train.batch=100000";
  auto r = run(kCopy + huge, dir);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  for (const char* s : {"memory estimate", "is above the limit of", "MemAvailable",
                        "model.hidden=65536", "task.T=10000000", "train.batch=100000"})
    EXPECT_NE(r.err.find(s), std::string::npos) << s << " in: " << r.err;
  EXPECT_FALSE(fs::exists(dir + "/results")) << "a refused run must not create results/";

  // Where the parameters dominate, the message names the width alone.
  r = run(kCopy + " --demo --set model.hidden=65536 --max-memory 100G", dir);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("sized by model.hidden=65536 (hint: lower it"), std::string::npos) << r.err;

  // The other experiments check before they load data or build a model.
  for (const std::string& cmd :
       {kWikitext + " --demo --set model.d_model=65536 --set model.layers=1024",
        kMinigrid + " --set ppo.procs=65536 --set ppo.frames_per_proc=10000000",
        kStability +
            " --demo --set analysis=weights --set weights.T=100000 --set weights.n=1000000"}) {
    r = run(cmd, dir);
    EXPECT_EQ(r.code, 2) << cmd << ": " << r.err;
    EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("memory estimate"), std::string::npos) << cmd << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(dir + "/results"));
}

TEST(MemoryCli, MaxMemorySetsTheLimitAndBadSizesAreUsageErrors) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  auto r = run(kCopy + " --config tiny.yaml --max-memory 1k", dir);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("is above the limit of 1.00 KiB (--max-memory)"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir + "/results"));

  for (const char* bad : {"12X", "0", "-5G", "lots"}) {
    r = run(kCopy + " --config tiny.yaml --max-memory " + bad, dir);
    EXPECT_EQ(r.code, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("expected a size such as 512M"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir + "/results"));

  r = run(kCopy + " --config tiny.yaml --max-memory 1.5GiB -q --run-id ok", dir);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir + "/results/copy/ok/summary.json"));
}

TEST(MemoryCli, DumpConfigEndsWithTheEstimateAsCommentsAndStaysAValidConfig) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  // A fixed limit: the default (MemAvailable) moves between the two runs on a busy machine.
  auto r = run(kCopy + " --config tiny.yaml --dump-config --max-memory 1G", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const size_t at = r.out.find("# memory estimate: ");
  ASSERT_NE(at, std::string::npos) << r.out;
  for (const char* part : {"#   parameters (", "#   gradients", "#   optimizer slots (adam: 2)",
                           "#   checkpoint copies", "#   activations (lstm layer)", "#   batches"})
    EXPECT_NE(r.out.find(part, at), std::string::npos) << part << " in:\n" << r.out;
  EXPECT_GT(dumped_estimate(r.out), 0u) << r.out;
  // The whole output, comments included, is a config that resolves to the same.
  clitest::write(dir + "/dumped.yaml", r.out);
  const auto again = run(kCopy + " --config dumped.yaml --dump-config --max-memory 1G", dir);
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(again.out, r.out);

  // A config too large to run still dumps, and says it would be refused.
  r = run(kCopy +
              " --config tiny.yaml --set model.hidden=65536 --set task.T=10000000 "
              "--dump-config",
          dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("a run would be refused"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir + "/results"));
}

TEST(MemoryCli, ThreadsAboveTheCoresWarnAndAreCappedUnlessForced) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  const int cores = core::available_cores();
  const std::string over = std::to_string(cores + 1);
  auto r = run(kCopy + " --config tiny.yaml -q --run-id capped --threads " + over, dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(fmt::format("seqbench copy: warning: train.threads: {} threads is more "
                                   "than the {} core",
                                   cores + 1, cores)),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(fmt::format("using {}", cores)), std::string::npos) << r.err;
  // The run records the count it used.
  EXPECT_NE(clitest::slurp(dir + "/results/copy/capped/config.yaml")
                .find(fmt::format("threads: {}\n", cores)),
            std::string::npos);

  r = run(kCopy + " --config tiny.yaml -q --run-id forced --force-threads --threads " + over, dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(clitest::slurp(dir + "/results/copy/forced/config.yaml")
                .find(fmt::format("threads: {}\n", cores + 1)),
            std::string::npos);
}

TEST(MemoryCli, ASweepGivesEachRunItsShareOfTheCores) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  clitest::write(dir + "/s.yaml",
                 "experiment: copy\nconfigs: [tiny.yaml]\nseeds: [1, 2]\nout: " + dir + "/s\n");
  const int cores = core::available_cores();
  const std::string over = std::to_string(cores + 1);
  auto r = run(kFront + " sweep s.yaml --jobs 1 --dry-run --threads " + over, dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find(fmt::format("1 run at once x {} threads is more than the {} core", cores + 1,
                                   cores)),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find(fmt::format("--threads {} -q", cores)), std::string::npos) << r.out;
  r = run(kFront + " sweep s.yaml --jobs 1 --dry-run --force-threads --threads " + over, dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find(fmt::format("--threads {} -q --force-threads", cores + 1)),
            std::string::npos)
      << r.out;
}

// The estimate against the peak RSS (getrusage's ru_maxrss, recorded in summary.json) of
// real runs, each beyond the RSS of a tiny run of the same binary (the program and its
// libraries, which the estimate leaves out): one run whose parameters and optimizer state
// dominate, one whose activations do, and the same on the oneDNN LSTM. Each difference is
// within [0.5x, 2x] of the estimate's. Nothing is timed.
TEST(MemoryCli, EstimateMatchesThePeakRssOfRealRunsWithinAFactorOfTwo) {
  if (testutil::kUnderAsan)
    GTEST_SKIP() << "under AddressSanitizer a process's peak RSS also holds ASan's shadow memory, "
                  "redzones and quarantine; the plain build (make test) compares the estimate "
                  "with peak RSS";
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/tiny.yaml", kTiny);
  const auto measure = [&](const std::string& id, const std::string& sets) {
    const auto d = run(kCopy + " --config tiny.yaml " + sets + " --dump-config", dir);
    EXPECT_EQ(d.code, 0) << d.err;
    const auto r = run(kCopy + " --config tiny.yaml -q --run-id " + id + " " + sets, dir);
    EXPECT_EQ(r.code, 0) << r.err;
    return std::pair<double, double>{double(dumped_estimate(d.out)) / (1 << 20),
                                     peak_rss_mb(dir + "/results/copy/" + id)};
  };
  const auto [base_est, base_rss] = measure("base", "");
  ASSERT_GT(base_rss, 0);
  const std::vector<std::pair<std::string, std::string>> cases{
      {"parameters", "--set model.hidden=1536"},
      {"activations", "--set model.hidden=256 --set task.T=600 --set train.batch=32"},
      {"onednn",
       "--set model.hidden=256 --set task.T=600 --set train.batch=32 "
       "--set model.backend=onednn"},
  };
  for (const auto& [name, sets] : cases) {
    const auto [est, rss] = measure(name, sets);
    const double e = est - base_est, m = rss - base_rss;
    fmt::print(
        "memory estimate vs peak RSS ({}): estimate {:.1f} MiB, measured {:.1f} MiB "
        "({:.1f} - {:.1f} baseline), ratio {:.2f}\n",
        name, e, m, rss, base_rss, e / m);
    EXPECT_GT(m, 50) << name << ": the run should be well above the baseline";
    EXPECT_GE(e, 0.5 * m) << name << ": estimate " << e << " MiB, measured " << m << " MiB";
    EXPECT_LE(e, 2.0 * m) << name << ": estimate " << e << " MiB, measured " << m << " MiB";
  }
}
