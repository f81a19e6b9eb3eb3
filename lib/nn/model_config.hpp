// Config of a recurrent model: which cell, its size, and which implementation runs it.
#pragma once

#include <cstdint>
#include <string>

#include "config/field.hpp"

namespace seqbench::nn {

struct ModelConfig {
  std::string cell = "lstm";     // lstm (the recurrent-zoo cells join here)
  int64_t hidden = 128;          // H
  std::string backend = "ours";  // ours: our cell + Recurrent driver; onednn: oneDNN's LSTM primitive
  double forget_bias = 0.0;      // added to the forget gate's bias at init

  template <class V>
  void visit(V& v) {
    v("cell", cell, "recurrent cell: lstm", config::one_of({"lstm"}));
    v("hidden", hidden, "hidden units H", config::at_least(1));
    v("backend", backend, "ours | onednn (lstm only; full BPTT only)",
      config::one_of({"ours", "onednn"}));
    v("forget_bias", forget_bias, "added to the forget-gate bias at init");
  }
};

}  // namespace seqbench::nn
