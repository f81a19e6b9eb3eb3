// The recall paper report (configs/papers/zoology): the accuracy_vs_state figure reads a
// sweep's runs.csv into one point per model, task setting and width (seeds averaged, the
// best of several configs kept, as Zoology keeps the best learning rate) and places the
// paper's numbers at the state size of the run with their setting; tables read their rows
// and columns from runs.csv (`csv:`) and keep only the runs `where` names; a malformed
// spec entry is a one-line error naming the file and key.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "core/check.hpp"
#include "report/csv.hpp"
#include "report/gnuplot.hpp"
#include "report/paper_figures.hpp"
#include "report/paper_report.hpp"
#include "report/paper_spec.hpp"

namespace seqbench::report {
namespace {

namespace fs = std::filesystem;

const char* kReport = R"yaml(paper: toy
tables:
  - id: w64
    title: "MQAR at width 64"
    sweep: recall
    experiment: recall
    row: {csv: model}
    rows: [full, "rel4=rel_lstm(nu=4,rho=4)", lstm]
    column: {csv: T, name: T}
    where: {width: 64}
    metric: {column: final_metric, scale: 100, unit: "accuracy (%)", decimals: 1}
figures:
  - {id: state, kind: accuracy_vs_state, title: "Accuracy against state", sweep: recall, experiment: recall}
)yaml";

const char* kNumbers = R"yaml(paper: toy
title: "A toy recall paper"
arxiv: "2312.00001v1"
numbers:
  - {table: state, row: full, column: "T=32, width=64", value: 100, source: "Figure 2", checked: true}
  - {table: state, row: full, column: "T=512, width=64", value: 90, source: "Figure 2", checked: true}
  - {table: w64, row: full, column: "32", value: 99.0, source: "Table 9", arxiv: "2312.00002", checked: true}
)yaml";

// A recall sweep directory as `seqbench sweep` leaves it: runs.csv plus a config per run.
struct RecallSweep {
  std::string root, dir, rows;
  explicit RecallSweep(const std::string& name) {
    root = ::testing::TempDir() + "seqbench_state_figure_" + name;
    fs::remove_all(root);
    dir = root + "/papers/toy/recall_small/recall";
    fs::create_directories(dir);
  }
  void run(const std::string& id, const std::string& model, int T, int width, int seed, double state_bytes,
           const std::string& acc, const std::string& lr = "0.001") {
    fs::create_directories(dir + "/" + id);
    std::ofstream(dir + "/" + id + "/config.yaml")
        << "task: {name: mqar, seq_len: " << T << "}\nmodel: {d_model: " << width << "}\noptim: {lr: " << lr
        << "}\nlabel: " << model << "\ntrain: {seed: " << seed << "}\noutput: {run_id: " << id << "}\n";
    rows += fmt::format("{},recall,mqar,{},64,4,\"{}\",{},{},{},done,{},12.5,synthetic\n", id, T, model, width,
                        state_bytes, seed, acc);
  }
  void write(const std::string& header = "run_id,experiment,task,T,vocab,pairs,model,width,state_bytes,status,"
                                         "seed,final_metric,train_seconds,data") const {
    std::ofstream(dir + "/runs.csv") << header << "\n" << rows;
  }
};

PaperReport build(const PaperSpec& spec, const RecallSweep& s, const std::string& gnuplot) {
  PaperReportOptions opts;
  opts.results_root = s.root;
  opts.out_dir = s.root + "/report";
  opts.gnuplot = gnuplot;
  return build_paper_report(spec, opts);
}

RecallSweep make_sweep(const std::string& name) {
  RecallSweep s(name);
  s.run("full-w32-T32-s1", "full", 32, 32, 1, 16384, "0.9");
  s.run("full-w32-T32-s2", "full", 32, 32, 2, 16384, "0.7");
  s.run("full-w64-T32-s1", "full", 32, 64, 1, 32768, "0.998");
  s.run("full-w32-T64-s1", "full", 64, 32, 1, 32768, "0.5");
  s.run("lstm-w32-T32-s1", "lstm", 32, 32, 1, 256, "0.2");
  s.run("lstm-w32-T32-s2", "lstm", 32, 32, 2, 256, "");  // diverged: no number
  s.run("rel-w64-T32-s1", "rel_lstm(nu=4,rho=4)", 32, 64, 1, 2816, "0.6");
  // Two learning rates at one setting: the better mean is the point.
  s.run("mamba-w32-T32-lr1-s1", "mamba", 32, 32, 1, 9728, "0.3", "0.0001");
  s.run("mamba-w32-T32-lr2-s1", "mamba", 32, 32, 1, 9728, "0.8", "0.01");
  s.write();
  return s;
}

// A table's runs with a metrics.csv get their learning curves in the report, captioned with
// the table's curves_note.
TEST(PaperStateFigure, ATablesLearningCurvesCarryItsCurvesNote) {
  std::string spec_text = kReport;
  const std::string anchor = "    where: {width: 64}\n";
  spec_text.insert(spec_text.find(anchor) + anchor.size(),
                   "    curves_note: \"training scores every next token, validation the values\"\n");
  const PaperSpec spec = parse_paper_spec(spec_text, kNumbers, "toy");
  ASSERT_EQ(spec.tables.size(), 1u);
  EXPECT_EQ(spec.tables[0].curves_note, "training scores every next token, validation the values");
  RecallSweep s = make_sweep("curves_note");
  for (const std::string id : {"full-w64-T32-s1", "rel-w64-T32-s1"})
    std::ofstream(s.dir + "/" + id + "/metrics.csv")
        << "step,split,loss,acc\n100,train,2.0,0.3\n100,valid,1.9,0.4\n200,train,1.0,0.6\n200,valid,0.9,0.7\n";
  const PaperReport r = build(spec, s, report::find_program("gnuplot") ? "gnuplot" : "/nonexistent/gnuplot");
  bool found = false;
  for (const auto& f : r.figures)
    if (f.spec->id == "curves_recall") {
      found = true;
      EXPECT_NE(f.note.find("; training scores every next token, validation the values"), std::string::npos)
          << f.note << " / " << f.status;
    }
  EXPECT_TRUE(found) << "no learning-curves figure for the table's sweep";
}

TEST(PaperStateFigure, WritesOnePointPerModelSettingAndWidthWithThePapersNumbersBeside) {
  const PaperSpec spec = parse_paper_spec(kReport, kNumbers, "toy");
  const RecallSweep s = make_sweep("points");
  const PaperReport r = build(spec, s, "/nonexistent/gnuplot");
  ASSERT_EQ(r.figures.size(), 1u);
  const PaperFigure& f = r.figures[0];
  EXPECT_TRUE(f.pngs.empty());
  EXPECT_NE(f.status.find("not found"), std::string::npos) << f.status;
  EXPECT_NE(f.note.find("1 published number(s) drawn"), std::string::npos) << f.note;
  EXPECT_NE(f.note.find("1 without a run"), std::string::npos) << f.note;

  const std::string csv_path = s.root + "/report/figures/state/accuracy_vs_state.csv";
  ASSERT_TRUE(fs::exists(csv_path));
  const CsvTable csv = read_csv(csv_path);
  std::vector<std::string> got;
  for (size_t i = 0; i < csv.rows.size(); ++i) {
    std::string line;
    for (const char* c : {"source", "model", "T", "width", "state_bytes", "accuracy_pct", "n",
                          "n_without_number", "configs"})
      line += (line.empty() ? "" : " ") + csv.rows[i][size_t(csv.col(c))];
    got.push_back(line);
  }
  // Ours by T, then model, then width; then the paper's, the unmatched one without a state.
  EXPECT_EQ(got, (std::vector<std::string>{
                     "ours full 32 32 16384 80 2 0 1",
                     "ours full 32 64 32768 99.8 1 0 1",
                     "ours lstm 32 32 256 20 1 1 1",
                     "ours mamba 32 32 9728 80 1 0 2",
                     "ours rel_lstm(nu=4,rho=4) 32 64 2816 60 1 0 1",
                     "ours full 64 32 32768 50 1 0 1",
                     "published: Figure 2, arXiv 2312.00001v1 full 32 64 32768 100   ",
                     "published: Figure 2, arXiv 2312.00001v1 full 512 64  90   ",
                 }));
  EXPECT_EQ(csv.rows[3][size_t(csv.col("run_id"))], "mamba-w32-T32-lr2-s1");
  EXPECT_EQ(csv.rows[0][size_t(csv.col("sd"))], "14.142136");  // sd of 90 and 70
  // The figure's numbers are drawn, not listed among the paper's other numbers.
  EXPECT_EQ(paper_markdown(r).find("The paper's other numbers"), std::string::npos);
  // The data and script are there to rerun by hand.
  EXPECT_TRUE(fs::exists(s.root + "/report/figures/state/accuracy_vs_state.dat"));
  EXPECT_TRUE(fs::exists(s.root + "/report/figures/state/accuracy_vs_state.gp"));
}

// The state axis pads every side by at least a tenth of a decade: LRU's fixed 1024-byte
// state sat on the frame of a range that started at 1 kB.
TEST(PaperStateFigure, TheLogAxisLeavesRoomPastTheOutermostPoints) {
  EXPECT_EQ(log_axis_range(1024, 131072), std::make_pair(100.0, 1e6));
  EXPECT_EQ(log_axis_range(256, 32768), std::make_pair(100.0, 1e5));
  EXPECT_EQ(log_axis_range(1000, 1000), std::make_pair(100.0, 1e4));
  EXPECT_EQ(log_axis_range(1500, 70000), std::make_pair(1000.0, 1e5));
  EXPECT_EQ(log_axis_range(1500, 95000), std::make_pair(1000.0, 1e6));
}

TEST(PaperStateFigure, DrawsPngAndSvg) {
  ASSERT_TRUE(find_program("gnuplot")) << "gnuplot is not installed; run `make deps`";
  const PaperSpec spec = parse_paper_spec(kReport, kNumbers, "toy");
  const RecallSweep s = make_sweep("drawn");
  const PaperReport r = build(spec, s, "gnuplot");
  ASSERT_EQ(r.figures[0].pngs.size(), 1u) << r.figures[0].status;
  EXPECT_GT(fs::file_size(r.figures[0].pngs[0]), 1000u);
  ASSERT_EQ(r.figures[0].svgs.size(), 1u);
  const std::string md = paper_markdown(r);
  EXPECT_NE(md.find("accuracy_vs_state.png"), std::string::npos) << md;
}

TEST(PaperStateFigure, TableRowsAndColumnsComeFromRunsCsvAndWhereKeepsOneWidth) {
  const PaperSpec spec = parse_paper_spec(kReport, kNumbers, "toy");
  const RecallSweep s = make_sweep("table");
  const PaperReport r = build(spec, s, "/nonexistent/gnuplot");
  std::vector<std::string> order;
  for (const auto& l : r.tables[0].lines) order.push_back(l.row + "@" + l.column + "=" + l.ours);
  // Width 64 only: full and rel_lstm (named by the spec's row name) at T = 32.
  EXPECT_EQ(order, (std::vector<std::string>{"full@32=99.8", "rel4@32=60.0"}));
  // A number read from another paper names that paper's arXiv id.
  EXPECT_EQ(r.tables[0].lines[0].source, "Table 9, arXiv 2312.00002");
}

// A list in `where` keeps the runs with any of its values, and only those: the listed rows
// of a table that compares a setting only some models have (zoology's short convolution).
TEST(PaperStateFigure, WhereTakesAListOfValues) {
  std::string report = kReport;
  const std::string one = "where: {width: 64}";
  report.replace(report.find(one), one.size(), "where: {width: 64, model: [full, lstm]}");
  const PaperSpec spec = parse_paper_spec(report, kNumbers, "toy");
  const RecallSweep s = make_sweep("where_list");
  const PaperReport r = build(spec, s, "/nonexistent/gnuplot");
  std::vector<std::string> order;
  for (const auto& l : r.tables[0].lines) order.push_back(l.row + "@" + l.column + "=" + l.ours);
  EXPECT_EQ(order, (std::vector<std::string>{"full@32=99.8"}));

  // A name that is no runs.csv column filters on the runs' configs (T = 32: model.d_model
  // 64 is full and rel4 at width 64) ...
  report = kReport;
  report.replace(report.find(one), one.size(), "where: {model.d_model: [64]}");
  const PaperReport by_config = build(parse_paper_spec(report, kNumbers, "toy"), s, "/nonexistent/gnuplot");
  order.clear();
  for (const auto& l : by_config.tables[0].lines) order.push_back(l.row + "@" + l.column + "=" + l.ours);
  EXPECT_EQ(order, (std::vector<std::string>{"full@32=99.8", "rel4@32=60.0"}));
  // ... and a name in neither is an error naming the file and the name.
  report = kReport;
  report.replace(report.find(one), one.size(), "where: {model.d_modle: 64}");
  try {
    (void)build(parse_paper_spec(report, kNumbers, "toy"), s, "/nonexistent/gnuplot");
    FAIL() << "no error";
  } catch (const core::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("runs.csv: where: 'model.d_modle' is neither"), std::string::npos) << what;
  }
  // The state figure takes the same filter: only full's and lstm's points are drawn.
  report = kReport;
  const std::string fig = "sweep: recall, experiment: recall}";
  report.replace(report.rfind(fig), fig.size(), "sweep: recall, experiment: recall, where: {model: [full, lstm]}}");
  (void)build(parse_paper_spec(report, kNumbers, "toy"), s, "/nonexistent/gnuplot");
  const CsvTable csv = read_csv(s.root + "/report/figures/state/accuracy_vs_state.csv");
  std::set<std::string> models;
  for (size_t i = 0; i < csv.rows.size(); ++i)
    if (csv.rows[i][size_t(csv.col("source"))] == "ours") models.insert(csv.rows[i][size_t(csv.col("model"))]);
  EXPECT_EQ(models, (std::set<std::string>{"full", "lstm"}));
}

TEST(PaperStateFigure, ARunsCsvWithoutTheFiguresColumnsNamesTheFileAndColumn) {
  const PaperSpec spec = parse_paper_spec(
      "paper: toy\nfigures:\n  - {id: s, kind: accuracy_vs_state, title: S, sweep: recall, experiment: recall}\n", "",
      "toy");
  RecallSweep s("nocolumn");
  s.rows = "a,recall,mqar,32,64,4,full,32,1,done,1,0.5,1,synthetic\n";
  s.write("run_id,experiment,task,T,vocab,pairs,model,width,layers,status,seed,final_metric,train_seconds,data");
  try {
    (void)build(spec, s, "/nonexistent/gnuplot");
    FAIL() << "no error";
  } catch (const core::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("runs.csv"), std::string::npos) << what;
    EXPECT_NE(what.find("state_bytes"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(PaperStateFigure, MalformedSpecEntriesAreOneLineErrorsNamingFileAndKey) {
  const std::string figure = "paper: toy\nfigures:\n  - ";
  const std::string table =
      "paper: toy\ntables:\n  - {id: t, title: T, sweep: recall, experiment: recall, metric: {column: final_metric, "
      "unit: '%'}, ";
  for (const auto& [report, expected] : std::vector<std::pair<std::string, std::string>>{
           {figure + "{id: s, kind: accuracy_vs_state, title: S}\n",
            "figures[0]: a accuracy_vs_state figure needs 'sweep' and 'experiment'"},
           {figure + "{id: s, kind: accuracy_vs_states, title: S, sweep: recall, experiment: recall}\n",
            "figures[0].kind: 'accuracy_vs_states' is not one of"},
           {figure + "{id: s, kind: accuracy_vs_state, title: S, sweep: recall, experiment: recall, panel: T}\n",
            "unknown key 'panel'"},
           {table + "row: {key: model.cell, csv: model}}\n", "tables[0].row: give 'key'"},
           {table + "row: {csv: model}, where: [64]}\n", "tables[0].where: expected a map"},
           {table + "row: {csv: model}, where: {width: {a: 1}}}\n",
            "tables[0].where.width: expected a value or a list of values"},
           {table + "row: {csv: model}, where: {width: []}}\n",
            "tables[0].where.width: expected a value or a list of values"},
           {figure + "{id: s, kind: memory, title: S, sweep: recall, experiment: recall, where: {width: 64}}\n",
            "figures[0].where: only accuracy_vs_state figures take it, not memory"},
       }) {
    try {
      (void)parse_paper_spec(report, "", "configs/papers/toy");
      ADD_FAILURE() << "no error for " << expected;
    } catch (const core::Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(expected), std::string::npos) << what;
      EXPECT_NE(what.find("configs/papers/toy/report.yaml"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

}  // namespace
}  // namespace seqbench::report
