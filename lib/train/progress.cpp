#include "train/progress.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace seqbench::train {
namespace {

constexpr int kBarWidth = 20;
constexpr auto kRedrawInterval = std::chrono::milliseconds(100);
// Return to column 0 / clear to the end of the line (VT100, understood by every
// terminal emulator in use).
constexpr const char* kCr = "\r";
constexpr const char* kClearEol = "\x1b[K";

}  // namespace

Progress::Progress(int64_t total, int64_t start, std::FILE* out, bool quiet,
                   std::optional<bool> force_tty)
    : total_(total),
      start_(start),
      done_(start),
      out_(out),
      quiet_(quiet),
      tty_(force_tty ? *force_tty : (out && ::isatty(::fileno(out)) == 1)),
      t0_(std::chrono::steady_clock::now()),
      last_draw_(t0_) {}

Progress::~Progress() { finish(); }

std::string Progress::format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  auto s = static_cast<int64_t>(std::llround(seconds));
  const int64_t h = s / 3600, m = (s / 60) % 60, sec = s % 60;
  return h > 0 ? fmt::format("{}:{:02}:{:02}", h, m, sec) : fmt::format("{}:{:02}", m, sec);
}

std::string Progress::format_bar(int64_t done, int64_t total, double rate, const Stats& stats,
                                 size_t max_width, bool to_target) {
  const double frac = total > 0 ? std::clamp(double(done) / double(total), 0.0, 1.0) : 1.0;
  const int filled = static_cast<int>(frac * kBarWidth);
  // Appended piecewise: GCC 12 warns falsely (-Wrestrict) on "[" + std::string(...) at -O3.
  std::string out = "[";
  out.append(size_t(filled), '#');
  out.append(size_t(kBarWidth - filled), '.');
  out += ']';
  out += fmt::format(" {}/{} {}%", done, total, static_cast<int>(frac * 100));
  const bool known = std::isfinite(rate) && rate > 0;
  if (!known)
    out += " -- it/s";
  else if (rate >= 1e5)
    out += fmt::format(" {:.3g} it/s", rate);  // bounded width keeps the stats on screen
  else if (rate >= 1)
    out += fmt::format(" {:.1f} it/s", rate);
  else
    out += fmt::format(" {:.2f} s/it", 1.0 / rate);  // slow updates read better this way
  out += " ETA " + format_duration(known ? double(total - done) / rate : NAN);
  if (to_target) out += fmt::format(" to target or {} updates", total);
  if (max_width > 0 && out.size() > max_width) out.resize(max_width);
  // Whole stats only: a number cut short ("loss 12" from "loss 1234") would mislead.
  for (const auto& [name, value] : stats) {
    std::string stat = fmt::format(" {} {:.4g}", name, value);
    if (max_width > 0 && out.size() + stat.size() > max_width) break;
    out += stat;
  }
  return out;
}

size_t Progress::terminal_width() const {
  if (width_ > 0) return width_;
  winsize ws{};
  const int fd = out_ ? ::fileno(out_) : -1;
  if (fd >= 0 && ::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* cols = std::getenv("COLUMNS")) {
    const long c = std::strtol(cols, nullptr, 10);
    if (c > 0) return static_cast<size_t>(c);
  }
  return 80;
}

void Progress::draw(std::chrono::steady_clock::time_point now) {
  const double elapsed = std::chrono::duration<double>(now - t0_).count();
  const double rate = elapsed > 0 ? double(done_ - start_) / elapsed : 0.0;
  // One column short of the width: writing the last column makes some terminals wrap.
  bar_ = format_bar(done_, total_, rate, stats_, terminal_width() - 1, to_target_);
  std::fputs(kCr, out_);
  std::fputs(bar_.c_str(), out_);
  std::fputs(kClearEol, out_);
  std::fflush(out_);
  shown_ = true;
  last_draw_ = now;
}

void Progress::update(int64_t done, const Stats& stats) {
  if (quiet_ || !tty_ || finished_) return;
  done_ = done;
  stats_ = stats;
  const auto now = std::chrono::steady_clock::now();
  if (!shown_ || done >= total_ || now - last_draw_ >= kRedrawInterval) draw(now);
}

void Progress::line(const std::string& text) {
  if (quiet_) return;
  if (tty_ && shown_) {
    std::fputs(kCr, out_);
    std::fputs(kClearEol, out_);
  }
  std::fputs(text.c_str(), out_);
  std::fputc('\n', out_);
  if (tty_ && shown_ && !finished_) {
    std::fputs(bar_.c_str(), out_);
    std::fputs(kClearEol, out_);
  }
  std::fflush(out_);
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (quiet_ || !tty_ || !shown_) return;
  draw(std::chrono::steady_clock::now());
  std::fputc('\n', out_);
  std::fflush(out_);
}

}  // namespace seqbench::train
