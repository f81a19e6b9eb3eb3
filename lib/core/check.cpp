#include "core/check.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace seqbench::core {

namespace {
bool verbose_default() {
#ifndef NDEBUG
  return true;
#else
  const char* v = std::getenv("SEQBENCH_VERBOSE");
  return v && *v && std::strcmp(v, "0") != 0;
#endif
}
std::atomic<bool>& verbose_flag() {
  static std::atomic<bool> on{verbose_default()};
  return on;
}
}  // namespace

std::string one_line(std::string_view msg) {
  std::string out;
  out.reserve(msg.size());
  for (const char ch : msg) {
    const auto byte = static_cast<unsigned char>(ch);
    if (ch == '\n')
      out += "\\n";
    else if (ch == '\r')
      out += "\\r";
    else if (ch == '\t')
      out += ' ';
    else if (byte < 0x20 || byte == 0x7f)
      out += fmt::format("\\x{:02x}", byte);
    else
      out += ch;
  }
  return out;
}

void set_verbose_errors(bool on) { verbose_flag() = on; }
bool verbose_errors() { return verbose_flag(); }

void check_failed(const char* file, int line, const char* cond, const std::string& msg) {
  if (!verbose_errors()) throw Error(msg);
  // Keep only the path below lib/ or apps/ so messages stay short and stable.
  const char* shown = file;
  for (const char* root : {"/lib/", "/apps/", "/tests/", "/tools/"}) {
    if (const char* p = std::strstr(file, root)) {
      shown = p + 1;
      break;
    }
  }
  throw Error(fmt::format("{}:{}: {} [check: {}]", shown, line, msg, cond));
}

}  // namespace seqbench::core
