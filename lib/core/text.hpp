// Small string helpers shared across the library and the apps.
#pragma once

#include <string>
#include <string_view>

namespace seqbench::core {

// s without leading and trailing blanks (spaces, tabs, CR, LF).
std::string trim(std::string_view s);

// s with ASCII letters in lower case; other bytes (UTF-8 included) unchanged.
std::string lower(std::string_view s);

}  // namespace seqbench::core
