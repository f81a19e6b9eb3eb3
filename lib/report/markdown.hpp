// Markdown tables for the paper-style reports (`seqbench report`), readable both
// rendered and as plain text: every column padded to one width, numbers right-aligned.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace seqbench::report {

// "0.98", "-1e-05", "12%", "nan", "0.91 ± 0.02" look numeric; "lstm", "", "—" do not.
bool is_numeric_cell(std::string_view s);

// A column whose non-empty body cells all look numeric is right-aligned ("---:") and
// its numbers padded on the left; other columns are left-aligned. '|' in a cell is
// escaped, line breaks become spaces and '&', '<', '>' become "&amp;", "&lt;", "&gt;"
// (rendered, they show as themselves; no cell can inject HTML). Widths count UTF-8 code
// points of the escaped text, so "±" pads like one character.
// Every row must have header.size() cells (else core::Error).
std::string markdown_table(const std::vector<std::string>& header,
                           const std::vector<std::vector<std::string>>& rows);

// "92.31" for one value, "92.31 ± 0.40" (mean ± sample standard deviation) for several;
// decimals digits after the point. values must not be empty.
std::string mean_sd(const std::vector<double>& values, int decimals);

// The kinds of a head-group spec, for matching a run to a paper's number:
// "local:2,routing:2" -> "local+routing", "full:4" -> "full" (kinds in order of
// appearance, each once). Not validated: runs.csv holds specs the apps already checked.
std::string attention_kinds(const std::string& attention);

}  // namespace seqbench::report
