// Decoder-only Transformer language model (Vaswani et al. 2017; pre-layer-norm as in
// GPT-2), with a mix of attention kinds per layer: each layer's heads are split into head
// groups, each group run by one attention core of lib/nn/attention (full, local, routing,
// random, smyrf, lsh), so a layer can mix local and routing heads as the Routing
// Transformer does (Roy et al. 2021). docs/transformer.md has the equations and keys.
//
// Shapes: B batch, N tokens, E = d_model, H heads, Dh = E / H head dim, F = d_ff,
// V vocabulary, L layers.
//
//   x_0 = drop(Emb[ids] + P)                    (B, N, E)   P: learned (max_len, E) table,
//                                                           sinusoidal, or none
//   per layer l (pre-LN block):
//     a   = LN1(x)
//     [q|k|v] = a Wqkv^T + bqkv                 (B N, 3E); head h = columns h Dh .. (h+1) Dh
//     (qk_norm: q, k <- layer norm without gain over each head's Dh)
//     o_g = Attention_g(q_g, k_g, v_g [, R_g])  causal, per head group g (B, H_g, N, Dh);
//                                               R (H, M): learned relative-position bias
//                                               S_ij += R[h, min(i - j, M - 1)] (M > 0)
//     h   = x + drop(concat_g(o_g) Wo^T + bo)
//     y   = h + drop(FFN(LN2(h)))               nn/ffn.hpp
//   z = LN_f(x_L),  logits = z W^T + b_out      (B N, V); W = Emb (tied) or its own (V, E)
//
// Randomness outside the parameters (dropout masks, the attention cores' draws) and the
// routing centroids are its state (save_state): a checkpoint must save them for an exact
// resume.
// hold_randomness(true) freezes masks and attention structures (finite-difference checks).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/field.hpp"
#include "core/param_store.hpp"
#include "core/rng.hpp"
#include "core/state.hpp"
#include "nn/attention/attention.hpp"
#include "nn/dropout.hpp"
#include "nn/embedding.hpp"
#include "nn/ffn.hpp"
#include "nn/layer_norm.hpp"
#include "nn/linear.hpp"
#include "nn/mixers/mixer.hpp"

namespace seqbench::nn {

// model.attention's doc line, listing the kinds of the attention registry.
const std::string& head_groups_doc();

struct TransformerConfig {
  int64_t layers = 2;               // L
  int64_t d_model = 128;            // E
  int64_t heads = 4;                // H
  int64_t d_ff = 512;               // F
  std::string attention = "full";   // head groups: "kind" (all heads) or "kind:n,kind:n,..."
  int64_t routing_layers = 0;       // content kinds only in the last n layers (0 = all layers)
  int64_t window = 64;              // w of every sparse kind (local block, cluster / chunk)
  int64_t local_window = 0;         // local heads' block if > 0 (the paper: 256 local, 512 routing)
  int64_t clusters = 4;             // routing centroids k; lsh buckets (1 or even)
  int64_t rounds = 1;               // smyrf / lsh hash rounds; random assignments
  double ema_decay = 0.999;         // routing centroid EMA λ
  bool qk_norm = false;             // layer norm (no gain) on every head's q and k
  int64_t relative_positions = 0;   // M: learned score bias per head and distance 0..M-1 (0 = off)
  bool shared_qk = false;           // routing and lsh heads: keys are the queries
  double commitment = 0.0;          // routing heads: β of the k-means commitment loss (paper 1e-4)
  std::string activation = "relu";  // relu | gelu
  double dropout = 0.1;             // embedding, attention output and FFN output
  bool tie_embeddings = true;       // output W = the token embedding
  std::string positions = "learned";  // learned | sinusoidal | none
  double init_std = 0.02;           // N(0, sd²) weights; residual outputs / sqrt(2L)
  double ln_eps = 1e-5;
  MixerConfig mixer;                // when attention names a sequence mixer (nn/mixers)

  template <class V>
  void visit(V& v) {
    v("layers", layers, "decoder blocks L", config::range(1, 1024));
    v("d_model", d_model, "model width E (a multiple of heads)", config::range(1, 65536));
    v("heads", heads, "attention heads H per layer", config::range(1, 4096));
    v("d_ff", d_ff, "feed-forward inner width F", config::range(1, 1'048'576));
    v("attention", attention, head_groups_doc());
    v("routing_layers", routing_layers,
      "routing/random/smyrf/lsh heads only in the last n layers, local before (0 = all)",
      config::range(0, 1024));
    v("window", window, "w: local block, cluster and chunk size of the sparse kinds",
      config::range(1, 10'000'000));
    v("local_window", local_window, "local heads' block size (0 = window)",
      config::range(0, 10'000'000));
    v("clusters", clusters, "routing: centroids k; lsh: hash buckets (1 or even)",
      config::range(1, 1'000'000));
    v("rounds", rounds, "smyrf / lsh: hash rounds; random: random assignments",
      config::range(1, 1024));
    v("ema_decay", ema_decay, "routing: centroid EMA decay", config::range(0.0, 1.0));
    v("qk_norm", qk_norm, "layer norm without gain on each head's queries and keys");
    v("relative_positions", relative_positions,
      "M: learned attention-score bias per head and query-key distance, clipped to M - 1 "
      "(0 = off)",
      config::range(0, 10'000'000).because("0 = off; the Routing Transformer clips distances at 512"));
    v("shared_qk", shared_qk,
      "routing and lsh heads use their queries as keys (Reformer, Routing Transformer); a "
      "token's own key is then masked unless nothing else is visible");
    v("commitment", commitment,
      "routing heads: weight β of the commitment loss β mean ||x/|x| - sg(centroid)||^2 over "
      "queries and keys, added to the training loss (0 = off; the paper: 1e-4)",
      config::non_negative().because("0 = off; the Routing Transformer uses 1e-4"));
    v("activation", activation, "feed-forward nonlinearity: relu | gelu",
      config::one_of({"relu", "gelu"}));
    v("dropout", dropout, "dropout on embeddings, attention and FFN outputs, in [0, 1)",
      config::range_below(0.0, 1.0));
    v("tie_embeddings", tie_embeddings, "output projection = token embedding (transposed)");
    v("positions", positions, "position embedding: learned | sinusoidal | none",
      config::one_of({"learned", "sinusoidal", "none"}));
    v("init_std", init_std, "std of the normal weight init", config::positive());
    v("ln_eps", ln_eps, "layer norm epsilon", config::positive());
    v("mixer", mixer, "options of the sequence mixer when model.attention names one");
  }
};

struct CellEntry;
// The registry entry of the sequence mixer that model.attention names, or null when it is a
// head-group spec of attention kinds.
const CellEntry* transformer_mixer(const TransformerConfig& cfg);

// Content-based kinds, the ones routing_layers confines to the last layers.
bool is_content_kind(const std::string& kind);

struct HeadGroup {
  std::string kind;   // an attention kind
  int64_t heads = 0;  // how many heads, consecutive
};

// "full" (all `heads`) or "local:2,routing:2" -> groups in that order. Throws
// core::UsageError naming model.attention for an unknown kind, a bad count or a sum
// that is not `heads`.
std::vector<HeadGroup> parse_head_groups(const std::string& spec, int64_t heads);
// Layer l's groups: the parsed spec, with content kinds replaced by local in the first
// L - routing_layers layers (when routing_layers > 0); neighbours of one kind merged. Empty
// when model.attention is a sequence mixer.
std::vector<HeadGroup> layer_head_groups(const TransformerConfig& cfg, int64_t layer);
// "local:2,routing:2"
std::string head_groups_str(const std::vector<HeadGroup>& groups);
// Throws core::UsageError (keys named model.*): a field outside its declared range
// (config::check), or sizes that do not fit together.
void check_rules(const TransformerConfig& cfg);

// A multi-head attention layer's options beyond its head groups; the TransformerConfig
// keys of the same names.
struct MhaOptions {
  bool qk_norm = false;            // layer norm without gain on each head's q and k
  double eps = 1e-5;               // of that layer norm
  int64_t local_window = 0;        // local groups' window when > 0
  int64_t relative_positions = 0;  // M > 0: the "<name>.relpos" (H, M) score bias
  bool shared_qk = false;          // routing and lsh groups: k = q, own key masked
  double commitment = 0.0;         // routing groups: commitment loss weight β
};

// Multi-head self-attention over head groups. src (B, N, E) -> dst (B, N, E).
// Kept between forward and backward: a view of src (the caller keeps it alive), the
// projections (B N, 3E), per group q, k, v (and their un-normalised copies with qk_norm),
// the merged head outputs (B N, E); the cores keep their own sparse structures.
template <class T>
class MultiHeadAttentionT {
 public:
  // base: window, clusters, rounds, ema_decay and seed for every group (each group's
  // seed is derived from base.seed and its index); kind from the group; causal always;
  // local groups use opt.local_window when it is > 0. opt.relative_positions M > 0 adds
  // the parameter "<name>.relpos" (H, M), a score bias per head and clipped distance;
  // group g passes its heads' rows to its core. opt.shared_qk: routing and lsh groups
  // pass their (normalised, with qk_norm) queries as keys, with the core's shared_qk
  // mask; their k columns of Wqkv then get no gradient. opt.commitment β > 0: every
  // training forward measures each routing group's commitment term
  // (RoutingAttention::commitment, before the centroids' EMA step), aux_loss() returns β
  // times their sum, and backward adds its gradient.
  MultiHeadAttentionT(core::ParamStoreT<T>& ps, const std::string& name, int64_t dim,
                      const std::vector<HeadGroup>& groups, const AttentionConfig& base,
                      const MhaOptions& opt = {});

  // Wqkv ~ N(0, sd²), Wo ~ N(0, out_std²), biases 0, relative bias 0 (so the model
  // starts as it would without it).
  void init(core::Rng& rng, double sd, double out_std);

  // train: after the forward, routing centroids take one EMA step (unless held).
  void forward(core::ViewT<const T> src, core::ViewT<T> dst, bool train);
  // ddst (B, N, E) -> dsrc (B, N, E) overwritten; parameter gradients +=.
  void backward(core::ViewT<const T> ddst, core::ViewT<T> dsrc);

  void hold_assignment(bool hold);
  // β Σ over routing groups of the last training forward's commitment term (0 when
  // β = 0 or after an eval forward): the part of the training loss this layer adds;
  // backward adds its gradient.
  double aux_loss() const;
  // Whether group g's core takes the queries as keys.
  bool shares_qk(int64_t g) const { return groups_[size_t(g)].shared; }
  int64_t groups() const { return int64_t(groups_.size()); }
  const HeadGroup& group(int64_t g) const { return groups_[size_t(g)].spec; }
  Attention<T>& core(int64_t g) { return *groups_[size_t(g)].att; }
  const Attention<T>& core(int64_t g) const { return *groups_[size_t(g)].att; }
  // Group g's core inputs and output in the last forward, (B, H_g, N, Dh) each (q and k
  // after qk_norm; k is q for a shared-QK group), and its rows (H_g, M) of the
  // relative-position bias (empty when off): what analyses of a trained model's
  // attention read.
  struct CoreIO {
    core::ViewT<const T> q, k, v, o, bias;
  };
  CoreIO core_io(int64_t g) const {
    const Group& gr = groups_[size_t(g)];
    return {gr.q.cview(), gr.shared ? gr.q.cview() : gr.k.cview(), gr.v.cview(), gr.o.cview(),
            bias_rows(gr, false)};
  }
  size_t held_bytes() const;

 private:
  struct Group {
    HeadGroup spec;
    int64_t h0 = 0;  // first head
    bool shared = false;  // k is q (opt.shared_qk and a routing or lsh group)
    double commit = 0;    // the last forward's commitment term (routing, β > 0)
    bool committed = false;  // that forward measured it (training): backward adds cdq, cdk
    std::unique_ptr<Attention<T>> att;
    // (B, H_g, N, Dh): inputs of the core (normalised with qk_norm), raw q and k
    // (qk_norm only), the core's output, and the gradients (dqr, dkr: of the raw q, k).
    // cdq, cdk: the commitment term's gradients (β > 0, routing), kept from forward.
    core::TensorT<T> q, k, v, qr, kr, o, dq, dk, dv, dout, dqr, dkr, cdq, cdk;
    LayerNormCache<T> qn, kn;  // qk_norm: per (B, H_g, N) row
  };
  int64_t dim_, heads_, hd_;
  MhaOptions opt_;
  bool hold_ = false;
  LinearT<T> qkv_, out_;
  core::ParamT<T>* relpos_ = nullptr;  // (H, M) or none
  // Group gr's rows (H_g, M) of the relative-position value, or (grad) its gradient;
  // empty when off.
  core::ViewT<T> bias_rows(const Group& gr, bool grad) const {
    if (!relpos_) return {};
    const int64_t M = relpos_->shape[1];
    return core::ViewT<T>((grad ? relpos_->grad : relpos_->value) + gr.h0 * M,
                          core::Shape{gr.spec.heads, M});
  }
  std::vector<Group> groups_;
  core::ViewT<const T> src_;
  int64_t b_ = 0, n_ = 0;
  core::TensorT<T> qkv_buf_, merged_, dmerged_, dqkv_;  // (B N, 3E), (B N, E), (B N, E), (B N, 3E)
};

// One pre-LN block: y = h + drop(FFN(LN2(h))), h = x + drop(MHA(LN1(x))), or with a sequence
// mixer (model.attention: linear_attention, ...) in place of MHA: h = x + drop(Mix(LN1(x))),
// the mixer "<name>.mix" from the zero state.
template <class T>
class TransformerBlockT {
 public:
  TransformerBlockT(core::ParamStoreT<T>& ps, const std::string& name, const TransformerConfig& cfg,
                    const std::vector<HeadGroup>& groups, const AttentionConfig& base);

  void init(core::Rng& rng, double sd, double out_std);
  // x (B, N, E) -> y (B, N, E); the caller keeps x alive until backward. Dropout masks
  // come from drop_rng (train only).
  void forward(core::ViewT<const T> x, core::ViewT<T> y, bool train, core::Rng& drop_rng);
  // dy (B, N, E) -> dx (B, N, E) overwritten.
  void backward(core::ViewT<const T> dy, core::ViewT<T> dx);

  void hold(bool h);
  // Whether this block mixes tokens with attention heads (else with a sequence mixer).
  bool has_attention() const { return attn_ != nullptr; }
  MultiHeadAttentionT<T>& attention();
  const MultiHeadAttentionT<T>& attention() const;
  Mixer<T>* mixer() { return mixer_.get(); }
  size_t held_bytes() const;

 private:
  LayerNormT<T> ln1_, ln2_;
  std::unique_ptr<MultiHeadAttentionT<T>> attn_;
  std::unique_ptr<Mixer<T>> mixer_;
  FeedForwardT<T> ffn_;
  DropoutT<T> drop_attn_, drop_ffn_;
  core::ViewT<const T> x_;
  LayerNormCache<T> ln1c_, ln2c_;
  FeedForwardCache<T> ffc_;
  // (B, N, E): LN1(x), attention output, h, LN2(h), FFN output; gradients of h, a, c, f.
  core::TensorT<T> a_, att_, h_, c_, f_, dh_, da_, dc_, df_;
};

template <class T>
class TransformerLMT {
 public:
  // Parameters under "<name>.": tok.table (V, E), pos (max_len, E) when learned,
  // l<i>.{ln1,attn.qkv,attn.out,ln2,ffn.in,ffn.out}, l<i>.attn.relpos (H, M) when
  // relative_positions = M > 0, ln_f, out.w (V, E) unless tied,
  // out.b (V). seed: dropout masks and the attention cores' random draws.
  TransformerLMT(const TransformerConfig& cfg, core::ParamStoreT<T>& ps, const std::string& name,
                 int64_t vocab, int64_t max_len, uint64_t seed);

  // GPT-2's init: embeddings and weights ~ N(0, init_std²), the two residual output
  // projections of each block N(0, (init_std / sqrt(2L))²), biases 0, LN gains 1.
  void init(core::Rng& rng);

  // ids (B, N) row-major, N <= max_len -> logits (B N, V); row b N + t scores the token
  // after ids[b, t]. train: dropout on, routing centroids take an EMA step after each
  // layer's attention (unless held); eval: deterministic given the draw count.
  // With model.commitment > 0 the training objective is the cross-entropy plus
  // aux_loss(); backward adds the latter's gradient by itself.
  void forward(const int32_t* ids, int64_t B, int64_t N, core::ViewT<T> logits, bool train);
  // dlogits (B N, V) -> parameter gradients (+=), after the forward it belongs to.
  // dx_norms (optional): ||dL/dx_0[:, t, :]|| over the batch for every position t.
  void backward(core::ViewT<const T> dlogits, std::vector<double>* dx_norms = nullptr);

  // The last forward's commitment loss, summed over layers (0 unless model.commitment > 0).
  double aux_loss() const;

  // Freezes dropout masks and attention structures (no centroid updates either).
  void hold_randomness(bool hold);
  // Forwards so far (every core draws from (its seed, this count)). Setting it makes
  // the next forward's random structures reproducible, e.g. the same for every evaluation.
  uint64_t draws() const;
  void set_draws(uint64_t draws);

  // What a bit-exact resume needs beyond the parameters, written under `out`:
  // "dropout_rng" (the dropout masks' RNG), "draws" (draws()) and, per routing head group,
  // the array "l<layer>.g<group>.centroids" (H_g, k, Dh) (float32 also when T is double).
  void save_state(core::Scope out) const;
  // Reads what save_state wrote; throws core::Error naming a missing entry or an array of
  // another shape (another attention config).
  void load_state(core::ConstScope in);

  const TransformerConfig& config() const { return cfg_; }
  int64_t vocab() const { return vocab_; }
  int64_t max_len() const { return max_len_; }
  int64_t layers() const { return int64_t(blocks_.size()); }
  TransformerBlockT<T>& block(int64_t l) { return *blocks_[size_t(l)]; }
  // "l0 local:2,routing:2 | l1 ..." for logs.
  std::string describe() const;
  size_t held_bytes() const;

 private:
  TransformerConfig cfg_;
  int64_t vocab_, max_len_;
  EmbeddingT<T> tok_;
  core::ParamT<T>* pos_ = nullptr;  // (max_len, E), learned positions
  std::vector<T> sinus_;            // (max_len, E), sinusoidal positions
  DropoutT<T> drop_emb_;
  std::vector<std::unique_ptr<TransformerBlockT<T>>> blocks_;
  LayerNormT<T> ln_f_;
  std::unique_ptr<LinearT<T>> head_;  // untied output (V, E), no bias
  core::ParamT<T>* out_b_;            // (V)
  core::Rng drop_rng_;
  bool hold_ = false;

  std::vector<int32_t> ids_;  // (B N)
  int64_t b_ = 0, n_ = 0;
  std::vector<core::TensorT<T>> xs_;  // (L + 1) residual streams (B, N, E)
  LayerNormCache<T> lnfc_;
  core::TensorT<T> z_, dz_, dx_, dy_;  // (B, N, E) each
};

using TransformerLM = TransformerLMT<float>;

}  // namespace seqbench::nn
