// How much memory a run will need, known from its resolved config before anything is
// allocated, and the check against a limit (--max-memory, default the memory available).
//
// The estimate adds up, in bytes:
//   parameters, gradients    N floats each (core::ParamStore: values | grads | slots)
//   optimizer slots          N floats per slot: sgd 0 (1 with momentum), rmsprop 1 (2
//                            with momentum), adam 2
//   checkpoint copies        2 (1 + slots) N floats: a checkpoint copies values and slots,
//                            and is read back to verify it while the copy still exists
//   activations              what the model keeps between forward and backward and its
//                            backward buffers, from the same shape formulas as the layers
//                            (recurrent_layer_bytes, transformer_activation_bytes)
//   workspaces               transposed weight copies, per-thread attention scratch
//   data                     the data set held in memory and the batches built from it
// It leaves out the program itself (code, libraries, thread stacks: about 21 MiB of RSS
// for seqbench_copy, measured by tests/cli/memory_cli_test.cpp) and short-lived copies
// while files load. Each part names the config keys that set its size, so an estimate above the
// limit can say which keys to lower.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data/text_corpus.hpp"
#include "nn/model_config.hpp"
#include "nn/attention/transformer.hpp"
#include "optim/optim_config.hpp"

namespace seqbench::train {

struct MemoryPart {
  std::string name;  // e.g. "activations (lstm layer)"
  uint64_t bytes = 0;
  std::vector<std::string> keys;  // the keys that set its size, as "key=value"
};

struct MemoryEstimate {
  std::vector<MemoryPart> parts;

  // bytes is rounded and clamped to [0, 2^64 - 1] (sizes are computed in double, so no
  // product of config values can overflow here).
  void add(std::string name, double bytes, std::vector<std::string> keys = {});
  uint64_t total() const;  // saturating sum
  // The keys of the largest parts (largest first, enough parts to cover half the total),
  // without repeats.
  std::vector<std::string> driving_keys() const;
};

// "key=value" for a part's key list.
template <class V>
std::string key(const std::string& name, const V& value) {
  return name + "=" + fmt::format("{}", value);
}

// ---- recurrent models (nn::make_recurrent), float

// Parameters of the recurrent layer for model m on inputs of size `input`.
int64_t recurrent_params(const nn::ModelConfig& m, int64_t input);
// Bytes the recurrent layer holds after one training step on `steps` x `batch` (with the
// per-step norm probe when probe): exactly what SequenceLayer::held_bytes() reports for
// our cells, the attentive models and SAB. For the oneDNN LSTM, the part of the
// primitive's buffers a run touches (it reserves about 2.8 times more, which
// held_bytes() reports), plus our cell's buffers when probe (probes replay the sequence
// on it).
double recurrent_layer_bytes(const nn::ModelConfig& m, int64_t input, int64_t steps, int64_t batch,
                             bool probe);
// The oneDNN LSTM keeps one primitive per (steps, batch) shape it has run: where a run
// also runs shorter segments or other batch sizes (the last segment of an epoch, the
// evaluation's columns), about 6 floats per step, row and hidden unit more for their
// forward-only workspace (measured as peak RSS). 0 for every other model.
double onednn_extra_shapes_bytes(const nn::ModelConfig& m, int64_t steps, int64_t batch);
// Bytes outside held_bytes(): the transposed copies of the recurrent weights that the
// backward reads (none for the oneDNN LSTM: its weight copies are in the layer's bytes).
double recurrent_workspace_bytes(const nn::ModelConfig& m, int64_t input);

// ---- the Transformer LM (nn::TransformerLM), float

int64_t transformer_params(const nn::TransformerConfig& c, int64_t vocab, int64_t max_len);
// Bytes the model holds after one training step on `batch` sequences of n tokens:
// residual streams, block and attention buffers, dropout masks, layer-norm statistics,
// the attention cores' kept structures and per-thread workspaces (`threads` of them),
// sinusoidal positions. Not the logits (the experiment owns those).
double transformer_activation_bytes(const nn::TransformerConfig& c, int64_t max_len, int64_t batch,
                                    int64_t n, int threads);

// ---- parts every run has

// Optimizer slots per parameter (what make_optimizer(o)->n_slots() reports).
int optimizer_slots(const optim::OptimConfig& o);
// Adds parameters, gradients, optimizer slots and the checkpoint copies of n parameters;
// keys: the keys that set n (e.g. model.hidden).
void add_parameters(MemoryEstimate& e, int64_t n, const optim::OptimConfig& o,
                    const std::vector<std::string>& keys);
// Adds a recurrent model's parameters (layer + `extra` parameters, e.g. its head), its
// layer's activations and workspaces. size_keys: the keys that set steps and batch.
void add_recurrent(MemoryEstimate& e, const nn::ModelConfig& m, const optim::OptimConfig& o,
                   int64_t input, int64_t steps, int64_t batch, bool probe, int64_t extra_params,
                   const std::vector<std::string>& size_keys);
// Adds a Transformer LM's parameters, its activations and its logits and their gradient
// (2 batch n vocab floats). size_keys: the keys that set batch and n.
void add_transformer(MemoryEstimate& e, const nn::TransformerConfig& c, const optim::OptimConfig& o,
                     int64_t vocab, int64_t max_len, int64_t batch, int64_t n, int threads,
                     const std::vector<std::string>& size_keys,
                     const std::vector<std::string>& vocab_keys);

// ---- data sets, from their files' sizes and headers (nothing is loaded)

// The size of a file, or 0 when it cannot be read (the run's own check reports that).
uint64_t file_bytes(const std::string& path);

// An IDX image file's header (lib/data/mnist.hpp): image count and pixels per image;
// false when the file cannot be read or is not one.
bool idx_images_header(const std::string& path, int64_t& count, int64_t& pixels);

// A text corpus (data::load_corpus) estimated from its files' sizes: tokens 1 per byte
// (text, char level), 1 per 2 bytes (ptb_char: symbols and spaces) or 1 per 5 bytes
// (word level); vocabulary 256 (bytes), 50 (ptb_char), 10000 (ptb_word), else
// 30 sqrt(training tokens / min_count) (Heaps' law, and Zipf for the words min_count
// drops: 14.1k for Brown at min_count 5, which has 14.1k; 304k for Wikitext-103, which
// has 268k).
struct CorpusSize {
  double bytes = 0, tokens = 0, train_tokens = 0, vocab = 0;
};
CorpusSize corpus_size(const data::CorpusConfig& c);

// ---- the limit

struct MemoryLimit {
  uint64_t bytes = 0;  // 0: unknown (no check)
  std::string source;  // "--max-memory" or where the available memory was read
};
// --max-memory when given, else the memory available now (core::available_memory).
MemoryLimit memory_limit(const std::optional<uint64_t>& max_memory);

// Throws core::UsageError when the estimate is above the limit: one line with the
// estimate, the limit and where it comes from, the largest part and the keys that drive
// the size.
void check_memory(const MemoryEstimate& e, const MemoryLimit& limit);

// The estimate as YAML comment lines (valid after a config dump):
//   # memory estimate: 12.3 MiB (limit 21.4 GiB, MemAvailable in /proc/meminfo)
//   #   parameters                      1.20 MiB  model.hidden=128
//   ...
std::string memory_comment(const MemoryEstimate& e, const MemoryLimit& limit);

}  // namespace seqbench::train
