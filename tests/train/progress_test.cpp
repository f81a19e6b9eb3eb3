// Progress display and the Ctrl-C flag. No clocks are asserted on: formatting is tested
// through the static helpers, terminal behaviour through a forced tty on a tmpfile.
#include "train/progress.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <thread>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <cstdio>

#include "train/signals.hpp"

using seqbench::train::Progress;

namespace {

// Everything written to f so far.
std::string contents(std::FILE* f) {
  std::fflush(f);
  std::string out;
  std::rewind(f);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  return out;
}

}  // namespace

TEST(Progress, FormatDuration) {
  EXPECT_EQ(Progress::format_duration(0), "0:00");
  EXPECT_EQ(Progress::format_duration(12), "0:12");
  EXPECT_EQ(Progress::format_duration(59.6), "1:00");
  EXPECT_EQ(Progress::format_duration(754), "12:34");
  EXPECT_EQ(Progress::format_duration(3723), "1:02:03");
  EXPECT_EQ(Progress::format_duration(100 * 3600.0), "100:00:00");
  EXPECT_EQ(Progress::format_duration(-1), "--:--");
  EXPECT_EQ(Progress::format_duration(NAN), "--:--");
}

TEST(Progress, FormatBar) {
  EXPECT_EQ(Progress::format_bar(1250, 5000, 310.25, {{"loss", 0.123449}, {"acc", 0.98}}),
            "[#####...............] 1250/5000 25% 310.2 it/s ETA 0:12 loss 0.1234 acc 0.98");
  EXPECT_EQ(Progress::format_bar(0, 10, 0.0, {}),
            "[....................] 0/10 0% -- it/s ETA --:--");
  EXPECT_EQ(Progress::format_bar(10, 10, 0.5, {}),
            "[####################] 10/10 100% 2.00 s/it ETA 0:00");
  EXPECT_EQ(Progress::format_bar(3, 10, 1.0, {{"loss", 1.0}}, 12), "[######.....");
  EXPECT_EQ(Progress::format_bar(3, 10, 2e6, {}),
            "[######..............] 3/10 30% 2e+06 it/s ETA 0:00");
  // Stats that do not fit whole are dropped rather than cut mid-number.
  EXPECT_EQ(Progress::format_bar(3, 10, 1.0, {{"loss", 1.5}, {"acc", 0.25}}, 60),
            "[######..............] 3/10 30% 1.0 it/s ETA 0:07 loss 1.5");
  // A run that stops at its target says that its ETA is to the last update, a bound.
  EXPECT_EQ(Progress::format_bar(1250, 5000, 310.25, {{"loss", 0.5}}, 0, /*to_target=*/true),
            "[#####...............] 1250/5000 25% 310.2 it/s ETA 0:12 to target or 5000 updates "
            "loss 0.5");
}

TEST(Progress, NotATerminalUpdateIsSilentAndLinePrints) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    Progress p(100, 0, f, /*quiet=*/false);  // a tmpfile is not a tty
    EXPECT_FALSE(p.is_tty());
    for (int i = 1; i <= 100; ++i) p.update(i, {{"loss", 0.5}});
    p.line("step 100 loss 0.5");
    p.finish();
  }
  EXPECT_EQ(contents(f), "step 100 loss 0.5\n");
  std::fclose(f);
}

TEST(Progress, QuietPrintsNothing) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    Progress p(10, 0, f, /*quiet=*/true, /*force_tty=*/true);
    p.update(5, {{"loss", 1.0}});
    p.line("hello");
    p.finish();
  }
  EXPECT_EQ(contents(f), "");
  std::fclose(f);
}

TEST(Progress, TerminalDrawsBarWithCountsAndKeepsItBelowLines) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    Progress p(5000, 1000, f, false, /*force_tty=*/true);
    EXPECT_TRUE(p.is_tty());
    p.set_width(200);  // the rate's width depends on timing; keep every stat on screen
    p.update(1234, {{"loss", 0.1234}, {"acc", 0.98}});  // the first update always draws
    p.line("eval: acc 0.97");
    p.update(5000, {{"loss", 0.01}});  // the last one too
    p.finish();
    p.finish();  // idempotent
  }
  const std::string out = contents(f);
  EXPECT_NE(out.find("\r[####."), std::string::npos) << out;  // 24% of 20 columns
  EXPECT_NE(out.find("1234/5000 24%"), std::string::npos) << out;
  EXPECT_NE(out.find("loss 0.1234 acc 0.98"), std::string::npos) << out;
  // The log line replaces the bar (cleared first) and sits on its own line, bar after it.
  EXPECT_NE(out.find("\r\x1b[Keval: acc 0.97\n[####."), std::string::npos) << out;
  EXPECT_NE(out.find("5000/5000 100%"), std::string::npos) << out;
  EXPECT_EQ(out.back(), '\n');
  EXPECT_EQ(out.find("\n\n"), std::string::npos) << out;  // finish() ends the line once
  std::fclose(f);
}

TEST(Progress, TerminalWithoutUpdatesPrintsOnlyLines) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    Progress p(10, 0, f, false, true);
    p.line("starting");
  }
  EXPECT_EQ(contents(f), "starting\n");
  std::fclose(f);
}

namespace {
// The watcher thread takes the signal asynchronously: wait for it to act (a watcher
// that never acts hangs the test until ctest's timeout fails it).
bool wait_for_interrupt() {
  while (!seqbench::train::interrupted()) std::this_thread::yield();
  return true;
}
}  // namespace

TEST(Signals, FlagSetByTestHookAndByRealSignals) {
  using namespace seqbench::train;
  clear_interrupted();
  EXPECT_FALSE(interrupted());
  raise_interrupt_for_test();
  EXPECT_TRUE(interrupted());
  clear_interrupted();
  EXPECT_FALSE(interrupted());

  install_interrupt_handler();
  ::kill(::getpid(), SIGTERM);  // process-directed, as timeout(1) or kill(1) send it
  EXPECT_TRUE(wait_for_interrupt());
  EXPECT_EQ(interrupt_signal(), SIGTERM);
  clear_interrupted();
  ::kill(::getpid(), SIGINT);  // the first SIGINT only sets the flag
  EXPECT_TRUE(wait_for_interrupt());
  EXPECT_EQ(interrupt_signal(), SIGINT);
  clear_interrupted();
  restore_default_handlers();
  EXPECT_FALSE(interrupted());
}

// Threads started after install block the signals too, so none of them can be
// interrupted in the middle of its work (what corrupted oneDNN's kernels).
TEST(Signals, ThreadsStartedLaterBlockThem) {
  using namespace seqbench::train;
  install_interrupt_handler(false);
  bool blocked = false;
  std::thread([&] {
    sigset_t mask;
    pthread_sigmask(SIG_BLOCK, nullptr, &mask);
    blocked = sigismember(&mask, SIGINT) == 1 && sigismember(&mask, SIGTERM) == 1;
  }).join();
  EXPECT_TRUE(blocked);
  restore_default_handlers();
}

TEST(SignalsDeathTest, SecondSigintForceQuits) {
  using namespace seqbench::train;
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // this process has a watcher thread
  EXPECT_EXIT(
      {
        install_interrupt_handler();
        ::kill(::getpid(), SIGINT);
        wait_for_interrupt();
        ::kill(::getpid(), SIGINT);
        for (;;) ::pause();  // until the signal's default action ends the process
      },
      ::testing::KilledBySignal(SIGINT), "interrupted");
}

TEST(SignalsDeathTest, UnarmedSignalTakesDefaultAction) {
  using namespace seqbench::train;
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // this process has a watcher thread
  EXPECT_EXIT(
      {
        install_interrupt_handler(false);
        ::kill(::getpid(), SIGTERM);
        for (;;) ::pause();  // until the signal's default action ends the process
      },
      ::testing::KilledBySignal(SIGTERM), "");
}
