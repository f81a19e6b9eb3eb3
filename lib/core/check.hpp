// Errors: one exception type carrying a one-line message and the process exit code.
// SB_CHECK(cond, "fmt {}", args...) throws with a message that should say what to do
// about it (a hint), and with file:line and the failed condition when verbose_errors(), e.g.
//   SB_CHECK(T > 0, "task.T must be positive, got {} (hint: set task.T: 100)", T);
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace seqbench::core {

// Exit codes used by every binary (documented in docs/cli.md).
enum ExitCode : int {
  kExitOk = 0,
  kExitError = 1,        // runtime failure: bad data, I/O, NaN in training, internal check
  kExitUsage = 2,        // bad config or command line
  kExitInterrupted = 130 // Ctrl-C (checkpoint written)
};

// msg with line breaks and other control characters escaped ("\n", "\x1b"), so that an
// error quoting a file's bytes (a token, a header, a column name) is still one line.
std::string one_line(std::string_view msg);

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg, int exit_code = kExitError)
      : std::runtime_error(one_line(msg)), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// Thrown for configuration and command-line mistakes (exit code 2).
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& msg) : Error(msg, kExitUsage) {}
};

// Whether SB_CHECK messages also carry the source line and the failed condition
// ("lib/x.cpp:12: message [check: cond]"). Off by default, so users see the message and
// its hint only; on with --verbose (config::parse_cli), SEQBENCH_VERBOSE=1 in the
// environment, or in a debug build (no NDEBUG).
void set_verbose_errors(bool on);
bool verbose_errors();

[[noreturn]] void check_failed(const char* file, int line, const char* cond, const std::string& msg);

}  // namespace seqbench::core

#define SB_CHECK(cond, ...)                                                            \
  do {                                                                                 \
    if (!(cond)) [[unlikely]]                                                          \
      ::seqbench::core::check_failed(__FILE__, __LINE__, #cond, ::fmt::format(__VA_ARGS__)); \
  } while (0)
