#include "nn/recurrent/attentive.hpp"

#include <algorithm>
#include <cmath>

#include "backend/gemm.hpp"
#include "core/buffer.hpp"
#include "core/check.hpp"
#include "nn/additive_energy.hpp"
#include "nn/fast_math.hpp"
#include "nn/parallel.hpp"

namespace seqbench::nn {

using core::grow;

using backend::Trans;

template <class T>
typename AttentiveRecurrent<T>::Kind AttentiveRecurrent<T>::parse_kind(const std::string& name,
                                                                       const std::string& s) {
  if (s == "mem_rnn") return Kind::MemRnn;
  if (s == "rel_rnn") return Kind::RelRnn;
  if (s == "rel_lstm") return Kind::RelLstm;
  throw core::UsageError(fmt::format(
      "{}: unknown attentive recurrent kind '{}' (hint: use mem_rnn, rel_rnn or rel_lstm)", name,
      s));
}

template <class T>
AttentiveRecurrent<T>::AttentiveRecurrent(core::ParamStoreT<T>& ps, const std::string& name,
                                          int64_t input, int64_t hidden, AttentiveOptions opt)
    : in_(input),
      h_(hidden),
      kind_(parse_kind(name, opt.kind)),
      nu_(opt.nu),
      rho_(opt.rho),
      u_a_(nullptr),
      v_a_(nullptr),
      v_(nullptr),
      forget_bias_(opt.forget_bias) {
  SB_CHECK(input > 0 && hidden > 0, "{}: sizes must be positive, got input={} hidden={}", name,
           input, hidden);
  if (opt.bptt != 0)
    throw core::UsageError(
        fmt::format("{}: {} supports full BPTT only, got bptt={} (hint: set bptt: 0)", name,
                    opt.kind, opt.bptt));
  if (kind_ != Kind::MemRnn && (nu_ < 1 || rho_ < 0))
    throw core::UsageError(fmt::format(
        "{}: {} needs nu >= 1 and rho >= 0, got nu={} rho={} (hint: the paper uses nu=rho=10)",
        name, opt.kind, nu_, rho_));
  if (kind_ == Kind::RelLstm) {
    lstm_.emplace(ps, name, input, hidden);
    sc_ = 2 * hidden;
    g_ = 4 * hidden;
    cc_ = 5 * hidden;
  } else {
    if (opt.nonlinearity != "tanh" && opt.nonlinearity != "relu")
      throw core::UsageError(fmt::format("{}: {} nonlinearity must be tanh or relu, got '{}'", name,
                                         opt.kind, opt.nonlinearity));
    rnn_.emplace(ps, name, input, hidden, RnnOptions{opt.nonlinearity, "xavier"});
    sc_ = g_ = cc_ = hidden;
  }
  u_a_ = &ps.add(name + ".u_a", core::Shape{hidden, hidden});
  v_a_ = &ps.add(name + ".v_a", core::Shape{hidden, hidden});
  v_ = &ps.add(name + ".v", core::Shape{hidden});
}

template <class T>
void AttentiveRecurrent<T>::init(core::Rng& rng) {
  const double a = 1.0 / std::sqrt(static_cast<double>(h_));
  const auto fill = [&](core::ParamT<T>& p) {
    for (int64_t i = 0; i < p.numel(); ++i) p.value[i] = static_cast<T>(rng.uniform(-a, a));
  };
  if (lstm_) {
    lstm_->init(rng, forget_bias_);
  } else {
    fill(rnn_->w_x());
    fill(rnn_->w_h());
    fill(rnn_->b());
  }
  fill(*u_a_);
  fill(*v_a_);
  fill(*v_);
}

template <class T>
int64_t AttentiveRecurrent<T>::admit_relevant(int64_t rho, int32_t* slot_idx, T* slot_score,
                                              int32_t cand, T cand_score) {
  int64_t lowest = -1;
  for (int64_t k = 0; k < rho; ++k) {
    if (slot_idx[k] < 0) {
      slot_idx[k] = cand;
      slot_score[k] = cand_score;
      return k;
    }
    if (lowest < 0 || slot_score[k] < slot_score[lowest]) lowest = k;
  }
  if (lowest < 0 || !(cand_score > slot_score[lowest])) return -1;
  slot_idx[lowest] = cand;
  slot_score[lowest] = cand_score;
  return lowest;
}

template <class T>
void AttentiveRecurrent<T>::reserve(int64_t steps, int64_t b) {
  const int64_t H = h_;
  kappa_.assign(static_cast<size_t>(steps), 0);
  att_off_.assign(static_cast<size_t>(steps + 1), 0);
  int64_t kmax = 0;
  for (int64_t t = 0; t < steps; ++t) {
    int64_t k = t;
    if (kind_ != Kind::MemRnn) k = std::min(t, nu_) + std::min(std::max<int64_t>(t - nu_, 0), rho_);
    kappa_[static_cast<size_t>(t)] = k;
    kmax = std::max(kmax, k);
    att_off_[static_cast<size_t>(t + 1)] = att_off_[static_cast<size_t>(t)] + k * b;
  }
  const int64_t n_att = att_off_[static_cast<size_t>(steps)];
  grow(xp_, steps * b * g_);
  grow(cin_, steps * b * sc_);
  grow(cout_, steps * b * sc_);
  grow(cache_, steps * b * cc_);
  grow(hu_, steps * b * H);
  grow(att_idx_, n_att);
  grow(att_alpha_, n_att);
  if (kind_ != Kind::MemRnn) {
    grow(score_, steps * b);
    grow(slot_idx_, b * rho_);
    grow(slot_score_, b * rho_);
  }
  grow(final_, b * state_size());
  grow(q_, steps * b * H);
  grow(dalpha_, b * kmax);
  grow(dv_rows_, b * H);
}

template <class T>
bool AttentiveRecurrent<T>::split_rows(int64_t b) const {
  const int64_t kmax = kappa_.empty() ? 0 : *std::max_element(kappa_.begin(), kappa_.end());
  return b * g_ >= kRowParallelMin || b * kmax * h_ >= kAttendParallelMin;
}

template <class T>
void AttentiveRecurrent<T>::attend_forward(int64_t t, int64_t r0, int64_t r1) {
  const int64_t H = h_, b = B_, sc = sc_;
  const int64_t K = kappa_[static_cast<size_t>(t)];
  const int64_t base = att_off_[static_cast<size_t>(t)];
  const bool rel = kind_ != Kind::MemRnn;
  // q_t = s_{t-1} v_a for rows [r0, r1), kept for backward.
  backend::gemm<T>(Trans::N, Trans::N, r1 - r0, H, H, T(1), cin_.data() + ((t - 1) * b + r0) * sc,
                   sc, v_a_->value, H, T(0), q_.data() + (t * b + r0) * H, H);
  const T* v = v_->value;
  // Rows are independent (each has its own attended set, scores and slots).
  for (int64_t r = r0; r < r1; ++r) {
    int32_t* idx = att_idx_.data() + base + r * K;
    T* alpha = att_alpha_.data() + base + r * K;
    int64_t n = 0;
    if (rel) {
      int32_t* slots = slot_idx_.data() + r * rho_;
      // The state leaving the buffer now is offered to the relevant set with the
      // attention it collected while buffered (a discrete, detached choice).
      const int64_t leaving = t - nu_ - 1;
      if (leaving >= 0)
        admit_relevant(rho_, slots, slot_score_.data() + r * rho_, static_cast<int32_t>(leaving),
                       score_[static_cast<size_t>(leaving * b + r)]);
      for (int64_t k = 0; k < rho_; ++k)
        if (slots[k] >= 0) idx[n++] = slots[k];
    }
    const int64_t lo = rel ? std::max<int64_t>(0, t - nu_) : 0;
    for (int64_t i = lo; i < t; ++i) idx[n++] = static_cast<int32_t>(i);
    SB_CHECK(n == K, "attentive step {}: row {} attended {} states, not {} (internal)", t, r, n, K);
    const T* qr = q_.data() + (t * b + r) * H;
    T emax = T(0);
    for (int64_t k = 0; k < K; ++k) {
      const T* hu = hu_.data() + (idx[k] * b + r) * H;
      const T e = additive_energy(H, v, qr, hu);
      alpha[k] = e;
      emax = k == 0 ? e : std::max(emax, e);
    }
    T z = T(0);
    for (int64_t k = 0; k < K; ++k) {
      alpha[k] = fast_exp(alpha[k] - emax);
      z += alpha[k];
    }
    for (int64_t k = 0; k < K; ++k) alpha[k] /= z;
    // s_t = ½ (h_{t-1} + Σ α_k h_{idx_k}).
    T* s = cin_.data() + (t * b + r) * sc;
    const T* h_prev = cout_.data() + ((t - 1) * b + r) * sc;
    std::copy_n(h_prev, H, s);
    for (int64_t k = 0; k < K; ++k) {
      const T* hi = cout_.data() + (idx[k] * b + r) * sc;
      const T a = alpha[k];
#pragma omp simd
      for (int64_t j = 0; j < H; ++j) s[j] += a * hi[j];
    }
    for (int64_t j = 0; j < H; ++j) s[j] *= T(0.5);
    if (rel)
      for (int64_t k = 0; k < K; ++k)
        if (idx[k] >= t - nu_) score_[static_cast<size_t>(idx[k] * b + r)] += alpha[k];
  }
}

template <class T>
void AttentiveRecurrent<T>::forward(core::ViewT<const T> x, core::ViewT<const T> s0,
                                    core::ViewT<T> y) {
  const int64_t steps = x.dim(0), b = x.dim(1);
  const int64_t H = h_, S = state_size(), sc = sc_, g = g_, cc = cc_;
  core::check_shape(x, core::Shape{steps, b, in_}, "AttentiveRecurrent.forward x");
  core::check_shape(y, core::Shape{steps, b, H}, "AttentiveRecurrent.forward y");
  SB_CHECK(steps > 0 && b > 0, "AttentiveRecurrent.forward: empty input {}", x.shape.str());
  if (s0.data) core::check_shape(s0, core::Shape{b, S}, "AttentiveRecurrent.forward s0");
  reserve(steps, b);
  T_ = steps;
  B_ = b;
  x_ = x;
  if (lstm_)
    lstm_->input_forward(steps * b, x.data, xp_.data());
  else
    rnn_->input_forward(steps * b, x.data, xp_.data());
  // Step 0 reads s_0 = s_{-1} (and c_{-1}); the h part of s0 is not read.
  for (int64_t r = 0; r < b; ++r) {
    T* c0 = cin_.data() + r * sc;
    if (s0.data) {
      std::copy_n(s0.data + r * S + S - H, H, c0);
      if (lstm_) std::copy_n(s0.data + r * S + H, H, c0 + H);
    } else {
      std::fill_n(c0, sc, T(0));
    }
  }
  if (kind_ != Kind::MemRnn) {
    std::fill_n(score_.begin(), steps * b, T(0));
    std::fill_n(slot_idx_.begin(), b * rho_, -1);
    std::fill_n(slot_score_.begin(), b * rho_, T(0));
  }
  // Rows [r0, r1) through all T steps (nn/parallel.hpp: one slice per thread).
  for_row_slices(b, split_rows(b), [&](int64_t r0, int64_t r1) {
    const int64_t nb = r1 - r0;
    for (int64_t t = 0; t < steps; ++t) {
      T* cin = cin_.data() + (t * b + r0) * sc;
      T* cout = cout_.data() + (t * b + r0) * sc;
      if (t > 0) {
        attend_forward(t, r0, r1);
        if (lstm_)
          for (int64_t r = 0; r < nb; ++r)
            std::copy_n(cout - b * sc + r * sc + H, H, cin + r * sc + H);  // c_{t-1}
      }
      T* xp = xp_.data() + (t * b + r0) * g;
      T* cache = cache_.data() + (t * b + r0) * cc;
      if (lstm_)
        lstm_->step_forward(t, nb, xp, cin, cout, cache);
      else
        rnn_->step_forward(t, nb, xp, cin, cout, cache);
      for (int64_t r = 0; r < nb; ++r)
        std::copy_n(cout + r * sc, H, y.data + (t * b + r0 + r) * H);
      if (t + 1 < steps)
        backend::gemm<T>(Trans::N, Trans::N, nb, H, H, T(1), cout, sc, u_a_->value, H, T(0),
                         hu_.data() + (t * b + r0) * H, H);
    }
  });
  // final_state = [h_{T-1} | c_{T-1} | s_{T-1}].
  const T* cin = cin_.data() + (steps - 1) * b * sc;
  const T* cout = cout_.data() + (steps - 1) * b * sc;
  for (int64_t r = 0; r < b; ++r) {
    T* f = final_.data() + r * S;
    std::copy_n(cout + r * sc, lstm_ ? 2 * H : H, f);
    std::copy_n(cin + r * sc, H, f + S - H);
  }
}

template <class T>
void AttentiveRecurrent<T>::attend_backward(int64_t t, int64_t r0, int64_t r1, const T* ds) {
  const int64_t H = h_, b = B_, sc = sc_, nb = r1 - r0;
  const int64_t K = kappa_[static_cast<size_t>(t)];
  const int64_t base = att_off_[static_cast<size_t>(t)];
  const T* q = q_.data() + t * b * H;  // the forward's q_t
  // dL/dq_t goes to dh_'s row block t, spent once step t copied it into ds_; the
  // batched dv_a GEMM after the loop reads it there.
  T* dq = dh_.data() + t * b * H;
  std::fill_n(dq + r0 * H, nb * H, T(0));
  const T* v = v_->value;
  const int64_t kmax = static_cast<int64_t>(dalpha_.size()) / b;
  // Membership and α's normalisation set are the forward's (discrete: constants here).
  // Rows write disjoint rows of dh_/dhu_/dq; dL/dv is summed per row over the steps,
  // then over rows after the loop.
  for (int64_t r = r0; r < r1; ++r) {
    T* dalpha = dalpha_.data() + r * kmax;
    T* dv = dv_rows_.data() + r * H;
    const int32_t* idx = att_idx_.data() + base + r * K;
    const T* alpha = att_alpha_.data() + base + r * K;
    const T* dsr = ds + r * H;
    T* dh_prev = dh_.data() + ((t - 1) * b + r) * H;
    for (int64_t j = 0; j < H; ++j) dh_prev[j] += T(0.5) * dsr[j];
    // dc = ½ ds; dα_k = dc · h_k; dh_k += α_k dc.
    T dot = T(0);
    for (int64_t k = 0; k < K; ++k) {
      const T* hi = cout_.data() + (idx[k] * b + r) * sc;
      T* dhi = dh_.data() + (idx[k] * b + r) * H;
      T da = T(0);
      const T ak = alpha[k];
#pragma omp simd reduction(+ : da)
      for (int64_t j = 0; j < H; ++j) {
        const T dc = T(0.5) * dsr[j];
        da += dc * hi[j];
        dhi[j] += ak * dc;
      }
      dalpha[k] = da;
      dot += alpha[k] * da;
    }
    const T* qr = q + r * H;
    T* dqr = dq + r * H;
    for (int64_t k = 0; k < K; ++k) {
      const T de = alpha[k] * (dalpha[k] - dot);  // softmax backward
      const T* hu = hu_.data() + (idx[k] * b + r) * H;
      T* dhu = dhu_.data() + (idx[k] * b + r) * H;
      additive_energy_backward(H, de, v, qr, hu, dv, dqr, dhu);
    }
  }
  // dL/ds_{t-1} through the query = dq v_aᵀ (into dsq_).
  backend::gemm<T>(Trans::N, Trans::N, nb, H, H, T(1), dq + r0 * H, H, v_a_t_.data(), H, T(0),
                   dsq_.data() + r0 * H, H);
}

template <class T>
void AttentiveRecurrent<T>::backward(core::ViewT<const T> dy, core::ViewT<T> dx, core::ViewT<T> ds0,
                                     std::vector<double>* dh_norms) {
  const int64_t steps = T_, b = B_;
  const int64_t H = h_, S = state_size(), sc = sc_, g = g_, cc = cc_;
  SB_CHECK(steps > 0, "AttentiveRecurrent.backward called before forward");
  core::check_shape(dy, core::Shape{steps, b, H}, "AttentiveRecurrent.backward dy");
  if (dx.data) core::check_shape(dx, x_.shape, "AttentiveRecurrent.backward dx");
  if (ds0.data) core::check_shape(ds0, core::Shape{b, S}, "AttentiveRecurrent.backward ds0");
  grow(dh_, steps * b * H);
  grow(dhu_, steps * b * H);
  grow(ds_, b * sc);
  grow(ds_prev_, b * sc);
  grow(dsq_, b * H);
  if (dh_norms) {
    dh_norms->assign(static_cast<size_t>(steps), 0.0);
    grow(dh_sq_, steps * b);
  }
  std::copy_n(dy.data, steps * b * H, dh_.begin());
  std::fill_n(dhu_.begin(), steps * b * H, T(0));
  std::fill_n(ds_.begin(), b * sc, T(0));  // LSTM: dc_{T-1} = 0
  std::fill_n(dsq_.begin(), b * H, T(0));
  std::fill_n(dv_rows_.begin(), b * H, T(0));
  if (lstm_)
    lstm_->prepare_backward();
  else
    rnn_->prepare_backward();
  u_a_t_.refresh(u_a_->value, H, H);
  v_a_t_.refresh(v_a_->value, H, H);
  // Rows [r0, r1) through all T steps (nn/parallel.hpp: one slice per thread).
  for_row_slices(b, split_rows(b), [&](int64_t r0, int64_t r1) {
    const int64_t nb = r1 - r0;
    T* ds = ds_.data() + r0 * sc;
    T* ds_prev = ds_prev_.data() + r0 * sc;
    T* dsq = dsq_.data() + r0 * H;
    for (int64_t t = steps - 1; t >= 0; --t) {
      T* dh = dh_.data() + (t * b + r0) * H;
      // Every later step has already added into dh_t and dhu_t; dhu_t reaches h_t via u_a.
      backend::gemm<T>(Trans::N, Trans::N, nb, H, H, T(1), dhu_.data() + (t * b + r0) * H, H,
                       u_a_t_.data(), H, T(1), dh, H);
      for (int64_t r = 0; r < nb; ++r) std::copy_n(dh + r * H, H, ds + r * sc);
      if (dh_norms)
        for (int64_t r = 0; r < nb; ++r) {
          double sq = 0;
          for (int64_t j = 0; j < H; ++j) sq += double(dh[r * H + j]) * double(dh[r * H + j]);
          dh_sq_[static_cast<size_t>(t * b + r0 + r)] = sq;
        }
      const T* cin = cin_.data() + (t * b + r0) * sc;
      T* cache = cache_.data() + (t * b + r0) * cc;
      T* dxp = xp_.data() + (t * b + r0) * g;  // dL/da_t overwrites the spent input projection
      if (lstm_)
        lstm_->step_backward(t, nb, cin, cache, ds, dxp, ds_prev);
      else
        rnn_->step_backward(t, nb, cin, cache, ds, dxp, ds_prev);
      // dsq_ becomes the total dL/ds_t (cell path + query of step t+1).
      for (int64_t r = 0; r < nb; ++r)
        for (int64_t j = 0; j < H; ++j) dsq[r * H + j] += ds_prev[r * sc + j];
      if (t == 0) {
        if (ds0.data)
          for (int64_t r = 0; r < nb; ++r) {
            T* d = ds0.data + (r0 + r) * S;
            std::fill_n(d, H, T(0));  // h_{-1} is not read
            if (lstm_) std::copy_n(ds_prev + r * sc + H, H, d + H);
            std::copy_n(dsq + r * H, H, d + S - H);
          }
      } else {
        attend_backward(t, r0, r1, dsq_.data());
        if (lstm_)
          for (int64_t r = 0; r < nb; ++r)
            std::copy_n(ds_prev + r * sc + H, H, ds + r * sc + H);  // dc_{t-1}
      }
    }
  });
  if (dh_norms)
    for (int64_t t = 0; t < steps; ++t) {
      double sq = 0;
      for (int64_t r = 0; r < b; ++r) sq += dh_sq_[static_cast<size_t>(t * b + r)];
      (*dh_norms)[static_cast<size_t>(t)] = std::sqrt(sq);
    }
  // dL/dv: per-row sums, added in row order (the same for any thread count).
  T* dv = v_->grad;
  for (int64_t r = 0; r < b; ++r) {
    const T* dvr = dv_rows_.data() + r * H;
#pragma omp simd
    for (int64_t j = 0; j < H; ++j) dv[j] += dvr[j];
  }
  const int64_t n = steps * b;
  // dv_a += Σ_{t>=1} s_{t-1}ᵀ dq_t: dh_ holds dq_t at row block t (attend_backward).
  if (steps > 1)
    backend::gemm<T>(Trans::T, Trans::N, H, H, (steps - 1) * b, T(1), cin_.data(), sc,
                     dh_.data() + b * H, H, T(1), v_a_->grad, H);
  if (lstm_) {
    lstm_->recurrent_weight_backward(n, cin_.data(), xp_.data(), cache_.data());
  } else {
    rnn_->recurrent_weight_backward(n, cin_.data(), xp_.data(), cache_.data());
  }
  backend::gemm<T>(Trans::T, Trans::N, H, H, n, T(1), cout_.data(), sc, dhu_.data(), H, T(1),
                   u_a_->grad, H);
  if (lstm_)
    lstm_->input_backward(n, x_.data, xp_.data(), dx.data);
  else
    rnn_->input_backward(n, x_.data, xp_.data(), dx.data);
}

template <class T>
core::ViewT<const T> AttentiveRecurrent<T>::final_state() const {
  return core::ViewT<const T>(final_.data(), core::Shape{B_, state_size()});
}

template <class T>
std::span<const int32_t> AttentiveRecurrent<T>::attended(int64_t t, int64_t r) const {
  SB_CHECK(t >= 0 && t < T_ && r >= 0 && r < B_, "attended({}, {}) outside T={} B={}", t, r, T_,
           B_);
  const int64_t K = kappa_[static_cast<size_t>(t)];
  return {att_idx_.data() + att_off_[static_cast<size_t>(t)] + r * K, static_cast<size_t>(K)};
}

template <class T>
std::span<const T> AttentiveRecurrent<T>::attention(int64_t t, int64_t r) const {
  SB_CHECK(t >= 0 && t < T_ && r >= 0 && r < B_, "attention({}, {}) outside T={} B={}", t, r, T_,
           B_);
  const int64_t K = kappa_[static_cast<size_t>(t)];
  return {att_alpha_.data() + att_off_[static_cast<size_t>(t)] + r * K, static_cast<size_t>(K)};
}

template <class T>
size_t AttentiveRecurrent<T>::held_bytes() const {
  size_t n = 0;
  for (const auto* v : {&xp_, &cin_, &cout_, &cache_, &hu_, &att_alpha_, &score_, &final_,
                        &slot_score_, &q_, &dalpha_, &dv_rows_, &dh_, &dhu_, &ds_, &ds_prev_, &dsq_})
    n += v->size() * sizeof(T);
  n += dh_sq_.size() * sizeof(double);
  n += (att_idx_.size() + slot_idx_.size()) * sizeof(int32_t);
  n += (kappa_.size() + att_off_.size()) * sizeof(int64_t);
  return n;
}

template class AttentiveRecurrent<float>;
template class AttentiveRecurrent<double>;

}  // namespace seqbench::nn
