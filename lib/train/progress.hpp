// Progress display for training loops. On a terminal: one line redrawn in place,
//   [#######.............] 1234/5000 24% 310.2 it/s ETA 0:12 loss 0.1234 acc 0.98
// at most every 0.1 s. Not on a terminal (a log file, CI): update() prints nothing and
// the caller prints periodic log lines through line(), so logs never fill with \r junk.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace seqbench::train {

class Progress {
 public:
  using Stats = std::vector<std::pair<std::string, double>>;

  // total: number of updates; start: updates already done (after --resume), so the
  // rate counts only this session's work; out: stream (usually stderr). Whether out is
  // a terminal is decided by isatty(fileno(out)) unless force_tty is given.
  // quiet suppresses all output, including line().
  Progress(int64_t total, int64_t start, std::FILE* out, bool quiet,
           std::optional<bool> force_tty = {});
  ~Progress();  // finish(), so an error message after an exception starts on a fresh line
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // done: updates completed so far (start <= done <= total); stats shown after the ETA.
  void update(int64_t done, const Stats& stats);
  // Prints text and a newline; on a terminal clears the bar first and redraws it after.
  void line(const std::string& text);
  // Draws the final state and ends the bar's line. Idempotent.
  void finish();
  bool is_tty() const { return tty_; }
  // Overrides the detected terminal width (ioctl, else $COLUMNS, else 80); 0 = detect.
  void set_width(size_t columns) { width_ = columns; }

  // "0:12", "12:34", "1:02:03"; "--:--" for negative or non-finite input.
  static std::string format_duration(double seconds);
  // The bar's text without terminal control codes; rate in updates/s (<= 0 or non-finite:
  // unknown). With max_width > 0 the stats that do not fit whole are left out (and the
  // rest cut to max_width).
  // to_target: the run stops early at its target, so the ETA, to `total`, is a bound and
  // says so ("ETA 4:11 to target or 15000 updates").
  static std::string format_bar(int64_t done, int64_t total, double rate, const Stats& stats,
                                size_t max_width = 0, bool to_target = false);
  // The run may stop before `total` (train.target or train.patience set).
  void set_to_target(bool on) { to_target_ = on; }

 private:
  void draw(std::chrono::steady_clock::time_point now);
  size_t terminal_width() const;

  int64_t total_, start_, done_;
  std::FILE* out_;
  bool quiet_, tty_;
  bool shown_ = false;  // a bar is on the current terminal line
  bool finished_ = false;
  bool to_target_ = false;
  size_t width_ = 0;
  Stats stats_;
  std::string bar_;  // last drawn bar, redrawn after line()
  std::chrono::steady_clock::time_point t0_, last_draw_;
};

}  // namespace seqbench::train
