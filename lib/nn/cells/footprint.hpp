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
};

extern const CellFootprint kLstmFootprint;          // lstm, stable_lstm (and onednn)
extern const CellFootprint kRnnFootprint;           // rnn, stable_rnn
extern const CellFootprint kMomentumRnnFootprint;   // momentum_rnn
extern const CellFootprint kMomentumLstmFootprint;  // momentum_lstm, sr_lstm
extern const CellFootprint kAdaptiveLstmFootprint;  // adam_lstm, rmsprop_lstm
extern const CellFootprint kMemRnnFootprint;        // mem_rnn
extern const CellFootprint kRelRnnFootprint;        // rel_rnn
extern const CellFootprint kRelLstmFootprint;       // rel_lstm
extern const CellFootprint kSabFootprint;           // sab

}  // namespace seqbench::nn
