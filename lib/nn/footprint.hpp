// What a recurrent layer will hold, from its config, before it is built: the cell
// registry gives each cell one of these, and train/memory_estimate.* adds them up (so
// that a run too large for the machine is refused before it allocates). Each function
// mirrors the layer's held_bytes() after a training step; memory_estimate_test checks
// them against the built layers.
#pragma once

#include <cstdint>

#include "nn/model_config.hpp"

namespace seqbench::nn {

struct CellFootprint {
  // Parameters of the layer for `input` features.
  int64_t (*params)(const ModelConfig& m, int64_t input);
  // Bytes the layer holds after a training step over T steps of B rows; probe: plus the
  // per-step gradient-norm buffer.
  double (*layer_bytes)(const ModelConfig& m, int64_t input, double T, double B, bool probe);
  // Workspaces sized by the weights (transposed copies, projections).
  double (*workspace_bytes)(const ModelConfig& m, int64_t input);
  // Floats of the state carried from one step to the next, per batch row (what an agent
  // keeps as memory when it runs the cell step by step).
  double (*state_floats)(const ModelConfig& m);
  // Whether the activations grow with T² (attention over every past state): the cell
  // itself is then one of the keys that drive the estimate.
  bool quadratic_in_steps;
  // Floats of past states a step-by-step run keeps attending to after `steps` steps, per
  // batch row, beyond state_floats (null: none): all past states (mem_rnn), the ν recent
  // and ρ relevant ones (rel_rnn, rel_lstm), every attk-th (sab). With state_floats, the
  // memory the recall figure plots against.
  double (*attended_floats)(const ModelConfig& m, double steps) = nullptr;
};
// state_floats plus attended_floats: what the cell carries from one token to the next.
double carried_floats(const CellFootprint& f, const ModelConfig& m, double steps);

extern const CellFootprint kLstmFootprint;          // lstm, stable_lstm (and onednn)
extern const CellFootprint kRnnFootprint;           // rnn, stable_rnn
extern const CellFootprint kMomentumRnnFootprint;   // momentum_rnn
extern const CellFootprint kMomentumLstmFootprint;  // momentum_lstm, sr_lstm
extern const CellFootprint kAdaptiveLstmFootprint;  // adam_lstm, rmsprop_lstm
extern const CellFootprint kMemRnnFootprint;        // mem_rnn
extern const CellFootprint kRelRnnFootprint;        // rel_rnn
extern const CellFootprint kRelLstmFootprint;       // rel_lstm
extern const CellFootprint kSabFootprint;           // sab
extern const CellFootprint kMixerFootprint;         // the sequence mixers (asks the mixer)

}  // namespace seqbench::nn
