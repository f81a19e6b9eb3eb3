#include "train/signals.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>

namespace seqbench::train {
namespace {

// Written from a signal handler: must be lock-free to be async-signal-safe.
std::atomic<bool> g_flag{false};
std::atomic<int> g_signal{0};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

void on_signal(int sig) {
  if (sig == SIGINT && g_flag.load()) {
    // Second Ctrl-C: the user wants out now. The signal is blocked while its handler
    // runs, so the re-raised one is delivered (with the default action) on return.
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
    return;
  }
  if (!g_flag.exchange(true)) {
    g_signal.store(sig);
    // Only async-signal-safe calls here: write(2) of a constant string.
    static const char kMsg[] =
        "\ninterrupted: finishing the current update and writing a checkpoint "
        "(press Ctrl-C again to quit immediately)\n";
    [[maybe_unused]] ssize_t rc = ::write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
  }
}

void set_handler(int sig, void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  // Restart interrupted reads/writes: the training loop polls the flag itself, and an
  // EINTR in the middle of writing results would only add failure paths.
  sa.sa_flags = SA_RESTART;
  sigaction(sig, &sa, nullptr);
}

}  // namespace

void install_interrupt_handler() {
  set_handler(SIGINT, on_signal);
  set_handler(SIGTERM, on_signal);
}

void restore_default_handlers() {
  set_handler(SIGINT, SIG_DFL);
  set_handler(SIGTERM, SIG_DFL);
}

bool interrupted() { return g_flag.load(); }

int interrupt_signal() { return g_signal.load(); }

void clear_interrupted() {
  g_flag.store(false);
  g_signal.store(0);
}

void raise_interrupt_for_test() { g_flag.store(true); }

}  // namespace seqbench::train
