#include "nn/attention/transformer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/gemm.hpp"
#include "core/buffer.hpp"
#include "core/check.hpp"
#include "nn/attention/kinds.hpp"
#include "nn/registry.hpp"

namespace seqbench::nn {

using backend::Trans;
using core::bytes_of;
using core::ensure_shape;

namespace {

// Seed streams of the model (Rng::derive(seed, stream)).
constexpr uint64_t kDropoutStream = 0x64726f70ULL;
constexpr uint64_t kAttentionStream = 0x61747473ULL;

}  // namespace

// ---------------------------------------------------------------- block

template <class T>
TransformerBlockT<T>::TransformerBlockT(core::ParamStoreT<T>& ps, const std::string& name,
                                        const TransformerConfig& cfg,
                                        const std::vector<HeadGroup>& groups,
                                        const AttentionConfig& base)
    : ln1_(ps, name + ".ln1", cfg.d_model, true, cfg.ln_eps),
      ln2_(ps, name + ".ln2", cfg.d_model, true, cfg.ln_eps),
      // Declared before the FFN's, as always: the parameter block's order (checkpoints,
      // the gradient norm's summation order) stays what it was.
      attn_(transformer_mixer(cfg)
                ? nullptr
                : std::make_unique<MultiHeadAttentionT<T>>(
                      ps, name + ".attn", cfg.d_model, groups, base,
                      MhaOptions{cfg.qk_norm, cfg.ln_eps, cfg.local_window,
                                 cfg.relative_positions, cfg.shared_qk, cfg.commitment})),
      mixer_(transformer_mixer(cfg) ? make_mixer<T>(*transformer_mixer(cfg)->mixer, cfg.mixer, ps,
                                                    name + ".mix", cfg.d_model, cfg.d_model)
                                    : nullptr),
      ffn_(ps, name + ".ffn", cfg.d_model, cfg.d_ff, parse_activation(cfg.activation)),
      drop_attn_(cfg.dropout),
      drop_ffn_(cfg.dropout) {}

template <class T>
MultiHeadAttentionT<T>& TransformerBlockT<T>::attention() {
  SB_CHECK(attn_, "this block mixes with a sequence mixer, not attention heads");
  return *attn_;
}

template <class T>
const MultiHeadAttentionT<T>& TransformerBlockT<T>::attention() const {
  SB_CHECK(attn_, "this block mixes with a sequence mixer, not attention heads");
  return *attn_;
}

template <class T>
void TransformerBlockT<T>::init(core::Rng& rng, double sd, double out_std) {
  ln1_.init();
  ln2_.init();
  if (attn_)
    attn_->init(rng, sd, out_std);
  else
    mixer_->init(rng);
  ffn_.init(rng, sd, out_std);
}

template <class T>
void TransformerBlockT<T>::hold(bool h) {
  if (attn_) attn_->hold_assignment(h);
  drop_attn_.hold(h);
  drop_ffn_.hold(h);
}

template <class T>
void TransformerBlockT<T>::forward(core::ViewT<const T> x, core::ViewT<T> y, bool train,
                                   core::Rng& drop_rng) {
  const core::Shape s = x.shape;
  core::check_shape(y, s, "TransformerBlock.forward y");
  const int64_t n = x.numel(), E = s[2];
  const core::Shape rows{n / E, E};
  x_ = x;
  for (auto* t : {&a_, &att_, &h_, &c_, &f_}) ensure_shape(*t, s);
  ln1_.forward(x, a_.view(), ln1c_);
  if (attn_)
    attn_->forward(a_.cview(), att_.view(), train);
  else
    mixer_->forward(a_.cview(), core::ViewT<const T>(), att_.view());
  drop_attn_.forward(att_.data(), n, train, drop_rng);
  for (int64_t i = 0; i < n; ++i) h_[i] = x.data[i] + att_[i];
  ln2_.forward(h_.cview(), c_.view(), ln2c_);
  ffn_.forward(c_.cview().reshape(rows), f_.view().reshape(rows), ffc_);
  drop_ffn_.forward(f_.data(), n, train, drop_rng);
  for (int64_t i = 0; i < n; ++i) y.data[i] = h_[i] + f_[i];
}

template <class T>
void TransformerBlockT<T>::backward(core::ViewT<const T> dy, core::ViewT<T> dx) {
  const core::Shape s = h_.shape();
  core::check_shape(dy, s, "TransformerBlock.backward dy");
  core::check_shape(dx, s, "TransformerBlock.backward dx");
  const int64_t n = dy.numel(), E = s[2];
  const core::Shape rows{n / E, E};
  for (auto* t : {&dh_, &da_, &dc_, &df_}) ensure_shape(*t, s);
  // FFN branch: y = h + drop(f), f = FFN(LN2(h)).
  std::copy_n(dy.data, n, df_.data());
  drop_ffn_.backward(df_.data(), n);
  ffn_.backward(c_.cview().reshape(rows), df_.cview().reshape(rows), ffc_, dc_.view().reshape(rows));
  std::copy_n(dy.data, n, dh_.data());
  ln2_.backward(h_.cview(), dc_.cview(), ln2c_, dh_.view());
  // Attention branch: h = x + drop(att), att = MHA(LN1(x)); df_ is reused for d att.
  std::copy_n(dh_.data(), n, df_.data());
  drop_attn_.backward(df_.data(), n);
  if (attn_)
    attn_->backward(df_.cview(), da_.view());
  else
    mixer_->backward(df_.cview(), da_.view(), core::ViewT<T>());
  std::copy_n(dh_.data(), n, dx.data);
  ln1_.backward(x_, da_.cview(), ln1c_, dx);
}

template <class T>
size_t TransformerBlockT<T>::held_bytes() const {
  size_t n = (attn_ ? attn_->held_bytes() : mixer_->held_bytes()) + drop_attn_.held_bytes() +
             drop_ffn_.held_bytes();
  for (const auto* t : {&a_, &att_, &h_, &c_, &f_, &dh_, &da_, &dc_, &df_, &ffc_.u, &ffc_.a,
                        &ffc_.du})
    n += bytes_of(*t);
  return n;
}

// ---------------------------------------------------------------- model

template <class T>
TransformerLMT<T>::TransformerLMT(const TransformerConfig& cfg, core::ParamStoreT<T>& ps,
                                  const std::string& name, int64_t vocab, int64_t max_len,
                                  uint64_t seed)
    : cfg_((check_rules(cfg), cfg)),
      vocab_(vocab),
      max_len_(max_len),
      tok_(ps, name + ".tok", vocab, cfg.d_model),
      drop_emb_(cfg.dropout),
      ln_f_(ps, name + ".ln_f", cfg.d_model, true, cfg.ln_eps),
      drop_rng_(core::Rng::derive(seed, kDropoutStream)) {
  SB_CHECK(vocab > 0 && max_len > 0, "{}: vocabulary ({}) and max_len ({}) must be positive", name,
           vocab, max_len);
  const int64_t E = cfg.d_model;
  if (cfg.positions == "learned") {
    pos_ = &ps.add(name + ".pos", core::Shape{max_len, E});
  } else if (cfg.positions == "sinusoidal") {
    sinus_.resize(size_t(max_len * E));
    for (int64_t t = 0; t < max_len; ++t)
      for (int64_t i = 0; i < E; ++i) {
        const double f = std::pow(10000.0, -double(i - i % 2) / double(E));
        sinus_[size_t(t * E + i)] =
            static_cast<T>(i % 2 == 0 ? std::sin(double(t) * f) : std::cos(double(t) * f));
      }
  }
  AttentionConfig base;
  base.window = cfg.window;
  base.clusters = cfg.clusters;
  base.rounds = cfg.rounds;
  base.ema_decay = cfg.ema_decay;
  for (int64_t l = 0; l < cfg.layers; ++l) {
    base.seed = core::Rng::derive(seed, kAttentionStream + uint64_t(l)).next_u64();
    blocks_.push_back(std::make_unique<TransformerBlockT<T>>(
        ps, fmt::format("{}.l{}", name, l), cfg, layer_head_groups(cfg, l), base));
  }
  // Declared after the blocks so that the untied output sits at the end of the store.
  if (!cfg.tie_embeddings)
    head_ = std::make_unique<LinearT<T>>(ps, name + ".out", E, vocab, false);
  out_b_ = &ps.add(name + ".out.b", core::Shape{vocab});
}

template <class T>
void TransformerLMT<T>::init(core::Rng& rng) {
  const double sd = cfg_.init_std, out_std = sd / std::sqrt(2.0 * double(cfg_.layers));
  auto& table = tok_.table();
  for (int64_t i = 0; i < table.numel(); ++i) table.value[i] = static_cast<T>(rng.normal() * sd);
  if (pos_)
    for (int64_t i = 0; i < pos_->numel(); ++i) pos_->value[i] = static_cast<T>(rng.normal() * sd);
  for (auto& b : blocks_) b->init(rng, sd, out_std);
  ln_f_.init();
  if (head_) init_normal(*head_, rng, sd);
  std::fill_n(out_b_->value, vocab_, T(0));
}

template <class T>
double TransformerLMT<T>::aux_loss() const {
  double s = 0;
  for (const auto& b : blocks_)
    if (b->has_attention()) s += b->attention().aux_loss();
  return s;
}

template <class T>
void TransformerLMT<T>::hold_randomness(bool hold) {
  hold_ = hold;
  drop_emb_.hold(hold);
  for (auto& b : blocks_) b->hold(hold);
}

template <class T>
void TransformerLMT<T>::forward(const int32_t* ids, int64_t B, int64_t N, core::ViewT<T> logits,
                                bool train) {
  const int64_t E = cfg_.d_model, V = vocab_, BN = B * N, L = layers();
  SB_CHECK(B > 0 && N > 0, "TransformerLM.forward: empty batch B={} N={}", B, N);
  SB_CHECK(N <= max_len_,
           "TransformerLM.forward: sequence of {} tokens is longer than max_len {} (hint: the "
           "position table is sized by the experiment's sequence length)",
           N, max_len_);
  core::check_shape(logits, core::Shape{BN, V}, "TransformerLM.forward logits");
  if (hold_)
    SB_CHECK(b_ == B && n_ == N, "TransformerLM.forward: randomness is held for B={} N={}, got "
             "B={} N={}", b_, n_, B, N);
  b_ = B;
  n_ = N;
  ids_.assign(ids, ids + BN);
  xs_.resize(size_t(L + 1));
  for (auto& x : xs_) ensure_shape(x, core::Shape{B, N, E});
  T* x0 = xs_[0].data();
  tok_.forward(ids, BN, xs_[0].view().reshape(core::Shape{BN, E}));
  const T* P = pos_ ? pos_->value : (sinus_.empty() ? nullptr : sinus_.data());
  if (P)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < N; ++t)
        for (int64_t e = 0; e < E; ++e) x0[(b * N + t) * E + e] += P[t * E + e];
  drop_emb_.forward(x0, BN * E, train, drop_rng_);
  for (int64_t l = 0; l < L; ++l)
    blocks_[size_t(l)]->forward(xs_[size_t(l)].cview(), xs_[size_t(l + 1)].view(), train,
                                drop_rng_);
  ensure_shape(z_, core::Shape{B, N, E});
  ln_f_.forward(xs_[size_t(L)].cview(), z_.view(), lnfc_);
  const T* W = head_ ? head_->w().value : tok_.table().value;  // (V, E)
  backend::gemm<T>(Trans::N, Trans::T, BN, V, E, T(1), z_.data(), E, W, E, T(0), logits.data, V);
  for (int64_t r = 0; r < BN; ++r)
    for (int64_t v = 0; v < V; ++v) logits.data[r * V + v] += out_b_->value[v];
}

template <class T>
void TransformerLMT<T>::backward(core::ViewT<const T> dlogits, std::vector<double>* dx_norms) {
  const int64_t E = cfg_.d_model, V = vocab_, B = b_, N = n_, BN = B * N, L = layers();
  SB_CHECK(!xs_.empty() && BN > 0, "TransformerLM.backward: no forward before");
  core::check_shape(dlogits, core::Shape{BN, V}, "TransformerLM.backward dlogits");
  for (int64_t r = 0; r < BN; ++r)
    for (int64_t v = 0; v < V; ++v) out_b_->grad[v] += dlogits.data[r * V + v];
  const T* W = head_ ? head_->w().value : tok_.table().value;
  T* dW = head_ ? head_->w().grad : tok_.table().grad;
  ensure_shape(dz_, core::Shape{B, N, E});
  backend::gemm<T>(Trans::N, Trans::N, BN, E, V, T(1), dlogits.data, V, W, E, T(0), dz_.data(), E);
  backend::gemm<T>(Trans::T, Trans::N, V, E, BN, T(1), dlogits.data, V, z_.data(), E, T(1), dW, E);
  ensure_shape(dy_, core::Shape{B, N, E});
  ensure_shape(dx_, core::Shape{B, N, E});
  dy_.zero();
  ln_f_.backward(xs_[size_t(L)].cview(), dz_.cview(), lnfc_, dy_.view());
  for (int64_t l = L - 1; l >= 0; --l) {
    blocks_[size_t(l)]->backward(dy_.cview(), dx_.view());
    std::swap(dy_, dx_);
  }
  T* dx0 = dy_.data();
  drop_emb_.backward(dx0, BN * E);
  if (dx_norms) {
    dx_norms->assign(size_t(N), 0.0);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < N; ++t)
        for (int64_t e = 0; e < E; ++e) {
          const double g = double(dx0[(b * N + t) * E + e]);
          (*dx_norms)[size_t(t)] += g * g;
        }
    for (auto& v : *dx_norms) v = std::sqrt(v);
  }
  if (pos_)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < N; ++t)
        for (int64_t e = 0; e < E; ++e) pos_->grad[t * E + e] += dx0[(b * N + t) * E + e];
  tok_.backward(ids_.data(), BN, dy_.cview().reshape(core::Shape{BN, E}));
}

template <class T>
uint64_t TransformerLMT<T>::draws() const {
  for (const auto& b : blocks_)
    if (b->has_attention()) return b->attention().core(0).draws();
  return 0;  // sequence mixers draw nothing
}

template <class T>
void TransformerLMT<T>::set_draws(uint64_t draws) {
  for (auto& b : blocks_)
    if (b->has_attention())
      for (int64_t g = 0; g < b->attention().groups(); ++g) b->attention().core(g).set_draws(draws);
}

template <class T>
void TransformerLMT<T>::save_state(core::Scope out) const {
  out.put_rng("dropout_rng", drop_rng_);
  out.put_u64("draws", draws());
  for (size_t l = 0; l < blocks_.size(); ++l) {
    if (!blocks_[l]->has_attention()) continue;
    const auto& mha = blocks_[l]->attention();
    for (int64_t g = 0; g < mha.groups(); ++g) {
      const auto* r = dynamic_cast<const RoutingAttention<T>*>(&mha.core(g));
      if (!r) continue;
      const auto c = r->centroids();
      out.put_array(fmt::format("l{}.g{}.centroids", l, g),
                    core::Shape{r->heads(), cfg_.clusters, r->head_dim()},
                    std::vector<float>(c.begin(), c.end()));
    }
  }
}

template <class T>
void TransformerLMT<T>::load_state(core::ConstScope in) {
  drop_rng_ = in.get_rng("dropout_rng");
  set_draws(in.get_u64("draws"));
  for (size_t l = 0; l < blocks_.size(); ++l) {
    if (!blocks_[l]->has_attention()) continue;
    auto& mha = blocks_[l]->attention();
    for (int64_t g = 0; g < mha.groups(); ++g) {
      auto* r = dynamic_cast<RoutingAttention<T>*>(&mha.core(g));
      if (!r) continue;
      const std::vector<float>& saved =
          in.get_array(fmt::format("l{}.g{}.centroids", l, g),
                       core::Shape{r->heads(), cfg_.clusters, r->head_dim()});
      auto c = r->centroids();
      std::copy(saved.begin(), saved.end(), c.begin());
    }
  }
}

template <class T>
std::string TransformerLMT<T>::describe() const {
  std::string s;
  for (size_t l = 0; l < blocks_.size(); ++l) {
    if (!blocks_[l]->has_attention()) {
      s += fmt::format("{}l{} {}", l ? " | " : "", l, cfg_.attention);
      continue;
    }
    std::vector<HeadGroup> g;
    const auto& mha = blocks_[l]->attention();
    for (int64_t i = 0; i < mha.groups(); ++i) g.push_back(mha.group(i));
    s += fmt::format("{}l{} {}", l ? " | " : "", l, head_groups_str(g));
  }
  return s;
}

template <class T>
size_t TransformerLMT<T>::held_bytes() const {
  size_t n = drop_emb_.held_bytes() + bytes_of(z_) + bytes_of(dz_) + bytes_of(dx_) + bytes_of(dy_) +
             ids_.capacity() * sizeof(int32_t);
  for (const auto& x : xs_) n += bytes_of(x);
  for (const auto& b : blocks_) n += b->held_bytes();
  return n;
}

template class TransformerBlockT<float>;
template class TransformerBlockT<double>;
template class TransformerLMT<float>;
template class TransformerLMT<double>;

}  // namespace seqbench::nn
