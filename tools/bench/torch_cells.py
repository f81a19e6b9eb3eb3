#!/usr/bin/python3
"""PyTorch side of the custom-cell benchmark: one training step of a papers' cell.

The step is the one tools/bench/cell_step.cpp times for seqbench:
  zero grads -> the cell over all steps (a Python loop, as the papers' code runs it)
  -> Linear head -> CrossEntropyLoss -> backward -> clip_grad_norm_(1.0) -> Adam(lr 1e-3)
  (-> the stability projection, stable_lstm only).
Cells (--cell), each with the equations of our C++ cell (lib/nn/cells, lib/nn/recurrent/attentive.hpp)
and of docs/papers.md:
  nn.LSTM        torch.nn.LSTM, PyTorch's fused path for a plain LSTM (its fastest; no loop)
  lstm           torch.nn.LSTMCell per step
  momentum_lstm  Nguyen et al. 2020, the official MomentumLSTMCell's structure (x2h and h2h
                 Linear layers called every step): v_t = mu v_{t-1} + s (x_t W_x + b_x),
                 gates = v_t + h_{t-1} W_h + b_h, then the usual LSTM
  adam_lstm      as momentum_lstm with m_t = beta m_{t-1} + (1-beta) p_t*p_t (p_t = x_t W_x
                 + b_x), gates = v_t / sqrt(m_t + eps) + h_{t-1} W_h + b_h
  rmsprop_lstm   adam_lstm with mu = 0: gates = s p_t / sqrt(m_t + eps) + h_{t-1} W_h + b_h
  sr_lstm        SRLSTM, Nesterov momentum with scheduled restart: v_t = c_t v_{t-1} + s p_t,
                 c_t = (k-1)/(k+2), k = (t mod restart) + 1 for the 0-based step t (so c_t = 0
                 at t = 0, restart, 2 restart, ...), gates as momentum_lstm
  stable_lstm    Miller & Hardt 2019: torch.nn.LSTMCell, and after every Adam step the
                 recurrent weights projected as lib/optim/projection.hpp's "paper" variant
                 does (lambda = 1, input bound 1, forget-bias bound = current max |b_f|)
  rel_lstm       Kerg et al. 2020 relevancy screening: additive attention over the short-term
                 buffer (last nu states) and the relevant set (rho slots), s_t = (h_{t-1} +
                 c_t)/2, the LSTM's gates read s_t instead of h_{t-1}. Batched over B (the
                 official code loops over examples too, which docs/papers.md lists as a pitfall);
                 the time loop stays in Python.
Workloads (--task):
  pmnist  x (T, B, 1) uniform pixels, head on the last step, 10 classes (the pMNIST shape)
  copy    the copy task of lib/data/synthetic.hpp: L = T + 20 steps, 10 symbols from
          {1..8}, one-hot inputs over 10 values, 9 classes, head and CE on every step
--references prints the cells above (run.sh runs those that `seqbench list` registers).
Prints one line of key=value pairs (same keys as seqbench_bench_cell) for run.sh; loss0 is
the first step's loss (at init, ln(classes) for both libraries), loss the last one's.

--check FILE recomputes, in float64 from the same weights, x and w, the forward of the cell
alone (y (T, B, H), no head) and the backward of loss = sum(w * y) that `seqbench_bench_cell
--dump FILE` wrote with the same --cell, --T, --batch, --input, --hidden (and --nu, --rho),
and prints the worst difference of y, dx and every parameter gradient (max |ours - torch|
over max |torch|, per tensor; ours float32); it exits 1 above --tol (run.sh's numerical
check of the cells, tests/cli/cell_torch_check_test.cpp). Our weights are loaded into the
references above through our_params(), which spells out each name and layout: ours are
(in, out) matrices (x W), PyTorch's Linear and LSTMCell weights (out, in), so w_x and w_h go
in transposed; an LSTMCell's two biases are b and zero (our one b), and so on.

Threads: torch.set_num_threads(--threads, default 2). --threads may be a list ("2,1"): the
warm-up steps run at the first count, then --steps are timed at each count in turn and one
line is printed per count (run.sh's probe of the best setting; --stop-above-ms and
--stop-factor end a count's timing early after a step far slower than the best, so that a
collapsing candidate costs one step). The OpenBLAS that torch calls reads
OPENBLAS_NUM_THREADS, OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE from the environment when it
loads; this script sets none of them (run.sh chooses), and its line
reports blas_threads (OPENBLAS_NUM_THREADS, "team" when unset: OpenBLAS then follows the
OpenMP team outside torch's own parallel regions) and blas_core (the kernel set OpenBLAS
picked, openblas_get_corename()).
Run it with Debian's interpreter (/usr/bin/python3), which is where python3-torch lives.
"""
import argparse
import math
import os
import statistics
import sys
import time

from torch_common import blas_core, peak_rss_mb

try:
    import torch
    import torch.nn.functional as F
except ImportError as e:
    print(f"torch_cells.py: cannot import torch with {sys.executable} ({e}); "
          "hint: apt-get install python3-torch (make deps-bench) and run /usr/bin/python3",
          file=sys.stderr)
    sys.exit(1)

# Defaults of lib/nn/model_config.hpp, so both sides run the same cell.
MU, STEP, BETA, EPS, RESTART = 0.6, 0.6, 0.1, 1e-16, 2
# The copy task of lib/data/synthetic.hpp (TaskConfig defaults).
COPY_LEN, N_SYMBOLS = 10, 8


def uniform_init_(module, hidden):
    """PyTorch's LSTMCell default, U(-1/sqrt(H), 1/sqrt(H)) for every parameter, as our
    C++ cells' init() (the official MomentumLSTMCell's reset_parameters does the same)."""
    a = 1.0 / math.sqrt(hidden)
    for p in module.parameters():
        torch.nn.init.uniform_(p, -a, a)


def lstm_update(a, c):
    """a (B, 4H) pre-activations in gate order i, f, c~, o; c (B, H) -> h, c."""
    i, f, g, o = a.chunk(4, 1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


class LSTMLoop(torch.nn.Module):
    """torch.nn.LSTMCell once per step; x (T, B, I) -> list of h_t (B, H)."""

    def __init__(self, input_size, hidden):
        super().__init__()
        self.cell = torch.nn.LSTMCell(input_size, hidden)

    def forward(self, x):
        h = x.new_zeros(x.shape[1], self.cell.hidden_size)
        c = h
        hs = []
        for t in range(x.shape[0]):
            h, c = self.cell(x[t], (h, c))
            hs.append(h)
        return hs


class MomentumLSTMLoop(torch.nn.Module):
    """The momentum family of Nguyen et al. 2020 (no bias correction), the official cell's
    x2h / h2h layers called every step; x (T, B, I) -> list of h_t (B, H). kind:
      momentum          v_t = MU v_{t-1} + s p_t, p_t = x2h(x_t);  a_t = v_t + h2h(h_{t-1})
      nesterov_restart  v_t = c_t v_{t-1} + s p_t, c_t = (k-1)/(k+2), k = t mod RESTART + 1
      adam              v_t as momentum; m_t = BETA m_{t-1} + (1-BETA) p_t^2;
                        a_t = v_t / sqrt(m_t + EPS) + h2h(h_{t-1})
      rmsprop           adam with MU = 0
    then the LSTM update of a_t (gate order i, f, c~, o)."""

    def __init__(self, input_size, hidden, kind):
        super().__init__()
        if kind not in ("momentum", "nesterov_restart", "adam", "rmsprop"):
            raise ValueError(f"unknown momentum kind {kind!r}")
        self.hidden, self.kind = hidden, kind
        self.x2h = torch.nn.Linear(input_size, 4 * hidden)  # W_x, b_x (inside the momentum)
        self.h2h = torch.nn.Linear(hidden, 4 * hidden)      # W_h, b_h
        uniform_init_(self, hidden)

    def coefficient(self, t):
        """The coefficient of v_{t-1} at the 0-based step t."""
        if self.kind == "rmsprop":
            return 0.0
        if self.kind == "nesterov_restart":
            k = (t % RESTART if RESTART > 0 else t) + 1
            return (k - 1) / (k + 2)
        return MU

    def forward(self, x):
        B = x.shape[1]
        h = x.new_zeros(B, self.hidden)
        c = h
        v = x.new_zeros(B, 4 * self.hidden)
        m = v
        adaptive = self.kind in ("adam", "rmsprop")
        hs = []
        for t in range(x.shape[0]):
            p = self.x2h(x[t])
            v = self.coefficient(t) * v + STEP * p
            if adaptive:
                m = BETA * m + (1.0 - BETA) * p * p
                a = v / torch.sqrt(m + EPS) + self.h2h(h)
            else:
                a = v + self.h2h(h)
            h, c = lstm_update(a, c)
            hs.append(h)
        return hs


class RelLSTMLoop(torch.nn.Module):
    """RelLSTM (relevancy screening); equations and selection rules of lib/nn/recurrent/attentive.hpp:
      e_i = v . tanh(s_{t-1} V_a + h_i U_a) over A_t = relevant set ∪ buffer {t-nu .. t-1},
      alpha = softmax(e), c_t = sum_i alpha_i h_i, s_t = (h_{t-1} + c_t) / 2 (t >= 1; s_0 = 0)
      gates = x_t W_x + b + s_t W_h (an LSTMCell fed s_t in place of h_{t-1}).
    Relevance of a state = attention it received while in the buffer (detached). When state
    t-nu-1 leaves the buffer it takes the next empty slot, else replaces the lowest-scored
    slot (first on ties) if its score is strictly higher; every batch row has its own set.
    h_i U_a is computed once per state, as the C++ layer does. With count_swaps set (--check;
    not in the timed step), self.swaps counts the (row, step) pairs where a state took a
    full set's slot."""

    def __init__(self, input_size, hidden, nu, rho):
        super().__init__()
        self.hidden, self.nu, self.rho = hidden, nu, rho
        self.cell = torch.nn.LSTMCell(input_size, hidden)
        self.u_a = torch.nn.Parameter(torch.empty(hidden, hidden))
        self.v_a = torch.nn.Parameter(torch.empty(hidden, hidden))
        self.v = torch.nn.Parameter(torch.empty(hidden))
        self.count_swaps, self.swaps = False, 0
        uniform_init_(self, hidden)

    def forward(self, x):
        T, B = x.shape[0], x.shape[1]
        H, nu, rho = self.hidden, self.nu, self.rho
        s = x.new_zeros(B, H)  # s_0 = s_{-1}: no attention at t = 0
        c = s
        hs, hus = [], []
        score = x.new_zeros(T, B)  # relevance, a constant for autograd
        slot_score = x.new_zeros(B, rho)
        rel_h = x.new_zeros(B, rho, H)   # the relevant states, differentiable
        rel_hu = x.new_zeros(B, rho, H)  # and their h U_a
        filled = 0  # slots fill in order, so every row has the same number filled
        for t in range(T):
            if t > 0:
                leaving = t - nu - 1
                if leaving >= 0 and rho > 0:
                    cand = score[leaving]
                    if filled < rho:
                        take = x.new_zeros(B, rho, dtype=torch.bool)
                        take[:, filled] = True
                        filled += 1
                    else:
                        low_score, low = slot_score.min(1)
                        take = F.one_hot(low, rho).bool() & (cand > low_score).unsqueeze(1)
                        if self.count_swaps:
                            self.swaps += int(take.sum())
                    slot_score = torch.where(take, cand.unsqueeze(1), slot_score)
                    take3 = take.unsqueeze(2)
                    rel_h = torch.where(take3, hs[leaving].unsqueeze(1), rel_h)
                    rel_hu = torch.where(take3, hus[leaving].unsqueeze(1), rel_hu)
                lo = max(0, t - nu)
                keys_h = torch.stack(hs[lo:t], 1)  # (B, nb, H) buffer, oldest first
                keys_hu = torch.stack(hus[lo:t], 1)
                if filled:
                    keys_h = torch.cat((rel_h[:, :filled], keys_h), 1)  # (B, K, H)
                    keys_hu = torch.cat((rel_hu[:, :filled], keys_hu), 1)
                q = s @ self.v_a  # the query is the previous s
                e = torch.tanh(q.unsqueeze(1) + keys_hu) @ self.v  # (B, K)
                alpha = torch.softmax(e, 1)
                ctx = torch.bmm(alpha.unsqueeze(1), keys_h).squeeze(1)
                s = 0.5 * (hs[t - 1] + ctx)
                score[lo:t] += alpha[:, filled:].detach().t()
            h, c = self.cell(x[t], (s, c))
            hs.append(h)
            if t + 1 < T:
                hus.append(h @ self.u_a)
        return hs


@torch.no_grad()
def project_stable_lstm(cell, lam=1.0, input_bound=1.0, slack=1e-6):
    """lib/optim/projection.hpp, variant "paper": with inf-norms of the gate matrices
    (max row l1 norm of PyTorch's (4H, H) weight_hh blocks = max column l1 of ours),
      lf = sigmoid(|W_f| + |U_f| B_x + |b_f|),
      B(W) = lf + |W_i|/4 + |W_z| + |W_f| / (4 (1 - lf)) + |W_o|/4  <=  lambda.
    When violated, find the largest s with B(s * norms) <= lambda by bisection and clip the
    l1 norm of every row of gate block g (and of the forget block of weight_ih) to s times
    that block's norm. Biases are not touched."""
    H = cell.hidden_size
    row_h = cell.weight_hh.abs().sum(1).double()         # (4H)
    row_xf = cell.weight_ih[H:2 * H].abs().sum(1).double()  # (H)
    norms = [row_h[g * H:(g + 1) * H].max().item() for g in range(4)] + [row_xf.max().item()]
    bf = (cell.bias_ih[H:2 * H] + cell.bias_hh[H:2 * H]).abs().max().item()

    def bound(k):
        wi, wf, wz, wo, uf = (k * n for n in norms)
        lf = 1.0 / (1.0 + math.exp(-(wf + uf * input_bound + bf)))
        return math.inf if lf >= 1.0 else lf + wi / 4 + wz + wf / (4 * (1 - lf)) + wo / 4

    if bound(1.0) <= lam * (1 + slack):
        return
    if not bound(0.0) < lam:
        raise ValueError(f"stable_lstm: lambda {lam} cannot be met with forget bias {bf}")
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if bound(mid) <= lam:
            lo = mid
        else:
            hi = mid
    for g in range(4):
        rows = row_h[g * H:(g + 1) * H]
        budget = lo * norms[g]
        scale = torch.where(rows > budget, budget / rows, torch.ones_like(rows))
        cell.weight_hh[g * H:(g + 1) * H] *= scale.float().unsqueeze(1)
    budget = lo * norms[4]
    scale = torch.where(row_xf > budget, budget / row_xf, torch.ones_like(row_xf))
    cell.weight_ih[H:2 * H] *= scale.float().unsqueeze(1)


class FusedLSTM(torch.nn.Module):
    """torch.nn.LSTM over the whole sequence: x (L, B, I) -> (L, B, H)."""

    def __init__(self, input_size, hidden):
        super().__init__()
        self.lstm = torch.nn.LSTM(input_size, hidden)

    def forward(self, x):
        return self.lstm(x)[0]


# The references, keyed by our cell's name (nn.LSTM: PyTorch's fused LSTM, no cell of
# ours): (input, hidden, nu, rho) -> the recurrent part. Which cells the bench runs comes
# from `seqbench list` (run.sh); a registered cell missing here is named there as having
# no reference.
REFERENCES = {
    "nn.LSTM": lambda I, H, nu, rho: FusedLSTM(I, H),
    "lstm": lambda I, H, nu, rho: LSTMLoop(I, H),
    "momentum_lstm": lambda I, H, nu, rho: MomentumLSTMLoop(I, H, "momentum"),
    "adam_lstm": lambda I, H, nu, rho: MomentumLSTMLoop(I, H, "adam"),
    "rmsprop_lstm": lambda I, H, nu, rho: MomentumLSTMLoop(I, H, "rmsprop"),
    "sr_lstm": lambda I, H, nu, rho: MomentumLSTMLoop(I, H, "nesterov_restart"),
    "stable_lstm": lambda I, H, nu, rho: LSTMLoop(I, H),  # projected after each update
    "rel_lstm": lambda I, H, nu, rho: RelLSTMLoop(I, H, nu, rho),
}


def our_params(ref):
    """Our parameters (lib/nn/cells, lib/nn/recurrent/attentive.hpp; the names without the
    "rnn." prefix) in a reference: name -> (PyTorch parameter, transposed), and the
    parameters of ours that have no counterpart and stay zero. Ours are row-vector
    (x W: w (in, out)); PyTorch's Linear and LSTMCell weights are (out, in). The gate order
    (i, f, c~, o) is the same on both sides, so the 4H axis maps as it is."""
    def lstm_cell(cell):  # our one bias b = bias_ih; bias_hh stays zero
        return {"w_x": (cell.weight_ih, True), "w_h": (cell.weight_hh, True),
                "b": (cell.bias_ih, False)}, [cell.bias_hh]

    if isinstance(ref, LSTMLoop):
        return lstm_cell(ref.cell)
    if isinstance(ref, MomentumLSTMLoop):
        return {"w_x": (ref.x2h.weight, True), "b_x": (ref.x2h.bias, False),
                "w_h": (ref.h2h.weight, True), "b_h": (ref.h2h.bias, False)}, []
    if isinstance(ref, RelLSTMLoop):  # u_a, v_a, v: already (in, out) as ours
        mapping, zero = lstm_cell(ref.cell)
        mapping.update({"u_a": (ref.u_a, False), "v_a": (ref.v_a, False), "v": (ref.v, False)})
        return mapping, zero
    raise ValueError(f"no mapping of our parameters onto {type(ref).__name__}")


def read_dump(path):
    """seqbench_bench_cell --dump FILE: one tensor a line, "key numel values"."""
    dump = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            key, n, *vals = line.split()
            if len(vals) != int(n):
                sys.exit(f"torch_cells.py: {path}: {key} has {len(vals)} values, not {n}")
            dump[key] = torch.tensor([float(v) for v in vals], dtype=torch.float64)
    return dump


def check(a, I):
    """--check: the dump's forward and backward of the cell recomputed in float64."""
    dump = read_dump(a.check)
    T, B, H = a.T, a.batch, a.hidden
    ref = REFERENCES[a.cell](I, H, a.nu, a.rho).double()
    mapping, zero = our_params(ref)
    data = {"x", "w", "y", "dx"}
    ours = {k for k in dump if k not in data and not k.startswith("grad.")}
    if ours != set(mapping) or not data <= set(dump):
        sys.exit(f"torch_cells.py: --check: the dump has {sorted(ours)}, the reference "
                 f"{sorted(mapping)} (hint: the same --cell on both sides)")
    with torch.no_grad():
        for name, (param, transposed) in mapping.items():
            shape = param.shape[::-1] if transposed else param.shape
            if dump[name].numel() != param.numel():
                sys.exit(f"torch_cells.py: --check: {name} has {dump[name].numel()} values, "
                         f"the reference {param.numel()} (hint: the same sizes on both sides)")
            v = dump[name].view(shape)
            param.copy_(v.t() if transposed else v)
        for param in zero:
            param.zero_()
    if dump["x"].numel() != T * B * I or dump["w"].numel() != T * B * H:
        sys.exit("torch_cells.py: --check: x or w does not have the --T, --batch, --input, "
                 "--hidden shape (hint: the same sizes on both sides)")
    x = dump["x"].view(T, B, I).clone().requires_grad_(True)
    ref.count_swaps = True
    y = torch.stack(ref(x))  # (T, B, H)
    (dump["w"].view(T, B, H) * y).sum().backward()
    got = {"y": (dump["y"], y.detach()), "dx": (dump["dx"], x.grad)}
    for name, (param, transposed) in mapping.items():
        g = param.grad if param.grad is not None else torch.zeros_like(param)
        got["grad." + name] = (dump["grad." + name], g.t() if transposed else g)
    worst, on = 0.0, "-"
    for key, (mine, theirs) in got.items():
        err = (mine - theirs.flatten()).abs().max().item() / max(theirs.abs().max().item(), 1e-30)
        if err > worst or math.isnan(err):
            worst, on = err, key
    ok = worst <= a.tol
    rel = f" nu={a.nu} rho={a.rho} swaps={ref.swaps}" if a.cell == "rel_lstm" else ""
    print(f"check cell={a.cell} T={T} B={B} I={I} H={H}{rel} tensors={len(got)} "
          f"worst_rel={worst:.2e} on={on} tol={a.tol:g} ok={'yes' if ok else 'no'}", flush=True)
    sys.exit(0 if ok else 1)


class CellModel(torch.nn.Module):
    """x (L, B, I) -> logits: (B, C) from the last step (last_only) or (L*B, C)."""

    def __init__(self, cell, input_size, hidden, classes, nu, rho):
        super().__init__()
        self.rnn = REFERENCES[cell](input_size, hidden, nu, rho)
        self.head = torch.nn.Linear(hidden, classes)

    def forward(self, x, last_only):
        hs = self.rnn(x)
        if last_only:
            return self.head(hs[-1])
        hs = hs if torch.is_tensor(hs) else torch.stack(hs)
        return self.head(hs).flatten(0, 1)  # one GEMM for all L*B rows


def copy_batch(T, B):
    """One copy-task batch as lib/data/synthetic.hpp builds it: x (L, B, n+2) one-hot,
    labels (L*B) time-major."""
    K, n = COPY_LEN, N_SYMBOLS
    L = T + 2 * K
    sym = torch.randint(1, n + 1, (K, B))
    inp = torch.zeros(L, B, dtype=torch.long)
    inp[:K] = sym
    inp[T + K - 1] = n + 1  # delimiter
    y = torch.zeros(L, B, dtype=torch.long)
    y[T + K:] = sym
    return F.one_hot(inp, n + 2).float(), y.flatten()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cell", default="lstm", help="one of --references")
    p.add_argument("--references", action="store_true",
                   help="print the cells this script has a reference for, then exit")
    p.add_argument("--task", choices=("pmnist", "copy"), default="pmnist")
    p.add_argument("--batch", type=int, default=100)
    p.add_argument("--T", type=int, default=784,
                   help="pmnist: sequence length; copy: the delay (length T + 20)")
    p.add_argument("--input", type=int, default=None, help="pmnist only: input size [1]")
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--classes", type=int, default=None, help="pmnist only: classes [10]")
    p.add_argument("--nu", type=int, default=10, help="rel_lstm: short-term buffer size")
    p.add_argument("--rho", type=int, default=15, help="rel_lstm: relevant set size")
    p.add_argument("--steps", type=int, default=3, help="timed steps (the median is reported)")
    p.add_argument("--warmup", type=int, default=1, help="untimed steps first")
    p.add_argument("--threads", default="2",
                   help="torch.set_num_threads; a list (2,1) times each count after the warm-up")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--stop-above-ms", type=float, default=0,
                   help="probe: stop timing a thread count after a step slower than this (0: never)")
    p.add_argument("--stop-factor", type=float, default=0,
                   help="probe: also after a step slower than this times the best step so far")
    p.add_argument("--check", default="",
                   help="recompute seqbench_bench_cell --dump FILE in float64 and compare")
    p.add_argument("--tol", type=float, default=1e-4, help="--check: the worst difference allowed")
    a = p.parse_args()
    if a.references:
        print(" ".join(REFERENCES))
        return
    if a.cell not in REFERENCES:
        p.error(f"no PyTorch reference for cell {a.cell!r} (have: {', '.join(REFERENCES)})")
    if a.task == "copy" and (a.input is not None or a.classes is not None):
        p.error("--input and --classes are fixed by the copy task (10 and 9); drop them")
    I = a.input if a.input is not None else 1
    C = a.classes if a.classes is not None else 10
    try:
        threads = [int(t) for t in a.threads.split(",")]
    except ValueError:
        p.error(f"--threads must be a count or a list like 2,1, not {a.threads!r}")
    if min(a.batch, a.T, I, a.hidden, C, a.steps, a.nu, *threads) < 1 or \
            min(a.warmup, a.rho) < 0:
        p.error("sizes, --steps, --threads and --nu must be >= 1, --warmup and --rho >= 0")
    if a.task == "copy" and a.T < 2:
        p.error("--T must be >= 2 for the copy task (hint: lib/data/synthetic.hpp)")
    if a.check:
        if a.task != "pmnist" or a.cell == "nn.LSTM":
            p.error("--check takes a cell of ours (not nn.LSTM) and no --task copy")
        torch.set_num_threads(threads[0])
        check(a, I)

    torch.set_num_threads(threads[0])
    torch.manual_seed(a.seed)
    # One fixed batch: the data pipeline is not part of the step being timed.
    if a.task == "pmnist":
        L = a.T
        x = torch.rand(L, a.batch, I)
        y = torch.randint(0, C, (a.batch,))
    else:
        I, C = N_SYMBOLS + 2, N_SYMBOLS + 1
        x, y = copy_batch(a.T, a.batch)
        L = x.shape[0]
    model = CellModel(a.cell, I, a.hidden, C, a.nu, a.rho)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    last_only = a.task == "pmnist"

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x, last_only), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if a.cell == "stable_lstm":
            project_stable_lstm(model.rnn.cell)
        return loss.item()

    if a.cell == "stable_lstm":
        project_stable_lstm(model.rnn.cell)  # as after_update() after init in C++
    loss0 = None  # the first step's loss: at init, comparable across implementations
    for _ in range(a.warmup):
        loss = step()
        loss0 = loss if loss0 is None else loss0
    rel = f" nu={a.nu} rho={a.rho}" if a.cell == "rel_lstm" else ""
    impl = "pytorch-nn.LSTM" if a.cell == "nn.LSTM" else f"pytorch-{a.cell}-loop"
    blas_threads = os.environ.get("OPENBLAS_NUM_THREADS", "team") or "team"
    core = blas_core()
    best = math.inf  # the best step of this process so far (for --stop-factor)
    for th in threads:
        torch.set_num_threads(th)
        ms = []
        for _ in range(a.steps):
            t0 = time.perf_counter()
            loss = step()
            ms.append((time.perf_counter() - t0) * 1e3)
            loss0 = loss if loss0 is None else loss0
            limit = [x for x in (a.stop_above_ms, a.stop_factor * best) if 0 < x < math.inf]
            if limit and ms[-1] > min(limit):
                break  # a probe candidate far slower than the best: no need for more steps
        best = min(best, min(ms))
        print(f"impl={impl} task={a.task} B={a.batch} T={a.T} L={L} I={I} "
              f"H={a.hidden} classes={C}{rel} threads={torch.get_num_threads()} "
              f"blas_threads={blas_threads} blas_core={core} "
              f"warmup={a.warmup} steps={len(ms)} ms_per_step={statistics.median(ms):.1f} "
              f"ms_min={min(ms):.1f} ms_max={max(ms):.1f} peak_rss_mb={peak_rss_mb():.1f} "
              f"loss0={loss0:.4f} loss={loss:.4f}", flush=True)


if __name__ == "__main__":
    main()
