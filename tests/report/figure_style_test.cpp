// The house figure style (report/gnuplot.hpp) on real figures: SVGs drawn through the
// code paths of `report gradnorm`, `report curves` and `report paper` show every series'
// label literally (`mem_rnn` is not mem with a subscript r) and no two series alike in
// colour and dash; heat maps share a colour range; seeds become a mean with a band.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "core/fs.hpp"
#include "report/bands.hpp"
#include "report/curves.hpp"
#include "report/gnuplot.hpp"
#include "report/paper_figures.hpp"
#include "report/paper_report.hpp"
#include "report/paper_spec.hpp"
#include "report/plots.hpp"
#include "report/svg_looks.hpp"
#include "test_util.hpp"

namespace seqbench::report {
namespace {

namespace fs = std::filesystem;
using testutil::TempDir;

// 13 labels, one more than the palette has colours, most with underscores.
const std::vector<std::string> kLabels{"lstm",          "mem_rnn",   "rel_lstm",   "rel_rnn", "sab",
                                       "rnn",           "momentum_lstm", "adam_lstm", "srnn",  "nesterov_lstm",
                                       "gru_x",         "lstm_T200", "deep_rnn_2"};

void need_gnuplot() { ASSERT_TRUE(find_program("gnuplot")) << "gnuplot is not installed; run `make deps`"; }

TEST(FigureStyle, PaletteBandsAndMarkerThinning) {
  std::set<std::string> colours;
  for (int i = 0; i < kPaletteSize; ++i) colours.insert(palette_colour(i));
  EXPECT_EQ(colours.size(), size_t(kPaletteSize));
  EXPECT_EQ(std::string(palette_colour(kPaletteSize)), palette_colour(0));
  EXPECT_EQ(point_interval(5), "pi 1");
  EXPECT_EQ(point_interval(120), "pi 10");  // 12 markers on 120 points
  const std::string house = house_style();
  EXPECT_NE(house.find("set key outside"), std::string::npos) << house;
  EXPECT_NE(house.find("do for [i = 1:60]"), std::string::npos) << house;
  EXPECT_EQ(log_axis("y"), "set logscale y\nset format y '1e%L'\n");

  // Three seeds: mean ± sd, cut to their min–max; two: min–max.
  const auto three = mean_band({{{1, 1}, {2, 10}}, {{1, 2}, {2, 10}}, {{1, 3}}});
  ASSERT_EQ(three.size(), 2u);
  EXPECT_EQ(three[0].n, 3);
  EXPECT_DOUBLE_EQ(three[0].mean, 2);
  EXPECT_DOUBLE_EQ(three[0].lo, 1);  // 2 - sd(1,2,3) = 1
  EXPECT_DOUBLE_EQ(three[0].hi, 3);
  EXPECT_EQ(three[1].n, 2);  // min–max of two
  EXPECT_DOUBLE_EQ(three[1].lo, 10);
  EXPECT_EQ(band_caption(three), "mean ± sd over 3 seeds");
  const auto spread = mean_band({{{0, 0}}, {{0, 0}}, {{0, 0.15}}});  // mean 0.05, sd 0.087
  EXPECT_DOUBLE_EQ(spread[0].lo, 0);
  EXPECT_LT(spread[0].hi, 0.15);
  EXPECT_EQ(band_caption(mean_band({{{0, 1}}, {{0, NAN}}})), "1 seed");
  // A band is drawn only where seeds differ.
  EXPECT_NE(band_plot("f.dat", 0, 2, "x", three).find("filledcurves"), std::string::npos);
  EXPECT_EQ(band_plot("f.dat", 0, 2, "x", mean_band({{{0, 1}}})).find("filledcurves"), std::string::npos);
}

TEST(FigureStyle, GradnormFiguresDrawLabelsLiterallyAndApartWithOneColourRange) {
  need_gnuplot();
  TempDir dir;
  std::vector<GradnormRun> runs;
  for (size_t i = 0; i < kLabels.size(); ++i) {
    std::string csv = "step,t,distance,norm\n";
    for (int step : {0, 50, 100})
      for (int t = 0; t < 30; ++t)  // the last run's norms are 1e-10 of the others: another range
        csv += fmt::format("{},{},{},{}\n", step, t, 29 - t,
                           std::pow(0.8 + 0.01 * double(i), 29 - t) * (i + 1 == kLabels.size() ? 1e-10 : 1.0));
    runs.push_back(gradnorm_from_table(parse_csv(csv, "gradnorm.csv"), kLabels[i]));
  }
  GradnormReportOptions opts;
  opts.out_dir = dir / "plots";
  opts.source.heat_maps = true;
  const GradnormReport r = write_gradnorm_report(runs, opts);
  ASSERT_TRUE(r.rendered) << r.skipped;
  svgtest::expect_literal_and_distinct(opts.out_dir + "/gradnorm_distance.svg", kLabels);
  const std::string first = core::read_file(opts.out_dir + "/gradnorm_heatmap_lstm.gp");
  const std::string last = core::read_file(opts.out_dir + "/gradnorm_heatmap_deep_rnn_2.gp");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(first, m, std::regex("set cbrange \\[(-?\\d+):(-?\\d+)\\]"))) << first;
  EXPECT_NE(last.find(m[0].str()), std::string::npos) << "both heat maps use " << m[0] << "\n" << last;
  EXPECT_LE(std::stoi(m[1]), -12) << "the range reaches the small run's norms";
  EXPECT_NE(r.caption.find(fmt::format("from {} to {}", m[1].str(), m[2].str())), std::string::npos) << r.caption;
}

RunCurves fake_run(const std::string& label, double scale) {
  RunCurves c;
  c.label = label;
  c.metric = "accuracy";
  for (int s = 10; s <= 300; s += 10) {
    c.train_loss.push_back({double(s), scale * 2.0 / s});
    c.train_metric.push_back({double(s), 1 - 1.0 / s});
    if (s % 50 == 0) {
      c.valid_loss.push_back({double(s), scale * 2.5 / s});
      c.valid_metric.push_back({double(s), 1 - 1.5 / s});
    }
  }
  return c;
}

// A sweep over a learning-rate grid (2 models x 2 widths x 4 rates = 16 configs, more
// than the 12 rows the per-config form allows) draws one panel of the metric per model
// and width, one line per rate, in one key, on a shared accuracy scale.
TEST(FigureStyle, ALearningRateGridDrawsOnePanelPerSettingAndALinePerRate) {
  need_gnuplot();
  TempDir dir;
  std::vector<CurveGroup> groups;
  for (const std::string model : {"full", "linear_attention"})
    for (const std::string width : {"64", "128"})
      for (const std::string lr : {"0.0001", "0.000464", "0.00215", "0.01"}) {
        CurveGroup g;
        g.base = model;
        g.label = model + " [optim.lr=" + lr + ", width=" + width + "]";
        g.config = {{"model.name", model}, {"width", width}, {"optim.lr", lr}, {"seed", "1"}};
        g.seeds = {fake_run(model, 1), fake_run(model, 1.1), fake_run(model, 0.9)};
        groups.push_back(std::move(g));
      }
  EXPECT_EQ(curves_caption(groups),
            "one panel per setting, one line per optim.lr: the validation accuracy against updates "
            "(mean ± sd over 3 seeds)");
  const DrawnFigure d = draw_curves(dir / "curves", "Learning curves", groups);
  ASSERT_TRUE(d.status.drawn()) << d.status.message;
  svgtest::expect_literal_and_distinct(
      d.files.svg, {"lr = 0.0001", "lr = 0.000464", "lr = 0.00215", "lr = 0.01", "full [width=64]",
                    "full [width=128]", "linear_attention [width=64]", "linear_attention [width=128]"});
  const std::string gp = core::read_file(d.files.script);
  const auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = gp.find(what); at != std::string::npos; at = gp.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("unset key"), 8u) << "four panels, drawn for the PNG and the SVG";
  EXPECT_EQ(count("set yrange [0:1]\nplot "), 8u) << gp;
  EXPECT_NE(gp.find("one line per optim.lr"), std::string::npos);
  // Rates in numeric order.
  EXPECT_LT(gp.find("lr = 0.0001'"), gp.find("lr = 0.000464'"));
  EXPECT_LT(gp.find("lr = 0.00215'"), gp.find("lr = 0.01'"));
  // Panels in natural order: width 64 before 128.
  EXPECT_LT(gp.find("'full [width=64]'"), gp.find("'full [width=128]'"));
  // A short title names the default font: gnuplot would keep a long one's smaller font.
  EXPECT_NE(gp.find("set title 'full [width=64]' font ''\n"), std::string::npos) << gp;
  // Twelve configs or fewer keep a row per config.
  groups.resize(12);
  EXPECT_EQ(curves_caption(groups), "one row per config: loss and metric against updates, train and validation");
}

TEST(FigureStyle, LearningCurvesHaveOnePanelRowPerConfigAndOneKey) {
  need_gnuplot();
  TempDir dir;
  const std::vector<CurveGroup> groups{
      {"rel_lstm", {fake_run("rel_lstm", 1), fake_run("rel_lstm", 1.2), fake_run("rel_lstm", 0.9)}, "rel_lstm", {}},
      {"mem_rnn", {fake_run("mem_rnn", 1)}, "mem_rnn", {}}};
  const DrawnFigure d = draw_curves(dir / "curves", "Learning curves", groups);
  ASSERT_TRUE(d.status.drawn()) << d.status.message;
  svgtest::expect_literal_and_distinct(d.files.svg, {"train", "validation", "rel_lstm: loss (mean ± sd over 3 seeds)",
                                                     "mem_rnn: accuracy (1 seed)"});
  const std::string gp = core::read_file(d.files.script);
  EXPECT_NE(gp.find("with filledcurves"), std::string::npos) << "three seeds: a band";
  EXPECT_NE(gp.find("set logscale y"), std::string::npos) << "the loss spans decades";
  const auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = gp.find(what); at != std::string::npos; at = gp.find(what, at + 1)) ++n;
    return n;
  };
  // Four panels without a key, then the figure's one key, in the PNG and again in the SVG.
  EXPECT_EQ(count("unset key"), 8u) << gp;
  EXPECT_EQ(count("set key inside"), 2u) << gp;
  // The accuracy panels on a linear [0, 1], the loss panels on their own (log) range.
  EXPECT_EQ(count("set yrange [0:1]\nplot "), 4u) << gp;
  EXPECT_EQ(count("set logscale y\nset format y '1e%L'\nset yrange [*:*]\nplot "), 4u) << gp;
}

// Three seeds of one config as a sweep leaves them: s1 stops at its target after 1000
// updates, s2 runs the whole budget, s3 was interrupted at 500. Only s1 is carried to the
// later updates, so the mean there does not fall as the converged seed leaves.
TEST(FigureStyle, ASeedThatStoppedAtItsTargetKeepsItsLastValueInTheBand) {
  TempDir root;
  const std::string exp = root / "recall";
  const std::vector<std::tuple<std::string, int, std::string>> seeds{
      {"gla-s1", 1000, "1000"}, {"gla-s2", 1500, "-1"}, {"gla-s3", 500, "-1"}};
  std::string rows = "run_id,experiment,label,seed,status,updates_to_target\n";
  for (const auto& [id, last, to_target] : seeds) {
    core::make_dirs(exp + "/" + id);
    core::write_file_atomic(exp + "/" + id + "/config.yaml",
                            fmt::format("label: gla\ntrain: {{seed: {}}}\n", id.back()));
    std::string csv = "step,split,loss,acc\n";
    for (int step = 500; step <= last; step += 500)
      csv += fmt::format("{},train,{},{}\n{},valid,{},{}\n", step, 2.0 / step, id == "gla-s1" ? step / 1000.0 : 0.25,
                         step, 2.0 / step, id == "gla-s1" ? step / 1000.0 : 0.25);
    core::write_file_atomic(exp + "/" + id + "/metrics.csv", csv);
    rows += fmt::format("{},recall,gla,{},finished,{}\n", id, id.back(), to_target);
  }
  core::write_file_atomic(exp + "/runs.csv", rows);
  const std::vector<CurveGroup> groups = experiment_curve_groups(exp);
  ASSERT_EQ(groups.size(), 1u);
  ASSERT_EQ(groups[0].seeds.size(), 3u);
  std::vector<Samples> valid;
  for (const auto& s : groups[0].seeds) {
    valid.push_back(s.valid_metric);
    const bool first = s.dir.ends_with("gla-s1");
    EXPECT_EQ(s.stopped_at_target, first) << s.dir;
    EXPECT_EQ(s.held, first) << s.dir;
    EXPECT_EQ(s.valid_metric.size(), first ? 3u : s.dir.ends_with("gla-s2") ? 3u : 1u) << s.dir;
  }
  const std::vector<BandPoint> band = mean_band(valid);
  ASSERT_EQ(band.size(), 3u);
  EXPECT_EQ(band[2].x, 1500);
  EXPECT_EQ(band[2].n, 2) << "s1 held at 1.0, s2 at 0.25; s3 stopped without reaching the target";
  EXPECT_DOUBLE_EQ(band[2].mean, 0.625);
  EXPECT_EQ(curves_caption(groups),
            "one row per config: loss and metric against updates, train and validation; a run that stopped at "
            "its target keeps its last value after it");
  // The metrics.csv column "acc" reads as "accuracy" on the axis and in the panel title.
  need_gnuplot();
  const DrawnFigure d = draw_curves(root / "curves", "Learning curves", groups);
  ASSERT_TRUE(d.status.drawn()) << d.status.message;
  const std::string gp = core::read_file(d.files.script);
  EXPECT_NE(gp.find("set ylabel 'accuracy'\n"), std::string::npos) << gp;
  EXPECT_EQ(gp.find("set ylabel 'acc'\n"), std::string::npos) << gp;
  svgtest::expect_literal_and_distinct(d.files.svg, {"gla: accuracy (mean ± sd over 3 seeds)"});
}

// A toy paper with Miller & Hardt's Figure 1(a) and 1(b) and a Zoology-style figure with
// 13 models, from sweep directories as `seqbench sweep` leaves them.
TEST(FigureStyle, PaperFiguresDrawTheoryBandsAndOneKey) {
  need_gnuplot();
  TempDir root;
  const std::string stab = root / "papers/toy/stab_small/stability";
  std::string rows = "run_id,experiment,label,status\n";
  for (const double lambda : {0.5, 0.8, 0.9})
    for (int seed = 1; seed <= 3; ++seed)
      for (const std::string analysis : {"truncation", "weights"}) {
        const std::string id = fmt::format("{}-l{}-s{}", analysis, lambda, seed);
        core::make_dirs(stab + "/" + id);
        core::write_file_atomic(stab + "/" + id + "/config.yaml",
                                fmt::format("analysis: {}\nlambda: {}\nseed: {}\n", analysis, lambda, seed));
        std::string csv = analysis == "truncation" ? "k,gap,bound_k_lambda_k\n" : "k,step,gap\n";
        for (int k = 1; k <= 40; ++k) {
          const double bound = k * std::pow(lambda, k);
          if (analysis == "truncation")
            csv += fmt::format("{},{},{}\n", k, 0.3 * bound * (1 + 0.1 * seed), bound);
          else if (k % 8 == 0)
            for (int step = 0; step <= 10; ++step)
              csv += fmt::format("{},{},{}\n", k, step, step * std::pow(lambda, k) * (1 + 0.05 * seed));
        }
        core::write_file_atomic(stab + "/" + id + (analysis == "truncation" ? "/truncation.csv" : "/weight_gap.csv"),
                                csv);
        rows += id + ",stability," + analysis + ",done\n";
      }
  core::write_file_atomic(stab + "/runs.csv", rows);

  const std::string recall = root / "papers/toy/recall_small/recall";
  rows = "run_id,experiment,task,T,vocab,pairs,model,width,state_bytes,status,seed,final_metric\n";
  for (size_t m = 0; m < kLabels.size(); ++m)
    for (int width : {32, 64}) {
      const std::string id = fmt::format("{}-w{}", kLabels[m], width);
      core::make_dirs(recall + "/" + id);
      core::write_file_atomic(recall + "/" + id + "/config.yaml",
                              fmt::format("model: {{d_model: {}}}\nlabel: {}\n", width, kLabels[m]));
      rows += fmt::format("{},recall,mqar,64,64,4,{},{},{},done,1,{}\n", id, kLabels[m], width,
                          width * 100 * (m + 1), 0.05 * double(m) + width / 200.0);
    }
  core::write_file_atomic(recall + "/runs.csv", rows);

  const PaperSpec spec = parse_paper_spec(R"yaml(paper: toy
figures:
  - {id: trunc, kind: truncation, title: "Figure 1(a)", sweep: stab, experiment: stability}
  - {id: wgap, kind: weight_gap, title: "Figure 1(b)", sweep: stab, experiment: stability}
  - {id: state, kind: accuracy_vs_state, title: "Accuracy against state", sweep: recall, experiment: recall}
)yaml",
                                          "paper: toy\ntitle: toy\narxiv: \"1805.10369\"\nnumbers: []\n", "toy");
  PaperReportOptions opts;
  opts.results_root = root.path;
  opts.out_dir = root / "report";
  const PaperReport report = build_paper_report(spec, opts);
  ASSERT_EQ(report.figures.size(), 3u);
  for (const auto& f : report.figures) ASSERT_EQ(f.svgs.size(), 1u) << f.spec->id << ": " << f.status;
  const std::vector<std::string> lambdas{"λ = 0.5", "λ = 0.8", "λ = 0.9"};
  std::vector<std::string> with_bounds = lambdas;
  for (const auto& l : lambdas) with_bounds.push_back("γ k λ^k, " + l);
  svgtest::expect_literal_and_distinct(report.figures[0].svgs[0], with_bounds);
  svgtest::expect_literal_and_distinct(report.figures[1].svgs[0], lambdas);
  svgtest::expect_literal_and_distinct(report.figures[2].svgs[0], kLabels);
  EXPECT_NE(report.figures[0].note.find("mean ± sd over 3 seeds"), std::string::npos) << report.figures[0].note;
  const std::string trunc = core::read_file(fs::path(report.figures[0].svgs[0]).replace_extension(".gp").string());
  EXPECT_NE(trunc.find("with filledcurves"), std::string::npos) << trunc;
  EXPECT_NE(trunc.find(" pi 4 "), std::string::npos) << "40 points, a marker every 4:\n" << trunc;
}

TEST(FigureStyle, TheBenchAttentionScalingFigureIsRedrawnInPlaceWithItsTitleAndGuides) {
  need_gnuplot();
  TempDir bench;
  // What tools/bench/run.sh writes: one block per implementation, and a plain script whose
  // multiplot title names the setting.
  std::string dat;
  for (const std::string impl : {"ours:full_attention", "torch:full_attention", "ours:routing_attention"}) {
    dat += "# " + impl + ": n ms mem_mb\n";
    for (int n = 256; n <= 2048; n *= 2) dat += fmt::format("{} {} {}\n", n, 1e-4 * n * n, 4e-6 * n * n);
    dat += "\n\n";
  }
  core::write_file_atomic(bench / "attention_scaling.dat", dat);
  core::write_file_atomic(bench / "attention_scaling.gp",
                          "set multiplot layout 1,2 title 'One causal attention (1 thread, w=64)'\nplot x\n");
  for (int pass = 0; pass < 2; ++pass) {  // the second reads back what the first wrote
    PaperFigure fig;
    ASSERT_TRUE(attention_scaling_figure(fig, bench.path, bench.path)) << pass;
    ASSERT_EQ(fig.svgs.size(), 1u) << fig.status;
    svgtest::expect_literal_and_distinct(fig.svgs[0],
                                         {"ours:full_attention", "torch:full_attention", "ours:routing_attention"});
    const std::string svg = core::read_file(fig.svgs[0]);
    EXPECT_NE(svg.find("One causal attention (1 thread, w=64)"), std::string::npos) << "pass " << pass;
    EXPECT_NE(svg.find("n^1.5 guide"), std::string::npos) << "pass " << pass;
  }
  PaperFigure none;
  TempDir empty;
  EXPECT_FALSE(attention_scaling_figure(none, empty.path, empty.path));
}

// The committed reference reports, as a reader opens them: every SVG that gnuplot drew
// (its .gp beside it) shows every title its script gives literally, draws tic labels and a
// line, and no two titled series alike.
TEST(FigureStyle, EveryCommittedReferenceSvgShowsItsTitlesLiterallyAndItsSeriesApart) {
  const std::string root = std::string(SEQBENCH_SOURCE_DIR) + "/results/reference";
  static const std::regex title("title '((?:[^']|'')*)'");
  int figures = 0;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.path().extension() != ".svg") continue;
    const fs::path gp = fs::path(e.path()).replace_extension(".gp");
    if (!fs::exists(gp)) continue;
    ++figures;
    const std::string script = core::read_file(gp.string());
    std::set<std::string> titles;
    for (auto it = std::sregex_iterator(script.begin(), script.end(), title); it != std::sregex_iterator(); ++it)
      if (!(*it)[1].str().empty()) titles.insert(std::regex_replace((*it)[1].str(), std::regex("''"), "'"));
    SCOPED_TRACE(e.path().string());
    // A series title in a plot command ("plot ... lt 1 title '...'", over continued
    // lines), not the title of a panel or figure: the figure then needs titled series.
    bool keyed = false, in_plot = false;
    std::istringstream lines(script);
    for (std::string line; std::getline(lines, line);) {
      in_plot = in_plot || line.rfind("plot ", 0) == 0;
      keyed = keyed || (in_plot && line.find(" title '") != std::string::npos);
      in_plot = in_plot && !line.empty() && line.back() == '\\';
    }
    svgtest::expect_literal_and_distinct(e.path().string(), {titles.begin(), titles.end()}, keyed);
  }
  EXPECT_GE(figures, 30) << "the reference reports' figures under " << root;
}

}  // namespace
}  // namespace seqbench::report
