// What an experiment gives the Trainer: a model's parameters, a training step, a
// validation, a gradient probe and its own resumable state. The Trainer owns
// everything else (optimizer, schedule, clipping, logging, checkpoints, stopping).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/param_store.hpp"
#include "train/checkpoint.hpp"

namespace seqbench::train {

using Metrics = std::vector<std::pair<std::string, double>>;

class Experiment {
 public:
  virtual ~Experiment() = default;

  virtual core::ParamStore& params() = 0;
  // Forward and backward on the next training batch. Gradients accumulate into
  // params() (the Trainer zeroes them before). Returns at least "loss" and metric().
  virtual Metrics train_step() = 0;
  // Validation on a fixed set (the same every call; it must not touch the training
  // data stream). Returns at least "loss" and metric().
  virtual Metrics evaluate() = 0;
  // The validation metric that decides best / target / patience, and its direction.
  virtual std::string metric() const = 0;
  virtual bool higher_is_better() const = 0;
  // ||dL/dh_t|| for every step t of a fixed probe batch, where L is the loss on the
  // scored (last) outputs only. May leave garbage in the gradients (they are zeroed
  // before the next step) but must not change parameters or the data stream.
  virtual std::vector<double> gradnorm_probe() = 0;
  // Runs after every optimizer step (e.g. a stability projection of the weights).
  virtual void after_update() {}
  // Bytes the model holds between forward and backward (for memory reports).
  virtual size_t held_bytes() = 0;
  // The LSTM-equivalent work of one training update in flop (train/efficiency.hpp), 0
  // where it is not defined (the default: a model that is not an LSTM-like cell).
  virtual double lstm_equivalent_flop() const { return 0; }
  // Resumable state beyond the parameters (e.g. the data RNG), written into the
  // checkpoint with its typed put functions, usually under the experiment's own scope
  // (ck.scope("char_ptb")); the Trainer's keys and the parameter names are at the top.
  virtual void save_state(Checkpoint& ck) const = 0;
  virtual void load_state(const Checkpoint& ck) = 0;
};

}  // namespace seqbench::train
