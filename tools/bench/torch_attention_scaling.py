#!/usr/bin/python3
"""PyTorch side of the attention scaling benchmark: one forward + backward of full causal attention.

The step tools/bench/attention_scaling.cpp times for seqbench's full core, written the way
a plain PyTorch model does it, with autograd:
  s = q k^T / sqrt(D);  s = s.masked_fill(future, -inf);  p = softmax(s, -1);  o = p v
  o.backward(ddst)   (q, k, v (B, H, n, D) leaves with requires_grad; grads cleared per step)
The causal mask (n, n bools) is built once before timing, as a model's registered buffer.
This materialises the (B, H, n, n) scores, the masked scores and the probabilities, and
autograd keeps the probabilities for backward: the memory that seqbench's blocked core
avoids.
Prints one line of key=value pairs with the keys of seqbench_bench_attention (run.sh parses
both): ms / fwd_ms / bwd_ms are medians over the timed steps (--steps, or more until they
add up to --min-ms; steps= says how many); peak_rss_mb is getrusage's
peak (the interpreter and libraries included, ~250 MB); base_rss_mb is the resident set
before the first step (inputs and mask allocated); nxn_mb is one (B, H, n, n) float matrix.
Threads: torch.set_num_threads(--threads, default 1), OPENBLAS_NUM_THREADS=1 (set here
before torch is imported unless the caller set it). Run it with /usr/bin/python3, where
Debian's python3-torch lives.
"""
import argparse
import math
import os
import resource
import statistics
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

try:
    import torch
except ImportError as e:
    print(f"torch_attention_scaling.py: cannot import torch with {sys.executable} ({e}); "
          "hint: apt-get install python3-torch (make deps-bench) and run /usr/bin/python3",
          file=sys.stderr)
    sys.exit(1)


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def current_rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1024.0 * 1024.0)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1024, help="sequence length n")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--heads", type=int, default=1)
    p.add_argument("--dim", type=int, default=64, help="head dim D")
    p.add_argument("--steps", type=int, default=3,
                   help="timed steps at least (the median is reported)")
    p.add_argument("--min-ms", type=float, default=300,
                   help="more timed steps (up to 100) until they take this long")
    p.add_argument("--warmup", type=int, default=1, help="untimed steps first")
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    if min(a.n, a.batch, a.heads, a.dim, a.steps, a.threads) < 1 or a.warmup < 0:
        p.error("sizes, --steps and --threads must be >= 1, --warmup >= 0")

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    shape = (a.batch, a.heads, a.n, a.dim)
    q, k, v = (torch.randn(shape, requires_grad=True) for _ in range(3))
    ddst = torch.randn(shape)
    future = torch.triu(torch.ones(a.n, a.n, dtype=torch.bool), diagonal=1)
    scale = 1.0 / math.sqrt(a.dim)
    base_rss = current_rss_mb()

    # At least --steps timed steps, more (up to 100) until they add up to --min-ms.
    total, fwd, bwd = [], [], []
    i = 0
    while i < a.warmup + a.steps or (sum(total) < a.min_ms and i < a.warmup + max(a.steps, 100)):
        for t in (q, k, v):
            t.grad = None
        t0 = time.perf_counter()
        s = torch.matmul(q, k.transpose(-2, -1)) * scale
        o = torch.matmul(torch.softmax(s.masked_fill(future, float("-inf")), dim=-1), v)
        t1 = time.perf_counter()
        o.backward(ddst)
        t2 = time.perf_counter()
        i += 1
        if i <= a.warmup:
            continue
        fwd.append((t1 - t0) * 1e3)
        bwd.append((t2 - t1) * 1e3)
        total.append((t2 - t0) * 1e3)
    checksum = float(o.detach().sum() + q.grad.sum())
    if not math.isfinite(checksum):
        print(f"torch_attention_scaling.py: non-finite output at n={a.n}", file=sys.stderr)
        sys.exit(1)
    nxn = a.batch * a.heads * a.n * a.n * 4 / (1024.0 * 1024.0)
    print(f"impl=pytorch kind=full B={a.batch} H={a.heads} N={a.n} D={a.dim} "
          f"threads={torch.get_num_threads()} warmup={a.warmup} steps={len(total)} "
          f"ms={statistics.median(total):.2f} ms_min={min(total):.2f} ms_max={max(total):.2f} "
          f"fwd_ms={statistics.median(fwd):.2f} bwd_ms={statistics.median(bwd):.2f} "
          f"peak_rss_mb={peak_rss_mb():.1f} base_rss_mb={base_rss:.1f} nxn_mb={nxn:.1f} "
          f"checksum={checksum:.6g}", flush=True)


if __name__ == "__main__":
    main()
