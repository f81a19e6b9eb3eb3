#include "report/gnuplot.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "test_util.hpp"

using namespace seqbench;
using testutil::message_of;
using testutil::TempDir;

namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// An executable shell script standing in for gnuplot.
std::string fake_program(const TempDir& dir, const std::string& name, const std::string& body) {
  const std::string path = dir / name;
  core::write_file_atomic(path, "#!/bin/sh\n" + body);
  ::chmod(path.c_str(), 0755);
  return path;
}

report::GnuplotFigure sample_figure() {
  report::GnuplotFigure fig;
  fig.stem = "curve";
  fig.written_by = "seqbench test";
  fig.settings = "set title " + report::gp_quote("it's λ = 0.8\nsecond line") + " noenhanced\n";
  fig.plot = "plot 'curve.dat' using 1:2 with lines title " + report::gp_quote("a 'b'");
  fig.width = 640;
  fig.height = 400;
  return fig;
}

bool is_png(const std::string& path) {
  if (!core::file_exists(path)) return false;
  const std::string bytes = core::read_file(path);
  return bytes.size() > 8 && bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0;
}

}  // namespace

TEST(Gnuplot, QuotesAwkwardTitlesAsOneLiteral) {
  EXPECT_EQ(report::gp_quote(""), "''");
  EXPECT_EQ(report::gp_quote("plain"), "'plain'");
  EXPECT_EQ(report::gp_quote("it's"), "'it''s'");
  EXPECT_EQ(report::gp_quote("''"), "''''''");
  // Inside single quotes gnuplot takes backslashes, double quotes, braces, % and $ as is.
  EXPECT_EQ(report::gp_quote("C:\\runs \"x\" {y} 10% $1"), "'C:\\runs \"x\" {y} 10% $1'");
  EXPECT_EQ(report::gp_quote("λ = 0.8, ‖∂L/∂h_t‖"), "'λ = 0.8, ‖∂L/∂h_t‖'");  // UTF-8 untouched
  // A line break would end the command: it becomes a space.
  EXPECT_EQ(report::gp_quote("two\nlines\r\n"), "'two lines  '");
}

TEST(Gnuplot, ScriptDrawsThePngThenTheSvgWithTheSamePlot) {
  const std::string gp = report::gnuplot_script(sample_figure());
  EXPECT_EQ(gp.rfind("# Written by `seqbench test`.", 0), 0u) << gp;
  EXPECT_NE(gp.find("#   gnuplot curve.gp\n"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set encoding utf8\n"), std::string::npos) << gp;
  // Literal text everywhere: no enhanced-mode markup (mem_rnn stays mem_rnn).
  EXPECT_NE(gp.find("set terminal pngcairo size 640,400 noenhanced"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set terminal png size 640,400 noenhanced"), std::string::npos) << gp;  // fallback
  EXPECT_NE(gp.find("set terminal svg size 640,400 noenhanced"), std::string::npos) << gp;
  EXPECT_EQ(gp.find(" enhanced"), std::string::npos) << gp;
  // The house style after the PNG terminal and before the figure's own settings, and again
  // for the SVG, which starts from a reset: what the PNG pass left set (a key strip's
  // ranges, unset tics) would otherwise carry over.
  EXPECT_EQ(count(gp, report::house_style()), 2u) << gp;
  EXPECT_LT(gp.find("set terminal pngcairo"), gp.find(report::house_style())) << gp;
  EXPECT_LT(gp.find(report::house_style()), gp.find("set title")) << gp;
  EXPECT_NE(gp.find("set title 'it''s λ = 0.8 second line' noenhanced\n"), std::string::npos) << gp;
  // Pictures by bare name (the script runs in its own directory), PNG first.
  const size_t png = gp.find("set output 'curve.png'\n"), svg = gp.find("set output 'curve.svg'\n");
  ASSERT_NE(png, std::string::npos) << gp;
  ASSERT_NE(svg, std::string::npos) << gp;
  EXPECT_LT(png, gp.find("set title")) << gp;
  EXPECT_LT(png, svg);
  const size_t reset = gp.find("\nreset\n");
  ASSERT_NE(reset, std::string::npos) << gp;
  EXPECT_LT(png, reset);
  EXPECT_LT(reset, gp.find("set terminal svg"));
  EXPECT_LT(svg, gp.rfind(report::house_style()));
  EXPECT_EQ(count(gp, "set title"), 2u) << gp;  // the settings, once per picture
  EXPECT_EQ(count(gp, "plot 'curve.dat' using 1:2 with lines title 'a ''b'''\n"), 2u) << gp;
  EXPECT_EQ(gp.find('/'), gp.find("/∂h_t")) << "no directory in the script:\n" << gp;

  report::GnuplotFigure png_only = sample_figure();
  png_only.svg = false;
  const std::string one = report::gnuplot_script(png_only);
  EXPECT_EQ(one.find("svg"), std::string::npos) << one;
  EXPECT_EQ(count(one, "plot 'curve.dat'"), 1u) << one;
  EXPECT_EQ(one.substr(one.size() - 11), "set output\n") << one;

  report::GnuplotFigure sized = sample_figure();
  sized.svg_width = 900;
  sized.svg_height = 560;
  EXPECT_NE(report::gnuplot_script(sized).find("set terminal svg size 900,560"), std::string::npos);
}

TEST(Gnuplot, WritesTheDataAndScriptNextToThePictures) {
  TempDir dir;
  const std::string out = dir / "figs/a";  // created
  const report::FigureFiles files = report::write_figure(out, sample_figure(), "1 2\n2 4\n");
  EXPECT_EQ(files.data, out + "/curve.dat");
  EXPECT_EQ(files.script, out + "/curve.gp");
  EXPECT_EQ(files.png, out + "/curve.png");
  EXPECT_EQ(files.svg, out + "/curve.svg");
  EXPECT_EQ(core::read_file(files.data), "1 2\n2 4\n");
  EXPECT_EQ(core::read_file(files.script), report::gnuplot_script(sample_figure()));

  // A figure that reads a file of the run's own: no .dat; no SVG asked, none named.
  report::GnuplotFigure fig = sample_figure();
  fig.stem = "gap";
  fig.svg = false;
  const report::FigureFiles no_data = report::write_figure(out, fig, std::nullopt);
  EXPECT_TRUE(no_data.data.empty());
  EXPECT_TRUE(no_data.svg.empty());
  EXPECT_FALSE(core::file_exists(out + "/gap.dat"));
  EXPECT_TRUE(core::file_exists(out + "/gap.gp"));
}

TEST(Gnuplot, APictureThatIsASymlinkIsRefusedBeforeAnythingIsWritten) {
  TempDir dir, outside;
  const std::string victim = outside / "victim.png";
  core::write_file_atomic(victim, "precious");
  for (const char* picture : {"curve.png", "curve.svg"}) {
    const std::string out = dir / picture;  // a directory per case
    core::make_dirs(out);
    std::filesystem::create_symlink(victim, out + "/" + picture);
    const std::string m =
        message_of([&] { report::write_figure(out, sample_figure(), std::string("1 2\n")); });
    EXPECT_NE(m.find("'" + out + "/" + picture + "' is a symbolic link"), std::string::npos) << m;
    EXPECT_FALSE(core::file_exists(out + "/curve.gp"));
    EXPECT_FALSE(core::file_exists(out + "/curve.dat"));
  }
  EXPECT_EQ(core::read_file(victim), "precious");
}

TEST(Gnuplot, MissingProgramIsAStatusWithOneLine) {
  TempDir dir;
  for (const std::string& program : {std::string("seqbench-no-such-gnuplot"), dir / "no/gnuplot"}) {
    EXPECT_FALSE(report::find_program(program));
    const report::DrawnFigure d = report::draw_figure(dir / "out", sample_figure(), "1 1\n", program);
    EXPECT_FALSE(d.status.drawn());
    EXPECT_EQ(d.status.kind, report::GnuplotStatus::Kind::kNotFound);
    EXPECT_EQ(d.status.message, "'" + program + "' not found on PATH");
    // The data and the script are there all the same, to draw later.
    EXPECT_TRUE(core::file_exists(d.files.data));
    EXPECT_TRUE(core::file_exists(d.files.script));
    EXPECT_FALSE(core::file_exists(d.files.png));
  }
}

TEST(Gnuplot, RunsTheProgramOnceInTheScriptsDirectory) {
  TempDir dir;
  // Records where it ran and what it was given, one line per run.
  const std::string fake = fake_program(dir, "fake-gnuplot", "echo \"$(pwd) $*\" >> ran.txt\n");
  const report::DrawnFigure d = report::draw_figure(dir / "out", sample_figure(), "1 1\n", fake);
  EXPECT_TRUE(d.status.drawn()) << d.status.message;
  EXPECT_TRUE(d.status.message.empty());
  const std::string ran = core::read_file(dir / "out/ran.txt");
  EXPECT_EQ(ran, std::filesystem::canonical(dir / "out").string() + " curve.gp\n");
}

TEST(Gnuplot, RejectedScriptThrowsOneLineNamingTheScript) {
  TempDir dir;
  const std::string fake = fake_program(
      dir, "fake-gnuplot",
      "echo 'plot nope' >&2\necho '     ^' >&2\necho '\"curve.gp\" line 12: undefined variable: nope' >&2\n"
      "exit 1\n");
  const report::FigureFiles files = report::write_figure(dir / "out", sample_figure(), "1 1\n");
  const std::string msg = message_of([&] { report::run_gnuplot(files.script, fake); });
  EXPECT_NE(msg.find(files.script + ": " + fake + " failed (exit 1): "), std::string::npos) << msg;
  EXPECT_NE(msg.find("line 12: undefined variable: nope"), std::string::npos) << msg;
  EXPECT_NE(msg.find("hint: run `" + fake + " curve.gp` in " + dir / "out"), std::string::npos)
      << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

// With the real gnuplot (make deps installs gnuplot-nox): both pictures, awkward titles
// included; without it, the status says so.
TEST(Gnuplot, DrawsPngAndSvgWithGnuplotOrSaysWhyNot) {
  TempDir dir;
  const report::DrawnFigure d = report::draw_figure(dir.path, sample_figure(), "1 2\n2 4\n3 8\n");
  if (report::find_program("gnuplot")) {
    ASSERT_TRUE(d.status.drawn()) << d.status.message;
    EXPECT_TRUE(is_png(d.files.png));
    ASSERT_TRUE(core::file_exists(d.files.svg));
    EXPECT_NE(core::read_file(d.files.svg).find("<svg"), std::string::npos);
  } else {
    EXPECT_EQ(d.status.kind, report::GnuplotStatus::Kind::kNotFound);
    EXPECT_EQ(d.status.message, "'gnuplot' not found on PATH");
  }
}
