// Pieces of the self-contained HTML pages the reports write (paper reports, claims).
#pragma once

#include <string>

namespace seqbench::report {

// Text safe inside HTML elements and double-quoted attributes: & < > " escaped.
std::string html_escape(const std::string& s);
// Standard base64 (RFC 4648, padded), for PNGs embedded as data: URIs.
std::string base64(const std::string& bytes);

}  // namespace seqbench::report
