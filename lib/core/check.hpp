// Errors: one exception type carrying a one-line message and the process exit code.
// SB_CHECK(cond, "fmt {}", args...) throws with file:line, the failed condition and a
// message that should say what to do about it (a hint), e.g.
//   SB_CHECK(T > 0, "task.T must be positive, got {} (hint: set task.T: 100)", T);
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace seqbench::core {

// Exit codes used by every binary (documented in docs/cli.md).
enum ExitCode : int {
  kExitOk = 0,
  kExitError = 1,        // runtime failure: bad data, I/O, NaN in training, internal check
  kExitUsage = 2,        // bad config or command line
  kExitInterrupted = 130 // Ctrl-C (checkpoint written)
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg, int exit_code = kExitError)
      : std::runtime_error(msg), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// Thrown for configuration and command-line mistakes (exit code 2).
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& msg) : Error(msg, kExitUsage) {}
};

[[noreturn]] void check_failed(const char* file, int line, const char* cond, const std::string& msg);

}  // namespace seqbench::core

#define SB_CHECK(cond, ...)                                                            \
  do {                                                                                 \
    if (!(cond)) [[unlikely]]                                                          \
      ::seqbench::core::check_failed(__FILE__, __LINE__, #cond, ::fmt::format(__VA_ARGS__)); \
  } while (0)
