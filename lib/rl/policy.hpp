// The MiniGrid agent: rl-starter-files' ACModel (torch-ac's recurrent actor-critic), with
// the recurrent core chosen by config.
//
//   image (N, 7, 7, 3) uint8, the raw (type, colour, state) indices as floats (ACModel
//   does no normalisation)
//     -> conv 2x2 3->16, ReLU, max-pool 2x2      (7x7 -> 6x6 -> 3x3)
//     -> conv 2x2 16->32, ReLU                   (3x3 -> 2x2)
//     -> conv 2x2 32->64, ReLU                   (2x2 -> 1x1): the embedding x (N, 64)
//     -> core: none (h = x) | lstm | momentum_lstm | adam_lstm | rmsprop_lstm | rel_lstm
//        with per-sequence memory and masks: h (N, H)
//     -> z = [h | mission one-hot (9)] when the task names a target (ACModel concatenates
//        its text embedding at the same place), else z = h
//     -> actor:  Linear(Z, 64), tanh, Linear(64, 7): logits of a categorical over actions
//        critic: Linear(Z, 64), tanh, Linear(64, 1): the value
// Initialisation as ACModel: Linear layers of the heads get rows drawn from N(0, 1) and
// scaled to unit norm, zero biases (init_params); convolutions and the LSTM keep
// PyTorch's defaults (U(±1/sqrt(fan_in)), U(±1/sqrt(H))).
//
// Memory. Each environment has a memory row (M values) that the agent carries from step
// to step; mask = 0 wipes it before a step (a new episode), per row, as torch-ac does with
// `memory * mask`. For the step-wise cores the memory is the cell's state ([h | c] for the
// LSTM, as ACModel's memory = cat(h, c)). rel_lstm attends over past hidden states, which
// a fixed state row cannot hold; its memory is a replay window instead (see RelCore in
// policy.cpp): [state at the window start | count | the window's inputs], and every step
// replays the window from that state. Windows are aligned with the training chunks
// (phase = rollout step mod window; the window restarts after phase window-1), so acting
// and the chunked training forward compute the same function. rel_lstm therefore attends
// only within a window (≤ recurrence steps) and cannot train on chunks shifted by half a
// window (supports_shifted_chunks() is false).
//
// Shapes: N rows (frames), L chunk length, B environments, E embedding (64), H hidden,
// M memory, Z head input (H or H + 9), A actions (7). Frames of a chunk are ordered
// (t, n): row t·N + n.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/field.hpp"
#include "core/param_store.hpp"
#include "core/rng.hpp"
#include "nn/linear.hpp"
#include "rl/conv.hpp"
#include "rl/minigrid/env.hpp"

namespace seqbench::rl {

// The agent's cores: kNoCore (h = x, no memory) and every cell the cell registry
// (nn/registry.hpp) marks usable by an agent.
inline constexpr const char* kNoCore = "none";
const std::vector<std::string>& agent_core_names();
const std::string& agent_core_doc();

struct AgentConfig {
  std::string core = "lstm";     // one of agent_core_names()
  int64_t hidden = 64;           // H (ACModel: the image embedding size, 64)
  int64_t nu = 5;                // rel_lstm: short-term buffer ν (Kerg et al.'s RL runs: 5)
  int64_t rho = 5;               // rel_lstm: relevant set ρ
  double mu = 0.6;               // momentum cells: μ
  double s = 0.6;                // momentum cells: step size s
  double beta = 0.1;             // adam_lstm / rmsprop_lstm: β
  double eps = 1e-16;            // adam_lstm / rmsprop_lstm: ε
  double forget_bias = 0.0;      // added to the forget gate's bias at init
  std::string mission = "auto";  // auto | on | off: append the mission one-hot to the heads' input

  template <class V>
  void visit(V& v) {
    v("core", core, agent_core_doc(), config::one_of(agent_core_names()));
    v("hidden", hidden, "hidden units H of the core (ignored by none: H = 64)",
      config::range(1, 65536));
    v("nu", nu, "rel_lstm: short-term buffer size ν", config::range(1, 10'000'000));
    v("rho", rho, "rel_lstm: relevant set size ρ", config::range(0, 10'000'000));
    v("mu", mu, "momentum cells: momentum μ", config::range(0.0, 1.0));
    v("s", s, "momentum cells: step size s", config::positive());
    v("beta", beta, "adam_lstm / rmsprop_lstm: second-moment decay β",
      config::range_below(0.0, 1.0));
    v("eps", eps, "adam_lstm / rmsprop_lstm: ε", config::positive());
    v("forget_bias", forget_bias, "added to the forget-gate bias at init");
    v("mission", mission,
      "auto (on for GoToObject and KeyCorridor) | on | off: feed the mission one-hot to the heads",
      config::one_of({"auto", "on", "off"}));
  }
};

// Whether `mission` resolves to on for this environment (auto: the tasks whose mission
// changes between episodes, GoToObject and KeyCorridor).
bool uses_mission(const std::string& mission, const std::string& env_name);

// The recurrent part of the agent: sequences with per-row memory resets.
template <class T>
class CoreT {
 public:
  virtual ~CoreT() = default;
  virtual int64_t input_size() const = 0;   // E
  virtual int64_t hidden() const = 0;       // H
  virtual int64_t memory_size() const = 0;  // M (0 for none)
  virtual void init(core::Rng& rng) = 0;
  // Whether forward() can return the memory after every step (needed to refresh stored
  // memories between epochs and to train on shifted chunks).
  virtual bool supports_shifted_chunks() const = 0;

  // x (L, N, E), mem0 (N, M) the memory before step 0, mask (L, N): step t of row n starts
  // from mask[t][n] · (memory after step t-1) -> h (L, N, H); mem_out (L, N, M) the
  // memory after every step (null to skip; must be null unless supports_shifted_chunks).
  // x must stay alive until backward.
  virtual void forward(int64_t L, int64_t N, const T* x, const T* mem0, const T* mask, T* h,
                       T* mem_out) = 0;
  // Backward of the last forward: dh (L, N, H) -> dx (L, N, E) (overwritten), dmem0 (N, M)
  // (overwritten, null to skip); parameter gradients accumulate.
  virtual void backward(const T* dh, T* dx, T* dmem0) = 0;
  // One acting step for B environments: x (B, E), mask (B), mem (B, M) in: the memory
  // after the previous step, out: after this one; h (B, H). phase: the step's index in
  // the training chunk (rollout step mod recurrence).
  virtual void act(int64_t B, const T* x, const T* mask, T* mem, T* h, int64_t phase) = 0;
  virtual size_t held_bytes() const = 0;
};

// The core for cfg.core; `window` is the PPO recurrence (rel_lstm's replay window).
// Throws core::UsageError for an unknown core.
template <class T>
std::unique_ptr<CoreT<T>> make_core(const AgentConfig& cfg, core::ParamStoreT<T>& ps,
                                    const std::string& name, int64_t input, int64_t window);

template <class T>
class PolicyT {
 public:
  static constexpr int64_t kEmbed = 64;     // ACModel's image embedding for a 7x7 view
  static constexpr int64_t kHeadHidden = 64;

  // Declares every parameter in ps (conv1..3, core, actor.0/2, critic.0/2). window: the
  // PPO recurrence.
  PolicyT(core::ParamStoreT<T>& ps, const AgentConfig& cfg, bool use_mission, int64_t window);

  // ACModel's initialisation (see the header comment). Call after ps.finalize().
  void init(core::Rng& rng);

  int64_t memory_size() const { return core_->memory_size(); }
  bool recurrent() const { return memory_size() > 0; }
  bool use_mission() const { return use_mission_; }
  bool supports_shifted_chunks() const { return core_->supports_shifted_chunks(); }
  CoreT<T>& core() { return *core_; }

  // Acting, B environments one step: image (B, 147) uint8, mission (B, 9) uint8 (read only
  // when use_mission), mask (B), mem (B, M) in/out, phase as CoreT::act -> logits (B, 7),
  // values (B).
  void act(int64_t B, const uint8_t* image, const uint8_t* mission, const T* mask, T* mem,
           int64_t phase, T* logits, T* values);

  // Training forward over a chunk of L steps of N sequences (frames ordered (t, n)):
  // image (L·N, 147), mission (L·N, 9), mem0 (N, M) the stored memory at the chunk start,
  // mask (L, N) -> logits (L·N, 7), values (L·N); mem_out (L·N, M) or null as CoreT.
  void forward(int64_t L, int64_t N, const uint8_t* image, const uint8_t* mission, const T* mem0,
               const T* mask, T* logits, T* values, T* mem_out = nullptr);
  // Backward of the last forward: dlogits (L·N, 7), dvalues (L·N) -> parameter gradients
  // (accumulated); dmem0 (N, M) or null.
  void backward(const T* dlogits, const T* dvalues, T* dmem0 = nullptr);

  size_t held_bytes() const;

 private:
  // image -> emb_ for n frames (conv stack).
  void embed(int64_t n, const uint8_t* image);
  // h (n, H) + mission -> logits, values.
  void heads(int64_t n, const T* h, const uint8_t* mission, T* logits, T* values);
  void reserve(int64_t n);

  AgentConfig cfg_;
  bool use_mission_;
  Conv2dT<T> conv1_;
  MaxPool2dT<T> pool_;
  Conv2dT<T> conv2_, conv3_;
  std::unique_ptr<CoreT<T>> core_;
  nn::LinearT<T> actor1_, actor2_, critic1_, critic2_;
  int64_t Z_;  // head input width
  int64_t n_ = 0, L_ = 0, N_ = 0;  // rows of the last forward (n_ = L_·N_)
  // Activations of the last forward (rows n_), kept for backward:
  //   img_ (n, 147), c1_ (n, 6·6·16) after ReLU, p1_ (n, 3·3·16), c2_ (n, 2·2·32),
  //   emb_ (n, 64), h_ (n, H), z_ (n, Z), a1_ / v1_ (n, 64) after tanh.
  std::vector<T> img_, c1_, p1_, c2_, emb_, h_, z_, a1_, v1_;
  // Gradient workspaces of the same shapes.
  std::vector<T> dc1_, dp1_, dc2_, demb_, dh_, dz_, da1_, dv1_;
};

using Policy = PolicyT<float>;

// log-softmax of each row: logits (n, A) -> logp (n, A).
template <class T>
void log_softmax(int64_t n, int64_t A, const T* logits, T* logp);
// Draws one action per row from softmax(logits) with one uniform each:
// logits (n, A) -> actions (n), their log-probabilities (n).
void sample_actions(int64_t n, int64_t A, const float* logits, core::Rng& rng, int32_t* actions,
                    float* logp);

}  // namespace seqbench::rl
