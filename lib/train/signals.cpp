#include "train/signals.hpp"

#include <omp.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <thread>

namespace seqbench::train {
namespace {

// Why a watcher thread and not a signal handler: a handler runs on the stack of
// whichever thread the signal lands on, below its stack pointer. Debian's oneDNN JIT
// kernels (the LSTM backward) keep data below the stack pointer, and a SIGTERM that
// arrived during a backward corrupted the heap ("corrupted size vs. prev_size") in
// about half of our trials. So SIGINT and SIGTERM are blocked in every compute thread
// and taken synchronously, with sigwait, by one thread that does nothing else.
std::atomic<bool> g_flag{false};
std::atomic<int> g_signal{0};
std::atomic<bool> g_armed{false};
std::atomic<pid_t> g_watcher_pid{0};  // the process whose watcher runs (fork copies it)

sigset_t interrupt_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

// The default action of `sig` (termination by that signal), taken from this thread.
[[noreturn]] void die_by(int sig) {
  std::signal(sig, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  raise(sig);
  _exit(128 + sig);  // not reached
}

void watch() {
  const sigset_t set = interrupt_set();
  for (;;) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) continue;
    // Not armed (before training or after it), or a second Ctrl-C: the user wants out.
    if (!g_armed.load() || (sig == SIGINT && g_flag.load())) die_by(sig);
    if (!g_flag.exchange(true)) {
      g_signal.store(sig);
      static const char kMsg[] =
          "\ninterrupted: finishing the current update and writing a checkpoint "
          "(press Ctrl-C again to quit immediately)\n";
      [[maybe_unused]] ssize_t rc = ::write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
    }
  }
}

}  // namespace

void install_interrupt_handler(bool arm) {
  const sigset_t set = interrupt_set();
  // Threads started from here on (OpenMP's, oneDNN's) inherit the blocked mask. OpenMP
  // threads that already exist block them too, each from inside a parallel region.
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  const int team = std::max(omp_get_max_threads(), omp_get_num_procs());
#pragma omp parallel num_threads(team)
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  g_armed.store(arm);
  const pid_t me = getpid();
  if (g_watcher_pid.exchange(me) != me) std::thread(watch).detach();
}

void restore_default_handlers() {
  g_armed.store(false);
  const sigset_t set = interrupt_set();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

bool interrupted() { return g_flag.load(); }

int interrupt_signal() { return g_signal.load(); }

void clear_interrupted() {
  g_flag.store(false);
  g_signal.store(0);
}

void raise_interrupt_for_test() { g_flag.store(true); }

}  // namespace seqbench::train
