// Saved state: what a checkpoint holds, and what every module that resumes bit for bit
// writes into it. Ordered metadata (unique text keys -> text values) plus named float32
// arrays with shapes; train::Checkpoint is this container (lib/train/checkpoint.hpp reads
// and writes it as a .sbck file, docs/formats.md).
//
// Values are written and read through typed functions, so that each kind of value has
// exactly one text encoding everywhere:
//
//   double     C99 hex float as fmt's "{:a}" writes it ("0x1.999999999999ap-4", "-0x0p+0",
//              "0x0.0000000000001p-1022", "inf", "-inf", "nan", "-nan"): bit-exact. A NaN
//              other than the default quiet one keeps its payload as "nan(0x<52 bits>)".
//   int64      decimal ("-1"); u64: decimal ("18446744073709551615")
//   bool       "1" or "0"
//   string     as is
//   doubles    the doubles above joined by single spaces ("" for none)
//   rng        core::Rng's four state words in decimal: "w0 w1 w2 w3"
//
// Reading checks the text: a value that is not of the kind asked for, a missing key or
// array, and an array of another shape than the caller expects are refused with a
// one-line core::Error naming the key and the origin (the file the state came from).
//
// Scopes: st.scope("ppo") is a view of the same state that reads and writes every key
// and array name under "ppo."; scopes nest (scope("ppo").scope("env0") -> "ppo.env0."),
// so a module writes its own short names wherever its caller puts it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/check.hpp"
#include "core/rng.hpp"
#include "core/tensor.hpp"

namespace seqbench::core {

struct StateArray {
  std::string name;
  Shape shape;  // rank 0..4; data.size() == shape.numel()
  std::vector<float> data;
};

// The text encodings above, for code that needs them outside a State (tests, tools).
std::string encode_double(double v);
std::string encode_rng(const Rng& r);
// False (out untouched) when the text is not exactly one value of the kind.
bool decode_double(std::string_view text, double& out);
bool decode_rng(std::string_view text, Rng::State& out);

template <class S>
class StateScope;
class State;
using Scope = StateScope<State>;
using ConstScope = StateScope<const State>;

class State {
 public:
  State() = default;
  explicit State(std::string origin_) : origin(std::move(origin_)) {}

  // In the order written. The put functions keep keys and names unique; code that fills
  // these directly (a file reader) must do so itself.
  std::vector<std::pair<std::string, std::string>> meta;
  std::vector<StateArray> arrays;
  // Where the state came from (a checkpoint's path), for messages; empty: in memory.
  std::string origin;

  // Writing. Each throws if the key (or array name) is already present.
  void put_string(std::string_view key, std::string value);
  void put_double(std::string_view key, double v);
  void put_int(std::string_view key, int64_t v);
  void put_u64(std::string_view key, uint64_t v);
  void put_bool(std::string_view key, bool v);
  void put_doubles(std::string_view key, std::span<const double> v);
  void put_rng(std::string_view key, const Rng& r);
  // Throws also if data.size() != shape.numel().
  void put_array(std::string_view name, Shape shape, std::vector<float> data);

  // Reading. Each throws naming the key and the origin when the key is missing or its
  // text is not a value of that kind.
  bool has(std::string_view key) const;
  const std::string& get_string(std::string_view key) const;
  double get_double(std::string_view key) const;
  int64_t get_int(std::string_view key) const;
  uint64_t get_u64(std::string_view key) const;
  bool get_bool(std::string_view key) const;
  std::vector<double> get_doubles(std::string_view key) const;
  Rng get_rng(std::string_view key) const;

  bool has_array(std::string_view name) const;
  // Any shape (the caller checks what it needs); throws naming a missing array.
  const StateArray& array(std::string_view name) const;
  // The values of an array that must have shape `expected`; throws naming the array,
  // the origin and both shapes otherwise.
  const std::vector<float>& get_array(std::string_view name, const Shape& expected) const;
  // The same, copied into `out` (whose size must be expected.numel()).
  void get_array(std::string_view name, const Shape& expected, std::span<float> out) const;

  Scope scope(std::string_view name);
  ConstScope scope(std::string_view name) const;

  // The text of a key: get_string under its former name, for callers written against the
  // old train::Checkpoint.
  const std::string& meta_at(std::string_view key) const { return get_string(key); }

  // "'<origin>'" or "in-memory state", as messages name it.
  std::string where() const;
};

// A State seen under a key prefix. Cheap to copy; must not outlive its State. Writing
// needs a mutable State (Scope); ConstScope only reads.
template <class S>
class StateScope {
  static constexpr bool kMutable = !std::is_const_v<S>;

 public:
  // Implicit from a State: a function taking a scope can be given the whole state.
  StateScope(S& st, std::string prefix = "") : st_(&st), prefix_(std::move(prefix)) {}
  // A writing scope can be read through.
  template <class U>
    requires(std::is_const_v<S> && std::is_same_v<U, State>)
  StateScope(const StateScope<U>& o) : st_(&o.state()), prefix_(o.prefix()) {}

  // "name." appended to this prefix; an empty name gives this scope.
  StateScope scope(std::string_view name) const {
    return name.empty() ? *this : StateScope(*st_, prefix_ + std::string(name) + ".");
  }
  std::string key(std::string_view k) const { return prefix_ + std::string(k); }
  const std::string& prefix() const { return prefix_; }
  S& state() const { return *st_; }

  void put_string(std::string_view k, std::string v) const requires kMutable {
    st_->put_string(key(k), std::move(v));
  }
  void put_double(std::string_view k, double v) const requires kMutable {
    st_->put_double(key(k), v);
  }
  void put_int(std::string_view k, int64_t v) const requires kMutable { st_->put_int(key(k), v); }
  void put_u64(std::string_view k, uint64_t v) const requires kMutable { st_->put_u64(key(k), v); }
  void put_bool(std::string_view k, bool v) const requires kMutable { st_->put_bool(key(k), v); }
  void put_doubles(std::string_view k, std::span<const double> v) const requires kMutable {
    st_->put_doubles(key(k), v);
  }
  void put_rng(std::string_view k, const Rng& r) const requires kMutable {
    st_->put_rng(key(k), r);
  }
  void put_array(std::string_view name, Shape shape, std::vector<float> data) const
    requires kMutable
  {
    st_->put_array(key(name), shape, std::move(data));
  }

  bool has(std::string_view k) const { return st_->has(key(k)); }
  const std::string& get_string(std::string_view k) const { return st_->get_string(key(k)); }
  double get_double(std::string_view k) const { return st_->get_double(key(k)); }
  int64_t get_int(std::string_view k) const { return st_->get_int(key(k)); }
  uint64_t get_u64(std::string_view k) const { return st_->get_u64(key(k)); }
  bool get_bool(std::string_view k) const { return st_->get_bool(key(k)); }
  std::vector<double> get_doubles(std::string_view k) const { return st_->get_doubles(key(k)); }
  Rng get_rng(std::string_view k) const { return st_->get_rng(key(k)); }
  bool has_array(std::string_view name) const { return st_->has_array(key(name)); }
  const StateArray& array(std::string_view name) const { return st_->array(key(name)); }
  const std::vector<float>& get_array(std::string_view name, const Shape& expected) const {
    return st_->get_array(key(name), expected);
  }
  void get_array(std::string_view name, const Shape& expected, std::span<float> out) const {
    st_->get_array(key(name), expected, out);
  }

 private:
  S* st_;
  std::string prefix_;
};

inline Scope State::scope(std::string_view name) { return Scope(*this, "").scope(name); }
inline ConstScope State::scope(std::string_view name) const {
  return ConstScope(*this, "").scope(name);
}

}  // namespace seqbench::core
