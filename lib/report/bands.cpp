#include "report/bands.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "report/gnuplot.hpp"

namespace seqbench::report {

std::vector<BandPoint> mean_band(const std::vector<Samples>& seeds) {
  std::map<double, std::vector<double>> at;
  for (const auto& s : seeds)
    for (const auto& [x, y] : s)
      if (std::isfinite(x) && std::isfinite(y)) at[x].push_back(y);
  std::vector<BandPoint> out;
  for (const auto& [x, ys] : at) {
    BandPoint p;
    p.x = x;
    p.n = int(ys.size());
    double sum = 0;
    for (double y : ys) sum += y;
    p.mean = sum / p.n;
    const auto [lo, hi] = std::minmax_element(ys.begin(), ys.end());
    if (p.n >= 3) {
      double ss = 0;
      for (double y : ys) ss += (y - p.mean) * (y - p.mean);
      const double sd = std::sqrt(ss / (p.n - 1));
      p.lo = std::max(p.mean - sd, *lo);  // never beyond what a seed reached
      p.hi = std::min(p.mean + sd, *hi);
    } else {
      p.lo = *lo;
      p.hi = *hi;
    }
    out.push_back(p);
  }
  return out;
}

std::string band_block(const std::string& title, const std::vector<BandPoint>& points) {
  std::string out = fmt::format("# {}: x mean lo hi n\n", title);
  for (const auto& p : points) out += fmt::format("{} {} {} {} {}\n", p.x, p.mean, p.lo, p.hi, p.n);
  return out + "\n\n";
}

std::string band_plot(const std::string& file, int index, int series, const std::string& title,
                      const std::vector<BandPoint>& points) {
  const bool band = std::any_of(points.begin(), points.end(), [](const BandPoint& p) { return p.n > 1; });
  std::string out;
  if (band)
    out += fmt::format("{} index {} using 1:3:4 with filledcurves {} notitle, ", gp_quote(file), index,
                       band_style(series));
  out += fmt::format("{} index {} using 1:2 with linespoints {} {} {}", gp_quote(file), index,
                     series_style(series), point_interval(points.size()),
                     title.empty() ? std::string("notitle") : "title " + gp_quote(title));
  return out;
}

std::string band_caption(const std::vector<BandPoint>& points) {
  int n = 0;
  for (const auto& p : points) n = std::max(n, p.n);
  if (n >= 3) return fmt::format("mean ± sd over {} seeds", n);
  if (n == 2) return "mean and min–max of 2 seeds";
  return "1 seed";
}

}  // namespace seqbench::report
