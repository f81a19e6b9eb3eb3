// Reads what a gnuplot SVG shows: the text it draws and how each titled series looks, so
// tests can check the house style (report/gnuplot.hpp) on real figures: every label drawn
// literally (no enhanced-text subscripts) and no two series alike in colour and dash.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "core/fs.hpp"

namespace seqbench::svgtest {

// The SVG's text elements that are plain text (enhanced text would be split in tspans).
inline std::vector<std::string> plain_texts(const std::string& svg) {
  std::vector<std::string> out;
  static const std::regex text("<text>([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

inline std::string xml_escaped(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '&' ? "&amp;" : c == '<' ? "&lt;" : std::string(1, c);
  return out;
}

// Each titled series: its title -> "colour dash" of the first stroked path in its group
// (a series of points only: its colour and "points"); "" when no group of it has one.
inline std::map<std::string, std::string> series_looks(const std::string& svg) {
  std::map<std::string, std::string> out;
  // gnuplot names a group gnuplot_plot_<n> (<n><letter> in a multiplot) and gives an
  // untitled one that name as its title.
  static const std::regex head("<g id=\"gnuplot_plot_\\w+\" ><title>([^<]*)</title>");
  static const std::regex untitled("gnuplot_plot_\\w+");
  static const std::regex stroke("stroke='(rgb\\([^)]*\\))'( stroke-dasharray='([^']*)')?");
  static const std::regex colour("color='(rgb\\([^)]*\\))'");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), head); it != std::sregex_iterator(); ++it) {
    if (std::regex_match((*it)[1].str(), untitled)) continue;
    const size_t from = size_t(it->position() + it->length());
    size_t to = svg.find("<g id=\"gnuplot_plot_", from);
    if (to == std::string::npos) to = svg.size();
    const std::string body = svg.substr(from, to - from);
    std::smatch m;
    std::string look;
    if (std::regex_search(body, m, stroke)) look = m[1].str() + " " + (m[3].matched ? m[3].str() : "solid");
    else if (std::regex_search(body, m, colour)) look = m[1].str() + " points";
    // A titled series in a panel without a key draws no sample in its group: the look
    // comes from the group that has one (the figure's key).
    if (!look.empty() || !out.count((*it)[1])) out[(*it)[1]] = look;
  }
  return out;
}

// Numbers drawn as text (tic labels), and plot groups with a path of two or more segments
// (a data line; a key sample is one segment) before the next group.
inline std::pair<size_t, size_t> tic_labels_and_lines(const std::string& svg) {
  static const std::regex number("\\s*-?[0-9.]+(e[-+]?[0-9]+)?\\s*");
  size_t tics = 0;
  for (const auto& t : plain_texts(svg)) tics += std::regex_match(t, number);
  static const std::regex polyline("d='M[^']*L[^']*L");
  size_t lines = 0;
  for (size_t at = svg.find("<g id=\"gnuplot_plot_"); at != std::string::npos;) {
    const size_t next = svg.find("<g id=\"gnuplot_plot_", at + 1);
    lines += std::regex_search(svg.substr(at, (next == std::string::npos ? svg.size() : next) - at), polyline);
    at = next;
  }
  return {tics, lines};
}

// Every label appears literally as drawn text, and no two titled series share colour and
// dash; the axes have tic labels and some series draws a line (the SVG is not blank where
// the PNG is not). `keyed`: the figure titles its series, so it must have titled ones (a
// figure drawn with `set key off` may have none).
inline void expect_literal_and_distinct(const std::string& svg_path, const std::vector<std::string>& labels,
                                        bool keyed = true) {
  ASSERT_TRUE(core::file_exists(svg_path)) << svg_path;
  const std::string svg = core::read_file(svg_path);
  const auto [tics, lines] = tic_labels_and_lines(svg);
  EXPECT_GE(tics, 4u) << svg_path << ": no tic labels drawn";
  EXPECT_GE(lines, 1u) << svg_path << ": no series drawn as a line";
  const std::vector<std::string> texts = plain_texts(svg);
  for (const auto& label : labels) {
    bool found = false;
    for (const auto& t : texts) found = found || t.find(xml_escaped(label)) != std::string::npos;
    EXPECT_TRUE(found) << svg_path << ": '" << label << "' is not drawn literally";
  }
  const auto looks = series_looks(svg);
  if (keyed) EXPECT_FALSE(looks.empty()) << svg_path << ": no titled series";
  std::map<std::string, std::string> seen;  // look -> title
  for (const auto& [title, look] : looks) {
    EXPECT_FALSE(look.empty()) << svg_path << ": series '" << title << "' has no stroke or colour";
    const auto [it, fresh] = seen.emplace(look, title);
    EXPECT_TRUE(fresh) << svg_path << ": '" << title << "' and '" << it->second << "' both look like " << look;
  }
}

}  // namespace seqbench::svgtest
