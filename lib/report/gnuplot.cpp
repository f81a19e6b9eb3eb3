#include "report/gnuplot.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/check.hpp"
#include "core/fs.hpp"

namespace seqbench::report {
namespace {

std::string with_line_end(const std::string& s) {
  return s.empty() || s.back() == '\n' ? s : s + "\n";
}

// gnuplot's complaint spans a few lines (the offending line, a caret, the message); the
// last non-empty one says what is wrong.
std::string last_line(const std::string& output) {
  std::string last;
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    std::string line = output.substr(start, end - start);
    if (line.find_first_not_of(" \t\r^") != std::string::npos) last = line;
    start = end + 1;
  }
  return last;
}

constexpr const char* kPalette[kPaletteSize] = {
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",  // Okabe & Ito
    "#000000", "#882255", "#999933", "#332288", "#661100", "#888888",  // black, Tol's darker
};

}  // namespace

std::string house_style() {
  std::string colours;
  for (const char* c : kPalette) colours += std::string(colours.empty() ? "" : " ") + c;
  return fmt::format(
      "# The house style (\"Figure style\" in the report docs): literal text, one number\n"
      "# format, the key outside, linetypes 1..60 = {0} colour-blind-safe colours x {1} dashes.\n"
      "set grid xtics ytics lc rgb '#d0d0d0' lw 1 dt 1\n"
      "set border lw 1 lc rgb '#404040'\n"
      "set tics out nomirror\n"
      "set format x '%g'\nset format y '%g'\nset format cb '%g'\n"
      "set key outside right top vertical Left reverse samplen 4 spacing 1.2 noenhanced\n"
      "set style fill transparent solid 0.2 noborder\n"
      "house_colours = '{2}'\n"
      "house_points = '7 5 9 13 11 15 4'\n"
      "do for [i = 1:60] {{\n"
      "  set linetype i lc rgb word(house_colours, (i - 1) % {0} + 1) dt 1 + (i - 1) % {1} \\\n"
      "      pt 0 + word(house_points, 1 + (i - 1) % 7) lw 2 ps 1\n"
      "}}\n"
      "set linetype cycle 60\n",
      kPaletteSize, kDashTypes, colours);
}

const char* palette_colour(int i) { return kPalette[((i % kPaletteSize) + kPaletteSize) % kPaletteSize]; }

std::string series_style(int i) { return fmt::format("lt {}", i % 60 + 1); }

std::string band_style(int i) {
  return fmt::format("fc rgb '{}' fs transparent solid 0.2 noborder", palette_colour(i));
}

std::string point_interval(size_t points) { return fmt::format("pi {}", std::max<size_t>(1, (points + 11) / 12)); }

std::string log_axis(const std::string& axis) {
  return fmt::format("set logscale {0}\nset format {0} '1e%L'\n", axis);
}

int key_width_px(const std::vector<std::string>& titles) {
  size_t longest = 0;
  for (const auto& t : titles) longest = std::max(longest, t.size());
  return 90 + 8 * int(longest);
}

std::string Panels::begin(const std::string& figure_title) const {
  return fmt::format("set multiplot title {}\n", gp_quote(figure_title));
}

std::string Panels::panel(int k) const {
  const double w = (1 - key) / cols, h = (1 - title) / rows;
  return fmt::format("set origin {:.4f}, {:.4f}\nset size {:.4f}, {:.4f}\nunset key\n", (k % cols) * w,
                     (rows - 1 - k / cols) * h, w, h);
}

std::string Panels::end(const std::string& entries) const {
  return fmt::format(
      "# The one key, alone in the strip at the right.\n"
      "set origin {:.4f}, 0\nset size {:.4f}, {:.4f}\n"
      "unset border\nunset tics\nunset grid\nunset xlabel\nunset ylabel\nunset title\n"
      "unset logscale\nunset colorbox\nset xrange [0:1]\nset yrange [0:1]\nset margins 0, 0, 0, 0\n"
      "set key inside left top vertical Left reverse samplen 4 spacing 1.2 noenhanced\n"
      "plot {}\nunset multiplot\n",
      1 - key, key, 1 - title, entries);
}

std::string gp_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\n' || c == '\r') c = ' ';
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

std::string gnuplot_script(const GnuplotFigure& fig) {
  std::string out = fmt::format(
      "# Written by `{0}`. Restyle freely, then rerun in this directory:\n"
      "#   gnuplot {1}.gp\n"
      "set encoding utf8\n"
      "if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {{\n"
      "  set terminal pngcairo size {2},{3} noenhanced font 'Sans,11'\n"
      "}} else {{\n"
      "  set terminal png size {2},{3} noenhanced\n"
      "}}\n"
      "set output {4}\n",
      fig.written_by, fig.stem, fig.width, fig.height, gp_quote(fig.stem + ".png"));
  // The style, settings and plot, drawn once per picture.
  const std::string figure = house_style() + with_line_end(fig.settings) + with_line_end(fig.plot);
  out += figure + "set output\n";
  if (fig.svg)
    out += fmt::format(
        "\n# The same figure as SVG, from the same settings: what the PNG's panels and key\n"
        "# strip changed (ranges, tics, border) must not carry over.\n"
        "reset\n"
        "set terminal svg size {},{} noenhanced font 'Sans,11'\n"
        "set output {}\n"
        "{}"
        "set output\n",
        fig.svg_width > 0 ? fig.svg_width : fig.width, fig.svg_height > 0 ? fig.svg_height : fig.height,
        gp_quote(fig.stem + ".svg"), figure);
  return out;
}

FigureFiles write_figure(const std::string& dir, const GnuplotFigure& fig,
                         const std::optional<std::string>& data) {
  const std::string d = dir.empty() ? "." : dir;
  core::make_dirs(d);
  FigureFiles files;
  const std::string base = d + "/" + fig.stem;
  files.png = base + ".png";
  if (fig.svg) files.svg = base + ".svg";
  // gnuplot opens its pictures by name and would follow a link there: refused first.
  core::refuse_symlink(files.png);
  if (fig.svg) core::refuse_symlink(files.svg);
  if (data) {
    files.data = base + ".dat";
    core::write_file_atomic(files.data, *data);
  }
  files.script = base + ".gp";
  core::write_file_atomic(files.script, gnuplot_script(fig));
  return files;
}

bool find_program(const std::string& program) {
  if (program.empty()) return false;
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    // An empty entry is the current directory.
    const std::string candidate =
        (end > start ? dirs.substr(start, end - start) : std::string(".")) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate))
      return true;
    start = end + 1;
  }
  return false;
}

GnuplotStatus run_gnuplot(const std::string& script_path, const std::string& program) {
  using Kind = GnuplotStatus::Kind;
  if (!find_program(program))
    return {Kind::kNotFound, fmt::format("'{}' not found on PATH", program)};
  const std::filesystem::path script(script_path);
  const std::string dir = script.parent_path().string();
  const std::string name = script.filename().string();
  int fds[2];
  if (::pipe(fds) != 0)
    throw core::Error(fmt::format("cannot run {}: pipe: {}", program, std::strerror(errno)));
  // Everything the child needs is prepared before fork: after it, only async-signal-safe
  // calls (chdir, dup2, execvp, _exit).
  std::vector<char*> argv{const_cast<char*>(program.c_str()), const_cast<char*>(name.c_str()),
                          nullptr};
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw core::Error(fmt::format("cannot run {}: fork: {}", program, std::strerror(errno)));
  }
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], STDOUT_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[1]);
    if (!dir.empty() && ::chdir(dir.c_str()) != 0) ::_exit(126);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string output;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0) {
      output.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (code == 127 && output.empty())
    return {Kind::kNotStarted, fmt::format("'{}' could not be started", program)};
  if (code != 0)
    throw core::Error(
        fmt::format("{}: {} failed (exit {}): {} (hint: run `{} {}` in {} to see "
                    "the whole message)",
                    script_path, program, code, last_line(output), program, name,
                    dir.empty() ? "." : dir));
  return {Kind::kDrawn, ""};
}

DrawnFigure draw_figure(const std::string& dir, const GnuplotFigure& fig,
                        const std::optional<std::string>& data, const std::string& program) {
  DrawnFigure out;
  out.files = write_figure(dir, fig, data);
  out.status = run_gnuplot(out.files.script, program);
  return out;
}

}  // namespace seqbench::report
