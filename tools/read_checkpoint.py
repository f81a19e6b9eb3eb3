#!/usr/bin/env python3
"""Read a seqbench checkpoint (.sbck) with numpy. Format: docs/formats.md.

    python3 tools/read_checkpoint.py results/copy/<run-id>/checkpoint.sbck

prints the metadata and each array's name, shape and mean. As a module:

    from read_checkpoint import load
    meta, arrays = load("checkpoint.sbck")   # dict[str, str], dict[str, np.ndarray]
"""
import json
import struct
import sys

import numpy as np

MAGIC = b"SEQBCKPT"
VERSION = 1


def load(path):
    """Returns (meta, {name: float32 ndarray}); raises ValueError on a corrupt file."""
    with open(path, "rb") as f:
        blob = f.read()
    if blob[:8] != MAGIC:
        raise ValueError(f"{path}: not a seqbench checkpoint (bad magic)")
    if len(blob) < 16:
        raise ValueError(f"{path}: truncated preamble")
    version, header_len = struct.unpack_from("<II", blob, 8)
    if version != VERSION:
        raise ValueError(f"{path}: unsupported checkpoint version {version}")
    header = json.loads(blob[16:16 + header_len].decode("utf-8"))
    data_start = 16 + header_len
    if len(blob) - data_start != header["data_bytes"]:
        raise ValueError(f"{path}: expected {header['data_bytes']} data bytes, "
                         f"found {len(blob) - data_start}")
    arrays = {}
    for a in header["arrays"]:
        x = np.frombuffer(blob, dtype="<f4", count=a["count"], offset=data_start + a["offset"])
        arrays[a["name"]] = x.reshape(a["shape"])
    return header["meta"], arrays


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    meta, arrays = load(argv[1])
    for k, v in meta.items():
        print(f"meta {k} = {v}")
    for name, x in arrays.items():
        mean = float(x.mean()) if x.size else float("nan")
        print(f"{name} {tuple(x.shape)} mean {mean:.6g}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
