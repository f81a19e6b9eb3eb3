// `seqbench list` prints the registries' tables, and docs/models.md holds exactly that
// output, so the docs cannot fall behind a registry.
#include <gtest/gtest.h>

#include <string>

#include "cli/cli_util.hpp"

using namespace seqbench;
using clitest::run;

namespace {
const std::string kFront = SEQBENCH_FRONT_BIN;
}  // namespace

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
