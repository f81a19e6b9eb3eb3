#include "nn/recurrent/sab.hpp"

#include <algorithm>
#include <cmath>

#include "core/buffer.hpp"
#include "core/check.hpp"
#include "nn/fast_math.hpp"

namespace seqbench::nn {

using core::grow;

namespace {

// Options are checked before any parameter is declared, so a bad config leaves the
// ParamStore untouched.
SabOptions validated(const std::string& name, const SabOptions& o) {
  if (o.trunc < 0 || o.attk < 1 || o.ktop < 1)
    throw core::UsageError(fmt::format(
        "{}: sab needs trunc >= 0, attk >= 1 and ktop >= 1, got trunc={} attk={} ktop={} "
        "(hint: the reference's copy task runs trunc=5 ktop=5)",
        name, o.trunc, o.attk, o.ktop));
  return o;
}

// Number of memory entries visible at step t: h_i with i % attk == 0 and i < t.
inline int64_t mem_count(int64_t t, int64_t attk) { return (t + attk - 1) / attk; }

}  // namespace

template <class T>
SabLayer<T>::SabLayer(core::ParamStoreT<T>& ps, const std::string& name, int64_t input,
                      int64_t hidden, SabOptions opt)
    : in_(input),
      h_(hidden),
      opt_(validated(name, opt)),
      lstm_(ps, name, input, hidden),
      w_a_(&ps.add(name + ".w_a", core::Shape{2 * hidden})) {}

template <class T>
void SabLayer<T>::init(core::Rng& rng) {
  lstm_.init(rng, opt_.forget_bias);
  for (int64_t i = 0; i < w_a_->numel(); ++i) w_a_->value[i] = static_cast<T>(rng.normal(0.0, 0.01));
}

template <class T>
int64_t SabLayer<T>::sparsify(int64_t n, int64_t ktop, const T* e, int32_t* order, T* a, T* z) {
  for (int64_t i = 0; i < n; ++i) order[i] = static_cast<int32_t>(i);
  if (n <= ktop) {
    std::copy_n(e, n, a);
    *z = T(1);
    return n;
  }
  std::partial_sort(order, order + ktop, order + n, [e](int32_t i, int32_t j) {
    return e[i] > e[j] || (e[i] == e[j] && i < j);
  });
  const T delta = e[order[ktop - 1]] + T(kEps);
  T sum = T(0);
  for (int64_t k = 0; k < ktop; ++k) {
    a[k] = std::max(e[order[k]] - delta, T(0));
    sum += a[k];
  }
  *z = sum + T(kEps);
  for (int64_t k = 0; k < ktop; ++k) a[k] /= *z;
  return ktop;
}

template <class T>
void SabLayer<T>::sparsify_backward(int64_t n, int64_t ktop, const T* a, T z, const T* da,
                                    T* de) {
  if (n <= ktop) {
    std::copy_n(da, n, de);
    return;
  }
  // a = w / (Σw + ε) over the active (w > 0) entries; w_i = e_i - e_p - ε.
  T dot = T(0);
  for (int64_t k = 0; k < ktop; ++k) dot += a[k] * da[k];
  T dpivot = T(0);
  for (int64_t k = 0; k + 1 < ktop; ++k) {
    de[k] = a[k] > T(0) ? (da[k] - dot) / z : T(0);
    dpivot -= de[k];
  }
  de[ktop - 1] = dpivot;  // the pivot's own weight is 0; its score enters through δ
}

template <class T>
void SabLayer<T>::reserve(int64_t steps, int64_t b) {
  const int64_t H = h_, S = 2 * H;
  n_mem_ = mem_count(steps, opt_.attk);
  kappa_.assign(static_cast<size_t>(steps), 0);
  sel_off_.assign(static_cast<size_t>(steps + 1), 0);
  for (int64_t t = 0; t < steps; ++t) {
    const int64_t k = std::min(mem_count(t, opt_.attk), opt_.ktop);
    kappa_[static_cast<size_t>(t)] = k;
    sel_off_[static_cast<size_t>(t + 1)] = sel_off_[static_cast<size_t>(t)] + k * b;
  }
  const int64_t n_sel = sel_off_[static_cast<size_t>(steps)];
  grow(xp_, steps * b * 4 * H);
  grow(states_, (steps + 1) * b * S);
  grow(cache_, steps * b * 5 * H);
  grow(hhat_, steps * b * H);
  grow(ms_, n_mem_ * b);
  grow(sel_idx_, n_sel);
  grow(sel_a_, n_sel);
  grow(zsum_, steps * b);
  grow(order_, n_mem_);
  grow(score_, n_mem_);
  grow(da_, opt_.ktop);
  grow(de_, opt_.ktop);
}

template <class T>
void SabLayer<T>::forward(core::ViewT<const T> x, core::ViewT<const T> s0, core::ViewT<T> y) {
  const int64_t steps = x.dim(0), b = x.dim(1);
  const int64_t H = h_, S = 2 * H, G = 4 * H, C = 5 * H, attk = opt_.attk;
  core::check_shape(x, core::Shape{steps, b, in_}, "SabLayer.forward x");
  core::check_shape(y, core::Shape{steps, b, H}, "SabLayer.forward y");
  SB_CHECK(steps > 0 && b > 0, "SabLayer.forward: empty input {}", x.shape.str());
  if (s0.data) core::check_shape(s0, core::Shape{b, S}, "SabLayer.forward s0");
  reserve(steps, b);
  T_ = steps;
  B_ = b;
  x_ = x;
  T* st = states_.data();
  if (s0.data)
    std::copy_n(s0.data, b * S, st);
  else
    std::fill_n(st, b * S, T(0));
  lstm_.input_forward(steps * b, x.data, xp_.data());
  const T* w_q = w_a_->value;
  const T* w_m = w_a_->value + H;
  for (int64_t t = 0; t < steps; ++t) {
    T* s = st + (t + 1) * b * S;
    lstm_.step_forward(t, b, xp_.data() + t * b * G, s - b * S, s, cache_.data() + t * b * C);
    const int64_t nm = mem_count(t, attk);
    const int64_t off = sel_off_[static_cast<size_t>(t)];
    const int64_t K = kappa_[static_cast<size_t>(t)];
    for (int64_t r = 0; r < b; ++r) {
      T* h = s + r * S;
      std::copy_n(h, H, hhat_.data() + (t * b + r) * H);
      if (nm > 0) {
        T q = T(0);
        for (int64_t j = 0; j < H; ++j) q += w_q[j] * fast_tanh(h[j]);
        for (int64_t m = 0; m < nm; ++m) score_[static_cast<size_t>(m)] = q + ms_[static_cast<size_t>(m * b + r)];
        T* a = sel_a_.data() + off + r * K;
        int32_t* idx = sel_idx_.data() + off + r * K;
        sparsify(nm, opt_.ktop, score_.data(), order_.data(), a, zsum_.data() + t * b + r);
        for (int64_t k = 0; k < K; ++k) {
          idx[k] = static_cast<int32_t>(order_[static_cast<size_t>(k)] * attk);
          const T* hm = st + (idx[k] + 1) * b * S + r * S;
          for (int64_t j = 0; j < H; ++j) h[j] += a[k] * hm[j];
        }
      }
      // The memory holds h_t with its summary, as the next LSTM step reads it.
      if (t % attk == 0) {
        T e = T(0);
        for (int64_t j = 0; j < H; ++j) e += w_m[j] * fast_tanh(h[j]);
        ms_[static_cast<size_t>((t / attk) * b + r)] = e;
      }
      std::copy_n(h, H, y.data + (t * b + r) * H);
    }
  }
}

template <class T>
void SabLayer<T>::backward(core::ViewT<const T> dy, core::ViewT<T> dx, core::ViewT<T> ds0,
                           std::vector<double>* dh_norms) {
  const int64_t steps = T_, b = B_;
  const int64_t H = h_, S = 2 * H, G = 4 * H, C = 5 * H, attk = opt_.attk, ktop = opt_.ktop;
  SB_CHECK(steps > 0, "SabLayer.backward called before forward");
  core::check_shape(dy, core::Shape{steps, b, H}, "SabLayer.backward dy");
  if (dx.data) core::check_shape(dx, x_.shape, "SabLayer.backward dx");
  if (ds0.data) core::check_shape(ds0, core::Shape{b, S}, "SabLayer.backward ds0");
  grow(dh_, steps * b * H);
  grow(dms_, n_mem_ * b);
  grow(ds_, b * S);
  grow(ds_prev_, b * S);
  if (dh_norms) dh_norms->assign(static_cast<size_t>(steps), 0.0);
  std::copy_n(dy.data, steps * b * H, dh_.begin());
  std::fill_n(dms_.begin(), n_mem_ * b, T(0));
  std::fill_n(ds_.begin(), b * S, T(0));  // dc_{T-1} = 0
  lstm_.prepare_backward();
  const T* st = states_.data();
  const T* w_q = w_a_->value;
  const T* w_m = w_a_->value + H;
  T* dw_q = w_a_->grad;
  T* dw_m = w_a_->grad + H;
  for (int64_t t = steps - 1; t >= 0; --t) {
    T* dh = dh_.data() + t * b * H;
    const T* s = st + (t + 1) * b * S;
    // Every later step has already added its score gradient for memory h_t into dms_.
    if (t % attk == 0)
      for (int64_t r = 0; r < b; ++r) {
        const T d = dms_[static_cast<size_t>((t / attk) * b + r)];
        if (d == T(0)) continue;
        const T* h = s + r * S;
        for (int64_t j = 0; j < H; ++j) {
          const T th = fast_tanh(h[j]);
          dw_m[j] += d * th;
          dh[r * H + j] += d * w_m[j] * (T(1) - th * th);
        }
      }
    if (dh_norms) {
      double sq = 0;
      for (int64_t i = 0; i < b * H; ++i) sq += double(dh[i]) * double(dh[i]);
      (*dh_norms)[static_cast<size_t>(t)] = std::sqrt(sq);
    }
    const int64_t nm = mem_count(t, attk);
    const int64_t off = sel_off_[static_cast<size_t>(t)];
    const int64_t K = kappa_[static_cast<size_t>(t)];
    for (int64_t r = 0; r < b; ++r) {
      const T* dhr = dh + r * H;
      T* dhat = ds_.data() + r * S;  // dL/dĥ_t = dL/dh_t (+ the query term below)
      std::copy_n(dhr, H, dhat);
      if (nm == 0) continue;
      const int32_t* idx = sel_idx_.data() + off + r * K;
      const T* a = sel_a_.data() + off + r * K;
      for (int64_t k = 0; k < K; ++k) {
        const T* hm = st + (idx[k] + 1) * b * S + r * S;
        T* dhm = dh_.data() + (idx[k] * b + r) * H;
        T d = T(0);
        for (int64_t j = 0; j < H; ++j) {
          d += dhr[j] * hm[j];
          dhm[j] += a[k] * dhr[j];
        }
        da_[static_cast<size_t>(k)] = d;
      }
      sparsify_backward(nm, ktop, a, zsum_[static_cast<size_t>(t * b + r)], da_.data(),
                        de_.data());
      T dq = T(0);
      for (int64_t k = 0; k < K; ++k) {
        dms_[static_cast<size_t>((idx[k] / attk) * b + r)] += de_[static_cast<size_t>(k)];
        dq += de_[static_cast<size_t>(k)];
      }
      // The query reaches the weights only on the raw branch (it cancels in e - δ).
      if (nm <= ktop) {
        const T* hh = hhat_.data() + (t * b + r) * H;
        for (int64_t j = 0; j < H; ++j) {
          const T th = fast_tanh(hh[j]);
          dw_q[j] += dq * th;
          dhat[j] += dq * w_q[j] * (T(1) - th * th);
        }
      }
    }
    lstm_.step_backward(t, b, s - b * S, cache_.data() + t * b * C, ds_.data(),
                        xp_.data() + t * b * G, ds_prev_.data());
    // Truncation: step t's LSTM sends nothing back into [h_{t-1} | c_{t-1}] at a cut.
    if (opt_.trunc > 0 && t > 0 && t % opt_.trunc == 0) std::fill_n(ds_prev_.begin(), b * S, T(0));
    if (t > 0) {
      T* dh_prev = dh_.data() + (t - 1) * b * H;
      for (int64_t r = 0; r < b; ++r) {
        const T* d = ds_prev_.data() + r * S;
        for (int64_t j = 0; j < H; ++j) dh_prev[r * H + j] += d[j];
        std::copy_n(d + H, H, ds_.data() + r * S + H);  // dc_{t-1}
      }
    } else if (ds0.data) {
      std::copy_n(ds_prev_.data(), b * S, ds0.data);
    }
  }
  const int64_t n = steps * b;
  lstm_.recurrent_weight_backward(n, st, xp_.data(), cache_.data());
  lstm_.input_backward(n, x_.data, xp_.data(), dx.data);
}

template <class T>
core::ViewT<const T> SabLayer<T>::final_state() const {
  return core::ViewT<const T>(states_.data() + T_ * B_ * 2 * h_, core::Shape{B_, 2 * h_});
}

template <class T>
int64_t SabLayer<T>::memory_size(int64_t t) const {
  SB_CHECK(t >= 0 && t < T_, "memory_size({}) outside T={}", t, T_);
  return mem_count(t, opt_.attk);
}

template <class T>
std::span<const int32_t> SabLayer<T>::attended(int64_t t, int64_t r) const {
  SB_CHECK(t >= 0 && t < T_ && r >= 0 && r < B_, "attended({}, {}) outside T={} B={}", t, r, T_,
           B_);
  const int64_t K = kappa_[static_cast<size_t>(t)];
  return {sel_idx_.data() + sel_off_[static_cast<size_t>(t)] + r * K, static_cast<size_t>(K)};
}

template <class T>
std::span<const T> SabLayer<T>::attention(int64_t t, int64_t r) const {
  SB_CHECK(t >= 0 && t < T_ && r >= 0 && r < B_, "attention({}, {}) outside T={} B={}", t, r, T_,
           B_);
  const int64_t K = kappa_[static_cast<size_t>(t)];
  return {sel_a_.data() + sel_off_[static_cast<size_t>(t)] + r * K, static_cast<size_t>(K)};
}

template <class T>
size_t SabLayer<T>::held_bytes() const {
  size_t n = 0;
  for (const auto* v : {&xp_, &states_, &cache_, &hhat_, &ms_, &sel_a_, &zsum_, &score_, &da_,
                        &de_, &dh_, &dms_, &ds_, &ds_prev_})
    n += v->size() * sizeof(T);
  n += (sel_idx_.size() + order_.size()) * sizeof(int32_t);
  n += (kappa_.size() + sel_off_.size()) * sizeof(int64_t);
  return n;
}

template class SabLayer<float>;
template class SabLayer<double>;

}  // namespace seqbench::nn
