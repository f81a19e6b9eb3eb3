#include "report/json.hpp"

#include <cmath>
#include <cstdint>

namespace seqbench::report {

namespace {
std::string dump(const nlohmann::ordered_json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}
}  // namespace

JsonObject& JsonObject::set(const std::string& k, double v) {
  // Below 1e16 a whole double is an exact integer; as one it prints without ".0".
  if (std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 1e16)
    j_[k] = int64_t(v);
  else
    j_[k] = v;  // nlohmann writes a non-finite double as null
  return *this;
}

std::string JsonObject::str() const {
  // dump() would leave out the blanks after ',' and ':'.
  std::string out = "{";
  for (const auto& [k, v] : j_.items())
    out += (out.size() > 1 ? ", " : "") + dump(k) + ": " + dump(v);
  return out + "}";
}

std::string JsonObject::pretty() const { return dump(j_, 2) + "\n"; }

}  // namespace seqbench::report
