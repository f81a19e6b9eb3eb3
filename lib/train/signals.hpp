// Ctrl-C handling for training loops: the first SIGINT (or SIGTERM) only sets a flag;
// the loop polls interrupted() between updates, writes a checkpoint and exits with
// core::kExitInterrupted. A second SIGINT restores the default action and re-raises it,
// so a user can always force-quit a run that is stuck.
#pragma once

namespace seqbench::train {

// Installs the handlers for SIGINT and SIGTERM (idempotent). The first signal also
// prints one line to stderr saying what will happen.
void install_interrupt_handler();
// Puts back the default SIGINT/SIGTERM actions (after training, or in tests).
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
