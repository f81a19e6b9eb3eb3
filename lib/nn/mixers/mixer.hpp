// Sequence mixers: the recurrent layers of the linear-attention and state-space family
// (linear attention, retention / gated linear attention, LRU, the selective scan, the gated
// delta rule). Each one is a causal map of a whole sequence, computed in a parallel or
// chunked form for training, and equal to a recurrence over a fixed-size state: the
// recurrent form (step()) is what the mixer carries from one token to the next, and
// state_size() is the number this suite plots accuracy against (docs/experiments/recall.md).
//
// A mixer is used two ways, from one line of the cell registry (nn/registry.cpp):
//   - as a recurrent cell, model.cell: <name> (nn/mixers/mixer_layer.hpp adapts it to
//     SequenceLayer), in the copy, pMNIST, char-PTB and recall experiments;
//   - as the token mixer of a Transformer block, model.attention: <name>
//     (nn/attention/transformer.hpp), in place of multi-head attention.
//
// Shapes: B batch, N tokens, I input width, O output width, S = state_size() floats of
// state per sequence. Row-major (B, N, I) in, (B, N, O) out.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "config/field.hpp"
#include "core/param_store.hpp"
#include "core/rng.hpp"
#include "core/tensor.hpp"

namespace seqbench::nn {

// model.mixer: the options of the mixers. Keys a mixer does not read keep their defaults.
struct MixerConfig {
  int64_t heads = 1;      // linear_attention, retention, gla, deltanet, mlstm, slstm: heads
                          // (O % heads == 0)
  int64_t d_state = 16;   // lru: complex state size N; mamba: state size N per channel
  int64_t expand = 2;     // mamba: inner width = expand * O
  int64_t conv = 4;       // mamba: width of the short causal depthwise convolution
  int64_t short_conv = 4; // linear_attention, retention, gla, deltanet: width of the causal
                          // depthwise convolution (+ SiLU) on q, k, v (mlstm: on q, k);
                          // 0 = none (nn/mixers/short_conv.hpp)
  int64_t chunk = 64;     // the chunked training form's chunk length (and the scans'
                          // checkpoint interval: states kept every chunk tokens)

  bool operator==(const MixerConfig&) const = default;

  template <class V>
  void visit(V& v) {
    v("heads", heads,
      "linear_attention / retention / gla / deltanet / mlstm / slstm: heads (width % heads == 0)",
      config::range(1, 4096));
    v("d_state", d_state, "lru: complex state size N; mamba: state size N per channel",
      config::range(1, 65536).because("Mamba uses 16; the LRU paper 64 to 256"));
    v("expand", expand, "mamba: inner width = expand x width", config::range(1, 64));
    v("conv", conv, "mamba: short causal convolution width",
      config::range(1, 64).because("Mamba uses 4"));
    v("short_conv", short_conv,
      "linear_attention / retention / gla / deltanet: width of the causal depthwise "
      "convolution (then SiLU) on q, k and v, as fla's ShortConvolution (mlstm: on q and k, "
      "as the xLSTM mLSTM block); 0 = none",
      config::range(0, 64).because("fla and Zoology use 4"));
    v("chunk", chunk,
      "chunk length of the chunked training form; the scans keep their state every chunk "
      "tokens and recompute inside a chunk in backward",
      config::range(1, 1'000'000).because("64 is a good default on CPUs"));
  }
};

template <class T>
class Mixer {
 public:
  virtual ~Mixer() = default;
  virtual int64_t input_size() const = 0;   // I
  virtual int64_t output_size() const = 0;  // O
  // S: floats of state per sequence that the recurrent form carries between tokens.
  virtual int64_t state_size() const = 0;

  // Initialise this mixer's parameters (after the ParamStore is finalized), as its paper
  // or official code does.
  virtual void init(core::Rng& rng) = 0;

  // x (B, N, I), s0 (B, S) or s0.data == nullptr for the zero state -> y (B, N, O). The
  // caller keeps x and s0 alive until backward.
  virtual void forward(core::ViewT<const T> x, core::ViewT<const T> s0, core::ViewT<T> y) = 0;
  // Backward of the last forward: dy (B, N, O) -> dx (B, N, I), ds0 (B, S), both
  // overwritten and each skipped when its data is null; parameter gradients accumulate.
  virtual void backward(core::ViewT<const T> dy, core::ViewT<T> dx, core::ViewT<T> ds0) = 0;
  // The state after the last token of the last forward, (B, S).
  virtual core::ViewT<const T> final_state() const = 0;

  // The recurrent form, one token: x (B, I), state (B, S) updated in place, y (B, O). Equal
  // (to rounding) to forward() run token by token. No backward.
  virtual void step(core::ViewT<const T> x, core::ViewT<T> state, core::ViewT<T> y) = 0;

  // Bytes held() will report after a forward and backward of B sequences of N tokens,
  // computed before anything runs (the memory estimate).
  virtual size_t estimate_bytes(int64_t B, int64_t N) const = 0;
  // Bytes held now between forward and backward and in workspaces (not the parameters,
  // not the caller's tensors).
  virtual size_t held_bytes() const = 0;
};

// How the cell registry builds a mixer, in float (models) or double (gradient checks).
// Each mixer's source defines one (e.g. kLinearAttentionMixer).
struct MixerFactory {
  std::unique_ptr<Mixer<float>> (*make_float)(const MixerConfig& cfg,
                                              core::ParamStoreT<float>& ps,
                                              const std::string& name, int64_t input,
                                              int64_t output);
  std::unique_ptr<Mixer<double>> (*make_double)(const MixerConfig& cfg,
                                                core::ParamStoreT<double>& ps,
                                                const std::string& name, int64_t input,
                                                int64_t output);
};

template <class T>
std::unique_ptr<Mixer<T>> make_mixer(const MixerFactory& f, const MixerConfig& cfg,
                                     core::ParamStoreT<T>& ps, const std::string& name,
                                     int64_t input, int64_t output) {
  if constexpr (std::is_same_v<T, float>)
    return f.make_float(cfg, ps, name, input, output);
  else
    return f.make_double(cfg, ps, name, input, output);
}

// Defines `const MixerFactory <var>` for a mixer class template Cls<T> whose constructor is
// (const MixerConfig&, ParamStoreT<T>&, const std::string& name, int64_t input, int64_t output).
#define SEQBENCH_MIXER_FACTORY(var, Cls)                                                        \
  const ::seqbench::nn::MixerFactory var {                                                      \
    [](const ::seqbench::nn::MixerConfig& c, ::seqbench::core::ParamStoreT<float>& ps,          \
       const std::string& n, int64_t i, int64_t o) -> std::unique_ptr<::seqbench::nn::Mixer<float>> { \
      return std::make_unique<Cls<float>>(c, ps, n, i, o);                                      \
    },                                                                                          \
    [](const ::seqbench::nn::MixerConfig& c, ::seqbench::core::ParamStoreT<double>& ps,         \
       const std::string& n, int64_t i, int64_t o) -> std::unique_ptr<::seqbench::nn::Mixer<double>> { \
      return std::make_unique<Cls<double>>(c, ps, n, i, o);                                     \
    }                                                                                           \
  }

// The factories, one per mixer source file.
extern const MixerFactory kLinearAttentionMixer;  // linear_attention.cpp
extern const MixerFactory kRetentionMixer;        // gla.cpp (fixed per-head decay)
extern const MixerFactory kGlaMixer;              // gla.cpp (data-dependent decay)
extern const MixerFactory kLruMixer;              // lru.cpp
extern const MixerFactory kMambaMixer;            // selective_scan.cpp
extern const MixerFactory kDeltaNetMixer;         // deltanet.cpp
extern const MixerFactory kMlstmMixer;            // mlstm.cpp (xLSTM's matrix memory)
extern const MixerFactory kSlstmMixer;            // slstm.cpp (xLSTM's scalar memory)

}  // namespace seqbench::nn
