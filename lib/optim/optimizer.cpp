#include "optim/optimizer.hpp"

#include <cmath>

#include "core/check.hpp"

namespace seqbench::optim {

namespace {

// Below this many scalars a parallel region costs more than the loop. Every update is
// element-wise, so threading never changes the result.
constexpr int64_t kParallelMin = int64_t(1) << 16;

}  // namespace

template <class T>
void Optimizer<T>::set_steps(int64_t t) {
  SB_CHECK(t >= 0, "optimizer step count {} is negative (hint: corrupt checkpoint?)", t);
  steps_ = t;
}

template <class T>
void Optimizer<T>::check_store(const core::ParamStoreT<T>& ps, double lr) const {
  SB_CHECK(ps.finalized(), "{}: ParamStore not finalized (hint: call ps.finalize({}))", name(),
           n_slots());
  SB_CHECK(ps.n_slots() >= n_slots(),
           "{} needs {} optimizer slots but the ParamStore has {} (hint: finalize with "
           "optimizer->n_slots())",
           name(), n_slots(), ps.n_slots());
  SB_CHECK(std::isfinite(lr) && lr >= 0, "{}: learning rate {} is not finite and >= 0", name(), lr);
}

// ---- SGD ----------------------------------------------------------------------------

template <class T>
Sgd<T>::Sgd(const OptimConfig& cfg)
    : momentum_(cfg.momentum), weight_decay_(cfg.weight_decay), nesterov_(cfg.nesterov) {}

template <class T>
void Sgd<T>::step(core::ParamStoreT<T>& ps, double lr) {
  this->check_store(ps, lr);
  const int64_t n = ps.size();
  T* p = ps.values().data();       // (n)
  const T* g = ps.grads().data();  // (n)
  const T lr_t = T(lr), wd = T(weight_decay_), mu = T(momentum_);
  if (momentum_ == 0) {
#pragma omp parallel for simd if (n >= kParallelMin)
    for (int64_t i = 0; i < n; ++i) p[i] -= lr_t * (g[i] + wd * p[i]);
  } else {
    T* buf = ps.slot(0).data();  // (n)
    const bool nesterov = nesterov_;
#pragma omp parallel for simd if (n >= kParallelMin)
    for (int64_t i = 0; i < n; ++i) {
      const T d = g[i] + wd * p[i];
      buf[i] = mu * buf[i] + d;
      p[i] -= lr_t * (nesterov ? d + mu * buf[i] : buf[i]);
    }
  }
  ++this->steps_;
}

// ---- RMSprop ------------------------------------------------------------------------

template <class T>
RmsProp<T>::RmsProp(const OptimConfig& cfg)
    : alpha_(cfg.alpha), momentum_(cfg.momentum), eps_(cfg.eps), weight_decay_(cfg.weight_decay) {}

template <class T>
void RmsProp<T>::step(core::ParamStoreT<T>& ps, double lr) {
  this->check_store(ps, lr);
  const int64_t n = ps.size();
  T* p = ps.values().data();       // (n)
  const T* g = ps.grads().data();  // (n)
  T* sq = ps.slot(0).data();       // (n)
  const T lr_t = T(lr), wd = T(weight_decay_), alpha = T(alpha_), one_m_alpha = T(1 - alpha_),
          eps = T(eps_), mu = T(momentum_);
  if (momentum_ == 0) {
#pragma omp parallel for simd if (n >= kParallelMin)
    for (int64_t i = 0; i < n; ++i) {
      const T d = g[i] + wd * p[i];
      sq[i] = alpha * sq[i] + one_m_alpha * d * d;
      p[i] -= lr_t * d / (std::sqrt(sq[i]) + eps);
    }
  } else {
    T* buf = ps.slot(1).data();  // (n)
#pragma omp parallel for simd if (n >= kParallelMin)
    for (int64_t i = 0; i < n; ++i) {
      const T d = g[i] + wd * p[i];
      sq[i] = alpha * sq[i] + one_m_alpha * d * d;
      buf[i] = mu * buf[i] + d / (std::sqrt(sq[i]) + eps);
      p[i] -= lr_t * buf[i];
    }
  }
  ++this->steps_;
}

// ---- Adam ---------------------------------------------------------------------------

template <class T>
Adam<T>::Adam(const OptimConfig& cfg)
    : beta1_(cfg.beta1), beta2_(cfg.beta2), eps_(cfg.eps), weight_decay_(cfg.weight_decay) {}

template <class T>
void Adam<T>::step(core::ParamStoreT<T>& ps, double lr) {
  this->check_store(ps, lr);
  const int64_t n = ps.size();
  T* p = ps.values().data();       // (n)
  const T* g = ps.grads().data();  // (n)
  T* m = ps.slot(0).data();        // (n)
  T* v = ps.slot(1).data();        // (n)
  const double t = double(this->steps_ + 1);
  const double bc1 = 1 - std::pow(beta1_, t), bc2 = 1 - std::pow(beta2_, t);
  const T step_size = T(lr / bc1), bc2_sqrt = T(std::sqrt(bc2));
  const T wd = T(weight_decay_), b1 = T(beta1_), one_m_b1 = T(1 - beta1_), b2 = T(beta2_),
          one_m_b2 = T(1 - beta2_), eps = T(eps_);
#pragma omp parallel for simd if (n >= kParallelMin)
  for (int64_t i = 0; i < n; ++i) {
    const T d = g[i] + wd * p[i];
    m[i] = b1 * m[i] + one_m_b1 * d;
    v[i] = b2 * v[i] + one_m_b2 * d * d;
    p[i] -= step_size * m[i] / (std::sqrt(v[i]) / bc2_sqrt + eps);
  }
  ++this->steps_;
}

// ---- factory and clipping -----------------------------------------------------------

template <class T>
std::unique_ptr<Optimizer<T>> make_optimizer(const OptimConfig& cfg) {
  check_rules(cfg);
  if (cfg.name == "sgd") return std::make_unique<Sgd<T>>(cfg);
  if (cfg.name == "adam") return std::make_unique<Adam<T>>(cfg);
  return std::make_unique<RmsProp<T>>(cfg);  // check_rules() admits no other name
}

template <class T>
double grad_norm(const core::ParamStoreT<T>& ps) {
  // Serial on purpose: a fixed summation order keeps the norm (and so clipping and
  // --resume) bit-identical for any thread count.
  double s = 0;
  for (T x : ps.grads()) s += double(x) * double(x);
  return std::sqrt(s);
}

template <class T>
double clip_grad_norm(core::ParamStoreT<T>& ps, double max_norm) {
  SB_CHECK(max_norm >= 0, "clip threshold {} is negative (hint: 0 turns clipping off)", max_norm);
  const double norm = grad_norm(ps);
  if (max_norm > 0 && std::isfinite(norm) && norm > max_norm) {
    const T scale = T(max_norm / norm);
    for (T& x : ps.grads()) x *= scale;
  }
  return norm;
}

template class Optimizer<float>;
template class Optimizer<double>;
template class Sgd<float>;
template class Sgd<double>;
template class RmsProp<float>;
template class RmsProp<double>;
template class Adam<float>;
template class Adam<double>;
template std::unique_ptr<Optimizer<float>> make_optimizer<float>(const OptimConfig&);
template std::unique_ptr<Optimizer<double>> make_optimizer<double>(const OptimConfig&);
template double grad_norm<float>(const core::ParamStoreT<float>&);
template double grad_norm<double>(const core::ParamStoreT<double>&);
template double clip_grad_norm<float>(core::ParamStoreT<float>&, double);
template double clip_grad_norm<double>(core::ParamStoreT<double>&, double);

}  // namespace seqbench::optim
