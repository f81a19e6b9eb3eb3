#include "rl/policy.hpp"

#include <algorithm>
#include <cmath>

#include "core/buffer.hpp"
#include "core/check.hpp"

namespace seqbench::rl {

using core::grow;

namespace {

// ACModel's init_params for Linear layers: rows ~ N(0, 1) scaled to unit norm, bias 0.
template <class T>
void init_unit_rows(nn::LinearT<T>& lin, core::Rng& rng) {
  T* w = lin.w().value;
  for (int64_t o = 0; o < lin.out(); ++o) {
    double sq = 0;
    for (int64_t i = 0; i < lin.in(); ++i) {
      const double v = rng.normal();
      w[o * lin.in() + i] = static_cast<T>(v);
      sq += v * v;
    }
    const double inv = 1.0 / std::sqrt(sq);
    for (int64_t i = 0; i < lin.in(); ++i) w[o * lin.in() + i] = static_cast<T>(w[o * lin.in() + i] * inv);
  }
  if (auto* b = lin.b()) std::fill_n(b->value, b->numel(), T(0));
}

template <class T>
void tanh_inplace(int64_t n, T* x) {
  for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
}

// dy *= 1 - y^2 from the tanh output y.
template <class T>
void tanh_backward(int64_t n, const T* y, T* dy) {
  for (int64_t i = 0; i < n; ++i) dy[i] *= T(1) - y[i] * y[i];
}

}  // namespace

bool uses_mission(const std::string& mission, const std::string& env_name) {
  if (mission == "on") return true;
  if (mission == "off") return false;
  SB_CHECK(mission == "auto", "agent.mission: unknown value '{}' (have: auto, on, off)", mission);
  return env_name.find("GoToObject") != std::string::npos ||
         env_name.find("KeyCorridor") != std::string::npos;
}

template <class T>
PolicyT<T>::PolicyT(core::ParamStoreT<T>& ps, const AgentConfig& cfg, bool use_mission,
                    int64_t window)
    : cfg_(cfg),
      use_mission_(use_mission),
      conv1_(ps, "conv1", 3, 16, 2, kViewSize, kViewSize),
      pool_(16, 2, conv1_.out_x(), conv1_.out_y()),
      conv2_(ps, "conv2", 16, 32, 2, pool_.out_x(), pool_.out_y()),
      conv3_(ps, "conv3", 32, 64, 2, conv2_.out_x(), conv2_.out_y()),
      core_(make_core<T>(cfg, ps, "core", kEmbed, window)),
      actor1_(ps, "actor.0", core_->hidden() + (use_mission ? kMissionSize : 0), kHeadHidden),
      actor2_(ps, "actor.2", kHeadHidden, kNumActions),
      critic1_(ps, "critic.0", core_->hidden() + (use_mission ? kMissionSize : 0), kHeadHidden),
      critic2_(ps, "critic.2", kHeadHidden, 1),
      Z_(core_->hidden() + (use_mission ? kMissionSize : 0)) {
  SB_CHECK(conv3_.out_size() == kEmbed, "policy: the conv stack gives {} features, expected {}",
           conv3_.out_size(), kEmbed);
}

template <class T>
void PolicyT<T>::init(core::Rng& rng) {
  conv1_.init(rng);
  conv2_.init(rng);
  conv3_.init(rng);
  core_->init(rng);
  init_unit_rows(actor1_, rng);
  init_unit_rows(actor2_, rng);
  init_unit_rows(critic1_, rng);
  init_unit_rows(critic2_, rng);
}

template <class T>
void PolicyT<T>::reserve(int64_t n) {
  const int64_t H = core_->hidden();
  grow(img_, n * kImageSize);
  grow(c1_, n * conv1_.out_size());
  grow(dc1_, n * conv1_.out_size());
  grow(p1_, n * pool_.out_size());
  grow(dp1_, n * pool_.out_size());
  grow(c2_, n * conv2_.out_size());
  grow(dc2_, n * conv2_.out_size());
  grow(emb_, n * kEmbed);
  grow(demb_, n * kEmbed);
  grow(h_, n * H);
  grow(dh_, n * H);
  grow(z_, n * Z_);
  grow(dz_, 2 * n * Z_);  // the actor's and the critic's dz
  grow(a1_, n * kHeadHidden);
  grow(da1_, n * kHeadHidden);
  grow(v1_, n * kHeadHidden);
  grow(dv1_, n * kHeadHidden);
}

template <class T>
void PolicyT<T>::embed(int64_t n, const uint8_t* image) {
  for (int64_t i = 0; i < n * kImageSize; ++i) img_[size_t(i)] = static_cast<T>(image[i]);
  conv1_.forward(n, img_.data(), c1_.data());
  relu_forward(n * conv1_.out_size(), c1_.data());
  pool_.forward(n, c1_.data(), p1_.data());
  conv2_.forward(n, p1_.data(), c2_.data());
  relu_forward(n * conv2_.out_size(), c2_.data());
  conv3_.forward(n, c2_.data(), emb_.data());
  relu_forward(n * kEmbed, emb_.data());
}

template <class T>
void PolicyT<T>::heads(int64_t n, const T* h, const uint8_t* mission, T* logits, T* values) {
  const int64_t H = core_->hidden();
  const T* z = h;
  if (use_mission_) {
    SB_CHECK(mission != nullptr, "policy: the mission one-hot is required (agent.mission on)");
    for (int64_t r = 0; r < n; ++r) {
      std::copy_n(h + r * H, H, z_.data() + r * Z_);
      for (int64_t j = 0; j < kMissionSize; ++j)
        z_[size_t(r * Z_ + H + j)] = static_cast<T>(mission[r * kMissionSize + j]);
    }
    z = z_.data();
  } else {
    std::copy_n(h, n * H, z_.data());  // backward reads z_
  }
  using CV = core::ViewT<const T>;
  using V = core::ViewT<T>;
  actor1_.forward(CV(z, core::Shape{n, Z_}), V(a1_.data(), core::Shape{n, kHeadHidden}));
  tanh_inplace(n * kHeadHidden, a1_.data());
  actor2_.forward(CV(a1_.data(), core::Shape{n, kHeadHidden}), V(logits, core::Shape{n, kNumActions}));
  critic1_.forward(CV(z, core::Shape{n, Z_}), V(v1_.data(), core::Shape{n, kHeadHidden}));
  tanh_inplace(n * kHeadHidden, v1_.data());
  critic2_.forward(CV(v1_.data(), core::Shape{n, kHeadHidden}), V(values, core::Shape{n, 1}));
}

template <class T>
void PolicyT<T>::act(int64_t B, const uint8_t* image, const uint8_t* mission, const T* mask,
                     T* mem, int64_t phase, T* logits, T* values) {
  reserve(B);
  n_ = 0;  // acting overwrites the activations a training forward kept
  embed(B, image);
  core_->act(B, emb_.data(), mask, mem, h_.data(), phase);
  heads(B, h_.data(), mission, logits, values);
}

template <class T>
void PolicyT<T>::forward(int64_t L, int64_t N, const uint8_t* image, const uint8_t* mission,
                         const T* mem0, const T* mask, T* logits, T* values, T* mem_out) {
  const int64_t n = L * N;
  reserve(n);
  embed(n, image);
  core_->forward(L, N, emb_.data(), mem0, mask, h_.data(), mem_out);
  heads(n, h_.data(), mission, logits, values);
  n_ = n;
  L_ = L;
  N_ = N;
}

template <class T>
void PolicyT<T>::backward(const T* dlogits, const T* dvalues, T* dmem0) {
  const int64_t n = n_, H = core_->hidden();
  SB_CHECK(n > 0, "policy: backward without a training forward (act() discards it)");
  using CV = core::ViewT<const T>;
  using V = core::ViewT<T>;
  const CV z(z_.data(), core::Shape{n, Z_});
  T* dz_actor = dz_.data();
  T* dz_critic = dz_.data() + n * Z_;
  actor2_.backward(CV(a1_.data(), core::Shape{n, kHeadHidden}), CV(dlogits, core::Shape{n, kNumActions}),
                   V(da1_.data(), core::Shape{n, kHeadHidden}));
  tanh_backward(n * kHeadHidden, a1_.data(), da1_.data());
  actor1_.backward(z, CV(da1_.data(), core::Shape{n, kHeadHidden}), V(dz_actor, core::Shape{n, Z_}));
  critic2_.backward(CV(v1_.data(), core::Shape{n, kHeadHidden}), CV(dvalues, core::Shape{n, 1}),
                    V(dv1_.data(), core::Shape{n, kHeadHidden}));
  tanh_backward(n * kHeadHidden, v1_.data(), dv1_.data());
  critic1_.backward(z, CV(dv1_.data(), core::Shape{n, kHeadHidden}), V(dz_critic, core::Shape{n, Z_}));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t j = 0; j < H; ++j) dh_[size_t(r * H + j)] = dz_actor[r * Z_ + j] + dz_critic[r * Z_ + j];
  core_->backward(dh_.data(), demb_.data(), dmem0);
  relu_backward(n * kEmbed, emb_.data(), demb_.data());
  conv3_.backward(n, demb_.data(), dc2_.data());
  relu_backward(n * conv2_.out_size(), c2_.data(), dc2_.data());
  conv2_.backward(n, dc2_.data(), dp1_.data());
  pool_.backward(n, dp1_.data(), dc1_.data());
  relu_backward(n * conv1_.out_size(), c1_.data(), dc1_.data());
  conv1_.backward(n, dc1_.data(), nullptr);
  n_ = 0;
}

template <class T>
size_t PolicyT<T>::held_bytes() const {
  size_t b = core_->held_bytes();
  for (const auto* v : {&img_, &c1_, &p1_, &c2_, &emb_, &h_, &z_, &a1_, &v1_, &dc1_, &dp1_,
                        &dc2_, &demb_, &dh_, &dz_, &da1_, &dv1_})
    b += core::bytes_of(*v);
  return b;
}

template <class T>
void log_softmax(int64_t n, int64_t A, const T* logits, T* logp) {
  for (int64_t r = 0; r < n; ++r) {
    const T* z = logits + r * A;
    T* lp = logp + r * A;
    const T mx = *std::max_element(z, z + A);
    double sum = 0;
    for (int64_t a = 0; a < A; ++a) sum += std::exp(double(z[a] - mx));
    const T lse = mx + static_cast<T>(std::log(sum));
    for (int64_t a = 0; a < A; ++a) lp[a] = z[a] - lse;
  }
}

void sample_actions(int64_t n, int64_t A, const float* logits, core::Rng& rng, int32_t* actions,
                    float* logp) {
  float lp[64];
  SB_CHECK(A <= 64, "sample_actions: {} actions > 64", A);
  for (int64_t r = 0; r < n; ++r) {
    log_softmax<float>(1, A, logits + r * A, lp);
    const double u = rng.uniform();
    double cum = 0;
    int32_t pick = static_cast<int32_t>(A - 1);
    for (int64_t a = 0; a < A; ++a) {
      cum += std::exp(double(lp[a]));
      if (u < cum) {
        pick = static_cast<int32_t>(a);
        break;
      }
    }
    actions[r] = pick;
    logp[r] = lp[pick];
  }
}

template class PolicyT<float>;
template class PolicyT<double>;
template void log_softmax<float>(int64_t, int64_t, const float*, float*);
template void log_softmax<double>(int64_t, int64_t, const double*, double*);

}  // namespace seqbench::rl
