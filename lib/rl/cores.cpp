// The agent's recurrent cores (policy.hpp's CoreT): none, a step-wise cell whose state is
// the agent's memory, and an attentive cell over a replay window; make_core picks one
// from the cell registry's entry for agent.core.
#include "rl/policy.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/buffer.hpp"
#include "core/check.hpp"
#include "core/text.hpp"
#include "nn/cells/lstm.hpp"
#include "nn/cells/momentum.hpp"
#include "nn/recurrent/attentive.hpp"
#include "nn/registry.hpp"

namespace seqbench::rl {

using core::grow;

namespace {

// core = none: the embedding goes straight to the heads (ACModel without memory).
template <class T>
class NoneCore final : public CoreT<T> {
 public:
  explicit NoneCore(int64_t input) : e_(input) {}
  int64_t input_size() const override { return e_; }
  int64_t hidden() const override { return e_; }
  int64_t memory_size() const override { return 0; }
  void init(core::Rng&) override {}
  bool supports_shifted_chunks() const override { return true; }
  void forward(int64_t L, int64_t N, const T* x, const T*, const T*, T* h, T*) override {
    n_ = L * N;
    std::copy_n(x, n_ * e_, h);
  }
  void backward(const T* dh, T* dx, T*) override { std::copy_n(dh, n_ * e_, dx); }
  void act(int64_t B, const T* x, const T*, T*, T* h, int64_t) override {
    std::copy_n(x, B * e_, h);
  }
  size_t held_bytes() const override { return 0; }

 private:
  int64_t e_, n_ = 0;
};

// A step-wise cell (nn/cells: LstmCell, MomentumLstmCell) driven over a chunk with a
// mask before every step. Like nn::Recurrent<Cell>, but the state entering step t is
// mask[t] · s_{t-1} per row, and the gradient flowing back into s_{t-1} is masked the same
// way, so an episode that ends in one row never touches another row's memory or
// gradient. The memory row is the cell's state row. Cells are time-invariant here (t is
// passed as 0): the momentum kinds with a constant μ, not the restart schedule.
//
// Buffers (grown only when L·N grows):
//   xp_ (L·N, P) input projections, then dL/dxp; sin_ (L·N, S) masked states entering
//   each step; sout_ (L·N, S) states after each step; cache_ (L·N, C); mask_ (L·N);
//   ds_, ds_prev_ (N, S).
template <class Cell>
class CellCore final : public CoreT<typename Cell::Scalar> {
 public:
  using T = typename Cell::Scalar;
  CellCore(Cell cell, double forget_bias) : cell_(std::move(cell)), forget_bias_(forget_bias) {}

  int64_t input_size() const override { return cell_.input_size(); }
  int64_t hidden() const override { return cell_.hidden(); }
  int64_t memory_size() const override { return cell_.state_size(); }
  void init(core::Rng& rng) override { cell_.init(rng, forget_bias_); }
  bool supports_shifted_chunks() const override { return true; }

  void forward(int64_t L, int64_t N, const T* x, const T* mem0, const T* mask, T* h,
               T* mem_out) override {
    const int64_t S = cell_.state_size(), P = cell_.proj_size(), C = cell_.cache_size();
    const int64_t H = cell_.hidden(), n = L * N;
    grow(xp_, n * P);
    grow(sin_, n * S);
    grow(sout_, n * S);
    grow(cache_, n * C);
    grow(mask_, n);
    grow(ds_, N * S);
    grow(ds_prev_, N * S);
    L_ = L;
    N_ = N;
    x_ = x;
    std::copy_n(mask, n, mask_.data());
    cell_.input_forward(n, x, xp_.data());
    for (int64_t t = 0; t < L; ++t) {
      const T* prev = t == 0 ? mem0 : sout_.data() + (t - 1) * N * S;
      T* sin = sin_.data() + t * N * S;
      for (int64_t r = 0; r < N; ++r) {
        const T m = mask[t * N + r];
        for (int64_t j = 0; j < S; ++j) sin[r * S + j] = m * prev[r * S + j];
      }
      T* so = sout_.data() + t * N * S;
      cell_.step_forward(0, N, xp_.data() + t * N * P, sin, so, cache_.data() + t * N * C);
      for (int64_t r = 0; r < N; ++r) std::copy_n(so + r * S, H, h + (t * N + r) * H);
    }
    if (mem_out) std::copy_n(sout_.data(), n * S, mem_out);
  }

  void backward(const T* dh, T* dx, T* dmem0) override {
    const int64_t L = L_, N = N_;
    SB_CHECK(L > 0, "recurrent core: backward called before forward");
    const int64_t S = cell_.state_size(), P = cell_.proj_size(), C = cell_.cache_size();
    const int64_t H = cell_.hidden();
    T* ds = ds_.data();
    T* dsp = ds_prev_.data();
    std::fill_n(ds, N * S, T(0));
    cell_.prepare_backward();
    for (int64_t t = L - 1; t >= 0; --t) {
      for (int64_t r = 0; r < N; ++r)
        for (int64_t j = 0; j < H; ++j) ds[r * S + j] += dh[(t * N + r) * H + j];
      // dL/dxp_t overwrites the projection of step t, which is no longer needed.
      cell_.step_backward(0, N, sin_.data() + t * N * S, cache_.data() + t * N * C, ds,
                          xp_.data() + t * N * P, dsp);
      // s_in = mask · s_{t-1}: the reset that cut the memory also cuts its gradient.
      for (int64_t r = 0; r < N; ++r) {
        const T m = mask_[t * N + r];
        for (int64_t j = 0; j < S; ++j) ds[r * S + j] = m * dsp[r * S + j];
      }
    }
    if (dmem0) std::copy_n(ds, N * S, dmem0);
    cell_.recurrent_weight_backward(L * N, sin_.data(), xp_.data(), cache_.data());
    cell_.input_backward(L * N, x_, xp_.data(), dx);
    L_ = 0;  // one backward per forward
  }

  void act(int64_t B, const T* x, const T* mask, T* mem, T* h, int64_t) override {
    forward(1, B, x, mem, mask, h, mem);  // mem is read into sin_ before it is written
    L_ = 0;
  }

  size_t held_bytes() const override {
    return core::bytes_of(xp_) + core::bytes_of(sin_) + core::bytes_of(sout_) + core::bytes_of(cache_) + core::bytes_of(mask_) + core::bytes_of(ds_) +
           core::bytes_of(ds_prev_);
  }

 private:
  Cell cell_;
  double forget_bias_;
  int64_t L_ = 0, N_ = 0;
  const T* x_ = nullptr;
  std::vector<T> xp_, sin_, sout_, cache_, mask_, ds_, ds_prev_;
};

// rel_lstm (Kerg et al. 2020) as a replay window over nn::AttentiveRecurrent, whose
// attention state (short-term buffer, relevant set, scores) lives inside one forward call
// and cannot be carried in a state row.
//
// Memory row (M = S + 1 + W·E, S = 3H): [s_start (S) | count | inputs (W, E)]: the layer
// state the window starts from ([h | c | s] as AttentiveRecurrent's s0), how many steps
// the window holds, and their embeddings. An acting step appends its input and replays
// the window from s_start; the output of its last step is h. After the step at phase
// W-1 the window restarts: s_start = the final state with its s part set to h (so the
// next step reads h_{t-1}, as an LSTM would, attention being over nothing yet), count =
// 0. A zero (masked) row is a fresh episode. The layer is causal, so the output at step
// t of one forward over a chunk equals the last output of a replay up to t: training
// on chunks that start where acting windows start (count = 0) recomputes exactly what
// acting computed.
//
// Training forward: each row of the chunk splits at its resets (mask = 0) into segments;
// segments with the same (start, length) run as one batch through the layer (the first
// from s_start, later ones from zero). The layer keeps only its last forward for
// backward, so backward recomputes each group's forward before its backward, except the
// group forwarded last (with no resets in the chunk that is the only one).
template <class T>
class RelCore final : public CoreT<T> {
 public:
  RelCore(core::ParamStoreT<T>& ps, const std::string& name, const std::string& cell,
          int64_t input, int64_t hidden, int64_t nu, int64_t rho, double forget_bias,
          int64_t window)
      : layer_(ps, name, input, hidden,
               nn::AttentiveOptions{cell, "tanh", nu, rho, 0, forget_bias}),
        e_(input),
        h_(hidden),
        s_(layer_.state_size()),
        w_(window) {
    SB_CHECK(window >= 1, "{}: rel_lstm needs a replay window >= 1 (ppo.recurrence), got {}",
             name, window);
  }

  int64_t input_size() const override { return e_; }
  int64_t hidden() const override { return h_; }
  int64_t memory_size() const override { return s_ + 1 + w_ * e_; }
  void init(core::Rng& rng) override { layer_.init(rng); }
  bool supports_shifted_chunks() const override { return false; }

  void forward(int64_t L, int64_t N, const T* x, const T* mem0, const T* mask, T* h,
               T* mem_out) override {
    SB_CHECK(mem_out == nullptr,
             "rel_lstm: memories after every step are not available (hint: ppo.shift_chunks "
             "applies to the step-wise cores only)");
    SB_CHECK(L <= w_, "rel_lstm: a training chunk of {} steps exceeds the window {}", L, w_);
    const int64_t M = memory_size();
    x_ = x;
    L_ = L;
    N_ = N;
    grow(mem0_, N * M);
    std::copy_n(mem0, N * M, mem0_.data());
    grow(mask_, L * N);
    std::copy_n(mask, L * N, mask_.data());
    segs_.clear();
    for (int64_t r = 0; r < N; ++r) {
      const bool from_mem = mask[r] != T(0);
      SB_CHECK(!from_mem || mem0[r * M + s_] == T(0),
               "rel_lstm: row {} of a training chunk starts inside an acting window (count {}); "
               "chunks must start where windows start (hint: ppo.recurrence must divide "
               "ppo.frames_per_proc and ppo.shift_chunks must be false)",
               r, mem0[r * M + s_]);
      int64_t a = 0;
      for (int64_t t = 1; t <= L; ++t)
        if (t == L || mask[t * N + r] == T(0)) {
          segs_.push_back({a, t - a, r, a == 0 && from_mem});
          a = t;
        }
    }
    std::sort(segs_.begin(), segs_.end(), [](const Seg& p, const Seg& q) {
      return std::tie(p.a, p.len, p.row) < std::tie(q.a, q.len, q.row);
    });
    groups_.clear();
    for (size_t i = 0; i < segs_.size(); ++i)
      if (i == 0 || segs_[i].a != segs_[i - 1].a || segs_[i].len != segs_[i - 1].len)
        groups_.push_back(i);
    groups_.push_back(segs_.size());
    reserve(L * N);
    for (size_t g = 0; g + 1 < groups_.size(); ++g) {
      const int64_t len = run_group(g);
      scatter_rows(g, len, yg_.data(), h, h_);
    }
    last_group_ = static_cast<int64_t>(groups_.size()) - 2;
  }

  void backward(const T* dh, T* dx, T* dmem0) override {
    SB_CHECK(L_ > 0, "rel_lstm: backward called before forward");
    const int64_t M = memory_size();
    if (dmem0) std::fill_n(dmem0, N_ * M, T(0));
    for (int64_t g = static_cast<int64_t>(groups_.size()) - 2; g >= 0; --g) {
      const auto gi = static_cast<size_t>(g);
      const int64_t rows = static_cast<int64_t>(groups_[gi + 1] - groups_[gi]);
      const Seg& first = segs_[groups_[gi]];
      const int64_t len = first.len;
      if (g != last_group_) run_group(gi);  // the layer kept only its last forward
      last_group_ = -1;
      for (int64_t t = 0; t < len; ++t)
        for (int64_t i = 0; i < rows; ++i)
          std::copy_n(dh + ((first.a + t) * N_ + segs_[groups_[gi] + size_t(i)].row) * h_, h_,
                      dyg_.data() + (t * rows + i) * h_);
      layer_.backward(core::ViewT<const T>(dyg_.data(), core::Shape{len, rows, h_}),
                      core::ViewT<T>(dxg_.data(), core::Shape{len, rows, e_}),
                      core::ViewT<T>(dmem0 ? ds0g_.data() : nullptr, core::Shape{rows, s_}));
      scatter_rows(gi, len, dxg_.data(), dx, e_);
      if (dmem0)
        for (int64_t i = 0; i < rows; ++i) {
          const Seg& sg = segs_[groups_[gi] + size_t(i)];
          if (sg.from_mem) std::copy_n(ds0g_.data() + i * s_, s_, dmem0 + sg.row * M);
        }
    }
    L_ = 0;
  }

  void act(int64_t B, const T* x, const T* mask, T* mem, T* h, int64_t phase) override {
    SB_CHECK(phase >= 0 && phase < w_, "rel_lstm: phase {} outside the window [0, {})", phase, w_);
    const int64_t M = memory_size();
    for (int64_t b = 0; b < B; ++b) {
      T* m = mem + b * M;
      if (mask[b] == T(0)) std::fill_n(m, M, T(0));
      const auto count = static_cast<int64_t>(m[s_]);
      SB_CHECK(count >= 0 && count < w_, "rel_lstm: memory row {} holds {} steps, window {}", b,
               count, w_);
      std::copy_n(x + b * e_, e_, m + s_ + 1 + count * e_);
      m[s_] = T(count + 1);
    }
    grow(act_rows_, B);
    reserve(w_ * B);
    for (int64_t len = 1; len <= w_; ++len) {
      int64_t rows = 0;
      for (int64_t b = 0; b < B; ++b)
        if (static_cast<int64_t>(mem[b * M + s_]) == len) act_rows_[size_t(rows++)] = b;
      if (rows == 0) continue;
      for (int64_t i = 0; i < rows; ++i) {
        const T* m = mem + act_rows_[size_t(i)] * M;
        std::copy_n(m, s_, s0g_.data() + i * s_);
        for (int64_t t = 0; t < len; ++t)
          std::copy_n(m + s_ + 1 + t * e_, e_, xg_.data() + (t * rows + i) * e_);
      }
      layer_.forward(core::ViewT<const T>(xg_.data(), core::Shape{len, rows, e_}),
                     core::ViewT<const T>(s0g_.data(), core::Shape{rows, s_}),
                     core::ViewT<T>(yg_.data(), core::Shape{len, rows, h_}));
      const core::ViewT<const T> fin = layer_.final_state();
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t b = act_rows_[size_t(i)];
        std::copy_n(yg_.data() + ((len - 1) * rows + i) * h_, h_, h + b * h_);
        if (phase == w_ - 1) {  // the window restarts after this step
          T* m = mem + b * M;
          std::copy_n(fin.data + i * s_, s_, m);
          std::copy_n(fin.data + i * s_, h_, m + s_ - h_);  // s part := h
          std::fill_n(m + s_, 1 + w_ * e_, T(0));
        }
      }
    }
    L_ = 0;
  }

  size_t held_bytes() const override {
    return layer_.held_bytes() + core::bytes_of(xg_) + core::bytes_of(yg_) + core::bytes_of(dxg_) + core::bytes_of(dyg_) +
           core::bytes_of(s0g_) + core::bytes_of(ds0g_) + core::bytes_of(mem0_) + core::bytes_of(mask_);
  }

 private:
  struct Seg {
    int64_t a, len, row;
    bool from_mem;
  };

  void reserve(int64_t rows) {
    grow(xg_, rows * e_);
    grow(dxg_, rows * e_);
    grow(yg_, rows * h_);
    grow(dyg_, rows * h_);
    grow(s0g_, rows * s_);
    grow(ds0g_, rows * s_);
  }

  // Gathers group g's inputs and start states and runs the layer; returns the length.
  int64_t run_group(size_t g) {
    const int64_t M = memory_size();
    const size_t lo = groups_[g], hi = groups_[g + 1];
    const int64_t rows = static_cast<int64_t>(hi - lo), a = segs_[lo].a, len = segs_[lo].len;
    for (int64_t i = 0; i < rows; ++i) {
      const Seg& sg = segs_[lo + size_t(i)];
      if (sg.from_mem)
        std::copy_n(mem0_.data() + sg.row * M, s_, s0g_.data() + i * s_);
      else
        std::fill_n(s0g_.data() + i * s_, s_, T(0));
      for (int64_t t = 0; t < len; ++t)
        std::copy_n(x_ + ((a + t) * N_ + sg.row) * e_, e_, xg_.data() + (t * rows + i) * e_);
    }
    layer_.forward(core::ViewT<const T>(xg_.data(), core::Shape{len, rows, e_}),
                   core::ViewT<const T>(s0g_.data(), core::Shape{rows, s_}),
                   core::ViewT<T>(yg_.data(), core::Shape{len, rows, h_}));
    return len;
  }

  // src (len, rows, w) of group g -> dst (L, N, w) at the group's rows and steps.
  void scatter_rows(size_t g, int64_t len, const T* src, T* dst, int64_t w) const {
    const size_t lo = groups_[g];
    const int64_t rows = static_cast<int64_t>(groups_[g + 1] - lo), a = segs_[lo].a;
    for (int64_t t = 0; t < len; ++t)
      for (int64_t i = 0; i < rows; ++i)
        std::copy_n(src + (t * rows + i) * w, w, dst + ((a + t) * N_ + segs_[lo + size_t(i)].row) * w);
  }

  nn::AttentiveRecurrent<T> layer_;
  int64_t e_, h_, s_, w_;
  int64_t L_ = 0, N_ = 0, last_group_ = -1;
  const T* x_ = nullptr;
  std::vector<Seg> segs_;
  std::vector<size_t> groups_;  // segs_ index where each group starts, then segs_.size()
  std::vector<int64_t> act_rows_;
  std::vector<T> xg_, yg_, dxg_, dyg_, s0g_, ds0g_, mem0_, mask_;
};

nn::MomentumOptions momentum_options(const AgentConfig& cfg, const char* kind) {
  nn::MomentumOptions o;
  o.kind = kind;
  o.mu = cfg.mu;
  o.s = cfg.s;
  o.beta = cfg.beta;
  o.eps = cfg.eps;
  return o;
}

}  // namespace

const std::vector<std::string>& agent_core_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n{kNoCore};
    for (const auto& c : nn::cell_names(nn::kAgent)) n.push_back(c);
    return n;
  }();
  return names;
}

const std::string& agent_core_doc() {
  static const std::string doc = "recurrent core: " + core::join(agent_core_names(), " | ");
  return doc;
}

template <class T>
std::unique_ptr<CoreT<T>> make_core(const AgentConfig& cfg, core::ParamStoreT<T>& ps,
                                    const std::string& name, int64_t input, int64_t window) {
  if (cfg.core == kNoCore) return std::make_unique<NoneCore<T>>(input);
  const auto& names = agent_core_names();
  if (std::find(names.begin(), names.end(), cfg.core) == names.end())
    throw core::UsageError("agent.core: " + core::unknown_name("core", cfg.core, names));
  // The cell registry says how the agent runs each cell it can use.
  const nn::CellEntry& cell = nn::find_cell(cfg.core, nn::kAgent, "agent.core");
  switch (cell.agent) {
    case nn::AgentForm::kStepLstm:
      return std::make_unique<CellCore<nn::LstmCell<T>>>(
          nn::LstmCell<T>(ps, name, input, cfg.hidden), cfg.forget_bias);
    case nn::AgentForm::kStepMomentumLstm:
      return std::make_unique<CellCore<nn::MomentumLstmCell<T>>>(
          nn::MomentumLstmCell<T>(ps, name, input, cfg.hidden, momentum_options(cfg, cell.variant)),
          cfg.forget_bias);
    case nn::AgentForm::kWindowedAttentive:
      return std::make_unique<RelCore<T>>(ps, name, cell.name, input, cfg.hidden, cfg.nu,
                                          cfg.rho, cfg.forget_bias, window);
    case nn::AgentForm::kNone:
      break;
  }
  throw core::Error(fmt::format("agent.core: the cell registry marks '{}' usable by the agent "
                                "without saying how (fix nn/registry.cpp)",
                                cfg.core));
}

template std::unique_ptr<CoreT<float>> make_core<float>(const AgentConfig&, core::ParamStoreT<float>&,
                                                        const std::string&, int64_t, int64_t);
template std::unique_ptr<CoreT<double>> make_core<double>(const AgentConfig&,
                                                          core::ParamStoreT<double>&,
                                                          const std::string&, int64_t, int64_t);

}  // namespace seqbench::rl
