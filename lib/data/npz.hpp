// NumPy arrays on disk: .npy files (one array) and .npz archives (a zip of .npy members,
// as np.savez and np.savez_compressed write them).
//
// .npy (format versions 1.0, 2.0 and 3.0): magic "\x93NUMPY", major and minor version
// bytes, the header length (u16 little-endian in 1.0, u32 in 2.0 / 3.0), then a Python
// dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } padded with
// spaces and a newline, then the raw data in C order.
// Supported dtypes: |u1 |i1 |b1 <u2 <i2 <u4 <i4 <u8 <i8 <f4 <f8 (little-endian or byte
// data). Big-endian dtypes, structured dtypes and fortran_order True are rejected.
//
// .npz: the zip container is read by libzip (zip64 included, as numpy writes it for
// members over 4 GiB); members stored (method 0) or deflated (method 8) are read, and
// libzip checks each one's CRC-32 and size. The sizes in the central directory are
// checked against the file before a member's buffer is allocated. Member names are as
// numpy writes them: "data.npy" for the key "data"; read_npz_member accepts either
// spelling.
//
// Every error is a core::Error whose one-line message names the file (and the member)
// and what is wrong: missing file, bad magic, truncated, unknown dtype, fortran order,
// missing member, unsupported compression, corrupt deflate stream, CRC mismatch.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace seqbench::data {

struct NpyArray {
  std::string descr;           // as in the header, e.g. "|u1", "<i8", "<f4"
  std::vector<int64_t> shape;  // () for a scalar
  std::string bytes;           // the raw data, C order, little-endian, numel * word bytes

  int64_t numel() const;
  int64_t word_bytes() const;  // from descr: 1, 2, 4 or 8
  char kind() const { return descr.size() >= 2 ? descr[1] : '?'; }  // 'u', 'i', 'b' or 'f'
  const uint8_t* u8() const { return reinterpret_cast<const uint8_t*>(bytes.data()); }
  // Every element converted; integer and bool arrays only for as_int64 (throws
  // core::Error naming `what` for a float array).
  std::vector<int64_t> as_int64(const std::string& what = "array") const;
  std::vector<double> as_double() const;
};

// Parses an .npy image held in memory; `where` names it in errors ("'f.npz' member 'x'").
NpyArray parse_npy(std::string bytes, const std::string& where);
NpyArray read_npy(const std::string& path);

// Member names of an .npz archive, in archive order, as stored ("data.npy").
std::vector<std::string> npz_members(const std::string& path);
// The bytes an .npz holds once its members are inflated (their sizes as the archive's
// central directory states them, each already checked against what deflate can produce);
// what loading it costs in memory, not the file's size. Throws like npz_members.
uint64_t npz_inflated_bytes(const std::string& path);
// One member: `name` is the key ("data") or the stored name ("data.npy").
NpyArray read_npz_member(const std::string& path, const std::string& name);
// Every member, keyed by the key without ".npy".
std::map<std::string, NpyArray> read_npz(const std::string& path);

// Writes an .npy image (format 1.0) of raw little-endian data: for tests and tools.
std::string make_npy(const std::string& descr, const std::vector<int64_t>& shape,
                     const std::string& bytes);

}  // namespace seqbench::data
