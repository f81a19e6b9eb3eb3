// Config of a recurrent model: which cell, its size, and which implementation runs it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/field.hpp"
#include "nn/mixers/mixer.hpp"

namespace seqbench::nn {

// From the cell registry (nn/registry.hpp): the names model.cell accepts, and its doc.
const std::vector<std::string>& sequence_cell_names();
const std::string& cell_key_doc();
// model.mixer's doc: the options of the sequence mixers, named from the registry.
const std::string& mixer_key_doc();

struct ModelConfig {
  std::string cell = "lstm";     // a cell of nn/registry.cpp
  int64_t hidden = 128;          // H
  std::string backend = "ours";  // ours: our cell + Recurrent driver; onednn: oneDNN's LSTM primitive
  double forget_bias = 0.0;      // added to the forget gate's bias at init
  std::string init = "default";  // default (PyTorch-style) | momentum_paper (momentum cells)
  double chrono_tmax = 0.0;      // lstm, stable_lstm: chrono gate biases for lags up to tmax (0 = off)
  // rnn
  std::string nonlinearity = "tanh";      // tanh | relu | modrelu
  std::string recurrent_init = "xavier";  // xavier | orthogonal | identity | henaff
  // momentum family (Nguyen et al. 2020)
  double mu = 0.6;       // momentum μ
  double s = 0.6;        // step size s
  double beta = 0.1;     // adam / rmsprop second-moment decay β
  double eps = 1e-16;    // adam / rmsprop ε
  int64_t restart = 2;   // sr_lstm: restart period in time steps (0 = never)
  // mem_rnn, rel_rnn, rel_lstm (Kerg et al. 2020): attention over past hidden states
  int64_t nu = 10;   // short-term buffer ν
  int64_t rho = 15;  // relevant set ρ
  // sab (Ke et al. 2018): truncation window = train.bptt
  int64_t attk = 5;  // store every attk-th state in the memory
  int64_t ktop = 5;  // attend the top-k memories
  // stable_rnn, stable_lstm (Miller & Hardt 2019): projection after every update
  double stable_lambda = 1.0;               // contraction bound λ
  std::string stable_variant = "paper";     // stable_lstm: paper (derived bound) | official_l1
  // the sequence mixers (lib/nn/mixers): heads, state size, chunk length
  MixerConfig mixer;

  template <class V>
  void visit(V& v) {
    v("cell", cell, cell_key_doc(), config::one_of(sequence_cell_names()));
    v("hidden", hidden, "hidden units H", config::range(1, 65536));
    v("backend", backend, "ours | onednn (lstm only; full BPTT only)",
      config::one_of({"ours", "onednn"}));
    v("forget_bias", forget_bias, "added to the forget-gate bias at init");
    v("init", init, "default | momentum_paper (input orthogonal, recurrent identity; momentum cells)",
      config::one_of({"default", "momentum_paper"}));
    v("chrono_tmax", chrono_tmax,
      "lstm / stable_lstm: chrono init of the gate biases (Tallec & Ollivier 2018), b_f = "
      "log U(1, tmax-1), b_i = -b_f; 0 = off",
      config::non_negative());
    v("nonlinearity", nonlinearity, "rnn: tanh | relu | modrelu",
      config::one_of({"tanh", "relu", "modrelu"}));
    v("recurrent_init", recurrent_init, "rnn: xavier | orthogonal | identity | henaff",
      config::one_of({"xavier", "orthogonal", "identity", "henaff"}));
    v("mu", mu, "momentum cells: momentum μ", config::range(0.0, 1.0));
    v("s", s, "momentum cells: step size s", config::positive());
    v("beta", beta, "adam_lstm / rmsprop_lstm: second-moment decay β",
      config::range_below(0.0, 1.0));
    v("eps", eps, "adam_lstm / rmsprop_lstm: ε", config::positive());
    v("restart", restart, "sr_lstm: restart period (0 = never)", config::non_negative());
    v("nu", nu, "rel_rnn / rel_lstm: short-term buffer size ν", config::range(1, 10'000'000));
    v("rho", rho, "rel_rnn / rel_lstm: relevant set size ρ", config::range(0, 10'000'000));
    v("attk", attk, "sab: store every attk-th state (truncation window: train.bptt)",
      config::range(1, 10'000'000));
    v("ktop", ktop, "sab: attend the top-k memories", config::range(1, 10'000'000));
    v("stable_lambda", stable_lambda, "stable_rnn / stable_lstm: contraction bound λ",
      config::positive());
    v("stable_variant", stable_variant,
      "stable_lstm: paper (derived sufficient condition) | official_l1 (column l1 budgets)",
      config::one_of({"paper", "official_l1"}));
    v("mixer", mixer, mixer_key_doc());
  }
};

}  // namespace seqbench::nn
