#include "report/plots.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include "core/check.hpp"
#include "core/fs.hpp"

namespace seqbench::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double parse_double(const CsvTable& table, size_t row, int col) {
  const std::string& cell = table.rows[row][col];
  char* end = nullptr;
  const double v = cell.empty() ? 0.0 : std::strtod(cell.c_str(), &end);
  if (cell.empty() || end != cell.c_str() + cell.size())
    throw core::Error(fmt::format("{}:{}: column '{}' holds '{}', not a number", table.path,
                                  row + 2, table.columns[col], cell));
  return v;
}

int64_t parse_int(const CsvTable& table, size_t row, int col) {
  const double v = parse_double(table, row, col);
  if (v != std::floor(v) || std::fabs(v) > 9e15)
    throw core::Error(fmt::format("{}:{}: column '{}' holds '{}', not an integer", table.path,
                                  row + 2, table.columns[col], table.rows[row][col]));
  return static_cast<int64_t>(v);
}

// Doubles in data files: shortest round-trip form, NaN spelled the way gnuplot reads it.
std::string num(double v) { return std::isnan(v) ? "NaN" : fmt::format("{}", v); }

std::string steps_summary(const GradnormRun& run) {
  const auto& p = run.probes;
  std::string s;
  if (p.size() <= 8) {
    for (const auto& probe : p) s += (s.empty() ? "" : ", ") + std::to_string(probe.step);
    return s;
  }
  return fmt::format("{}, {}, {}, ..., {}, {} ({} probes)", p[0].step, p[1].step, p[2].step,
                     p[p.size() - 2].step, p.back().step, p.size());
}

// The terminal lines every script starts with. pngcairo draws anti-aliased UTF-8 text;
// plain png (libgd) is the fallback for gnuplot builds without cairo.
std::string preamble(const std::string& script_name, const std::string& png, int width,
                     int height) {
  return fmt::format(
      "# Written by `seqbench report gradnorm`. Restyle freely, then rerun in this directory:\n"
      "#   gnuplot {}\n"
      "set encoding utf8\n"
      "if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {{\n"
      "  set terminal pngcairo size {},{} enhanced font 'Sans,11'\n"
      "}} else {{\n"
      "  set terminal png size {},{} enhanced\n"
      "}}\n"
      "set output {}\n",
      script_name, width, height, width, height, gp_quote(png));
}

std::string script_name_for(const PlotFiles& files) {
  std::string name = files.png;
  const size_t dot = name.rfind('.');
  if (dot != std::string::npos) name.resize(dot);
  return name + ".gp";
}

// The last path component of a directory given as "a/b" or "a/b/".
std::string dir_name(const std::string& dir) {
  std::string s = dir;
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return std::filesystem::path(s).filename().string();
}

}  // namespace

std::string gp_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\n' || c == '\r') c = ' ';
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

std::string svg_tail(const std::string& svg, int width, int height) {
  return fmt::format(
      "\n# The same figure as SVG.\n"
      "set terminal svg size {},{} enhanced font 'Sans,11'\n"
      "set output {}\n"
      "replot\n"
      "set output\n",
      width, height, gp_quote(svg));
}

std::string png_and_svg_script(const std::string& stem, const std::string& body, int width,
                               int height) {
  return fmt::format(
      "# Written by seqbench. Restyle freely, then rerun in this directory: gnuplot {0}.gp\n"
      "set encoding utf8\n"
      "if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {{\n"
      "  set terminal pngcairo size {1},{2} enhanced font 'Sans,11'\n"
      "}} else {{\n"
      "  set terminal png size {1},{2} enhanced\n"
      "}}\n"
      "set output {3}\n"
      "{5}\n"
      "set output\n"
      "set terminal svg size {1},{2} enhanced font 'Sans,11'\n"
      "set output {4}\n"
      "{5}\n"
      "set output\n",
      stem, width, height, gp_quote(stem + ".png"), gp_quote(stem + ".svg"), body);
}

GradnormRun gradnorm_from_table(const CsvTable& table, const std::string& label) {
  const int c_step = table.col("step"), c_t = table.col("t"), c_dist = table.col("distance"),
            c_norm = table.col("norm");
  if (table.rows.empty())
    throw core::Error(fmt::format(
        "{}: no probes, only a header (hint: the run stopped before its first probe)", table.path));
  // step -> t -> (distance, norm); a repeated (step, t) keeps the later row.
  std::map<int64_t, std::map<int64_t, std::pair<int64_t, double>>> by_step;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const double norm = parse_double(table, r, c_norm);
    if (!(norm >= 0) || std::isinf(norm))
      throw core::Error(fmt::format(
          "{}:{}: norm '{}' is not a finite value >= 0 (hint: the run may have diverged)",
          table.path, r + 2, table.rows[r][c_norm]));
    by_step[parse_int(table, r, c_step)][parse_int(table, r, c_t)] = {parse_int(table, r, c_dist),
                                                                      norm};
  }
  GradnormRun run;
  run.label = label;
  run.source = table.path;
  for (const auto& [step, rows] : by_step) {
    GradnormProbe probe;
    probe.step = step;
    for (const auto& [t, dn] : rows) {
      probe.t.push_back(t);
      probe.distance.push_back(dn.first);
      probe.norm.push_back(dn.second);
    }
    run.probes.push_back(std::move(probe));
  }
  return run;
}

std::string run_label(const std::string& run_dir) {
  const std::string name = dir_name(run_dir);
  try {
    const YAML::Node cfg = YAML::LoadFile(run_dir + "/config.yaml");
    if (cfg["output"] && cfg["output"]["label"]) {
      const std::string label = cfg["output"]["label"].as<std::string>("");
      if (!label.empty()) return label;
    }
  } catch (const YAML::Exception&) {
    // No or unreadable config.yaml: fall through to runs.csv, then the directory name.
  }
  const std::filesystem::path runs_csv =
      std::filesystem::path(run_dir + "/..").lexically_normal() / "runs.csv";
  if (core::file_exists(runs_csv.string())) {
    try {
      const CsvTable runs = read_csv(runs_csv.string());
      if (runs.has("run_id") && runs.has("label")) {
        for (const auto& row : runs.rows)
          if (row[runs.col("run_id")] == name && !row[runs.col("label")].empty())
            return row[runs.col("label")];
      }
    } catch (const core::Error&) {
      // A damaged runs.csv only costs the nicer label.
    }
  }
  return name;
}

GradnormSource GradnormSource::input_gradients() {
  GradnormSource s;
  s.file = "inputgrad.csv";
  s.prefix = "inputgrad";
  s.symbol = "‖∂l_{t+i}/∂x_t‖";
  s.title = "Input-gradient norm against distance";
  s.xlabel = "distance i from the input x_t to the scored prediction";
  s.hint = "`seqbench char_ptb --run-id ID --probe-input-grad L` writes it";
  s.heat_maps = false;
  return s;
}

GradnormRun load_gradnorm_run(const std::string& run_dir, const GradnormSource& source) {
  const std::string path = run_dir + "/" + source.file;
  if (!core::file_exists(path))
    throw core::Error(fmt::format(
        "{}: no {} here (hint: pass run directories such as results/copy/<run-id>; {})",
        run_dir, source.file, source.hint));
  return gradnorm_from_table(read_csv(path), run_label(run_dir));
}

const GradnormProbe& select_probe(const GradnormRun& run, std::optional<int64_t> step) {
  SB_CHECK(!run.probes.empty(), "{}: no probes", run.source);
  if (!step) return run.probes.back();
  for (const auto& probe : run.probes)
    if (probe.step == *step) return probe;
  throw core::Error(fmt::format(
      "{}: no probe at step {} (have steps {}) (hint: pass one of these to --step, or leave "
      "--step out for each run's last probe)",
      run.source, *step, steps_summary(run)));
}

DistanceCurve distance_curve(const GradnormRun& run, std::optional<int64_t> step) {
  const GradnormProbe& probe = select_probe(run, step);
  DistanceCurve curve;
  curve.label = run.label;
  curve.step = probe.step;
  std::vector<size_t> order(probe.t.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return probe.distance[a] < probe.distance[b]; });
  for (size_t i : order) {
    curve.distance.push_back(probe.distance[i]);
    curve.norm.push_back(probe.norm[i]);
    curve.zeros += probe.norm[i] == 0.0;
  }
  return curve;
}

std::string distance_csv(const std::vector<DistanceCurve>& curves) {
  std::string out = csv_line({"label", "step", "distance", "norm"});
  for (const auto& c : curves)
    for (size_t i = 0; i < c.distance.size(); ++i)
      out += csv_line({c.label, CsvWriter::cell(c.step), CsvWriter::cell(c.distance[i]),
                       CsvWriter::cell(c.norm[i])});
  return out;
}

std::string distance_dat(const std::vector<DistanceCurve>& curves,
                         const GradnormSource& source) {
  std::string out = fmt::format(
      "# {} against distance = (L-1) - t, one block per run (gnuplot: index 0, 1, ...)\n"
      "# columns: distance norm\n",
      source.symbol);
  int index = 0;
  for (const auto& c : curves) {
    const int kept = static_cast<int>(c.norm.size()) - c.zeros;
    std::string head = fmt::format("# run '{}', probe at step {}", c.label, c.step);
    if (c.zeros > 0)
      head += fmt::format(": {} zero norm{} dropped (log scale)", c.zeros, c.zeros == 1 ? "" : "s");
    if (kept == 0) {
      out += head + "; nothing left to plot, no block\n";
      continue;
    }
    if (index > 0) out += "\n\n";  // two blank lines end a gnuplot data block
    out += fmt::format("# index {}\n{}\n", index++, head);
    for (size_t i = 0; i < c.norm.size(); ++i)
      if (c.norm[i] > 0) out += fmt::format("{} {}\n", c.distance[i], num(c.norm[i]));
  }
  return out;
}

std::string distance_script(const std::vector<DistanceCurve>& curves, const PlotFiles& files,
                            const GradnormSource& source) {
  bool same_step = true;
  int64_t max_distance = 0;
  std::string zero_note;
  for (const auto& c : curves) {
    same_step &= c.step == curves.front().step;
    for (int64_t d : c.distance) max_distance = std::max(max_distance, d);
    if (c.zeros > 0)
      zero_note += fmt::format("{}{}: {}", zero_note.empty() ? "" : ", ", c.label, c.zeros);
  }
  std::string out = preamble(script_name_for(files), files.png, 960, 600);
  const std::string when = curves.empty() ? std::string("no runs")
                           : same_step    ? fmt::format("probe at training step {}", curves[0].step)
                                          : std::string("each run's last probe");
  out += fmt::format(
      "set title {} noenhanced\n"
      "set xlabel {}\n"
      "set ylabel {}\n"
      "set logscale y\n"
      "set format y '10^{{%L}}'\n"
      "set grid xtics ytics\n"
      "set key outside right top noenhanced\n"
      "set xrange [0:{}]\n",
      gp_quote(source.title + " (" + when + ")"), gp_quote(source.xlabel),
      gp_quote(source.symbol + "  (log scale)"), std::max<int64_t>(max_distance, 1));
  if (max_distance <= 12) out += "set xtics 1\n";  // whole distances on short sequences
  if (!zero_note.empty())
    out += fmt::format("set label {} at screen 0.01, screen 0.02 font ',9' noenhanced\n",
                       gp_quote("zero norms not drawn on the log axis (" + zero_note + ")"));
  std::vector<std::string> clauses;
  int index = 0;
  for (const auto& c : curves) {
    if (c.norm.size() == static_cast<size_t>(c.zeros)) continue;  // no block in the .dat
    const std::string title = same_step ? c.label : fmt::format("{} (step {})", c.label, c.step);
    clauses.push_back(
        fmt::format("{} index {} using 1:2 with linespoints lw 2 pt 7 ps 0.5 title {}",
                    gp_quote(files.data), index++, gp_quote(title)));
  }
  if (clauses.empty()) {
    // Nothing positive to draw: an empty, labelled frame rather than a gnuplot error.
    out +=
        "set yrange [1e-3:1]\nset label 'no nonzero gradient norms' at graph 0.5, graph 0.5 "
        "center\nplot NaN notitle\n";
    return out;
  }
  out += "plot ";
  for (size_t i = 0; i < clauses.size(); ++i)
    out += clauses[i] + (i + 1 < clauses.size() ? ", \\\n     " : "\n");
  return out;
}

HeatMap heat_map(const GradnormRun& run) {
  HeatMap map;
  map.label = run.label;
  std::set<int64_t> ts;
  for (const auto& probe : run.probes) {
    map.steps.push_back(probe.step);
    ts.insert(probe.t.begin(), probe.t.end());
  }
  map.ts.assign(ts.begin(), ts.end());
  map.log10_norm.assign(map.steps.size() * map.ts.size(), kNaN);
  std::vector<char> seen(map.log10_norm.size(), 0);
  for (size_t r = 0; r < run.probes.size(); ++r) {
    const auto& probe = run.probes[r];
    for (size_t i = 0; i < probe.t.size(); ++i) {
      const size_t c = std::lower_bound(map.ts.begin(), map.ts.end(), probe.t[i]) - map.ts.begin();
      const size_t k = r * map.ts.size() + c;
      seen[k] = 1;
      if (probe.norm[i] > 0)
        map.log10_norm[k] = std::log10(probe.norm[i]);
      else
        ++map.zeros;
    }
  }
  for (char s : seen) map.missing += !s;
  return map;
}

std::string heatmap_dat(const HeatMap& map) {
  std::string out = fmt::format(
      "# run '{}': log10 ||dL/dh_t|| per (time step t, training step)\n"
      "# columns: t step log10_norm step_lo step_hi (step_lo..step_hi: the cell's vertical "
      "extent, halfway to the neighbouring probes)\n",
      map.label);
  if (map.zeros > 0)
    out += fmt::format("# {} zero norm{} (log10 = -inf) written as NaN: blank cells\n", map.zeros,
                       map.zeros == 1 ? "" : "s");
  if (map.missing > 0)
    out += fmt::format("# {} cell{} missing from gradnorm.csv written as NaN: blank cells\n",
                       map.missing, map.missing == 1 ? "" : "s");
  const size_t rows = map.steps.size();
  for (size_t r = 0; r < rows; ++r) {
    // Cells reach halfway to the neighbouring probes, so unevenly spaced probes (a resumed
    // run, a final probe) still tile the plane without gaps or overlaps.
    const double step = static_cast<double>(map.steps[r]);
    const double below = r > 0      ? (step - map.steps[r - 1]) / 2
                         : rows > 1 ? (map.steps[1] - step) / 2
                                    : 0.5;
    const double above = r + 1 < rows ? (map.steps[r + 1] - step) / 2 : below;
    if (r > 0) out += "\n";
    for (size_t c = 0; c < map.ts.size(); ++c)
      out += fmt::format("{} {} {} {} {}\n", map.ts[c], map.steps[r], num(map.at(r, c)),
                         num(step - below), num(step + above));
  }
  return out;
}

std::string heatmap_script(const HeatMap& map, const PlotFiles& files) {
  std::string out = preamble(script_name_for(files), files.png, 960, 600);
  const int64_t t_lo = map.ts.empty() ? 0 : map.ts.front();
  const int64_t t_hi = map.ts.empty() ? 0 : map.ts.back();
  const size_t rows = map.steps.size();
  double y_lo = 0, y_hi = 1;
  if (rows == 1) {
    y_lo = map.steps[0] - 0.5;
    y_hi = map.steps[0] + 0.5;
  } else if (rows > 1) {
    y_lo = map.steps.front() - (map.steps[1] - map.steps[0]) / 2.0;
    y_hi = map.steps.back() + (map.steps[rows - 1] - map.steps[rows - 2]) / 2.0;
  }
  out += fmt::format(
      "set title {} noenhanced\n"
      "set xlabel 'time step t'\n"
      "set ylabel 'training step (updates)'\n"
      "set cblabel 'log_{{10}} ‖∂L/∂h_t‖'\n"
      "set xrange [{}:{}]\n"
      "set yrange [{}:{}]\n"
      "set tics out nomirror\n"
      "# viridis: dark = small gradient norm, yellow = large\n"
      "set palette defined (0 '#440154', 1 '#472c7a', 2 '#3b518b', 3 '#2c718e', 4 '#21908d', "
      "5 '#27ad81', 6 '#5cc863', 7 '#aadc32', 8 '#fde725')\n"
      // A border in the cell's own colour hides the hairline seams anti-aliasing leaves.
      "set style fill solid 1.0 border\n",
      gp_quote(map.label + ": gradient norm over training"), t_lo - 0.5, t_hi + 0.5, num(y_lo),
      num(y_hi));
  // Whole time steps and probe steps only: gnuplot's automatic tics would put labels at
  // 0.5 on a short sequence or a single probe.
  if (t_hi - t_lo <= 12) out += "set xtics 1\n";
  if (rows == 1) out += fmt::format("set ytics ({})\n", map.steps[0]);
  if (map.zeros > 0 || map.missing > 0) {
    std::string note = "grey cells:";
    if (map.zeros > 0) note += fmt::format(" {} zero norms (truncated or underflowed)", map.zeros);
    if (map.missing > 0)
      note += fmt::format("{} {} missing from gradnorm.csv", map.zeros > 0 ? "," : "", map.missing);
    // NaN cells are not drawn; a grey backdrop tells them apart from the page.
    out += fmt::format(
        "set object 1 rectangle from graph 0, graph 0 to graph 1, graph 1 behind "
        "fillcolor rgb '#d0d0d0' fillstyle solid noborder\n"
        "set label {} at screen 0.01, screen 0.02 font ',9' noenhanced\n",
        gp_quote(note));
  }
  out += fmt::format(
      "# Boxes rather than `with image`, which cannot draw a single probe or uneven spacing.\n"
      "# A NaN colour alone would still paint the box, so NaN cells get no y ($3 == $3 is\n"
      "# false for NaN) and are skipped.\n"
      "plot {} using 1:($3 == $3 ? $2 : NaN):($1-0.5):($1+0.5):4:5:3 with boxxyerror \\\n"
      "     lc palette notitle\n",
      gp_quote(files.data));
  return out;
}

std::string file_slug(const std::string& label) {
  std::string out;
  for (char ch : label) {
    const unsigned char c = static_cast<unsigned char>(ch);
    out += std::isalnum(c) || c == '-' || c == '_' || c == '.' ? static_cast<char>(std::tolower(c))
                                                               : '_';
  }
  if (out.empty() || out[0] == '.') out.insert(out.begin(), '_');  // no hidden files
  return out;
}

std::vector<std::string> unique_labels(const std::vector<std::string>& labels) {
  std::set<std::string> taken(labels.begin(), labels.end());
  std::set<std::string> used;
  std::map<std::string, int> next_suffix;
  std::vector<std::string> out;
  for (const auto& label : labels) {
    if (used.insert(label).second) {
      out.push_back(label);
      continue;
    }
    int& k = next_suffix.try_emplace(label, 2).first->second;
    std::string candidate = fmt::format("{} #{}", label, k++);
    // "rnn #2" may itself be a label given on the command line.
    while (taken.count(candidate)) candidate = fmt::format("{} #{}", label, k++);
    taken.insert(candidate);
    used.insert(candidate);
    out.push_back(candidate);
  }
  return out;
}

std::vector<std::string> expand_run_dirs(const std::vector<std::string>& paths,
                                         const std::string& file) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const auto& p : paths) {
    if (core::file_exists(p + "/" + file) || !fs::is_directory(p)) {
      out.push_back(p);  // a run (or a mistake load_gradnorm_run will name)
      continue;
    }
    std::vector<std::string> runs;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(p, ec))
      if (entry.is_directory() && core::file_exists(entry.path().string() + "/" + file))
        runs.push_back(entry.path().string());
    std::sort(runs.begin(), runs.end());
    if (runs.empty()) runs.push_back(p);
    out.insert(out.end(), runs.begin(), runs.end());
  }
  return out;
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
    std::string dir = dirs.substr(start, end - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate))
      return true;
    start = end + 1;
  }
  return false;
}

GnuplotResult run_gnuplot(const std::string& script_path, const std::string& program) {
  if (!find_program(program)) return {false, fmt::format("'{}' not found on PATH", program)};
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
    return {false, fmt::format("'{}' could not be started", program)};
  if (code != 0) {
    // gnuplot's complaint spans a few lines (the offending line, a caret, the message);
    // keep the last non-empty one, which says what is wrong.
    std::string last;
    size_t start = 0;
    while (start < output.size()) {
      size_t end = output.find('\n', start);
      if (end == std::string::npos) end = output.size();
      std::string line = output.substr(start, end - start);
      if (line.find_first_not_of(" \t\r^") != std::string::npos) last = line;
      start = end + 1;
    }
    throw core::Error(
        fmt::format("{}: {} failed (exit {}): {} (hint: run `{} {}` in {} to see "
                    "the whole message)",
                    script_path, program, code, last, program, name, dir.empty() ? "." : dir));
  }
  return {true, ""};
}

GradnormReport write_gradnorm_report(std::vector<GradnormRun> runs,
                                     const GradnormReportOptions& opts) {
  SB_CHECK(!runs.empty(),
           "no runs to plot (hint: pass run directories such as results/copy/<run-id>)");
  std::vector<std::string> labels;
  for (const auto& r : runs) labels.push_back(r.label);
  labels = unique_labels(labels);
  for (size_t i = 0; i < runs.size(); ++i) runs[i].label = labels[i];

  std::vector<DistanceCurve> curves;
  for (const auto& r : runs) curves.push_back(distance_curve(r, opts.step));

  const std::string dir = opts.out_dir.empty() ? "." : opts.out_dir;
  core::make_dirs(dir);
  GradnormReport report;
  std::vector<std::string> scripts;
  auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = dir + "/" + name;
    core::write_file_atomic(path, text);
    report.files.push_back(path);
    return path;
  };

  const std::string& prefix = opts.source.prefix;
  const PlotFiles dist{prefix + "_distance.dat", prefix + "_distance.png"};
  write(prefix + "_distance.csv", distance_csv(curves));
  write(dist.data, distance_dat(curves, opts.source));
  scripts.push_back(write(prefix + "_distance.gp",
                          distance_script(curves, dist, opts.source) +
                              svg_tail(prefix + "_distance.svg", 900, 560)));

  std::set<std::string> slugs;
  for (const auto& r : opts.source.heat_maps ? runs : std::vector<GradnormRun>{}) {
    std::string slug = file_slug(r.label);
    for (int k = 2; !slugs.insert(slug).second; ++k)
      slug = fmt::format("{}-{}", file_slug(r.label), k);
    const std::string base = prefix + "_heatmap_" + slug;
    const HeatMap map = heat_map(r);
    const PlotFiles files{base + ".dat", base + ".png"};
    write(files.data, heatmap_dat(map));
    scripts.push_back(write(base + ".gp", heatmap_script(map, files) + svg_tail(base + ".svg", 900, 560)));
  }

  if (!find_program(opts.gnuplot)) {
    report.skipped = fmt::format(
        "PNGs skipped: '{}' not found on PATH; data and .gp scripts are in {} (install "
        "gnuplot-nox, e.g. `make deps`, then run `gnuplot NAME.gp` there)",
        opts.gnuplot, dir);
    return report;
  }
  for (const auto& script : scripts) {
    const GnuplotResult result = run_gnuplot(script, opts.gnuplot);
    if (!result.rendered) {
      report.skipped =
          fmt::format("PNGs skipped: {}; data and .gp scripts are in {}", result.message, dir);
      return report;
    }
    report.files.push_back(script.substr(0, script.size() - 3) + ".png");
    report.files.push_back(script.substr(0, script.size() - 3) + ".svg");
  }
  report.rendered = true;
  return report;
}

}  // namespace seqbench::report
