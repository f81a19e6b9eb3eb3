// `seqbench report paper` and `report papers` through the real binary: a sweep directory
// as the sweep leaves it becomes the paper's table and figure, and the HTML pages open in
// a real browser (headless Chromium) with every figure loaded.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "cli/cli_util.hpp"
#include "report/plots.hpp"

namespace seqbench {
namespace {

using clitest::run;
namespace fs = std::filesystem;

const std::string kFront = SEQBENCH_FRONT_BIN;

// A finished small copy sweep of Kerg et al.'s table: two models, two seeds, each run with
// its config and a gradient-norm probe.
void fake_copy_sweep(const std::string& root) {
  const std::string dir = root + "/papers/kerg2020/copy_table_small/copy";
  std::string rows = "run_id,experiment,label,status,updates,final_metric,train_seconds,data\n";
  for (const std::string cell : {"lstm", "rel_lstm"})
    for (int seed : {1, 2}) {
      const std::string id = cell + "-T100-s" + std::to_string(seed);
      fs::create_directories(dir + "/" + id);
      clitest::write(dir + "/" + id + "/config.yaml",
                     "task: {name: copy, T: 100}\nmodel: {cell: " + cell + ", hidden: 8}\ntrain: {seed: " +
                         std::to_string(seed) + "}\noutput: {run_id: " + id + ", label: " + cell + "}\n");
      std::string g = "step,t,distance,norm\n";
      for (int t = 0; t < 20; ++t)
        g += "100," + std::to_string(t) + "," + std::to_string(19 - t) + "," + std::to_string(0.01 * (t + 1)) + "\n";
      clitest::write(dir + "/" + id + "/gradnorm.csv", g);
      rows += id + ",copy," + cell + ",done,100," + (cell == "lstm" ? "0.2" : "0.99") + ",3,synthetic\n";
    }
  clitest::write(dir + "/runs.csv", rows);
}

TEST(PaperReportCli, OnePaperPrintsItsTablesAndWritesEveryFormat) {
  const std::string dir = clitest::fresh_dir("one");
  fake_copy_sweep(dir + "/results");
  const auto r = run(kFront + " report paper kerg2020", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s : {"## Copy task", "| small | rel_lstm", "99.0 ± 0.0", "Not run. Make the runs with: "
                        "`seqbench sweep configs/papers/kerg2020/pmnist_table_small.yaml`"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  for (const char* f : {"report.md", "report.csv", "report.tex", "index.html"})
    EXPECT_TRUE(fs::exists(dir + "/results/papers/kerg2020/report/" + std::string(f))) << f;
  // No index of all papers yet: no link to one.
  EXPECT_EQ(clitest::slurp(dir + "/results/papers/kerg2020/report/index.html").find("All papers"),
            std::string::npos);
  // Once `report papers` has written the index (at its default place), a paper's own
  // report links to it, and each page under the index links up to it.
  ASSERT_EQ(run(kFront + " report papers --bench none", dir).code, 0);
  EXPECT_NE(clitest::slurp(dir + "/results/papers/report/kerg2020/index.html")
                .find("<a href=\"../index.html\">All papers</a>"),
            std::string::npos);
  ASSERT_EQ(run(kFront + " report paper kerg2020", dir).code, 0);
  EXPECT_NE(clitest::slurp(dir + "/results/papers/kerg2020/report/index.html")
                .find("<a href=\"../../report/index.html\">All papers</a>"),
            std::string::npos);
  if (report::find_program("gnuplot")) {
    EXPECT_TRUE(fs::exists(dir + "/results/papers/kerg2020/report/figures/gradnorm/gradnorm_distance.png"));
    EXPECT_TRUE(fs::exists(dir + "/results/papers/kerg2020/report/figures/gradnorm/gradnorm_distance.svg"));
  }
  const auto tex = run(kFront + " report paper kerg2020 --format latex --out tex", dir);
  ASSERT_EQ(tex.code, 0) << tex.err;
  EXPECT_NE(tex.out.find("\\begin{tabular}"), std::string::npos);

  const auto typo = run(kFront + " report paper kerg", dir);
  EXPECT_EQ(typo.code, 2);
  EXPECT_NE(typo.err.find("kerg2020"), std::string::npos) << typo.err;
  EXPECT_EQ(clitest::count_lines(typo.err), 1) << typo.err;
  fs::create_directories(dir + "/somewhere");
  const auto wrong = run(kFront + " report paper kerg2020 somewhere", dir);
  EXPECT_EQ(wrong.code, 2);
  EXPECT_NE(wrong.err.find("matches no sweep"), std::string::npos) << wrong.err;
}

// A finished wikitext103 sweep as `seqbench sweep` leaves it, one seed per attention kind:
// runs.csv with the columns the report reads and each run's config.yaml.
void fake_lm_sweep(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& runs) {
  std::string rows = "run_id,experiment,label,status,updates,attention,test_ppl,train_seconds,data\n";
  for (const auto& [id, attention] : runs) {
    fs::create_directories(dir + "/wikitext103/" + id);
    clitest::write(dir + "/wikitext103/" + id + "/config.yaml",
                   "model: {attention: \"" + attention + "\", layers: 2}\ntrain: {seed: 1, steps: 5}\noutput: {run_id: " +
                       id + "}\n");
    rows += id + ",wikitext103," + id + ",finished,5,\"" + attention + "\",6390.5,7,brown (stand-in)\n";
  }
  clitest::write(dir + "/wikitext103/runs.csv", rows);
}

// The attention papers render from their small sweeps' directories, under the names the
// sweep files give them, with the paper's number beside the routing run.
TEST(PaperReportCli, AttentionPapersRenderFromTheirSmallSweeps) {
  const std::string dir = clitest::fresh_dir("attention");
  fake_lm_sweep(dir + "/results/papers/roy2021/wikitext103_table_small",
                {{"full_small-s1", "full:4"}, {"routing_small-s1", "local:2,routing:2"}});
  fake_lm_sweep(dir + "/results/papers/roy2021/random_ablation_small",
                {{"routing_only_small-s1", "routing:4"}, {"random_only_small-s1", "random:4"}});
  fake_lm_sweep(dir + "/results/papers/daras2020/attention_kinds_wikitext103_small",
                {{"full_small-s1", "full:4"}, {"smyrf_small-s1", "local:2,smyrf:2"}});
  const auto roy = run(kFront + " report paper roy2021 --bench none", dir);
  ASSERT_EQ(roy.code, 0) << roy.err;
  for (const char* s : {"paper numbers are checked against a named source", "| small | full", "| small | routing",
                        "| 15.8 ", "| small | random", "6390.5",
                        "Not run. Make the runs with: `seqbench sweep configs/papers/roy2021/imagenet64_table_small.yaml`"})
    EXPECT_NE(roy.out.find(s), std::string::npos) << s << "\n" << roy.out;
  const auto daras = run(kFront + " report paper daras2020 --bench none", dir);
  ASSERT_EQ(daras.code, 0) << daras.err;
  for (const char* s : {"paper numbers are checked against a named source", "| small | smyrf", "| small | full",
                        "github:giannisdaras/smyrf@"})
    EXPECT_NE(daras.out.find(s), std::string::npos) << s << "\n" << daras.out;
  for (const char* f : {"report.md", "report.csv", "report.tex", "index.html"}) {
    EXPECT_TRUE(fs::exists(dir + "/results/papers/roy2021/report/" + std::string(f))) << f;
    EXPECT_TRUE(fs::exists(dir + "/results/papers/daras2020/report/" + std::string(f))) << f;
  }
}

TEST(PaperReportCli, EveryPageOpensInHeadlessChromiumWithEveryFigureLoaded) {
  // make deps installs both (Debian's chromium and gnuplot-nox), so a missing one is a
  // broken setup, not a reason to pass over the test.
  ASSERT_TRUE(report::find_program("chromium")) << "chromium is not installed; run `make deps`";
  ASSERT_TRUE(report::find_program("gnuplot")) << "gnuplot is not installed; run `make deps`";
  const std::string dir = clitest::fresh_dir("html");
  fake_copy_sweep(dir + "/results");
  const auto r = run(kFront + " report papers --out site", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_TRUE(fs::exists(dir + "/site/index.html"));
  int pictures = 0;
  for (const std::string paper : {"", "kerg2020", "nguyen2020", "miller2019", "daras2020", "roy2021"}) {
    const std::string page = dir + "/site/" + (paper.empty() ? "" : paper + "/") + "index.html";
    ASSERT_TRUE(fs::exists(page)) << page;
    const std::string html = clitest::slurp(page);
    EXPECT_EQ(html.find("<script"), std::string::npos) << page << ": the pages carry no script";
    if (!paper.empty()) {  // the index it links back to exists
      EXPECT_NE(html.find("<a href=\"../index.html\">All papers</a>"), std::string::npos) << page;
    }
    // The test's own probe, added to a copy of the page: once the page has loaded, it
    // records how many images there are and how many decoded to a real picture.
    std::string probe = html;
    probe.insert(probe.rfind("</body>"),
                 "<script>window.addEventListener('load',()=>{const i=[...document.images];"
                 "document.body.setAttribute('data-images',i.length+':'+i.filter(x=>x.complete&&"
                 "x.naturalWidth>0).length);});</script>");
    const std::string probe_path = fs::path(page).parent_path().string() + "/probe.html";
    clitest::write(probe_path, probe);
    const auto c = run("chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --user-data-dir=" + dir +
                           "/chromium-profile --virtual-time-budget=10000 --dump-dom 'file://" + probe_path + "'",
                       dir);
    ASSERT_EQ(c.code, 0) << c.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(c.out, m, std::regex("data-images=\"(\\d+):(\\d+)\"")))
        << page << ": the page did not finish loading\n" << c.out.substr(0, 500);
    EXPECT_EQ(m[1], m[2]) << page << ": " << m[1] << " images, " << m[2] << " loaded";
    pictures += std::stoi(m[1]);
    if (paper.empty()) {  // the index links every paper's page
      for (const char* p : {"kerg2020", "nguyen2020", "miller2019", "daras2020", "roy2021"})
        EXPECT_NE(html.find(std::string("href=\"") + p + "/index.html\""), std::string::npos) << p;
    }
  }
  EXPECT_GE(pictures, 1) << "the fake sweep's gradient-norm figure is on kerg2020's page";
}

}  // namespace
}  // namespace seqbench
