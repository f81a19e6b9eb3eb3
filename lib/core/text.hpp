// Small string helpers shared across the library and the apps: trimming, case folding,
// joining, and the "did you mean" suggestion for a mistyped name.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace seqbench::core {

// s with ASCII letters in lower case; other bytes (UTF-8 included) unchanged.
std::string lower(std::string_view s);
// s without leading and trailing blanks (spaces, tabs, CR, LF).
std::string trim(std::string_view s);
std::string join(const std::vector<std::string>& items, std::string_view sep);
// "a", "a and b", "a, b and c".
std::string join_and(const std::vector<std::string>& items);
// Optimal string alignment distance: edits plus adjacent transpositions ("modle" -> "model").
std::size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `name` (case-insensitively), or "" when none is within about
// one edit per three characters ("lrr" -> "lr", but not "lr" -> "T").
std::string nearest(const std::string& name, const std::vector<std::string>& candidates);
// "<what> '<name>' is unknown (did you mean '<x>'?; have: a, b, c)": the message for a
// name that is not among `names`; the suggestion appears when one is close.
std::string unknown_name(std::string_view what, const std::string& name,
                         const std::vector<std::string>& names);

}  // namespace seqbench::core
