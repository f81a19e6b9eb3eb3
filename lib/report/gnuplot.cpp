#include "report/gnuplot.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

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

std::string gnuplot_script(const GnuplotFigure& fig) {
  std::string out = fmt::format(
      "# Written by `{0}`. Restyle freely, then rerun in this directory:\n"
      "#   gnuplot {1}.gp\n"
      "set encoding utf8\n"
      "if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {{\n"
      "  set terminal pngcairo size {2},{3} enhanced font 'Sans,11'\n"
      "}} else {{\n"
      "  set terminal png size {2},{3} enhanced\n"
      "}}\n"
      "set output {4}\n",
      fig.written_by, fig.stem, fig.width, fig.height, gp_quote(fig.stem + ".png"));
  const std::string plot = with_line_end(fig.plot);
  out += with_line_end(fig.settings) + plot + "set output\n";
  if (fig.svg)
    out += fmt::format(
        "\n# The same figure as SVG.\n"
        "set terminal svg size {},{} enhanced font 'Sans,11'\n"
        "set output {}\n"
        "{}"
        "set output\n",
        fig.svg_width > 0 ? fig.svg_width : fig.width,
        fig.svg_height > 0 ? fig.svg_height : fig.height, gp_quote(fig.stem + ".svg"), plot);
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
