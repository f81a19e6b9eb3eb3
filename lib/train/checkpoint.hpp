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
//          "data_bytes": total}
// Meta values are strings so 64-bit integers (RNG state words, step counters) survive
// readers that parse JSON numbers as doubles. The header is parsed back with yaml-cpp
// (JSON is valid YAML flow syntax), so no JSON library is needed.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/check.hpp"
#include "core/tensor.hpp"

namespace seqbench::train {

struct NamedArray {
  std::string name;
  core::Shape shape;  // rank 0..4; data.size() == shape.numel()
  std::vector<float> data;
};

struct Checkpoint {
  std::vector<std::pair<std::string, std::string>> meta;  // ordered, unique keys
  std::vector<NamedArray> arrays;                         // unique names
  std::string path;  // file it was loaded from (empty if built in memory); for messages

  // Replaces the value of an existing key in place, else appends.
  void set_meta(const std::string& k, const std::string& v);
  // Throws naming the missing key, the file and the keys present.
  const std::string& meta_at(const std::string& k) const;
  bool has_meta(const std::string& k) const;
  // The value as a whole number; throws naming the key, the value and the file when it
  // is not one (or does not fit).
  int64_t meta_int(const std::string& k) const;
  uint64_t meta_u64(const std::string& k) const;

  // Appends an array; throws if the name is taken or data.size() != shape.numel().
  void add_array(std::string name, core::Shape shape, std::vector<float> data);
  // Throws naming the missing array and the file.
  const NamedArray& array(const std::string& name) const;
  bool has_array(const std::string& name) const;
};

// A layer's extra state (meta pairs and float arrays, e.g. nn::TransformerState<float>)
// stored under `prefix` in a checkpoint, and read back into a state of the same layout:
// the caller's `st` names the entries it needs; a missing one or a shape that differs
// throws naming the checkpoint.
template <class State>
void put_state(Checkpoint& ck, const std::string& prefix, const State& st) {
  for (const auto& [k, v] : st.meta) ck.set_meta(prefix + k, v);
  for (const auto& a : st.arrays) ck.add_array(prefix + a.name, a.shape, a.data);
}
template <class State>
void get_state(const Checkpoint& ck, const std::string& prefix, State& st) {
  for (auto& [k, v] : st.meta) v = ck.meta_at(prefix + k);
  for (auto& a : st.arrays) {
    const auto& saved = ck.array(prefix + a.name);
    SB_CHECK(saved.shape == a.shape, "{}: {} has shape {}, the model expects {}", ck.path,
             saved.name, saved.shape.str(), a.shape.str());
    a.data = saved.data;
  }
}

// Writes atomically (core::write_file_atomic): an interrupted save leaves the previous
// checkpoint intact. Throws on duplicate names/keys or an array whose data size does
// not match its shape.
void save_checkpoint(const std::string& path, const Checkpoint& ck);

// Reads a checkpoint; every error is one line naming the path: missing file, bad magic
// ("not a seqbench checkpoint"), unsupported version, truncated header or data
// ("truncated: expected N data bytes, found M"), malformed header.
Checkpoint load_checkpoint(const std::string& path);

}  // namespace seqbench::train
