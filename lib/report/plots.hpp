// `seqbench report gradnorm`: gradient-norm figures from the runs' gradnorm.csv files.
//   (a) ||dL/dh_t|| against the distance to the scored output at one probe step, one
//       curve per run, log-scale norm (the figure of Kerg et al., "Untangling tradeoffs
//       between recurrence and self-attention");
//   (b) per run, a heat map of log10 ||dL/dh_t|| over (time step t, training step), as
//       in MomentumRNN's Figure 2.
// The data (.csv/.dat) and gnuplot scripts (.gp) are written next to the PNGs so a user
// can restyle a figure and rerun `gnuplot NAME.gp` in that directory.
//
// Layers: the runs' data is read and shaped in gradnorm.hpp; the *_csv / *_dat / *_script
// functions here are pure (curves and maps in, text out); the scripts are laid out, written
// and drawn by the shared gnuplot writer (gnuplot.hpp); write_gradnorm_report ties them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/gnuplot.hpp"
#include "report/gradnorm.hpp"

namespace seqbench::report {

// The bare file names a script refers to: scripts run in their own directory, so the
// data and the PNG sit beside them.
struct PlotFiles {
  std::string data;  // e.g. "gradnorm_distance.dat"
  std::string png;   // e.g. "gradnorm_distance.png"
};

// gradnorm_distance.csv: label,step,distance,norm for every point, zeros included.
std::string distance_csv(const std::vector<DistanceCurve>& curves);
// gnuplot data: one block per label and probe step (gnuplot `index i`), columns
// "distance mean lo hi n" over the curves sharing them (bands.hpp), zero norms left out
// with a comment line giving their count.
std::string distance_dat(const std::vector<DistanceCurve>& curves,
                         const GradnormSource& source = {});
// The gnuplot script drawing every curve with at least one nonzero norm on a log axis,
// as files.png and as the .svg of the same name.
std::string distance_script(const std::vector<DistanceCurve>& curves, const PlotFiles& files,
                            const GradnormSource& source = {});

// A colour range of heat maps (log10 norms); lo >= hi: gnuplot's own range per map.
struct ColourRange {
  double lo = 0, hi = 0;
};
// Whole decades around every finite value of the maps, so maps shown side by side
// compare; empty when none has a value.
ColourRange shared_colour_range(const std::vector<HeatMap>& maps);

// gnuplot data: lines "t step log10_norm", one block per probe step, NaN written as NaN.
std::string heatmap_dat(const HeatMap& map);
// gnuplot script: boxes, x = t, y = training step, each cell reaching halfway to the
// neighbouring probes; drawn as files.png and as the .svg of the same name.
std::string heatmap_script(const HeatMap& map, const PlotFiles& files, const ColourRange& range = {});

// Lower-case letters, digits, '-', '_' and '.'; anything else becomes '_' (file names
// from labels).
std::string file_slug(const std::string& label);

struct GradnormReportOptions {
  std::string out_dir;              // created if missing
  GradnormSource source;            // what is drawn (file names follow source.prefix)
  std::optional<int64_t> step;      // probe step of figure (a); empty: each run's last
  std::string gnuplot = "gnuplot";  // the program run_gnuplot uses
};

struct GradnormReport {
  std::vector<std::string> files;  // paths written (data, scripts, PNGs), in order
  bool rendered = false;           // PNGs drawn
  std::string skipped;             // one line saying why PNGs were skipped, else empty
  std::string caption;             // the heat maps' shared colour range, when several
};

// Writes gradnorm_distance.{csv,dat,gp,png,svg} and gradnorm_heatmap_<slug>.{dat,gp,png,svg}
// per run into opts.out_dir (data and scripts atomically), then renders the pictures when
// opts.gnuplot is found. Runs sharing a label (after name_apart) are one series of the
// distance figure, their mean with a band; heat maps get labels made unique (" #2"). The heat maps share one colour
// range (shared_colour_range), which the report's caption gives. A script gnuplot rejects throws.
GradnormReport write_gradnorm_report(std::vector<GradnormRun> runs,
                                     const GradnormReportOptions& opts);

}  // namespace seqbench::report
