#include "report/json.hpp"

#include <cmath>

namespace seqbench::report {

std::string json_quote(std::string_view s) {
  std::string out = "\"";
  out.reserve(s.size() + 2);
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        // DEL is legal raw JSON, but escaping it keeps the output printable and readable
        // as YAML too (YAML forbids it raw).
        if (c < 0x20 || c == 0x7f)
          out += fmt::format("\\u{:04x}", c);
        else
          out += ch;
    }
  }
  return out + "\"";
}

JsonObject& JsonObject::set_raw(const std::string& k, std::string encoded) {
  for (auto& [key, value] : items_) {
    if (key == k) {
      value = std::move(encoded);
      return *this;
    }
  }
  items_.emplace_back(k, std::move(encoded));
  return *this;
}

JsonObject& JsonObject::set(const std::string& k, double v) {
  return set_raw(k, std::isfinite(v) ? fmt::format("{}", v) : "null");
}
JsonObject& JsonObject::set(const std::string& k, int64_t v) {
  return set_raw(k, fmt::format("{}", v));
}
JsonObject& JsonObject::set(const std::string& k, const std::string& v) {
  return set_raw(k, json_quote(v));
}
JsonObject& JsonObject::set(const std::string& k, bool v) {
  return set_raw(k, v ? "true" : "false");
}

std::string JsonObject::str() const {
  std::string out = "{";
  for (size_t i = 0; i < items_.size(); ++i) {
    if (i) out += ", ";
    out += json_quote(items_[i].first) + ": " + items_[i].second;
  }
  return out + "}";
}

std::string JsonObject::pretty() const {
  if (items_.empty()) return "{}\n";
  std::string out = "{\n";
  for (size_t i = 0; i < items_.size(); ++i) {
    out += "  " + json_quote(items_[i].first) + ": " + items_[i].second;
    out += i + 1 < items_.size() ? ",\n" : "\n";
  }
  return out + "}\n";
}

}  // namespace seqbench::report
