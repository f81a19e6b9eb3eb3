// Checkpoints (.sbck): named float32 arrays plus string metadata, in a format simple
// enough to read with a dozen lines of numpy (tools/read_checkpoint.py, docs/formats.md):
//
//   8 bytes   magic "SEQBCKPT"
//   uint32 LE version (1)
//   uint32 LE header length N
//   N bytes   UTF-8 JSON header (space-padded so the data starts 64-byte aligned)
//   raw little-endian float32 data of all arrays back to back
//
// header: {"meta": {"key": "value", ...},
//          "arrays": [{"name": "...", "shape": [..], "offset": <bytes from the start of
//                      the data section>, "count": n}, ...],
//          "data_bytes": total, "sha256": "<hex digest of the contents>"}
// Meta values are UTF-8 strings so 64-bit integers (RNG state words, step counters) survive
// readers that parse JSON numbers as doubles; core/state.hpp fixes how each kind of value
// is written as text. The header is written and read with nlohmann-json (one line,
// keys in this order); checkpoints of older builds, whose header spread over several
// lines, read the same.
#pragma once

#include <string>

#include "core/state.hpp"

namespace seqbench::train {

// A checkpoint is the state container (core/state.hpp): ordered meta, named float arrays,
// typed put/get and scopes; its origin is the file it was loaded from (empty if built in
// memory), which every error about it names.
using Checkpoint = core::State;
using NamedArray = core::StateArray;

// Writes atomically (core::write_file_atomic): an interrupted save leaves the previous
// checkpoint intact. Throws on duplicate names/keys or an array whose data size does
// not match its shape. With `previous`, the checkpoint that path held becomes `previous`
// (core::write_file_atomic_keep_previous: a rename, so the two are always separate files).
void save_checkpoint(const std::string& path, const Checkpoint& ck,
                     const std::string& previous = {});

// Reads a checkpoint; every error is one line naming the path: missing file, bad magic
// ("not a seqbench checkpoint"), unsupported version, truncated header or data
// ("truncated: expected N data bytes, found M"), malformed header.
Checkpoint load_checkpoint(const std::string& path);

}  // namespace seqbench::train
