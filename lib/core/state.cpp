#include "core/state.hpp"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <system_error>

namespace seqbench::core {

namespace {

static_assert(std::numeric_limits<double>::is_iec559, "doubles are saved as IEEE 754 bits");

constexpr uint64_t kSignBit = uint64_t(1) << 63;
constexpr uint64_t kExponentBits = uint64_t(0x7ff) << 52;
constexpr uint64_t kMantissaBits = (uint64_t(1) << 52) - 1;
constexpr uint64_t kQuietBit = uint64_t(1) << 51;

// A value as a message shows it: long ones shortened (the message stays one line anyway,
// core::Error escapes control characters).
std::string shown(std::string_view v) {
  constexpr size_t kMax = 80;
  if (v.size() <= kMax) return std::string(v);
  return std::string(v.substr(0, kMax)) + "...";
}

template <class T>
bool decode_whole(std::string_view text, T& out) {
  T v{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end) return false;
  out = v;
  return true;
}

bool is_hex_digit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// The names of what a state holds, for a message about a missing one (at most 20).
template <class Range, class Name>
std::string listed(const Range& r, Name name) {
  constexpr size_t kMax = 20;
  std::string s;
  size_t n = 0;
  for (const auto& x : r) {
    if (n++ == kMax) {
      s += fmt::format(", ... ({} in all)", r.size());
      break;
    }
    s += (s.empty() ? "" : ", ") + name(x);
  }
  return s.empty() ? "none" : s;
}

}  // namespace

std::string encode_double(double v) {
  if (std::isnan(v)) {
    // fmt writes every NaN as "nan" or "-nan"; the default quiet NaN (the one arithmetic
    // produces) keeps that text, any other keeps its payload.
    const auto bits = std::bit_cast<uint64_t>(v);
    const char* sign = (bits & kSignBit) ? "-" : "";
    const uint64_t mantissa = bits & kMantissaBits;
    if (mantissa == kQuietBit) return fmt::format("{}nan", sign);
    return fmt::format("{}nan(0x{:x})", sign, mantissa);
  }
  return fmt::format("{:a}", v);
}

bool decode_double(std::string_view text, double& out) {
  std::string_view s = text;
  const bool negative = !s.empty() && s.front() == '-';
  if (negative) s.remove_prefix(1);
  if (s.empty()) return false;
  double v = 0;
  if (s == "inf") {
    v = std::numeric_limits<double>::infinity();
  } else if (s == "nan") {
    v = std::bit_cast<double>(kExponentBits | kQuietBit);
  } else if (s.starts_with("nan(0x") && s.ends_with(")")) {
    uint64_t mantissa = 0;
    const std::string_view digits = s.substr(6, s.size() - 7);
    const char* end = digits.data() + digits.size();
    const auto [ptr, ec] = std::from_chars(digits.data(), end, mantissa, 16);
    if (digits.empty() || !is_hex_digit(digits.front()) || ec != std::errc() || ptr != end ||
        mantissa == 0 || mantissa > kMantissaBits)
      return false;
    v = std::bit_cast<double>(kExponentBits | mantissa);
  } else if (s.starts_with("0x") || s.starts_with("0X")) {
    s.remove_prefix(2);
    if (s.empty() || !(is_hex_digit(s.front()) || s.front() == '.')) return false;
    const char* end = s.data() + s.size();
    const auto [ptr, ec] = std::from_chars(s.data(), end, v, std::chars_format::hex);
    if (ec != std::errc() || ptr != end) return false;
  } else {
    // Decimal text is read too (exact when it has enough digits), never written.
    if (!((s.front() >= '0' && s.front() <= '9') || s.front() == '.')) return false;
    const char* end = s.data() + s.size();
    const auto [ptr, ec] = std::from_chars(s.data(), end, v, std::chars_format::general);
    if (ec != std::errc() || ptr != end) return false;
  }
  out = negative ? -v : v;
  return true;
}

std::string encode_rng(const Rng& r) {
  const auto& w = r.state();
  return fmt::format("{} {} {} {}", w[0], w[1], w[2], w[3]);
}

bool decode_rng(std::string_view text, Rng::State& out) {
  Rng::State w{};
  for (size_t i = 0; i < w.size(); ++i) {
    const size_t space = text.find(' ');
    const bool last = i + 1 == w.size();
    if (last != (space == std::string_view::npos)) return false;
    if (!decode_whole(text.substr(0, space), w[i])) return false;
    if (!last) text.remove_prefix(space + 1);
  }
  out = w;
  return true;
}

std::string State::where() const {
  return origin.empty() ? "in-memory state" : fmt::format("'{}'", origin);
}

void State::put_string(std::string_view key, std::string value) {
  SB_CHECK(!key.empty(), "{}: a meta key must not be empty", where());
  SB_CHECK(!has(key), "{}: meta key '{}' written twice", where(), key);
  meta.emplace_back(std::string(key), std::move(value));
}

void State::put_double(std::string_view key, double v) { put_string(key, encode_double(v)); }
void State::put_int(std::string_view key, int64_t v) { put_string(key, fmt::format("{}", v)); }
void State::put_u64(std::string_view key, uint64_t v) { put_string(key, fmt::format("{}", v)); }
void State::put_bool(std::string_view key, bool v) { put_string(key, v ? "1" : "0"); }
void State::put_rng(std::string_view key, const Rng& r) { put_string(key, encode_rng(r)); }

void State::put_doubles(std::string_view key, std::span<const double> v) {
  std::string s;
  for (const double x : v) {
    if (!s.empty()) s += ' ';
    s += encode_double(x);
  }
  put_string(key, std::move(s));
}

void State::put_array(std::string_view name, Shape shape, std::vector<float> data) {
  SB_CHECK(!name.empty(), "{}: an array name must not be empty", where());
  SB_CHECK(!has_array(name), "{}: array '{}' added twice", where(), name);
  SB_CHECK(static_cast<int64_t>(data.size()) == shape.numel(),
           "{}: array '{}' has {} values but shape {} needs {}", where(), name, data.size(),
           shape.str(), shape.numel());
  arrays.push_back({std::string(name), shape, std::move(data)});
}

bool State::has(std::string_view key) const {
  for (const auto& [k, v] : meta)
    if (k == key) return true;
  return false;
}

const std::string& State::get_string(std::string_view key) const {
  for (const auto& [k, v] : meta)
    if (k == key) return v;
  throw Error(fmt::format("{} has no meta key '{}' (keys: {}; hint: was it written by an older "
                          "or different experiment?)",
                          where(), key, listed(meta, [](const auto& kv) { return kv.first; })));
}

namespace {
[[noreturn]] void not_a(const State& st, std::string_view key, const std::string& value,
                        std::string_view what) {
  throw Error(fmt::format("{}: meta '{}' is '{}', not {} (hint: the file was edited or damaged, "
                          "or written by something else)",
                          st.where(), key, shown(value), what));
}
}  // namespace

double State::get_double(std::string_view key) const {
  const std::string& v = get_string(key);
  double out = 0;
  if (!decode_double(v, out)) not_a(*this, key, v, "a number (a hex float such as 0x1.8p+1)");
  return out;
}

int64_t State::get_int(std::string_view key) const {
  const std::string& v = get_string(key);
  int64_t out = 0;
  if (!decode_whole(v, out)) not_a(*this, key, v, "a whole number");
  return out;
}

uint64_t State::get_u64(std::string_view key) const {
  const std::string& v = get_string(key);
  uint64_t out = 0;
  if (!decode_whole(v, out)) not_a(*this, key, v, "a whole number >= 0");
  return out;
}

bool State::get_bool(std::string_view key) const {
  const std::string& v = get_string(key);
  if (v != "0" && v != "1") not_a(*this, key, v, "a flag (0 or 1)");
  return v == "1";
}

std::vector<double> State::get_doubles(std::string_view key) const {
  const std::string& v = get_string(key);
  std::vector<double> out;
  std::string_view rest = v;
  while (!rest.empty()) {
    const size_t space = rest.find(' ');
    double x = 0;
    if (!decode_double(rest.substr(0, space), x) || space + 1 == rest.size())
      not_a(*this, key, v, "a list of numbers (hex floats separated by single spaces)");
    out.push_back(x);
    rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
  }
  return out;
}

Rng State::get_rng(std::string_view key) const {
  const std::string& v = get_string(key);
  Rng::State w{};
  if (!decode_rng(v, w))
    not_a(*this, key, v, "a random-number state (four whole numbers 'w0 w1 w2 w3')");
  Rng r;
  r.set_state(w);
  return r;
}

bool State::has_array(std::string_view name) const {
  for (const auto& a : arrays)
    if (a.name == name) return true;
  return false;
}

const StateArray& State::array(std::string_view name) const {
  for (const auto& a : arrays)
    if (a.name == name) return a;
  throw Error(fmt::format(
      "{} has no array '{}' ({} arrays: {}; hint: does the config match the one that wrote "
      "it?)",
      where(), name, arrays.size(), listed(arrays, [](const StateArray& a) { return a.name; })));
}

const std::vector<float>& State::get_array(std::string_view name, const Shape& expected) const {
  const StateArray& a = array(name);
  SB_CHECK(a.shape == expected,
           "{}: array '{}' has shape {}, expected {} (hint: does the config match the one that "
           "wrote it?)",
           where(), name, a.shape.str(), expected.str());
  return a.data;
}

void State::get_array(std::string_view name, const Shape& expected, std::span<float> out) const {
  const std::vector<float>& data = get_array(name, expected);
  SB_CHECK(out.size() == data.size(), "{}: array '{}': {} values read into room for {}", where(),
           name, data.size(), out.size());
  if (!data.empty()) std::memcpy(out.data(), data.data(), data.size() * sizeof(float));
}

}  // namespace seqbench::core
