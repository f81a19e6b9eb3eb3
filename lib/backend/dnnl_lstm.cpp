#include "backend/dnnl_lstm.hpp"

#include <algorithm>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>

#include "backend/dnnl_context.hpp"
#include "core/check.hpp"

namespace seqbench::backend {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

namespace {

// Enough for a training length plus a shorter last batch and an evaluation
// shape, without letting variable-length runs grow the cache without bound.
constexpr size_t kMaxCachedShapes = 8;

float* ptr(const memory& m) { return static_cast<float*>(m.get_data_handle()); }
size_t bytes(const memory& m) { return m ? m.get_desc().get_size() : 0; }

void copy_in(const memory& dst, const float* src) {
  if (src)
    std::memcpy(ptr(dst), src, bytes(dst));
  else
    std::memset(ptr(dst), 0, bytes(dst));
}

void copy_out(float* dst, const memory& src) {
  if (dst) std::memcpy(dst, ptr(src), bytes(src));
}

// Same bytes at the same places, so the primitive can read our ldigo copy in
// place. Looser than desc::operator== in ignoring the strides of size-1
// dimensions (L, D, and I when input_size == 1), which never address memory.
// The primitive usually pads the 4H row stride (H = 5: 32 instead of 20), and
// then a reorder is needed.
bool same_layout(const memory::desc& a, const memory::desc& b) {
  const dnnl_memory_desc_t& x = a.data;
  const dnnl_memory_desc_t& y = b.data;
  if (x.ndims != y.ndims || x.data_type != y.data_type || x.offset0 != y.offset0) return false;
  if (x.format_kind != dnnl_blocked || y.format_kind != dnnl_blocked) return false;
  if (x.extra.flags != 0 || y.extra.flags != 0) return false;
  const auto& bx = x.format_desc.blocking;
  const auto& by = y.format_desc.blocking;
  if (bx.inner_nblks != 0 || by.inner_nblks != 0) return false;
  for (int i = 0; i < x.ndims; ++i) {
    if (x.dims[i] != y.dims[i] || x.padded_dims[i] != y.padded_dims[i]) return false;
    if (x.dims[i] > 1 && bx.strides[i] != by.strides[i]) return false;
  }
  return true;
}

// Reorder that adds into its destination (post-op sum): how primitive-layout
// gradients are accumulated into the caller's ldigo/ldgo buffers.
dnnl::reorder make_accumulating_reorder(const memory::desc& src, const memory::desc& dst) {
  dnnl::post_ops po;
  po.append_sum(1.f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
  return dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), src, cpu_engine(), dst, attr));
}

dnnl::primitive_attr user_scratchpad_attr() {
  // User-managed scratchpad: allocated once per shape below and counted in
  // workspace_bytes(), instead of oneDNN allocating behind our back per call.
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

}  // namespace

struct DnnlLstm::Impl {
  // Everything that depends on (T, B). Backward parts are created on the first
  // backward of the shape, so forward-only use (evaluation) does not pay for them.
  struct ShapeEntry {
    int64_t T = 0, B = 0;
    uint64_t last_use = 0;

    dnnl::lstm_forward::primitive_desc fwd_pd;
    dnnl::lstm_forward fwd;
    memory x, h0, c0;         // x (T, B, I) tnc; h0, c0 (1, 1, B, H) ldnc: forward's inputs
    memory y, hT, cT;         // y (T, B, H) tnc; hT, cT (1, 1, B, H): forward's outputs
    memory w_x_fwd, w_h_fwd;  // weights in the forward primitive's layout
    dnnl::reorder w_x_to_fwd, w_h_to_fwd;  // empty when the layout is ldigo already
    memory workspace, fwd_scratch;

    bool has_bwd = false;
    dnnl::lstm_backward::primitive_desc bwd_pd;
    dnnl::lstm_backward bwd;
    memory w_x_bwd, w_h_bwd;
    dnnl::reorder w_x_to_bwd, w_h_to_bwd;
    memory dy, dhT, dcT;                   // dy (T, B, H); dhT, dcT (1, 1, B, H)
    memory dx, dh0, dc0;                   // dx (T, B, I); dh0, dc0 (1, 1, B, H)
    memory dw_x, dw_h, db;                 // primitive layout, zeroed before each backward
    memory dw_x_user, dw_h_user, db_user;  // caller's buffers, handle set per call
    dnnl::reorder add_dw_x, add_dw_h, add_db;
    memory bwd_scratch;

    size_t bytes_held() const {
      size_t n = 0;
      for (const memory* m : {&x, &h0, &c0, &y, &hT, &cT, &workspace, &dy, &dhT, &dcT, &dx, &dh0,
                              &dc0, &dw_x, &dw_h, &db})
        n += bytes(*m);
      n += std::max(bytes(fwd_scratch), bytes(bwd_scratch));  // one shared buffer
      // Primitive-layout weights alias the ldigo copies when no reorder is needed.
      if (w_x_to_fwd) n += bytes(w_x_fwd);
      if (w_h_to_fwd) n += bytes(w_h_fwd);
      if (w_x_to_bwd) n += bytes(w_x_bwd);
      if (w_h_to_bwd) n += bytes(w_h_bwd);
      return n;
    }
  };

  int64_t I, H;
  memory::desc w_x_md, w_h_md, b_md;  // user layouts: ldigo, ldigo, ldgo
  memory w_x, w_h, b;                 // copies of the last forward's parameters
  std::unordered_map<uint64_t, std::unique_ptr<ShapeEntry>> cache;
  ShapeEntry* last = nullptr;  // shape of the last forward; backward runs on it
  uint64_t clock = 0;

  Impl(int64_t input_size, int64_t hidden_size)
      : I(input_size),
        H(hidden_size),
        w_x_md({1, 1, I, 4, H}, dt::f32, tag::ldigo),
        w_h_md({1, 1, H, 4, H}, dt::f32, tag::ldigo),
        b_md({1, 1, 4, H}, dt::f32, tag::ldgo),
        w_x(w_x_md, cpu_engine()),
        w_h(w_h_md, cpu_engine()),
        b(b_md, cpu_engine()) {}

  static uint64_t key(int64_t T, int64_t B) {
    return (static_cast<uint64_t>(T) << 32) ^ static_cast<uint64_t>(B);
  }

  memory::desc layer_md(int64_t T, int64_t B, int64_t C) const {
    return memory::desc({T, B, C}, dt::f32, tag::tnc);
  }
  memory::desc iter_md(int64_t B) const { return memory::desc({1, 1, B, H}, dt::f32, tag::ldnc); }

  ShapeEntry& entry(int64_t T, int64_t B) {
    auto it = cache.find(key(T, B));
    if (it == cache.end()) {
      if (cache.size() >= kMaxCachedShapes) evict_oldest();
      it = cache.emplace(key(T, B), make_entry(T, B)).first;
    }
    it->second->last_use = ++clock;
    return *it->second;
  }

  void evict_oldest() {
    auto oldest = cache.begin();
    for (auto it = cache.begin(); it != cache.end(); ++it)
      if (it->second->last_use < oldest->second->last_use) oldest = it;
    if (oldest->second.get() == last) last = nullptr;
    cache.erase(oldest);
  }

  std::unique_ptr<ShapeEntry> make_entry(int64_t T, int64_t B) {
    auto e = std::make_unique<ShapeEntry>();
    e->T = T;
    e->B = B;
    const auto& eng = cpu_engine();
    const memory::desc any_wx({1, 1, I, 4, H}, dt::f32, tag::any);
    const memory::desc any_wh({1, 1, H, 4, H}, dt::f32, tag::any);
    dnnl::lstm_forward::desc fwd_desc(dnnl::prop_kind::forward_training,
                                      dnnl::rnn_direction::unidirectional_left2right,
                                      layer_md(T, B, I), iter_md(B), iter_md(B), any_wx, any_wh,
                                      b_md, layer_md(T, B, H), iter_md(B), iter_md(B));
    e->fwd_pd = dnnl::lstm_forward::primitive_desc(fwd_desc, user_scratchpad_attr(), eng);
    e->fwd = dnnl::lstm_forward(e->fwd_pd);

    e->x = memory(layer_md(T, B, I), eng);
    e->h0 = memory(iter_md(B), eng);
    e->c0 = memory(iter_md(B), eng);
    e->y = memory(layer_md(T, B, H), eng);
    e->hT = memory(iter_md(B), eng);
    e->cT = memory(iter_md(B), eng);
    make_weights(e->fwd_pd.weights_layer_desc(), w_x, e->w_x_fwd, e->w_x_to_fwd);
    make_weights(e->fwd_pd.weights_iter_desc(), w_h, e->w_h_fwd, e->w_h_to_fwd);
    e->workspace = memory(e->fwd_pd.workspace_desc(), eng);
    e->fwd_scratch = memory(e->fwd_pd.scratchpad_desc(), eng);
    return e;
  }

  // The primitive's weights: the ldigo copy itself when layouts agree, else a
  // buffer in the primitive's layout plus the reorder that fills it.
  static void make_weights(const memory::desc& prim_md, const memory& user, memory& prim,
                           dnnl::reorder& to_prim) {
    if (same_layout(prim_md, user.get_desc())) {
      // A view of the ldigo copy in the primitive's own descriptor: no reorder.
      prim = memory(prim_md, cpu_engine(), user.get_data_handle());
    } else {
      prim = memory(prim_md, cpu_engine());
      to_prim = dnnl::reorder(user, prim);
    }
  }

  void make_backward(ShapeEntry& e) {
    const auto& eng = cpu_engine();
    const int64_t T = e.T, B = e.B;
    const memory::desc any_wx({1, 1, I, 4, H}, dt::f32, tag::any);
    const memory::desc any_wh({1, 1, H, 4, H}, dt::f32, tag::any);
    dnnl::lstm_backward::desc bwd_desc(
        dnnl::prop_kind::backward, dnnl::rnn_direction::unidirectional_left2right,
        layer_md(T, B, I), iter_md(B), iter_md(B), any_wx, any_wh, b_md, layer_md(T, B, H),
        iter_md(B), iter_md(B),  // forward side
        layer_md(T, B, I), iter_md(B), iter_md(B), any_wx, any_wh, b_md, layer_md(T, B, H),
        iter_md(B), iter_md(B));  // diff side
    e.bwd_pd = dnnl::lstm_backward::primitive_desc(bwd_desc, user_scratchpad_attr(), eng, e.fwd_pd);
    e.bwd = dnnl::lstm_backward(e.bwd_pd);
    SB_CHECK(e.bwd_pd.workspace_desc() == e.fwd_pd.workspace_desc(),
             "DnnlLstm: backward expects a different workspace than forward made (T={} B={}); "
             "oneDNN version mismatch?",
             T, B);

    make_weights(e.bwd_pd.weights_layer_desc(), w_x, e.w_x_bwd, e.w_x_to_bwd);
    make_weights(e.bwd_pd.weights_iter_desc(), w_h, e.w_h_bwd, e.w_h_to_bwd);
    e.dy = memory(layer_md(T, B, H), eng);
    e.dhT = memory(iter_md(B), eng);
    e.dcT = memory(iter_md(B), eng);
    e.dx = memory(layer_md(T, B, I), eng);
    e.dh0 = memory(iter_md(B), eng);
    e.dc0 = memory(iter_md(B), eng);
    e.dw_x = memory(e.bwd_pd.diff_weights_layer_desc(), eng);
    e.dw_h = memory(e.bwd_pd.diff_weights_iter_desc(), eng);
    e.db = memory(e.bwd_pd.diff_bias_desc(), eng);
    e.dw_x_user = memory(w_x_md, eng, DNNL_MEMORY_NONE);
    e.dw_h_user = memory(w_h_md, eng, DNNL_MEMORY_NONE);
    e.db_user = memory(b_md, eng, DNNL_MEMORY_NONE);
    e.add_dw_x = make_accumulating_reorder(e.dw_x.get_desc(), w_x_md);
    e.add_dw_h = make_accumulating_reorder(e.dw_h.get_desc(), w_h_md);
    e.add_db = make_accumulating_reorder(e.db.get_desc(), b_md);
    // Forward and backward never run at once and keep nothing in their scratchpads
    // between calls (the workspace carries what backward needs), so they share one
    // buffer, the larger of the two. At T=784, B=100, H=128 each is ~790 MB.
    if (e.bwd_pd.scratchpad_desc().get_size() <= bytes(e.fwd_scratch)) {
      e.bwd_scratch = memory(e.bwd_pd.scratchpad_desc(), eng, e.fwd_scratch.get_data_handle());
    } else {
      e.bwd_scratch = memory(e.bwd_pd.scratchpad_desc(), eng);
      e.fwd_scratch = memory(e.fwd_pd.scratchpad_desc(), eng, e.bwd_scratch.get_data_handle());
    }
    e.has_bwd = true;
  }
};

DnnlLstm::DnnlLstm(int64_t input_size, int64_t hidden_size) {
  SB_CHECK(input_size > 0 && hidden_size > 0,
           "DnnlLstm: input_size={} and hidden_size={} must be positive", input_size, hidden_size);
  impl_ = std::make_unique<Impl>(input_size, hidden_size);
}

DnnlLstm::~DnnlLstm() = default;
DnnlLstm::DnnlLstm(DnnlLstm&&) noexcept = default;
DnnlLstm& DnnlLstm::operator=(DnnlLstm&&) noexcept = default;

int64_t DnnlLstm::input_size() const { return impl_->I; }

void DnnlLstm::forward(int64_t T, int64_t B, const float* x, const float* h0, const float* c0,
                       const float* w_x, const float* w_h, const float* b, float* y, float* hT,
                       float* cT) {
  SB_CHECK(T > 0 && B > 0 && T <= INT32_MAX && B <= INT32_MAX,
           "DnnlLstm::forward: T={} and B={} must be positive", T, B);
  SB_CHECK(x && w_x && w_h && b && y, "DnnlLstm::forward: x, w_x, w_h, b and y must be non-null");
  Impl& im = *impl_;
  Impl::ShapeEntry& e = im.entry(T, B);
  // Copies, not handles to the caller's memory: backward must see exactly these
  // values even if the caller reuses its buffers in between.
  copy_in(e.x, x);
  copy_in(e.h0, h0);
  copy_in(e.c0, c0);
  copy_in(im.w_x, w_x);
  copy_in(im.w_h, w_h);
  copy_in(im.b, b);

  auto& s = cpu_stream();
  if (e.w_x_to_fwd) e.w_x_to_fwd.execute(s, im.w_x, e.w_x_fwd);
  if (e.w_h_to_fwd) e.w_h_to_fwd.execute(s, im.w_h, e.w_h_fwd);
  e.fwd.execute(s, {{DNNL_ARG_SRC_LAYER, e.x},
                    {DNNL_ARG_SRC_ITER, e.h0},
                    {DNNL_ARG_SRC_ITER_C, e.c0},
                    {DNNL_ARG_WEIGHTS_LAYER, e.w_x_fwd},
                    {DNNL_ARG_WEIGHTS_ITER, e.w_h_fwd},
                    {DNNL_ARG_BIAS, im.b},
                    {DNNL_ARG_DST_LAYER, e.y},
                    {DNNL_ARG_DST_ITER, e.hT},
                    {DNNL_ARG_DST_ITER_C, e.cT},
                    {DNNL_ARG_WORKSPACE, e.workspace},
                    {DNNL_ARG_SCRATCHPAD, e.fwd_scratch}});
  s.wait();
  copy_out(y, e.y);
  copy_out(hT, e.hT);
  copy_out(cT, e.cT);
  im.last = &e;
}

void DnnlLstm::backward(int64_t T, int64_t B, const float* dy, const float* dhT, const float* dcT,
                        float* dx, float* dh0, float* dc0, float* dw_x, float* dw_h, float* db) {
  const Impl::ShapeEntry* e = impl_->last;
  SB_CHECK(e != nullptr,
           "DnnlLstm::backward(T={}, B={}) called before forward "
           "(hint: run forward on the same batch first)",
           T, B);
  SB_CHECK(e->T == T && e->B == B,
           "DnnlLstm::backward: shape (T={}, B={}) differs from the last forward (T={}, B={}) "
           "(hint: backward must follow the forward of the same batch)",
           T, B, e->T, e->B);
  backward(dy, dhT, dcT, dx, dh0, dc0, dw_x, dw_h, db);
}

void DnnlLstm::backward(const float* dy, const float* dhT, const float* dcT, float* dx, float* dh0,
                        float* dc0, float* dw_x, float* dw_h, float* db) {
  Impl& im = *impl_;
  SB_CHECK(im.last != nullptr,
           "DnnlLstm::backward called with no cached forward (hint: run forward first; a cache "
           "eviction also drops it)");
  SB_CHECK(dy != nullptr, "DnnlLstm::backward: dy must be non-null");
  Impl::ShapeEntry& e = *im.last;
  if (!e.has_bwd) im.make_backward(e);

  copy_in(e.dy, dy);
  copy_in(e.dhT, dhT);
  copy_in(e.dcT, dcT);
  // oneDNN's RNN backward accumulates into diff weights/bias (its documented
  // semantics, meant for splitting a sequence over several primitives). We start
  // from zero in the primitive's layout and add the result into the caller's
  // ldigo buffers with one reorder-with-sum each, which gives our += contract
  // whatever layout the primitive picked.
  std::memset(ptr(e.dw_x), 0, bytes(e.dw_x));
  std::memset(ptr(e.dw_h), 0, bytes(e.dw_h));
  std::memset(ptr(e.db), 0, bytes(e.db));

  auto& s = cpu_stream();
  if (e.w_x_to_bwd) e.w_x_to_bwd.execute(s, im.w_x, e.w_x_bwd);
  if (e.w_h_to_bwd) e.w_h_to_bwd.execute(s, im.w_h, e.w_h_bwd);
  e.bwd.execute(s, {{DNNL_ARG_SRC_LAYER, e.x},
                    {DNNL_ARG_SRC_ITER, e.h0},
                    {DNNL_ARG_SRC_ITER_C, e.c0},
                    {DNNL_ARG_WEIGHTS_LAYER, e.w_x_bwd},
                    {DNNL_ARG_WEIGHTS_ITER, e.w_h_bwd},
                    {DNNL_ARG_BIAS, im.b},
                    {DNNL_ARG_DST_LAYER, e.y},
                    {DNNL_ARG_DST_ITER, e.hT},
                    {DNNL_ARG_DST_ITER_C, e.cT},
                    {DNNL_ARG_DIFF_DST_LAYER, e.dy},
                    {DNNL_ARG_DIFF_DST_ITER, e.dhT},
                    {DNNL_ARG_DIFF_DST_ITER_C, e.dcT},
                    {DNNL_ARG_DIFF_SRC_LAYER, e.dx},
                    {DNNL_ARG_DIFF_SRC_ITER, e.dh0},
                    {DNNL_ARG_DIFF_SRC_ITER_C, e.dc0},
                    {DNNL_ARG_DIFF_WEIGHTS_LAYER, e.dw_x},
                    {DNNL_ARG_DIFF_WEIGHTS_ITER, e.dw_h},
                    {DNNL_ARG_DIFF_BIAS, e.db},
                    {DNNL_ARG_WORKSPACE, e.workspace},
                    {DNNL_ARG_SCRATCHPAD, e.bwd_scratch}});
  if (dw_x) {
    e.dw_x_user.set_data_handle(dw_x);
    e.add_dw_x.execute(s, e.dw_x, e.dw_x_user);
  }
  if (dw_h) {
    e.dw_h_user.set_data_handle(dw_h);
    e.add_dw_h.execute(s, e.dw_h, e.dw_h_user);
  }
  if (db) {
    e.db_user.set_data_handle(db);
    e.add_db.execute(s, e.db, e.db_user);
  }
  s.wait();
  copy_out(dx, e.dx);
  copy_out(dh0, e.dh0);
  copy_out(dc0, e.dc0);
}

size_t DnnlLstm::workspace_bytes() const {
  size_t n = bytes(impl_->w_x) + bytes(impl_->w_h) + bytes(impl_->b);
  for (const auto& kv : impl_->cache) n += kv.second->bytes_held();
  return n;
}

size_t DnnlLstm::cached_shapes() const { return impl_->cache.size(); }

}  // namespace seqbench::backend
