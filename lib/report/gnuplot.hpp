// The one gnuplot writer every figure of seqbench goes through: the gradient-norm figures
// (plots.hpp), the paper reports' figures, MiniGrid's learning curve, the stability
// analyses and the attention analyses.
//
// A figure is a script, usually with its data, written next to its pictures, so that a
// user can restyle it and rerun `gnuplot STEM.gp` in that directory:
//   DIR/STEM.dat   the data (left out when the script reads a file the run wrote itself)
//   DIR/STEM.gp    the script; it names its data and pictures by bare file name
//   DIR/STEM.png   drawn by one run of gnuplot in DIR
//   DIR/STEM.svg   the same figure as SVG (optional)
// Every script has the same layout: who wrote it and how to rerun it, `set encoding utf8`,
// the PNG terminal (pngcairo, with anti-aliased UTF-8 text, or libgd's png where gnuplot
// was built without cairo), the house style, the figure's settings, its plot commands;
// then `reset`, the SVG terminal, and the house style, settings and plot commands once
// more (from a reset, so that nothing the PNG's plot left set carries over).
//
// The house style (house_style(), docs/report.md "Figure style") is one look for every
// figure, made for papers: text is literal (the terminals run noenhanced, so `mem_rnn`
// never becomes a subscript), numbers on an axis share one format, the grid is light, the
// key sits outside the plot at the right, and linetypes 1..60 are a colour-blind-safe
// palette of 12 colours crossed with 5 dash types and 7 point types, so series i (drawn
// with series_style(i)) differs from every other of the first 60 in colour or dash.
//
// Layers: gp_quote and gnuplot_script are pure (text in, text out); write_figure writes
// files; run_gnuplot runs the one external program; draw_figure ties them.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace seqbench::report {

// A gnuplot string literal: single quotes take everything literally except '' for ';
// a line break (which would end the command) becomes a space.
std::string gp_quote(const std::string& s);

// The settings every script starts with (see above); a figure's own settings follow and
// may override them.
std::string house_style();

// The palette, in the order series take it: Okabe & Ito's colour-blind-safe colours
// (without their yellow, too faint on white), then darker tones of Paul Tol's.
inline constexpr int kPaletteSize = 12;
inline constexpr int kDashTypes = 5;
const char* palette_colour(int i);  // i mod kPaletteSize, as '#rrggbb'

// Series i (from 0) of a figure: "lt i+1", its colour, dash and point type (the house
// linetypes). Series i and j differ in colour or dash whenever i != j and both < 60.
std::string series_style(int i);
// A translucent band in series i's colour (mean ± spread, drawn with filledcurves).
std::string band_style(int i);
// "pi N": a marker every N points, about 12 markers on a line of `points` points.
std::string point_interval(size_t points);
// Log scale on `axis` ("x", "y") with its tick labels in one format (1e-3, 1e-2, ...).
std::string log_axis(const std::string& axis);

// The pixels a key of these titles needs at the house font (its sample, gaps and the
// longest title), for sizing Panels::key.
int key_width_px(const std::vector<std::string>& titles);

// A figure of rows x cols panels (one multiplot) that share one key, drawn alone in a
// strip at the right: begin(title), then per panel k (row by row) panel(k) and its plot,
// then end(entries) with the key's entries, e.g. "NaN with linespoints lt 1 title 'lstm'".
struct Panels {
  int rows = 1, cols = 1;
  double key = 0.16;    // the key's strip, a fraction of the width
  double title = 0.07;  // the figure's title, a fraction of the height
  std::string begin(const std::string& figure_title) const;
  std::string panel(int k) const;  // its origin and size, no key
  std::string end(const std::string& entries) const;
};

struct GnuplotFigure {
  std::string stem;        // file names: STEM.gp, STEM.dat, STEM.png, STEM.svg
  std::string written_by;  // the command named in the script's first line
  std::string settings;    // `set` commands (title, axes, key ...), once, before the plot
  std::string plot;        // what draws: plot commands, or a whole multiplot block; run
                           // once per picture, so no `set label` here (it would repeat)
  int width = 960, height = 600;      // the PNG, in pixels
  bool svg = true;                    // also STEM.svg
  int svg_width = 0, svg_height = 0;  // 0: the PNG's size
};

// The whole script of a figure (the layout above).
std::string gnuplot_script(const GnuplotFigure& fig);

// The files of a figure in its directory.
struct FigureFiles {
  std::string data;    // DIR/STEM.dat, empty when the figure has no data file of its own
  std::string script;  // DIR/STEM.gp
  std::string png;     // DIR/STEM.png (once drawn)
  std::string svg;     // DIR/STEM.svg (once drawn), empty when the figure has none
};

// Creates dir ("" = ".") if missing and writes STEM.dat (when data is given) and STEM.gp
// into it, each atomically. Throws core::Error naming the path it cannot write, and,
// before writing anything, when STEM.png or STEM.svg is a symbolic link (gnuplot would
// write through it).
FigureFiles write_figure(const std::string& dir, const GnuplotFigure& fig,
                         const std::optional<std::string>& data);

// True if `program` (a name looked up on $PATH, or a path with a '/') is executable.
bool find_program(const std::string& program);

// What became of one run of gnuplot.
struct GnuplotStatus {
  enum class Kind {
    kDrawn,       // the script ran to the end: its pictures are there
    kNotFound,    // the program is not on $PATH (or not executable)
    kNotStarted,  // it is there but could not be started
  };
  Kind kind = Kind::kNotFound;
  std::string message;  // one line saying why nothing was drawn; empty when drawn
  bool drawn() const { return kind == Kind::kDrawn; }
};

// Runs `program script` once, in the script's directory. A program that is missing or
// cannot start is a status (figures are never worth failing a run over by themselves); a
// script gnuplot rejects (exit status != 0) throws core::Error, one line: the script, the
// exit status and gnuplot's last complaint, with the command that shows all of it.
GnuplotStatus run_gnuplot(const std::string& script_path, const std::string& program = "gnuplot");

struct DrawnFigure {
  FigureFiles files;
  GnuplotStatus status;
};

// write_figure, then run_gnuplot on its script.
DrawnFigure draw_figure(const std::string& dir, const GnuplotFigure& fig,
                        const std::optional<std::string>& data,
                        const std::string& program = "gnuplot");

}  // namespace seqbench::report
