// Ctrl-C handling for training loops: the first SIGINT (or SIGTERM) only sets a flag;
// the loop polls interrupted() between updates, writes a checkpoint and exits with
// core::kExitInterrupted. A second SIGINT takes the default action (the process dies by
// SIGINT), so a user can always force-quit a run that is stuck.
//
// The signals are blocked in the calling thread and in every thread it starts later,
// and one watcher thread takes them with sigwait (signals.cpp says why: a handler on a
// compute thread's stack corrupted oneDNN's JIT kernels). OpenMP's existing threads
// block them too; a thread started before install by other means does not, and a
// signal landing there would take its default action. So the apps call
// install_interrupt_handler(false) first thing.
#pragma once

namespace seqbench::train {

// Blocks SIGINT and SIGTERM in this thread (and the threads it starts) and starts the
// watcher once per process (idempotent). With `arm` the first signal sets the flag and
// prints one line to stderr saying what will happen; unarmed, a signal takes its default
// action, as if nothing were installed.
void install_interrupt_handler(bool arm = true);
// Disarms and unblocks the signals in this thread: their default actions again (after
// training, or in tests).
void restore_default_handlers();
// True once SIGINT or SIGTERM arrived since start (or the last clear_interrupted()).
bool interrupted();
// The signal number that set the flag (SIGINT, SIGTERM), 0 if none or set for a test.
int interrupt_signal();
// Resets the flag, so that a test (or a second training phase) starts clean.
void clear_interrupted();
// Sets the flag as the first SIGINT would, without sending a signal (so it can never
// take the force-quit path and kill a test binary).
void raise_interrupt_for_test();

}  // namespace seqbench::train
