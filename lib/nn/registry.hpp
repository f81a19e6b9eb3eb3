// The recurrent cells, one entry each: name, one-line doc, where the cell can be used, the
// backends that run it, the optional model keys it reads and how it is built. Everything
// that lists cells is generated from here: model.cell's allowed values and "did you mean",
// agent.core's values (cells an RL agent can run), the cell bench's --cell choices and the
// table in docs/models.md (tests/nn/cell_registry_test.cpp checks it is current).
//
// Adding a cell: its header and source under lib/nn/cells/, one line in registry.cpp, one
// gradient test (tests/nn/cell_check.hpp) and one preset under configs/. A sequence mixer
// (lib/nn/mixers/) likewise, with tests/nn/mixer_check.hpp; its line also makes it a
// Transformer mixer (model.attention). See docs/architecture.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/param_store.hpp"
#include "nn/footprint.hpp"
#include "nn/mixers/mixer.hpp"
#include "nn/model_config.hpp"
#include "nn/sequence_layer.hpp"

namespace seqbench::nn {

// Where a cell can be used.
enum CellUse : unsigned {
  kSequenceModel = 1u << 0,  // model.cell of the sequence experiments (copy, pmnist, char_ptb)
  kAgent = 1u << 1,          // agent.core of the MiniGrid agent
  kBench = 1u << 2,          // seqbench_bench_cell --cell
  kTransformerMixer = 1u << 3,  // model.attention of the Transformer (a mixer in place of attention)
};

// Optional model keys a cell reads; set for another cell they would do nothing, so they are
// refused with a message naming the cells that read them.
enum CellReads : unsigned {
  kNonlinearity = 1u << 0,     // model.nonlinearity
  kRecurrentInit = 1u << 1,    // model.recurrent_init
  kChrono = 1u << 2,           // model.chrono_tmax
  kMomentumInit = 1u << 3,     // model.init: momentum_paper
  kRelevancy = 1u << 4,        // model.nu, model.rho (relevancy screening)
  kMixerKeys = 1u << 5,        // model.mixer.* (the sequence mixers)
};

// How the MiniGrid agent runs a cell (lib/rl/policy.cpp): step by step with its state as the
// agent's memory, or over a replay window (attention over past states).
enum class AgentForm { kNone, kStepLstm, kStepMomentumLstm, kWindowedAttentive };

using CellBuilder = std::unique_ptr<SequenceLayer<float>> (*)(const ModelConfig& cfg,
                                                             core::ParamStore& ps,
                                                             const std::string& name,
                                                             int64_t input, int64_t bptt);

struct CellEntry {
  const char* name;
  const char* doc;                // one line, for --help tables and docs/models.md
  unsigned uses;                  // CellUse bits
  std::vector<std::string> backends;  // model.backend values; "ours" first
  unsigned reads;                 // CellReads bits
  AgentForm agent;                // with kAgent: how the agent runs it
  const char* variant;            // the momentum kind of the momentum family, else ""
  CellBuilder build;
  const CellFootprint* footprint;  // its memory, estimated before it is built
  const MixerFactory* mixer = nullptr;  // the sequence mixers (nn/mixers): how to build it
};

const std::vector<CellEntry>& cell_registry();
// The entry named `name`; throws core::UsageError "<key>: unknown cell ..." with the
// nearest name and the names usable as `use`.
const CellEntry& find_cell(const std::string& name, unsigned use = kSequenceModel,
                           const std::string& key = "model.cell");
// Names of the cells usable as `use`, in registry order.
std::vector<std::string> cell_names(unsigned use = kSequenceModel);
// The cells that read a key (CellReads bit), for messages: "the rnn and stable_rnn cells".
std::vector<std::string> cells_reading(unsigned reads);
// The uses (CellUse bits) as the keys or tool that take the cell: "model.cell",
// "agent.core", "bench", "model.attention".
std::vector<std::string> use_names(unsigned uses);
// The docs table: | cell | use | backends | what it is |.
std::string cells_markdown();
// The mixer named `name` for the Transformer's model.attention, or null when the name is
// not a mixer (then it is a head-group spec of attention kinds).
const CellEntry* find_mixer(const std::string& name);
// Names of the Transformer mixers ("linear_attention | ..."), for docs and messages.
std::vector<std::string> mixer_names();

}  // namespace seqbench::nn
