#include "core/check.hpp"

#include <cstring>

namespace seqbench::core {

void check_failed(const char* file, int line, const char* cond, const std::string& msg) {
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
