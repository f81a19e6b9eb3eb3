// `seqbench list` prints the registries' tables, and docs/models.md holds exactly that
// output, so the docs cannot fall behind a registry.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_util.hpp"
#include "sanitized.hpp"
#include "nn/attention/attention.hpp"
#include "nn/registry.hpp"
#include "rl/minigrid/env.hpp"
#include "rl/policy.hpp"

using namespace seqbench;
using clitest::run;

namespace {
const std::string kFront = SEQBENCH_FRONT_BIN;
}  // namespace

// Issue 29, item 7: under `ulimit -v 300000` every command hung before main(), in
// OpenBLAS's start-up buffers (one per OpenMP thread). It now starts. (`timeout` ends a
// hang as a failure instead of waiting for ctest's.) ASan reserves terabytes of address
// space and cannot run under such a limit at all.
TEST(ListCli, StartsUnderAnAddressSpaceLimit) {
  if (testutil::kUnderAsan) GTEST_SKIP() << "AddressSanitizer cannot run under ulimit -v";
  const std::string dir = clitest::fresh_dir("list");
  const auto r = run("ulimit -v 300000 && exec env -u OMP_NUM_THREADS timeout 120 " + kFront + " list", dir);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("## Recurrent cells"), std::string::npos) << r.out.substr(0, 200);
}

// Issue 29: below about 300 MB even one OpenMP thread's OpenBLAS buffers do not fit, and
// every command spun in OpenBLAS's start-up for ever (`ulimit -v 150000; seqbench
// --version`, a tiny run at 100000, a big model at 200000). Such a process now stops
// before any library starts: one line naming the limit, exit 1. The same with more
// threads asked for than fit.
TEST(ListCli, AnAddressSpaceLimitTooSmallToStartIsOneLineNotAHang) {
  if (testutil::kUnderAsan) GTEST_SKIP() << "AddressSanitizer cannot run under ulimit -v";
  const std::string dir = clitest::fresh_dir("limit");
  for (const std::string& args : {std::string("--version"), std::string("list"),
                                  std::string("copy --demo --set train.steps=1 -q")}) {
    for (const char* kib : {"100000", "150000", "200000"}) {
      const auto r = run(std::string("ulimit -v ") + kib + " && exec env -u OMP_NUM_THREADS timeout 120 " +
                             kFront + " " + args,
                         dir);
      EXPECT_EQ(r.code, 1) << args << " at " << kib << ": " << r.err;
      EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
      EXPECT_EQ(r.err.rfind(std::string("seqbench: error: the virtual memory limit (ulimit -v ") +
                                kib + ") is too small to start: OpenBLAS sets up 1 buffer of "
                                "128 MiB (one per OpenMP thread)",
                            0),
                0u)
          << r.err;
      EXPECT_TRUE(r.out.empty()) << r.out;
    }
  }
  // OMP_NUM_THREADS given: its threads are what must fit.
  const auto r = run("ulimit -v 400000 && exec env OMP_NUM_THREADS=8 timeout 120 " + kFront + " --version", dir);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("8 buffers of 128 MiB (one per OpenMP thread)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("or set OMP_NUM_THREADS=1"), std::string::npos) << r.err;
}

// OpenBLAS maps one more buffer at its first call, and hung there the same way: a run that
// starts under the limit but has no room for that buffer fails in one line instead.
TEST(ListCli, AnOpenBlasCallWithoutRoomUnderALimitIsAnErrorNotAHang) {
  if (testutil::kUnderAsan) GTEST_SKIP() << "AddressSanitizer cannot run under ulimit -v";
  const std::string dir = clitest::fresh_dir("gemm");
  const auto r = run("ulimit -v 300000 && exec env -u OMP_NUM_THREADS timeout 120 " + kFront +
                         " copy --demo --set train.gemm=openblas --set train.steps=2 -q --out out",
                     dir);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("gemm: the virtual memory limit (ulimit -v 300000) leaves no room for the "
                       "128 MiB buffer OpenBLAS maps at its first call"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("or set train.gemm: onednn"), std::string::npos) << r.err;
}

TEST(ListCli, DocsModelsMdIsTheOutputOfSeqbenchList) {
  const std::string dir = clitest::fresh_dir("list");
  const auto r = run(kFront + " list", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* family : {"## Recurrent cells", "## MiniGrid agent cores", "## Attention kinds",
                             "## MiniGrid environments"})
    EXPECT_NE(r.out.find(family), std::string::npos) << family;
  const std::string docs = clitest::slurp(std::string(SEQBENCH_SOURCE_DIR) + "/docs/models.md");
  const std::string begin = "<!-- seqbench list: begin -->\n", end = "<!-- seqbench list: end -->";
  const auto b = docs.find(begin), e = docs.find(end);
  ASSERT_NE(b, std::string::npos) << "docs/models.md lacks the begin marker";
  ASSERT_NE(e, std::string::npos) << "docs/models.md lacks the end marker";
  EXPECT_EQ(docs.substr(b + begin.size(), e - b - begin.size()), r.out)
      << "docs/models.md is out of date: replace the text between the markers with the "
         "output of `seqbench list`";
}

TEST(ListCli, OneFamilyOrAClearError) {
  const std::string dir = clitest::fresh_dir("list1");
  const auto cells = run(kFront + " list cells", dir);
  ASSERT_EQ(cells.code, 0) << cells.err;
  EXPECT_NE(cells.out.find("| `rel_lstm` |"), std::string::npos) << cells.out;
  EXPECT_EQ(cells.out.find("## Attention kinds"), std::string::npos);
  const auto tasks = run(kFront + " list tasks", dir);
  ASSERT_EQ(tasks.code, 0) << tasks.err;
  EXPECT_NE(tasks.out.find("| `selective_copy` | recall |"), std::string::npos) << tasks.out;
  EXPECT_EQ(tasks.out.find("| `lstm` |"), std::string::npos) << tasks.out;
  const auto bad = run(kFront + " list cels", dir);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("unknown family 'cels' (did you mean 'cells'?"), std::string::npos)
      << bad.err;
}

namespace {
// The names under `family` in `seqbench list --format json` output, in order.
std::vector<std::string> names_in(const nlohmann::json& j, const std::string& family) {
  std::vector<std::string> out;
  for (const auto& e : j.at(family)) out.push_back(e.at("name").get<std::string>());
  return out;
}
}  // namespace

TEST(ListCli, JsonHoldsEveryRegisteredName) {
  const std::string dir = clitest::fresh_dir("list_json");
  const auto r = run(kFront + " list --format json", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);  // throws (fails the test) if it is not JSON
  std::vector<std::string> cells;
  for (const auto& c : nn::cell_registry()) cells.push_back(c.name);
  EXPECT_EQ(names_in(j, "cells"), cells);
  EXPECT_EQ(names_in(j, "mixers"), nn::mixer_names());
  EXPECT_EQ(names_in(j, "attention"), nn::attention_kind_names());
  EXPECT_EQ(names_in(j, "cores"), rl::agent_core_names());
  EXPECT_EQ(names_in(j, "envs"), rl::env_names());
  ASSERT_FALSE(nn::mixer_names().empty());
  // A cell says where it can be used: what the bench scripts filter on.
  ASSERT_EQ(j.at("cells").size(), nn::cell_registry().size());
  for (size_t i = 0; i < nn::cell_registry().size(); ++i) {
    const auto& c = j.at("cells")[i];
    const nn::CellEntry& entry = nn::cell_registry()[i];
    const auto uses = c.at("uses").get<std::set<std::string>>();
    EXPECT_EQ(uses.count("bench") == 1, (entry.uses & nn::kBench) != 0) << c.dump();
    EXPECT_EQ(c.at("mixer").get<bool>(), entry.mixer != nullptr) << c.dump();
    EXPECT_EQ(c.at("backends").get<std::vector<std::string>>(), entry.backends) << c.dump();
  }
}

TEST(ListCli, JsonOfOneFamilyAndItsErrors) {
  const std::string dir = clitest::fresh_dir("list_json1");
  const auto r = run(kFront + " list --format=json mixers", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.size(), 1u) << r.out;
  EXPECT_EQ(names_in(j, "mixers"), nn::mixer_names());
  const auto md = run(kFront + " list mixers", dir);  // no Markdown table of their own
  EXPECT_EQ(md.code, 2);
  EXPECT_NE(md.err.find("hint: seqbench list --format json mixers"), std::string::npos) << md.err;
  const auto bad = run(kFront + " list --format yaml", dir);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--format: 'yaml' is not md or json"), std::string::npos) << bad.err;
}
