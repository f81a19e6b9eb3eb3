// Seeded random numbers: xoshiro256** seeded by splitmix64. Sequential and
// platform-independent (no std:: distributions, whose output differs between
// standard libraries), so the same seed gives the same numbers everywhere; the
// state is four words that checkpoints save for bit-exact --resume.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

namespace seqbench::core {

class Rng {
 public:
  using State = std::array<uint64_t, 4>;

  explicit Rng(uint64_t seed = 0) { reseed(seed); }

  void reseed(uint64_t seed) {
    uint64_t x = seed;
    for (auto& s : s_) s = splitmix64(x);
  }
  // An independent stream derived from this generator's seed and a label,
  // e.g. Rng(seed).fork(1) for data and fork(2) for initialisation.
  static Rng derive(uint64_t seed, uint64_t stream) {
    uint64_t x = seed ^ (0x9e3779b97f4a7c15ULL * (stream + 1));
    return Rng(splitmix64(x));
  }

  uint64_t next_u64() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [0, n); n > 0. Lemire's multiply-shift (bias < 2^-64 * n).
  int64_t randint(int64_t n) {
    __extension__ using U128 = unsigned __int128;
    return static_cast<int64_t>((static_cast<U128>(next_u64()) * static_cast<U128>(n)) >> 64);
  }
  // Standard normal by Box-Muller; no cached spare so the state is only s_.
  double normal() {
    double u1 = uniform();
    while (u1 <= 0.0) u1 = uniform();
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  double normal(double mean, double stddev) { return mean + stddev * normal(); }

  const State& state() const { return s_; }
  void set_state(const State& s) { s_ = s; }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  State s_{};
};

}  // namespace seqbench::core
