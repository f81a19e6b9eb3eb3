#include "report/plots.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "report/csv.hpp"
#include "test_util.hpp"

using namespace seqbench;
using testutil::message_of;
using testutil::TempDir;

namespace {

// Three probes (steps 0, 100, 200) of a sequence of 4 steps (distance = 3 - t), rows
// deliberately out of order; step 200 has a zero norm at t = 0 (a truncated gradient).
const char* kGradnorm =
    "step,t,distance,norm\n"
    "100,1,2,0.01\n"
    "100,0,3,0.001\n"
    "100,3,0,1\n"
    "100,2,1,0.1\n"
    "0,0,3,1e-05\n"
    "0,1,2,0.0001\n"
    "0,2,1,0.001\n"
    "0,3,0,0.01\n"
    "200,0,3,0\n"
    "200,1,2,0.5\n"
    "200,2,1,2\n"
    "200,3,0,4\n";

report::GradnormRun sample_run(const std::string& label = "rnn") {
  return report::gradnorm_from_table(report::parse_csv(kGradnorm, "run/gradnorm.csv"), label);
}

// A run directory as a real run leaves it.
std::string make_run(const TempDir& dir, const std::string& name, const std::string& label) {
  const std::string run = dir / name;
  core::make_dirs(run);
  core::write_file_atomic(run + "/gradnorm.csv", kGradnorm);
  if (!label.empty())
    core::write_file_atomic(run + "/config.yaml",
                            "model:\n  cell: rnn\noutput:\n  label: " + label + "\n");
  return run;
}

bool is_png(const std::string& path) {
  if (!core::file_exists(path)) return false;
  const std::string bytes = core::read_file(path);
  return bytes.size() > 8 && bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0;
}

}  // namespace

TEST(Gradnorm, GroupsRowsIntoProbesOrderedByStepAndT) {
  const auto run = sample_run();
  EXPECT_EQ(run.label, "rnn");
  EXPECT_EQ(run.source, "run/gradnorm.csv");
  ASSERT_EQ(run.probes.size(), 3u);
  EXPECT_EQ(run.probes[0].step, 0);
  EXPECT_EQ(run.probes[1].step, 100);
  EXPECT_EQ(run.probes[2].step, 200);
  EXPECT_EQ(run.probes[1].t, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(run.probes[1].distance, (std::vector<int64_t>{3, 2, 1, 0}));
  EXPECT_EQ(run.probes[1].norm, (std::vector<double>{0.001, 0.01, 0.1, 1}));
}

TEST(Gradnorm, RejectsBadTables) {
  const std::string empty = message_of([] {
    report::gradnorm_from_table(report::parse_csv("step,t,distance,norm\n", "g.csv"), "");
  });
  EXPECT_NE(empty.find("g.csv: no probes"), std::string::npos) << empty;
  const std::string column = message_of(
      [] { report::gradnorm_from_table(report::parse_csv("step,t,norm\n0,0,1\n", "g.csv"), ""); });
  EXPECT_NE(column.find("distance"), std::string::npos) << column;
  const std::string negative = message_of([] {
    report::gradnorm_from_table(report::parse_csv("step,t,distance,norm\n0,0,0,-1\n", "g.csv"), "");
  });
  EXPECT_NE(negative.find("g.csv:2"), std::string::npos) << negative;
}

TEST(Gradnorm, SelectsTheLastProbeByDefaultOrTheGivenStep) {
  const auto run = sample_run();
  EXPECT_EQ(report::select_probe(run, std::nullopt).step, 200);
  EXPECT_EQ(report::select_probe(run, 100).step, 100);
  const std::string msg = message_of([&] { report::select_probe(run, 150); });
  EXPECT_NE(msg.find("run/gradnorm.csv: no probe at step 150"), std::string::npos) << msg;
  EXPECT_NE(msg.find("have steps 0, 100, 200"), std::string::npos) << msg;
}

TEST(Gradnorm, DistanceCurveIsOrderedByDistanceAndCountsZeros) {
  const auto curve = report::distance_curve(sample_run(), std::nullopt);
  EXPECT_EQ(curve.step, 200);
  EXPECT_EQ(curve.distance, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(curve.norm, (std::vector<double>{4, 2, 0.5, 0}));
  EXPECT_EQ(curve.zeros, 1);
  EXPECT_EQ(report::distance_curve(sample_run(), 0).zeros, 0);
}

TEST(Gradnorm, DistanceDataDropsZerosAndSaysHowMany) {
  const std::vector<report::DistanceCurve> curves{
      report::distance_curve(sample_run("rnn"), std::nullopt),
      report::distance_curve(sample_run("lstm"), 100)};
  const std::string dat = report::distance_dat(curves);
  EXPECT_NE(dat.find("# run 'rnn', probe at step 200: 1 zero norm dropped (log scale)"),
            std::string::npos)
      << dat;
  EXPECT_EQ(dat.find("3 0\n"), std::string::npos) << dat;  // the zero point is not in the data
  EXPECT_NE(dat.find("\n0 4 4 4 1\n"), std::string::npos) << dat;  // distance, mean, band, one run
  EXPECT_NE(dat.find("\n\n\n# index 1\n# run 'lstm', probe at step 100: x mean lo hi n\n"), std::string::npos)
      << dat;

  // The CSV keeps every point, zeros included, and parses back.
  const auto csv = report::parse_csv(report::distance_csv(curves), "gradnorm_distance.csv");
  EXPECT_EQ(csv.columns, (std::vector<std::string>{"label", "step", "distance", "norm"}));
  ASSERT_EQ(csv.rows.size(), 8u);
  EXPECT_EQ(csv.rows[3], (std::vector<std::string>{"rnn", "200", "3", "0"}));
  EXPECT_EQ(csv.rows[4], (std::vector<std::string>{"lstm", "100", "0", "1"}));
}

TEST(Gradnorm, RunsSharingALabelAreOneSeriesWithABand) {
  auto other = report::distance_curve(sample_run("rnn"), std::nullopt);
  for (double& n : other.norm) n *= 3;  // 12, 6, 1.5, 0
  const std::vector<report::DistanceCurve> curves{report::distance_curve(sample_run("rnn"), std::nullopt), other,
                                                  report::distance_curve(sample_run("lstm"), std::nullopt)};
  const std::string dat = report::distance_dat(curves);
  EXPECT_NE(dat.find("# run 'rnn', probe at step 200, 2 runs: 2 zero norms dropped"), std::string::npos) << dat;
  EXPECT_NE(dat.find("\n0 8 4 12 2\n"), std::string::npos) << "mean and min–max of two\n" << dat;
  EXPECT_EQ(dat.find("# index 2"), std::string::npos) << "two labels, two blocks\n" << dat;
  const std::string gp = report::distance_script(curves, {"d.dat", "d.png"});
  EXPECT_NE(gp.find("'d.dat' index 0 using 1:3:4 with filledcurves"), std::string::npos) << gp;
  EXPECT_EQ(gp.find("'d.dat' index 1 using 1:3:4"), std::string::npos) << "one lstm run: no band\n" << gp;
  EXPECT_NE(gp.find("mean and min–max of 2 seeds"), std::string::npos) << gp;
}

TEST(Gradnorm, AllZeroCurveIsLeftOutOfThePlotCommand) {
  auto zero = report::distance_curve(sample_run("zero"), std::nullopt);
  for (double& n : zero.norm) n = 0;
  zero.zeros = 4;
  const std::vector<report::DistanceCurve> curves{zero,
                                                  report::distance_curve(sample_run("ok"), 0)};
  const report::PlotFiles files{"d.dat", "d.png"};
  const std::string dat = report::distance_dat(curves);
  EXPECT_NE(dat.find("nothing left to plot"), std::string::npos) << dat;
  EXPECT_NE(dat.find("# index 0\n# run 'ok'"), std::string::npos) << dat;
  const std::string gp = report::distance_script(curves, files);
  EXPECT_EQ(gp.find("title 'zero'"), std::string::npos) << gp;
  EXPECT_NE(gp.find("'d.dat' index 0 using 1:2"), std::string::npos) << gp;
  EXPECT_NE(gp.find("zero norms not drawn"), std::string::npos) << gp;
}

TEST(Gradnorm, RunsOfALabelProbedAtDifferentStepsAreStillOneSeries) {
  // Two seeds of one model stopped at different updates (their last probes: 200 and 100),
  // a second model at 200: two series, the first naming its range of probe steps.
  const std::vector<report::DistanceCurve> curves{report::distance_curve(sample_run("rnn"), std::nullopt),
                                                  report::distance_curve(sample_run("rnn"), 100),
                                                  report::distance_curve(sample_run("lstm"), std::nullopt)};
  const std::string dat = report::distance_dat(curves);
  EXPECT_NE(dat.find("# run 'rnn', probe at steps 100-200, 2 runs"), std::string::npos) << dat;
  EXPECT_EQ(dat.find("# index 2"), std::string::npos) << dat;
  const std::string gp = report::distance_script(curves, {"d.dat", "d.png"});
  EXPECT_NE(gp.find("title 'rnn (steps 100-200)'"), std::string::npos) << gp;
  EXPECT_NE(gp.find("title 'lstm (step 200)'"), std::string::npos) << gp;
  EXPECT_NE(gp.find("(each run''s last probe)'"), std::string::npos) << gp;  // quote doubled
  // The notes (the band, the dropped zeros) sit below the x label, one line each.
  EXPECT_NE(gp.find("set bmargin 7"), std::string::npos) << gp;
  EXPECT_NE(gp.find("'bands: runs sharing a label"), std::string::npos) << gp;
  EXPECT_NE(gp.find("'zero norms not drawn on the log axis: 2 points of 2 runs"), std::string::npos) << gp;
}

TEST(Gradnorm, DistanceScriptNamesItsFilesAndUsesALogAxis) {
  const std::vector<report::DistanceCurve> curves{
      report::distance_curve(sample_run("rnn"), std::nullopt),
      report::distance_curve(sample_run("it's"), std::nullopt)};
  const std::string gp =
      report::distance_script(curves, {"gradnorm_distance.dat", "gradnorm_distance.png"});
  EXPECT_NE(gp.find("set output 'gradnorm_distance.png'"), std::string::npos) << gp;
  EXPECT_NE(gp.find("'gradnorm_distance.dat' index 0 using 1:2"), std::string::npos) << gp;
  EXPECT_NE(gp.find("'gradnorm_distance.dat' index 1 using 1:2"), std::string::npos) << gp;
  EXPECT_NE(gp.find("gnuplot gradnorm_distance.gp"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set logscale y"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set xlabel"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set ylabel"), std::string::npos) << gp;
  EXPECT_NE(gp.find("probe at training step 200"), std::string::npos) << gp;
  EXPECT_NE(gp.find("title 'it''s'"), std::string::npos) << gp;  // quote doubled for gnuplot
}

TEST(Gradnorm, HeatMapRowsAreStepsColumnsAreTimeSteps) {
  const auto map = report::heat_map(sample_run());
  EXPECT_EQ(map.steps, (std::vector<int64_t>{0, 100, 200}));
  EXPECT_EQ(map.ts, (std::vector<int64_t>{0, 1, 2, 3}));
  ASSERT_EQ(map.log10_norm.size(), 12u);
  EXPECT_DOUBLE_EQ(map.at(0, 0), -5);  // step 0, t 0: 1e-05
  EXPECT_DOUBLE_EQ(map.at(0, 3), -2);
  EXPECT_DOUBLE_EQ(map.at(1, 2), -1);  // step 100, t 2: 0.1
  EXPECT_DOUBLE_EQ(map.at(2, 3), std::log10(4.0));
  EXPECT_TRUE(std::isnan(map.at(2, 0)));  // the zero norm
  EXPECT_EQ(map.zeros, 1);
  EXPECT_EQ(map.missing, 0);
}

TEST(Gradnorm, HeatMapMarksMissingCellsAndTilesUnevenSteps) {
  // Probes at 0, 100 and 400 (uneven); the last one lacks t = 1.
  const auto run = report::gradnorm_from_table(
      report::parse_csv("step,t,distance,norm\n0,0,1,1\n0,1,0,1\n100,0,1,10\n100,1,0,10\n"
                        "400,0,1,100\n",
                        "g.csv"),
      "x");
  const auto map = report::heat_map(run);
  EXPECT_EQ(map.missing, 1);
  EXPECT_TRUE(std::isnan(map.at(2, 1)));
  const std::string dat = report::heatmap_dat(map);
  EXPECT_NE(dat.find("# 1 cell missing from gradnorm.csv"), std::string::npos) << dat;
  // Columns t step log10 step_lo step_hi: each cell reaches halfway to its neighbours.
  EXPECT_NE(dat.find("\n0 0 0 -50 50\n"), std::string::npos) << dat;
  EXPECT_NE(dat.find("\n1 100 1 50 250\n"), std::string::npos) << dat;
  EXPECT_NE(dat.find("\n1 400 NaN 250 550\n"), std::string::npos) << dat;
  const std::string gp = report::heatmap_script(map, {"h.dat", "h.png"});
  EXPECT_NE(gp.find("set output 'h.png'"), std::string::npos) << gp;
  EXPECT_NE(gp.find("plot 'h.dat' using"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set yrange [-50:550]"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set xrange [-0.5:1.5]"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set cblabel"), std::string::npos) << gp;
  EXPECT_NE(gp.find("with boxxyerror"), std::string::npos) << gp;  // uneven: a box per cell
  EXPECT_EQ(gp.find("using 1:2:3 with image"), std::string::npos) << gp;
}

TEST(Gradnorm, ARegularHeatMapIsOneImageNotABoxPerCell) {
  // Probes at 0, 100, 200 over t = 0..3: a regular grid, drawn as one bitmap (a small SVG).
  const auto map = report::heat_map(sample_run());
  const std::string gp = report::heatmap_script(map, {"h.dat", "h.png"});
  EXPECT_NE(gp.find("plot 'h.dat' using 1:2:3 with image notitle"), std::string::npos) << gp;
  EXPECT_EQ(gp.find("boxxyerror"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set yrange [-50:250]"), std::string::npos) << gp;
  // The zero norm stays a NaN pixel (not drawn) over the grey backdrop.
  EXPECT_NE(gp.find("grey cells: 1 zero norms"), std::string::npos) << gp;
}

TEST(Gradnorm, SlugsAndUniqueLabels) {
  EXPECT_EQ(report::file_slug("LSTM small/v2"), "lstm_small_v2");
  EXPECT_EQ(report::file_slug(".hidden"), "_.hidden");
  EXPECT_EQ(report::file_slug(""), "_");
  EXPECT_EQ(report::unique_labels({"rnn", "lstm", "rnn", "rnn #2", "rnn"}),
            (std::vector<std::string>{"rnn", "lstm", "rnn #3", "rnn #2", "rnn #4"}));
}

TEST(Gradnorm, RunLabelPrefersConfigThenRunsCsvThenDirectoryName) {
  TempDir dir;
  EXPECT_EQ(report::run_label(make_run(dir, "a-20240101-000000-s1", "from-config")), "from-config");
  const std::string b = make_run(dir, "b-20240101-000000-s1", "");
  core::write_file_atomic(dir / "runs.csv",
                          "run_id,label,final_metric\nb-20240101-000000-s1,from-runs,0.5\n");
  EXPECT_EQ(report::run_label(b), "from-runs");
  EXPECT_EQ(report::run_label(b + "/"), "from-runs");
  EXPECT_EQ(report::run_label(make_run(dir, "c-dir", "")), "c-dir");
}

TEST(Gradnorm, LoadRunAndExpandExperimentDirectories) {
  TempDir dir;
  make_run(dir, "b", "bee");
  make_run(dir, "a", "ay");
  core::make_dirs(dir / "plots");  // not a run: no gradnorm.csv
  const auto dirs = report::expand_run_dirs({dir.path});
  EXPECT_EQ(dirs, (std::vector<std::string>{dir / "a", dir / "b"}));
  EXPECT_EQ(report::expand_run_dirs({dir / "a"}), (std::vector<std::string>{dir / "a"}));
  const auto run = report::load_gradnorm_run(dir / "a");
  EXPECT_EQ(run.label, "ay");
  EXPECT_EQ(run.probes.size(), 3u);
  const std::string msg = message_of([&] { report::load_gradnorm_run(dir / "plots"); });
  EXPECT_NE(msg.find(dir / "plots" + ": no gradnorm.csv"), std::string::npos) << msg;
}

TEST(Gradnorm, MissingGnuplotWritesDataAndScriptsAndSaysPngsWereSkipped) {
  TempDir dir;
  report::GradnormReportOptions opts;
  opts.out_dir = dir / "plots";
  opts.gnuplot = "seqbench-no-such-gnuplot";
  const auto result = report::write_gradnorm_report(
      {sample_run("rnn"), sample_run("rnn"), sample_run("LSTM big")}, opts);
  EXPECT_FALSE(result.rendered);
  EXPECT_NE(result.skipped.find("PNGs skipped: 'seqbench-no-such-gnuplot' not found"),
            std::string::npos)
      << result.skipped;
  EXPECT_EQ(result.skipped.find('\n'), std::string::npos);
  for (const char* name : {"gradnorm_distance.csv", "gradnorm_distance.dat", "gradnorm_distance.gp",
                           "gradnorm_heatmap_rnn.dat", "gradnorm_heatmap_rnn.gp",
                           "gradnorm_heatmap_rnn__2.gp", "gradnorm_heatmap_lstm_big.gp"})
    EXPECT_TRUE(core::file_exists(opts.out_dir + "/" + name)) << name;
  EXPECT_FALSE(core::file_exists(opts.out_dir + "/gradnorm_distance.png"));
  EXPECT_EQ(result.files.size(), 9u);
  // In the CSV the repeated label got a suffix, so the runs can be told apart; the
  // distance figure draws them as one series.
  const std::string csv = core::read_file(opts.out_dir + "/gradnorm_distance.csv");
  EXPECT_NE(csv.find("rnn #2,200,0,4"), std::string::npos) << csv;
  const std::string gp = core::read_file(opts.out_dir + "/gradnorm_heatmap_rnn__2.gp");
  EXPECT_NE(gp.find("'gradnorm_heatmap_rnn__2.dat'"), std::string::npos) << gp;
}

// The input-gradient source (char_ptb --probe-input-grad): its own file names and axis
// labels, the same distance figure, no heat maps.
TEST(Gradnorm, InputGradientSourceReadsInputgradCsvAndDrawsOnlyTheDistanceFigure) {
  TempDir dir;
  make_run(dir, "a", "ay");  // gradnorm.csv only: not an input-gradient run
  core::make_dirs(dir / "b");
  core::write_file_atomic(dir / "b/inputgrad.csv",
                          "step,t,distance,norm\n7,0,2,0.001\n7,1,1,0.01\n7,2,0,0.5\n");
  const auto source = report::GradnormSource::input_gradients();
  EXPECT_EQ(report::expand_run_dirs({dir.path}, source.file),
            (std::vector<std::string>{dir / "b"}));
  const std::string msg = message_of([&] { report::load_gradnorm_run(dir / "a", source); });
  EXPECT_NE(msg.find("no inputgrad.csv"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--probe-input-grad"), std::string::npos) << msg;
  report::GradnormReportOptions opts;
  opts.out_dir = dir / "plots";
  opts.source = source;
  opts.gnuplot = "seqbench-no-such-gnuplot";
  const auto result = report::write_gradnorm_report({report::load_gradnorm_run(dir / "b", source)}, opts);
  EXPECT_EQ(result.files.size(), 3u);
  for (const char* name : {"inputgrad_distance.csv", "inputgrad_distance.dat", "inputgrad_distance.gp"})
    EXPECT_TRUE(core::file_exists(opts.out_dir + "/" + name)) << name;
  const std::string gp = core::read_file(opts.out_dir + "/inputgrad_distance.gp");
  EXPECT_NE(gp.find("∂x_t"), std::string::npos) << gp;
  EXPECT_NE(gp.find("'inputgrad_distance.dat'"), std::string::npos) << gp;
  EXPECT_EQ(gp.find("h_t"), std::string::npos) << gp;
  const std::string csv = core::read_file(opts.out_dir + "/inputgrad_distance.csv");
  EXPECT_NE(csv.find("b,7,0,0.5"), std::string::npos) << csv;
}

TEST(Gradnorm, RendersPngsWithGnuplotOrSaysWhyNot) {
  TempDir dir;
  report::GradnormReportOptions opts;
  opts.out_dir = dir / "plots";
  const auto result = report::write_gradnorm_report({sample_run("rnn"), sample_run("lstm")}, opts);
  if (report::find_program("gnuplot")) {
    ASSERT_TRUE(result.rendered) << result.skipped;
    EXPECT_TRUE(result.skipped.empty());
    EXPECT_TRUE(is_png(opts.out_dir + "/gradnorm_distance.png"));
    EXPECT_TRUE(is_png(opts.out_dir + "/gradnorm_heatmap_rnn.png"));
    EXPECT_TRUE(is_png(opts.out_dir + "/gradnorm_heatmap_lstm.png"));
    // A broken script is an error that names the script.
    core::write_file_atomic(dir / "bad.gp", "set output 'x.png'\nplot 'no-such.dat'\n");
    const std::string msg = message_of([&] { report::run_gnuplot(dir / "bad.gp"); });
    EXPECT_NE(msg.find(dir / "bad.gp" + ": gnuplot failed"), std::string::npos) << msg;
  } else {
    EXPECT_FALSE(result.rendered);
    EXPECT_NE(result.skipped.find("PNGs skipped: 'gnuplot' not found on PATH"), std::string::npos)
        << result.skipped;
    EXPECT_TRUE(core::file_exists(opts.out_dir + "/gradnorm_distance.gp"));
  }
}
