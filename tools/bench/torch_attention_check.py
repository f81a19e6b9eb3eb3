#!/usr/bin/python3
"""Recomputes seqbench's multi-head attention block in PyTorch from the same weights.

    build/tools/bench/seqbench_attention_export /tmp/mha.sbck --attention full
    /usr/bin/python3 tools/bench/torch_attention_check.py /tmp/mha.sbck

The checkpoint (docs/formats.md, read with tools/read_checkpoint.py) holds the block's
parameters, an input and an output gradient, and seqbench's output, input gradient and
parameter gradients. PyTorch recomputes them with autograd:
  qkv = src W_qkv^T + b_qkv  (W_qkv (3E, E): rows [q | k | v], each split into heads)
  o_h = softmax(q_h k_h^T / sqrt(Dh) + causal mask) v_h,   dst = [o_1 .. o_H] W_out^T + b_out
(full causal attention: only `--attention full` has a dense PyTorch counterpart.) Prints
the largest absolute and relative differences and exits 1 when one exceeds --tol.
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
try:
    import torch
    from read_checkpoint import load
except ImportError as e:
    print(f"torch_attention_check.py: {e} (hint: apt-get install python3-torch python3-numpy; "
          "run with /usr/bin/python3)", file=sys.stderr)
    sys.exit(1)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkpoint")
    p.add_argument("--tol", type=float, default=1e-4, help="max relative difference allowed")
    a = p.parse_args()
    meta, arr = load(a.checkpoint)
    if meta.get("attention") != "full":
        print(f"torch_attention_check.py: {a.checkpoint}: attention '{meta.get('attention')}' "
              "has no dense PyTorch counterpart (hint: export with --attention full)",
              file=sys.stderr)
        return 2
    B, N, E, H = (int(meta[k]) for k in ("B", "N", "E", "heads"))
    D = E // H
    t = {k: torch.tensor(v, dtype=torch.float64) for k, v in arr.items()}
    params = {k: t[k].clone().requires_grad_(True)
              for k in ("mha.qkv.w", "mha.qkv.b", "mha.out.w", "mha.out.b")}
    src = t["src"].clone().requires_grad_(True)
    qkv = src @ params["mha.qkv.w"].T + params["mha.qkv.b"]          # (B, N, 3E)
    q, k, v = (qkv[..., i * E:(i + 1) * E].reshape(B, N, H, D).transpose(1, 2) for i in range(3))
    s = q @ k.transpose(-1, -2) / math.sqrt(D)
    s = s.masked_fill(torch.triu(torch.ones(N, N, dtype=torch.bool), 1), float("-inf"))
    o = torch.softmax(s, dim=-1) @ v                                  # (B, H, N, D)
    dst = o.transpose(1, 2).reshape(B, N, E) @ params["mha.out.w"].T + params["mha.out.b"]
    dst.backward(t["ddst"])

    worst = 0.0
    rows = [("dst", dst.detach(), t["dst"]), ("dsrc", src.grad, t["dsrc"])]
    rows += [(f"grad {k}", params[k].grad, t["grad/" + k]) for k in params]
    for name, ref, ours in rows:
        diff = (ref - ours).abs().max().item()
        rel = diff / max(ref.abs().max().item(), 1e-12)
        worst = max(worst, rel)
        print(f"{name:16s} max |torch - seqbench| {diff:.3e}  relative to max |torch| {rel:.3e}")
    ok = worst <= a.tol
    print(f"attention_check: {'ok' if ok else 'FAILED'}: worst relative difference {worst:.3e} "
          f"(tolerance {a.tol:g}; B={B} N={N} E={E} heads={H})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
