// Elementwise functions and size checks the mixers share (lib/nn/mixers/*.cpp).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/check.hpp"
#include "nn/fast_math.hpp"
#include "nn/mixers/mixer.hpp"

namespace seqbench::nn::mixer_math {

// d = output / heads, or a UsageError naming model.mixer.heads when heads does not divide it.
inline int64_t heads_width(const MixerConfig& cfg, int64_t output) {
  if (cfg.heads < 1 || output % cfg.heads != 0)
    throw core::UsageError(fmt::format(
        "model.mixer.heads = {} does not divide the mixer's width {} (hint: a heads count "
        "that divides model.hidden / model.d_model)",
        cfg.heads, output));
  return output / cfg.heads;
}

template <class T>
T silu(T a) {
  return a * sigmoid(a);
}
// d silu(a) / da = σ(a) (1 + a (1 - σ(a))).
template <class T>
T silu_grad(T a) {
  const T s = sigmoid(a);
  return s * (T(1) + a * (T(1) - s));
}
// log(1 + e^x) without overflow; float on the vectorisable exp and log1p of fast_math.hpp
// (within 5e-7 relative), double on libm.
template <class T>
T softplus(T x) {
  return std::max(x, T(0)) + log1p_unit(fast_exp(-std::abs(x)));
}
// log σ(a) = min(a, 0) - log(1 + e^-|a|): no overflow, no log(0).
template <class T>
T log_sigmoid(T a) {
  return std::min(a, T(0)) - log1p_unit(fast_exp(-std::abs(a)));
}

}  // namespace seqbench::nn::mixer_math
