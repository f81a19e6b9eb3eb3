// tools/screenshot_reports: every committed report page (results/reference/*/index.html)
// rendered by headless Chromium into a PNG of the browser's width. Chromium is installed by
// `make deps`, so its absence fails the test rather than skipping it.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli/cli_util.hpp"
#include "report/gnuplot.hpp"

namespace seqbench {
namespace {

using clitest::run;
namespace fs = std::filesystem;

// The width in a PNG's IHDR chunk, or 0 when the file is no PNG.
unsigned png_width(const std::string& path) {
  const std::string b = clitest::slurp(path);
  if (b.size() < 24 || b.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) return 0;
  return (unsigned(uint8_t(b[16])) << 24) | (unsigned(uint8_t(b[17])) << 16) | (unsigned(uint8_t(b[18])) << 8) |
         unsigned(uint8_t(b[19]));
}

TEST(ReportScreenshots, EveryCommittedReportPageBecomesAPng) {
  ASSERT_TRUE(report::find_program("chromium")) << "chromium is not installed; run `make deps`";
  const std::string src = SEQBENCH_SOURCE_DIR, dir = clitest::fresh_dir("shots");
  int pages = 0;
  for (const auto& e : fs::recursive_directory_iterator(src + "/results/reference"))
    pages += e.path().filename() == "index.html";
  ASSERT_GE(pages, 1);
  const auto r = run("cd '" + src + "' && tools/screenshot_reports --out '" + dir + "' --height 900 results/reference",
                     dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(clitest::count_lines(r.out), pages) << r.out;
  int shots = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".png") continue;
    ++shots;
    EXPECT_EQ(png_width(e.path().string()), 1400u) << e.path();
  }
  EXPECT_EQ(shots, pages);
  EXPECT_TRUE(fs::exists(dir + "/results_reference_claims.png")) << r.out;
}

TEST(ReportScreenshots, BadCommandLinesExitTwoOnOneLine) {
  const std::string src = SEQBENCH_SOURCE_DIR, dir = clitest::fresh_dir("bad");
  for (const std::string& args : std::vector<std::string>{"--bogus", "--width wide", "no/such/dir", "'" + dir + "'"}) {
    const auto r = run("'" + src + "/tools/screenshot_reports' --out '" + dir + "/o' " + args, dir);
    EXPECT_EQ(r.code, 2) << args << ": " << r.err;
    EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  }
}

}  // namespace
}  // namespace seqbench
