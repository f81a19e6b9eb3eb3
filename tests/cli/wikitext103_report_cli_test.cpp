// `seqbench report wikitext103` on a runs.csv the test writes: groups of seeds become one
// row with mean ± sd, the paper's numbers sit beside the matching kinds, runs without a
// test perplexity are left out, and a missing column or a bad cell is a one-line error.
#include <gtest/gtest.h>

#include <string>

#include "cli/cli_util.hpp"
#include "report/csv.hpp"

using namespace seqbench;
using clitest::run;

namespace {

const std::string kReport = std::string(SEQBENCH_FRONT_BIN) + " report wikitext103";

// The columns the wikitext103 app writes that the table reads, plus a few it ignores.
const char* kHeader =
    "run_id,label,T,hidden,seed,data,attention,layers,epochs,test_ppl,updates,ms_per_update\n";
const char* kRuns =
    "a,routing,256,128,1,brown (stand-in),\"local:2,routing:2\",2,0.75,100,400,800\n"
    "b,routing,256,128,2,brown (stand-in),\"local:2,routing:2\",2,0.75,110,400,900\n"
    "c,full,256,128,1,brown (stand-in),full:4,2,0.75,120,400,700\n"
    "d,lsh,256,128,1,brown (stand-in),\"local:2,lsh:2\",2,0.01,,4,650\n"
    "e,local,512,256,1,wikitext-103 (real),local:4,4,1.5,30.5,1200,2000\n";

std::string cell(const report::CsvTable& t, const char* col, size_t row) {
  return t.rows[row][size_t(t.col(col))];
}

}  // namespace

TEST(Wikitext103Report, OneRowPerModelWithThePapersNumbersBeside) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/runs.csv", std::string(kHeader) + kRuns);
  const auto csv = run(kReport + " runs.csv --format csv", dir);
  ASSERT_EQ(csv.code, 0) << csv.err;
  const auto t = report::parse_csv(csv.out, "stdout");
  ASSERT_EQ(t.rows.size(), 3u) << csv.out;  // the two routing seeds merge; lsh has no test ppl
  EXPECT_EQ(cell(t, "label", 0), "routing");
  EXPECT_EQ(cell(t, "attention", 0), "local:2,routing:2");
  EXPECT_EQ(cell(t, "layers", 0), "2");
  EXPECT_EQ(cell(t, "d_model", 0), "128");
  EXPECT_EQ(cell(t, "seq_len", 0), "256");
  EXPECT_EQ(cell(t, "paper", 0), "15.8");
  EXPECT_EQ(cell(t, "source", 0), "Abstract, p. 53 (TACL vol. 9, 2021), arXiv 2003.05997");
  EXPECT_EQ(cell(t, "ours", 0), "105.0 ± 7.1");  // sample sd of 100 and 110
  EXPECT_EQ(cell(t, "n", 0), "2");
  EXPECT_EQ(cell(t, "ms/update", 0), "850");
  EXPECT_EQ(cell(t, "data", 0), "brown (stand-in)");
  EXPECT_EQ(cell(t, "updates", 0), "400");
  EXPECT_EQ(cell(t, "epochs", 0), "0.75");
  // The paper's 18.3 belongs to another model (its baseline), not to our full attention.
  EXPECT_EQ(cell(t, "paper", 1), "—");
  EXPECT_EQ(cell(t, "ours", 1), "120.0");
  EXPECT_EQ(cell(t, "paper", 2), "—");  // local alone: the paper gives none
  EXPECT_EQ(cell(t, "data", 2), "wikitext-103 (real)");
  EXPECT_EQ(cell(t, "seq_len", 2), "512");

  const auto md = run(kReport + " runs.csv", dir);
  ASSERT_EQ(md.code, 0) << md.err;
  for (const char* s : {"Word-level language modelling", "Runs: runs.csv", "| label", "d_model",
                        "105.0 ± 7.1", "stand-in"})
    EXPECT_NE(md.out.find(s), std::string::npos) << s << "\n" << md.out;
}

TEST(Wikitext103Report, MissingColumnOrBadCellIsOneLineNamingIt) {
  const std::string dir = clitest::fresh_dir("x");
  clitest::write(dir + "/nocol.csv",
                 "label,attention,layers,hidden,T,data\nx,full:4,2,128,256,d\n");
  auto r = run(kReport + " nocol.csv", dir);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("nocol.csv"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("test_ppl"), std::string::npos) << r.err;

  clitest::write(dir + "/bad.csv",
                 std::string(kHeader) + "a,full,256,128,1,d,full:4,2,1,lots,400,700\n");
  r = run(kReport + " bad.csv", dir);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(clitest::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("bad.csv"), std::string::npos) << r.err;

  r = run(kReport, dir);  // no results/wikitext103/runs.csv here
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("results/wikitext103/runs.csv"), std::string::npos) << r.err;
}
