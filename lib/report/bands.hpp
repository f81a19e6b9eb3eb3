// Runs that differ only in their seed, drawn as one series: the mean over the seeds with a
// band around it, ± one standard deviation where 3 or more seeds have a value at an x,
// their min–max where 1 or 2 do (a sd of two values says little). The figures of the
// house style (gnuplot.hpp) use it wherever seeds exist.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace seqbench::report {

using Samples = std::vector<std::pair<double, double>>;  // (x, y) of one seed

struct BandPoint {
  double x = 0, mean = 0, lo = 0, hi = 0;
  int n = 0;  // seeds with a finite y at x
};

// One point per x where some seed has a finite y, in ascending x. The ± sd band is cut to
// the seeds' min–max, so it never shows a value no seed reached (an accuracy below 0, a
// gap below zero on a log axis).
std::vector<BandPoint> mean_band(const std::vector<Samples>& seeds);

// A gnuplot data block: "# title: x mean lo hi n", the points, two blank lines.
std::string band_block(const std::string& title, const std::vector<BandPoint>& points);

// The plot clauses drawing block `index` of `file` as series `series` of the house style:
// the band (left out when no x has two seeds), then the mean as a line whose markers are
// thinned, titled `title` in the key (`notitle` when title is empty).
std::string band_plot(const std::string& file, int index, int series, const std::string& title,
                      const std::vector<BandPoint>& points);

// "mean ± sd over 3 seeds", "mean and min–max of 2 seeds", "1 seed": what a band shows,
// from the largest n among the points.
std::string band_caption(const std::vector<BandPoint>& points);

}  // namespace seqbench::report
