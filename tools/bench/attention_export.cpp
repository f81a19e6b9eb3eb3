// seqbench_attention_export: one forward+backward of seqbench's multi-head attention
// block (nn::MultiHeadAttentionT<float>, causal, the given head groups) on random
// inputs, written as a checkpoint (docs/formats.md) for tools/bench/torch_attention_check.py
// to recompute in PyTorch from the same weights:
//   params  <name>            every parameter (mha.qkv.w (3E, E), mha.qkv.b, mha.out.w, ...)
//   grads   grad/<name>       their gradients
//   data    src, ddst (B, N, E) in; dst, dsrc (B, N, E) out
//   meta    B, N, E, heads, attention
// usage: seqbench_attention_export OUT.sbck [--attention full] [--B 2] [--N 64] [--E 64]
//        [--heads 4] [--seed 1]
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "core/check.hpp"
#include "core/param_store.hpp"
#include "core/rng.hpp"
#include "nn/attention/transformer.hpp"
#include "train/checkpoint.hpp"

using namespace seqbench;

int main(int argc, char** argv) {
  std::string out, attention = "full";
  int64_t B = 2, N = 64, E = 64, heads = 4;
  uint64_t seed = 1;
  CLI::App app{"one multi-head attention forward+backward, exported for a PyTorch check",
               "seqbench_attention_export"};
  app.add_option("OUT", out, "checkpoint to write")->required();
  app.add_option("--attention", attention, "head groups, e.g. full or local:2,full:2");
  app.add_option("--B", B)->check(CLI::PositiveNumber);
  app.add_option("--N", N)->check(CLI::PositiveNumber);
  app.add_option("--E", E)->check(CLI::PositiveNumber);
  app.add_option("--heads", heads)->check(CLI::PositiveNumber);
  app.add_option("--seed", seed);
  CLI11_PARSE(app, argc, argv);
  try {
    core::ParamStore ps;
    nn::AttentionConfig base;
    base.seed = seed;
    nn::MultiHeadAttentionT<float> mha(ps, "mha", E, nn::parse_head_groups(attention, heads),
                                       base);
    ps.finalize(0);
    core::Rng rng(seed);
    mha.init(rng, 0.1, 0.1);
    for (auto& p : ps.params())  // non-zero biases, so the check sees them
      if (p.name.size() > 2 && p.name.compare(p.name.size() - 2, 2, ".b") == 0)
        for (int64_t i = 0; i < p.numel(); ++i) p.value[i] = float(0.05 * rng.normal());
    core::Tensor src(core::Shape{B, N, E}), ddst(core::Shape{B, N, E}), dst(core::Shape{B, N, E}),
        dsrc(core::Shape{B, N, E});
    for (auto* t : {&src, &ddst})
      for (int64_t i = 0; i < t->numel(); ++i) (*t)[i] = float(rng.normal());
    ps.zero_grad();
    mha.forward(src.cview(), dst.view(), false);
    mha.backward(ddst.cview(), dsrc.view());

    train::Checkpoint ck;
    ck.put_int("B", B);
    ck.put_int("N", N);
    ck.put_int("E", E);
    ck.put_int("heads", heads);
    ck.put_string("attention", attention);
    for (const auto& p : ps.params()) {
      ck.put_array(p.name, p.shape, std::vector<float>(p.value, p.value + p.numel()));
      ck.put_array("grad/" + p.name, p.shape, std::vector<float>(p.grad, p.grad + p.numel()));
    }
    const auto put = [&](const char* name, const core::Tensor& t) {
      ck.put_array(name, t.shape(), std::vector<float>(t.data(), t.data() + t.numel()));
    };
    put("src", src);
    put("ddst", ddst);
    put("dst", dst);
    put("dsrc", dsrc);
    train::save_checkpoint(out, ck);
    fmt::print("wrote {}\n", out);
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "seqbench_attention_export: error: {}\n", e.what());
    return 1;
  }
}
