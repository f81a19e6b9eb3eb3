// The paper reports: the embedded specs are consistent with the sweeps and numbers they
// name, runs become lines with mean ± sd and a verdict, and every output format holds them.
#include "report/paper_report.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "report/csv.hpp"
#include "report/paper_spec.hpp"

namespace seqbench::report {
namespace {

namespace fs = std::filesystem;

TEST(PaperSpecs, EveryEmbeddedPaperParsesAndNamesSweepsAndRowsThatExist) {
  const auto& specs = paper_specs();
  std::set<std::string> names;
  for (const auto& p : specs) names.insert(p.name);
  EXPECT_EQ(names,
            (std::set<std::string>{"kerg2020", "nguyen2020", "miller2019", "daras2020", "roy2021", "zoology", "mad"}));
  for (const auto& p : specs) {
    EXPECT_FALSE(p.title.empty()) << p.name;
    EXPECT_FALSE(p.arxiv.empty()) << p.name;
    std::map<std::string, std::set<std::string>> rows;  // table id -> row names
    for (const auto& t : p.tables) {
      const std::string base = std::string(SEQBENCH_SOURCE_DIR) + "/configs/papers/" + p.name + "/" + t.sweep;
      EXPECT_TRUE(fs::exists(base + "_small.yaml") || fs::exists(base + "_paper.yaml"))
          << p.name << ": table " << t.id << " names sweep " << t.sweep << ", which has no file";
      for (const auto& r : t.rows) rows[t.id].insert(r.name);
    }
    for (const auto& f : p.figures) {
      if (!f.sweep.empty()) {
        const std::string base = std::string(SEQBENCH_SOURCE_DIR) + "/configs/papers/" + p.name + "/" + f.sweep;
        EXPECT_TRUE(fs::exists(base + "_small.yaml") || fs::exists(base + "_paper.yaml"))
            << p.name << ": figure " << f.id << " names sweep " << f.sweep;
      }
    }
    // A number for one of our tables and models must name one of its rows: a typo would
    // silently leave it out of the comparison.
    for (const auto& n : p.numbers) {
      if (n.checked) {
        EXPECT_FALSE(n.source.empty()) << p.name << " " << n.table << " " << n.row;
      }
      if (!rows.count(n.table) || !n.in_suite) continue;
      EXPECT_TRUE(rows[n.table].count(n.row))
          << p.name << ": number for table " << n.table << " names row '" << n.row << "', not one of its rows";
    }
  }
}

TEST(PaperSpecs, UnknownPaperIsAUsageErrorWithASuggestion) {
  try {
    (void)paper_spec("kerg2021");
    FAIL() << "no error";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.exit_code(), core::kExitUsage);
    EXPECT_NE(std::string(e.what()).find("did you mean 'kerg2020'"), std::string::npos) << e.what();
  }
}

const char* kReport = R"yaml(paper: toy
tables:
  - id: copy
    title: "Copy: accuracy (%)"
    sweep: copy_table
    experiment: copy
    row: {key: model.cell}
    rows: [lstm, rel=rel_lstm]
    column: {key: task.T, name: T}
    metric: {column: final_metric, scale: 100, unit: "accuracy (%)", decimals: 1}
    tolerance: 1
  - id: transfer
    title: "Transfer"
    sweep: copy_table
    experiment: copy
    row: {key: model.cell}
    column: {key: task.T, name: "T->T'"}
    metric: {file: transfer.csv, file_key: eval_T, column: acc, scale: 100, unit: "accuracy (%)", decimals: 1}
figures:
  - {id: memory, kind: memory, title: "Memory", sweep: copy_table, experiment: copy}
)yaml";

const char* kNumbers = R"yaml(paper: toy
title: "A toy paper"
cite: "Toy et al. 2020"
arxiv: "2001.00001v2"
numbers:
  - {table: copy, row: rel, column: "100", value: 99.0, text: "99.0", source: "Table 1", checked: true}
  - {table: copy, row: lstm, column: "100", value: 60.0, text: "60", source: "Table 1", checked: false}
  - {table: copy, row: rel, column: "1000", value: 98.0, text: "98.0", source: "Table 1", checked: true}
  - {table: copy, row: xl, column: "100", value: 50, source: "Table 1", checked: true, in_suite: false}
  - {table: glue, row: avg, value: 82.7, source: "Table 3", checked: true}
)yaml";

TEST(PaperSpecs, ParseErrorsNameTheFileAndKey) {
  EXPECT_NO_THROW(parse_paper_spec(kReport, kNumbers, "toy"));
  for (const auto& [report, numbers, expected] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {std::string(kReport) + "colour: red\n", "", "unknown key 'colour'"},
           {kReport, "paper: toy\nnumbers:\n  - {table: copy, row: rel, value: 1, checked: true}\n",
            "needs its 'source'"},
           {kReport, "paper: other\n", "paper 'other'"},
           {kReport, "paper: toy\nnumbers:\n  - {table: copy, row: rel, value: abc}\n", "'abc' is not a number"},
       }) {
    try {
      (void)parse_paper_spec(report, numbers, "configs/papers/toy");
      ADD_FAILURE() << "no error for " << expected;
    } catch (const core::Error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("configs/papers/toy/"), std::string::npos) << e.what();
    }
  }
}

TEST(PaperSpecs, SearchFieldIsParsedButNoteIsTheOnlyRemarkShown) {
  const std::string numbers = std::string(kNumbers) +
                              "  - {table: glue, row: mnli, value: 84.4, source: \"Table 3\", checked: false,\n"
                              "     note: \"Matched and mismatched averaged.\", search: \"PROVENANCE-ONLY text\"}\n";
  const PaperSpec spec = parse_paper_spec(kReport, numbers, "toy");
  ASSERT_EQ(spec.numbers.size(), 6u);
  EXPECT_EQ(spec.numbers[5].search, "PROVENANCE-ONLY text");
  EXPECT_EQ(spec.numbers[5].note, "Matched and mismatched averaged.");
  // Unknown keys stay errors.
  EXPECT_THROW(parse_paper_spec(kReport, "paper: toy\nnumbers:\n  - {table: copy, row: rel, value: 1, serach: x}\n",
                                "toy"),
               core::Error);
  PaperReportOptions opts;
  opts.results_root = ::testing::TempDir() + "seqbench_paper_report_nosearch";
  opts.out_dir = opts.results_root + "/report";
  opts.gnuplot = "/nonexistent/gnuplot";
  const PaperReport r = build_paper_report(spec, opts);
  for (const auto& [format, text] : std::vector<std::pair<std::string, std::string>>{
           {"md", paper_markdown(r)}, {"csv", paper_csv(r)}, {"tex", paper_latex(r)}, {"html", paper_html(r)}}) {
    EXPECT_EQ(text.find("PROVENANCE-ONLY"), std::string::npos) << format << ":\n" << text;
  }
  EXPECT_NE(paper_markdown(r).find("Matched and mismatched averaged."), std::string::npos);
}

// Counts "checked: true" in a numbers.yaml as written, independently of the parser.
int checked_in_file(const std::string& path, int* total) {
  const YAML::Node n = YAML::LoadFile(path);
  int checked = 0;
  *total = 0;
  for (const auto& x : n["numbers"]) {
    ++*total;
    checked += x["checked"] && x["checked"].as<bool>();
  }
  return checked;
}

TEST(PaperReport, HeaderSaysHowManyPaperNumbersAreCheckedInEveryFormat) {
  const PaperSpec spec = parse_paper_spec(kReport, kNumbers, "toy");  // 4 of its 5 are checked
  PaperReportOptions opts;
  opts.results_root = ::testing::TempDir() + "seqbench_paper_report_header";
  opts.out_dir = opts.results_root + "/report";
  opts.gnuplot = "/nonexistent/gnuplot";
  const PaperReport r = build_paper_report(spec, opts);
  const std::string claim = "4 of 5 paper numbers are checked against a named source";
  EXPECT_NE(paper_markdown(r).find(claim), std::string::npos) << paper_markdown(r);
  EXPECT_NE(paper_html(r).find(claim), std::string::npos);
  EXPECT_NE(paper_latex(r).find("% The paper: arXiv 2001.00001v2. " + claim), std::string::npos) << paper_latex(r);
  EXPECT_NE(paper_csv(r).find("paper_numbers_checked"), std::string::npos);
  EXPECT_NE(papers_index_html({r}).find("<td class=\"num\">4 of 5</td>"), std::string::npos);
  EXPECT_EQ(paper_markdown(r).find("were read from"), std::string::npos);

  // None checked: said plainly. One checked: singular.
  const PaperSpec none = parse_paper_spec(
      kReport,
      "paper: toy\narxiv: x\nnumbers:\n  - {table: copy, row: rel, column: \"100\", value: 1}\n"
      "  - {table: copy, row: lstm, column: \"100\", value: 2, checked: false}\n",
      "toy");
  EXPECT_EQ(checked_statement(none),
            "None of the 2 paper numbers is checked against a named source: all are marked (unchecked) and are not "
            "established facts.");
  const PaperSpec one = parse_paper_spec(
      kReport,
      "paper: toy\nnumbers:\n  - {table: copy, row: rel, column: \"100\", value: 1, source: T1, checked: true}\n"
      "  - {table: copy, row: lstm, column: \"100\", value: 2}\n",
      "toy");
  EXPECT_EQ(checked_statement(one).rfind("1 of 2 paper numbers is checked", 0), 0u) << checked_statement(one);
  EXPECT_EQ(checked_statement(parse_paper_spec(kReport, "", "toy")), "No paper numbers are recorded.");

  // Every embedded paper: the header's count is the one in its numbers.yaml.
  for (const auto& p : paper_specs()) {
    int total = 0;
    const int checked =
        checked_in_file(std::string(SEQBENCH_SOURCE_DIR) + "/configs/papers/" + p.name + "/numbers.yaml", &total);
    PaperReport empty;
    empty.spec = &p;
    const std::string md = paper_markdown(empty);
    const std::string expected =
        checked == 0 ? fmt::format("None of the {} paper numbers is checked", total)
        : checked == total ? fmt::format("All {} paper numbers are checked", total)
                           : fmt::format("{} of {} paper numbers {} checked", checked, total, checked == 1 ? "is" : "are");
    EXPECT_NE(md.find(expected), std::string::npos) << p.name << ": expected '" << expected << "' in\n"
                                                    << md.substr(0, 600);
  }
}

// A note is what a reader sees; how a number was searched for belongs in `search`.
TEST(PaperSpecs, NotesSpeakToReadersNotAboutTheSearch) {
  for (const auto& p : paper_specs())
    for (const auto& n : p.numbers)
      for (const char* word : {"corpus", "corpora", "not reachable", "could not be reached", "stored cop", "SPIQA", "ar5iv"})
        EXPECT_EQ(n.note.find(word), std::string::npos)
            << p.name << " " << n.table << "/" << n.row << ": note mentions '" << word << "': " << n.note;
}

TEST(PaperSpecs, ARepositorySourceIsShownWithoutThePapersArxivId) {
  PaperSpec p;
  p.arxiv = "2010.05315v1";
  PaperNumber n;
  n.checked = true;
  n.source = "github:owner/repo@0123456789abcdef0123456789abcdef01234567 README.md, GLUE table";
  EXPECT_EQ(number_source(p, n), n.source);
  n.source = "Table 2";
  EXPECT_EQ(number_source(p, n), "Table 2, arXiv 2010.05315v1");
  // The opening sentence says where the checked numbers were checked.
  p.numbers = {n, n, n};
  p.numbers[0].source = "github:owner/repo@0123456789abcdef0123456789abcdef01234567 README.md";
  p.numbers[2].checked = false;
  EXPECT_EQ(checked_statement(p),
            "2 of 3 paper numbers are checked against a named source (1 read in the published text, tables or "
            "figures; 1 in a file of the authors' public repository); the others are marked (unchecked) and are "
            "not established facts.");
  p.numbers[2].checked = true;
  EXPECT_EQ(count_checked(p).in_repository, 1);
  EXPECT_EQ(checked_statement(p).rfind("All 3 paper numbers are checked against a named source (2 read", 0), 0u)
      << checked_statement(p);
}

TEST(PaperReport, VerdictFollowsToleranceSpreadBudgetAndData) {
  TableSpec t;
  t.tolerance = 1;
  t.decimals = 1;
  PaperNumber n;
  n.value = 99;
  n.checked = true;
  auto verdict = [&](double mean, double sd, int count, bool small, bool stand_in, const PaperNumber* num) {
    PaperLine l;
    l.mean = mean;
    l.sd = sd;
    l.n = count;
    judge(l, t, num, small, stand_in);
    return l;
  };
  EXPECT_EQ(verdict(98.5, 0, 3, false, false, &n).verdict, "reproduced");
  EXPECT_EQ(verdict(96.5, 1, 3, false, false, &n).verdict, "reproduced");  // 2.5 <= 1 + 2 sd
  EXPECT_EQ(verdict(96.5, 0.5, 3, false, false, &n).verdict, "not");
  EXPECT_EQ(verdict(98.5, 0, 3, true, false, &n).verdict, "partly");
  EXPECT_NE(verdict(98.5, 0, 3, true, false, &n).reason.find("small budget"), std::string::npos);
  EXPECT_EQ(verdict(98.5, 0, 3, false, true, &n).verdict, "partly");
  EXPECT_EQ(verdict(0, 0, 0, false, false, &n).verdict, "not");
  EXPECT_EQ(verdict(99, 0, 1, false, false, nullptr).verdict, "—");
  t.higher_is_better = false;  // e.g. perplexity: lower is better
  EXPECT_EQ(verdict(90, 0, 3, false, false, &n).verdict, "reproduced");
  EXPECT_NE(verdict(90, 0, 3, false, false, &n).reason.find("better"), std::string::npos);
  EXPECT_EQ(verdict(110, 0, 3, false, false, &n).verdict, "not");
  n.checked = false;
  EXPECT_NE(verdict(99, 0, 3, false, false, &n).reason.find("unchecked"), std::string::npos);
}

// A sweep directory as `seqbench sweep` leaves it: runs.csv plus one directory per run.
struct FakeSweep {
  std::string root, dir;
  std::string rows;
  explicit FakeSweep(const std::string& name) {
    root = ::testing::TempDir() + "seqbench_paper_report_" + name;
    fs::remove_all(root);
    dir = root + "/papers/toy/copy_table_small/copy";
    fs::create_directories(dir);
  }
  void run(const std::string& id, const std::string& cell, int T, int seed, const std::string& acc,
           const std::string& lr = "0.001") {
    fs::create_directories(dir + "/" + id);
    std::ofstream(dir + "/" + id + "/config.yaml")
        << "task: {name: copy, T: " << T << "}\nmodel: {cell: " << cell << ", hidden: 8}\noptim: {lr: " << lr
        << "}\ntrain: {seed: " << seed << ", steps: 100}\noutput: {run_id: " << id << "}\n";
    rows += id + ",copy," + cell + ",done,100," + acc + ",12.5,synthetic\n";
  }
  void write() const {
    std::ofstream(dir + "/runs.csv") << "run_id,experiment,label,status,updates,final_metric,train_seconds,data\n"
                                     << rows;
  }
};

TEST(PaperReport, RunsBecomeLinesInThePapersOrderWithSpreadAndUnlikeConfigsApart) {
  const PaperSpec spec = parse_paper_spec(kReport, kNumbers, "toy");
  FakeSweep s("lines");
  s.run("rel-T100-s1", "rel_lstm", 100, 1, "0.98");
  s.run("rel-T100-s2", "rel_lstm", 100, 2, "1.0");
  s.run("rel-T100-s3", "rel_lstm", 100, 3, "");  // diverged: no number
  s.run("lstm-T100-s1", "lstm", 100, 1, "0.5");
  s.run("lstm-T100-lr-s1", "lstm", 100, 1, "0.4", "0.01");  // another config: its own line
  s.run("rel-T200-s1", "rel_lstm", 200, 1, "0.9");
  s.write();
  PaperReportOptions opts;
  opts.results_root = s.root;
  opts.out_dir = s.root + "/report";
  opts.gnuplot = "/nonexistent/gnuplot";
  const PaperReport r = build_paper_report(spec, opts);
  ASSERT_EQ(r.tables.size(), 2u);
  const auto& lines = r.tables[0].lines;
  std::vector<std::string> order;
  for (const auto& l : lines) order.push_back(l.row + "@" + l.column);
  // lstm first (the paper's order), its two configs apart; then rel by T; the paper's
  // number for T = 1000 has no run; the paper-only model comes last.
  EXPECT_EQ(order, (std::vector<std::string>{"lstm [optim.lr=0.001]@100", "lstm [optim.lr=0.01]@100", "rel@100",
                                             "rel@200", "rel@1000", "xl@100"}));
  const PaperLine& rel = lines[2];
  EXPECT_EQ(rel.size, "small");
  EXPECT_EQ(rel.n, 2);
  EXPECT_EQ(rel.n_missing, 1);
  EXPECT_EQ(rel.ours, "99.0 ± 1.4");
  EXPECT_EQ(rel.paper, "99.0");
  EXPECT_EQ(rel.source, "Table 1, arXiv 2001.00001v2");
  EXPECT_EQ(rel.verdict, "partly");  // within tolerance, but a small budget
  EXPECT_EQ(rel.data, "synthetic");
  EXPECT_EQ(lines[0].paper, "60 (unchecked)");
  EXPECT_EQ(lines[0].verdict, "not");
  EXPECT_EQ(lines[4].verdict, "not run");
  EXPECT_EQ(lines[5].verdict, "—");
  // The transfer table has runs but none evaluated yet: no lines, and it says how.
  EXPECT_TRUE(r.tables[1].lines.empty());
  EXPECT_FALSE(r.tables[1].dirs.empty());
  // No memory.csv: the figure says it was not run and how to make it.
  ASSERT_EQ(r.figures.size(), 1u);
  EXPECT_NE(r.figures[0].status.find("not run"), std::string::npos) << r.figures[0].status;

  const std::string md = paper_markdown(r);
  EXPECT_NE(md.find("# Toy et al. 2020: A toy paper"), std::string::npos) << md;
  EXPECT_NE(md.find("| small | rel"), std::string::npos) << md;
  EXPECT_NE(md.find("The paper's other numbers"), std::string::npos) << md;  // glue
  EXPECT_NE(md.find("No run has a result for this table yet"), std::string::npos) << md;
  const CsvTable csv = parse_csv(paper_csv(r), "csv");
  EXPECT_EQ(csv.rows.size(), lines.size());
  EXPECT_EQ(csv.rows[2][size_t(csv.col("ours_mean"))], "99");
  const std::string tex = paper_latex(r);
  EXPECT_NE(tex.find("99.0 $\\pm$ 1.4"), std::string::npos) << tex;
  EXPECT_NE(tex.find("optim.lr=0.001"), std::string::npos);
  EXPECT_EQ(tex.find("[optim.lr=0.001]_"), std::string::npos);
  const std::string html = paper_html(r);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("<tr class=\"partly\">"), std::string::npos);
  const auto files = write_paper_report(r, opts.out_dir);
  EXPECT_EQ(files.size(), 4u);
  for (const auto& f : files) EXPECT_GT(fs::file_size(f), 100u) << f;
}

TEST(PaperReport, TransferNumbersComeFromEachRunsFileKeyedByTheEvaluationLength) {
  const PaperSpec spec = parse_paper_spec(kReport, kNumbers, "toy");
  FakeSweep s("transfer");
  s.run("rel-T100-s1", "rel_lstm", 100, 1, "1.0");
  s.run("rel-T100-s2", "rel_lstm", 100, 2, "1.0");
  s.write();
  std::ofstream(s.dir + "/rel-T100-s1/transfer.csv") << "step,trained_T,eval_T,acc\n100,100,500,0.9\n100,100,5000,0.5\n";
  // A repeated evaluation keeps its latest row.
  std::ofstream(s.dir + "/rel-T100-s2/transfer.csv") << "step,trained_T,eval_T,acc\n100,100,500,0.1\n100,100,500,0.7\n";
  PaperReportOptions opts;
  opts.sweep_dirs = {s.root + "/papers/toy/copy_table_small"};
  opts.out_dir = s.root + "/report";
  const PaperReport r = build_paper_report(spec, opts);
  const auto& lines = r.tables[1].lines;
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].column, "100->500");
  EXPECT_EQ(lines[0].n, 2);
  EXPECT_EQ(lines[0].ours, "80.0 ± 14.1");
  EXPECT_EQ(lines[1].column, "100->5000");
  EXPECT_EQ(lines[1].n, 1);
}

TEST(PaperReport, ATunedKeyGathersItsValuesIntoOneLineAtTheBestMeanWithTheBestRunAndTheWindow) {
  std::string report = kReport;
  const std::string tune = "    tolerance: 1\n";
  report.replace(report.find(tune), tune.size(), tune + "    tune: {key: optim.lr, window: 90}\n");
  const PaperSpec spec = parse_paper_spec(report, kNumbers, "toy");
  ASSERT_EQ(spec.tables[0].tune_key, "optim.lr");
  FakeSweep s("tuned");
  // rel_lstm at T = 100: lr 0.01 has the best mean (95), lr 0.001 the best single run (100).
  s.run("rel-a-s1", "rel_lstm", 100, 1, "1.0", "0.001");
  s.run("rel-a-s2", "rel_lstm", 100, 2, "0.7", "0.001");
  s.run("rel-b-s1", "rel_lstm", 100, 1, "0.96", "0.01");
  s.run("rel-b-s2", "rel_lstm", 100, 2, "0.94", "0.01");
  s.run("rel-c-s1", "rel_lstm", 100, 1, "0.92", "0.1");
  s.run("rel-c-s2", "rel_lstm", 100, 2, "", "0.1");  // diverged
  s.run("rel-d-s1", "rel_lstm", 100, 1, "0.1", "0.0001");
  // lstm: no value reaches the window; lr 0.1 alone would split the window in two.
  s.run("lstm-a-s1", "lstm", 100, 1, "0.5", "0.001");
  s.run("lstm-b-s1", "lstm", 100, 1, "0.6", "0.01");
  s.write();
  PaperReportOptions opts;
  opts.results_root = s.root;
  opts.out_dir = s.root + "/report";
  opts.gnuplot = "/nonexistent/gnuplot";
  const PaperReport r = build_paper_report(spec, opts);
  const auto& lines = r.tables[0].lines;
  ASSERT_GE(lines.size(), 2u);
  const PaperLine& lstm = lines[0];
  EXPECT_EQ(lstm.row, "lstm");  // one line: the learning rates do not split it
  EXPECT_EQ(lstm.tuned_at, "0.01 (best of 2)");
  EXPECT_EQ(lstm.window, "none of 2");
  const PaperLine& rel = lines[1];
  EXPECT_EQ(rel.row, "rel");
  EXPECT_EQ(rel.n, 2);
  EXPECT_EQ(rel.ours, "95.0 ± 1.4");
  EXPECT_EQ(rel.tuned_at, "0.01 (best of 4)");
  EXPECT_EQ(rel.best_run, "100.0");
  EXPECT_EQ(rel.window, "0.01 – 0.1 (2 of 4)");
  EXPECT_EQ(rel.verdict, "not");  // judged on the best value's seeds: 95 ± 1.4 is beyond 1 + 2 sd of 99
  const std::string md = paper_markdown(r);
  for (const char* column : {"| at lr ", "| best run |", "| lr where mean ≥ 90 "})
    EXPECT_NE(md.find(column), std::string::npos) << column << "\n" << md;
  const CsvTable csv = parse_csv(paper_csv(r), "csv");
  EXPECT_EQ(csv.rows[1][size_t(csv.col("window"))], "0.01 – 0.1 (2 of 4)");
  EXPECT_EQ(csv.rows[1][size_t(csv.col("tuned_key"))], "optim.lr");

  // A gap in the window lists its values.
  FakeSweep g("tuned_gap");
  g.run("rel-a-s1", "rel_lstm", 100, 1, "0.95", "0.001");
  g.run("rel-b-s1", "rel_lstm", 100, 1, "0.5", "0.01");
  g.run("rel-c-s1", "rel_lstm", 100, 1, "0.91", "0.1");
  g.write();
  opts.results_root = g.root;
  const PaperReport rg = build_paper_report(spec, opts);
  ASSERT_EQ(rg.tables[0].lines[1].row, "rel");  // after the paper's lstm number, not run
  EXPECT_EQ(rg.tables[0].lines[1].window, "0.001, 0.1 (2 of 3)");
}

TEST(PaperReport, TheExtrapolationFigureHasAPanelPerModelStartingAtTheTrainingLength) {
  const PaperSpec spec = parse_paper_spec(R"yaml(paper: toy
figures:
  - {id: ext, kind: extrapolation, title: "Extrapolation", sweep: ext, experiment: recall}
)yaml",
                                          kNumbers, "toy");
  const std::string root = ::testing::TempDir() + "seqbench_paper_report_extrapolation";
  fs::remove_all(root);
  const std::string dir = root + "/papers/toy/ext_small/recall";
  std::string rows = "run_id,experiment,model,T,width,status,final_metric\n";
  const auto run = [&](const std::string& id, const std::string& model, int seed, const std::string& acc,
                       const std::string& transfer) {
    fs::create_directories(dir + "/" + id);
    std::ofstream(dir + "/" + id + "/config.yaml")
        << "model: {attention: " << model << "}\ntrain: {seed: " << seed << "}\n";
    std::ofstream(dir + "/" + id + "/transfer.csv") << "step,trained_T,eval_T,acc\n" << transfer;
    rows += id + ",recall," + model + ",64,32,finished," + acc + "\n";
  };
  run("gla-s1", "gla", 1, "1.0", "30,64,128,0.8\n30,64,256,0.4\n");
  run("gla-s2", "gla", 2, "0.9", "30,64,128,0.6\n30,64,256,0.2\n30,64,256,0.3\n");  // the latest row counts
  run("full-s1", "full", 1, "1.0", "30,64,128,0.1\n");
  std::ofstream(dir + "/runs.csv") << rows;
  PaperReportOptions opts;
  opts.results_root = root;
  opts.out_dir = root + "/report";
  opts.gnuplot = "/nonexistent/gnuplot";
  const PaperReport r = build_paper_report(spec, opts);
  ASSERT_EQ(r.figures.size(), 1u);
  EXPECT_NE(r.figures[0].status.find("not drawn"), std::string::npos) << r.figures[0].status;  // no gnuplot
  const std::string dat = core::read_file(root + "/report/figures/ext/extrapolation.dat");
  // gla: (64, 95), (128, 70), (256, 35) over two seeds; full: (64, 100), (128, 10).
  EXPECT_NE(dat.find("# gla, width 32, trained at T = 64"), std::string::npos) << dat;
  EXPECT_NE(dat.find("\n64 95 "), std::string::npos) << dat;
  EXPECT_NE(dat.find("\n128 70 "), std::string::npos) << dat;
  EXPECT_NE(dat.find("\n256 35 "), std::string::npos) << dat;
  EXPECT_NE(dat.find("\n128 10 "), std::string::npos) << dat;
  const std::string gp = core::read_file(root + "/report/figures/ext/extrapolation.gp");
  EXPECT_NE(gp.find("set title 'gla'"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set title 'full'"), std::string::npos) << gp;
}

TEST(PaperReport, ADirectoryMatchingNoSweepIsAUsageError) {
  const PaperSpec spec = parse_paper_spec(kReport, kNumbers, "toy");
  FakeSweep s("nomatch");
  fs::create_directories(s.root + "/elsewhere");
  PaperReportOptions opts;
  opts.sweep_dirs = {s.root + "/elsewhere"};
  try {
    (void)build_paper_report(spec, opts);
    FAIL() << "no error";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.exit_code(), core::kExitUsage);
    EXPECT_NE(std::string(e.what()).find("copy_table"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace seqbench::report
