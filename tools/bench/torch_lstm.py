#!/usr/bin/python3
"""PyTorch side of `make bench`: one LSTM training step on the pMNIST shape.

The step is the one tools/bench/lstm_step.cpp times for seqbench:
  zero grads -> LSTM over T steps -> Linear head on the last output -> CrossEntropyLoss
  -> backward -> clip_grad_norm_(1.0) -> Adam(lr 1e-3).
Two implementations (--impl):
  nn.LSTM        torch.nn.LSTM, the fused/cuDNN-style path PyTorch offers for a plain LSTM
  LSTMCell-loop  torch.nn.LSTMCell called once per time step from Python, which is how
                 custom recurrent cells (the papers' cells) have to run in PyTorch
Prints one line of key=value pairs (same keys as seqbench_bench_lstm) for run.sh.

Threads: torch.set_num_threads(--threads, default 2) and OPENBLAS_NUM_THREADS=1 (set
here before torch is imported unless the caller set it): nested OpenMP x OpenBLAS
threads made PyTorch 3-5x slower on these machines, and this is its best setting.
Run it with Debian's interpreter (/usr/bin/python3), which is where python3-torch lives.
"""
import argparse
import os
import resource
import statistics
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

try:
    import torch
except ImportError as e:
    print(f"torch_lstm.py: cannot import torch with {sys.executable} ({e}); "
          "hint: apt-get install python3-torch (make deps-bench) and run /usr/bin/python3",
          file=sys.stderr)
    sys.exit(1)

IMPLS = {"nn.LSTM": "pytorch-nn.LSTM", "LSTMCell-loop": "pytorch-LSTMCell-loop"}


class LastStepClassifier(torch.nn.Module):
    """x (T, B, I) -> logits (B, C) from the hidden state after the last step."""

    def __init__(self, impl, input_size, hidden, classes):
        super().__init__()
        self.impl = impl
        if impl == "nn.LSTM":
            self.rnn = torch.nn.LSTM(input_size, hidden)
        else:
            self.rnn = torch.nn.LSTMCell(input_size, hidden)
        self.head = torch.nn.Linear(hidden, classes)

    def forward(self, x):
        if self.impl == "nn.LSTM":
            y, _ = self.rnn(x)
            return self.head(y[-1])
        h = x.new_zeros(x.shape[1], self.rnn.hidden_size)
        c = h
        for t in range(x.shape[0]):
            h, c = self.rnn(x[t], (h, c))
        return self.head(h)


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--impl", choices=sorted(IMPLS), default="nn.LSTM")
    p.add_argument("--batch", type=int, default=100)
    p.add_argument("--T", type=int, default=784)
    p.add_argument("--input", type=int, default=1)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--steps", type=int, default=3, help="timed steps (the median is reported)")
    p.add_argument("--warmup", type=int, default=1, help="untimed steps first")
    p.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    if min(a.batch, a.T, a.input, a.hidden, a.classes, a.steps, a.threads) < 1 or a.warmup < 0:
        p.error("sizes, --steps and --threads must be >= 1 and --warmup >= 0")

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    model = LastStepClassifier(a.impl, a.input, a.hidden, a.classes)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    # One fixed batch: the data pipeline is not part of the step being timed.
    x = torch.rand(a.T, a.batch, a.input)
    y = torch.randint(0, a.classes, (a.batch,))

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.item()

    for _ in range(a.warmup):
        step()
    ms = []
    for _ in range(a.steps):
        t0 = time.perf_counter()
        loss = step()
        ms.append((time.perf_counter() - t0) * 1e3)

    print(f"impl={IMPLS[a.impl]} B={a.batch} T={a.T} I={a.input} H={a.hidden} "
          f"classes={a.classes} threads={torch.get_num_threads()} warmup={a.warmup} "
          f"steps={a.steps} ms_per_step={statistics.median(ms):.1f} ms_min={min(ms):.1f} "
          f"ms_max={max(ms):.1f} peak_rss_mb={peak_rss_mb():.1f} loss={loss:.4f}", flush=True)


if __name__ == "__main__":
    main()
