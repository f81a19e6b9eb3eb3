#!/usr/bin/python3
"""PyTorch side of the mixer benchmark: one training step of one sequence mixer alone.

The step is the one tools/bench/mixer_step.cpp times for seqbench:
  zero grads -> the mixer's forward of x (B, N, E) from the zero state -> loss = sum(w * y)
  with a fixed random w (B, N, E) -> loss.backward() (autograd: dx and every parameter
  gradient) -> torch.optim.Adam(lr 1e-3) step (no clipping).
Each mixer has the equations, shapes and parameters of our header in lib/nn/mixers (input
= output = E, H heads of d = E / H, no biases unless the header has one, the same
initial distributions) and is written the way the papers' reference code computes it:
  linear_attention  Katharopoulos et al. 2020: q, k = elu + 1, chunked causal form (per chunk
                    of C tokens the masked (Q K^T) V' plus Q P, then P += K^T V', with
                    V' = [V | 1] so the last column is the normaliser q.z), o = num / (den + 1e-6)
  retention         RetNet's chunkwise form (torchscale's chunk_recurrent_forward: intra-chunk
                    (Q K^T ⊙ D) V for all chunks at once, the state carried by a loop over
                    chunks), fixed decay 1 - 2^(-5-h) per head, k / sqrt(d), RMS norm per
                    head (no gain), silu gate, out projection
  gla               fla's naive_recurrent_gla: S = diag(α_t) S + k_t v_t^T, o_t = q_t S, a
                    Python loop over tokens; log α = logsigmoid(x Wa1^T Wa2^T + ba) / 16; then
                    the norm and gate of retention
  lru               Orvieto et al. 2023: λ = exp(-exp(ν) + i exp(θ)), h_t = λ h_{t-1} + γ ⊙
                    (B x_t) on torch.complex64, a Python loop over tokens (the paper's scan
                    run sequentially), y = Re(C h) + D x
  mamba             mamba_simple.py's slow path: in_proj, depthwise causal conv1d (K = 4),
                    silu, x_proj, dt_proj, then selective_scan_ref (a Python loop over
                    tokens on (B, E_inner, N) states), D skip, silu(z) gate, out_proj
  deltanet          fla's naive recurrent gated delta rule: S = α S, v' = β (v - S^T k),
                    S += k v'^T, o = q S (q = l2n(silu) / sqrt(d), k = l2n(silu)), RMS norm
                    per head, silu gate, out projection
  mlstm             xLSTM's mLSTM (Beck et al. 2024) in the paper's parallel stabilised form
                    (its appendix; the official parallel_stabilized_simple without its 1e-6 on
                    the normaliser): log D = cumulative log f differences + ĩ, stabilised by
                    the row max, C = (Q K^T / sqrt(d)) ⊙ D, h = C V / max(|row sums of C|,
                    e^{-max}), o = σ(õ) ⊙ h, out projection. Its stabiliser (a row max) is not
                    ours (the recurrence's m), so the check also checks that m cancels
  slstm             xLSTM's sLSTM (Beck et al. 2024, Section 2.2): a Python loop over tokens with
                    the stabiliser m, gates W x + b + R h_{t-1} with R block-diagonal per head,
                    autograd through everything (m included: its gradient cancels)
The projections of a mixer are one fused Linear where our header has one matrix (qkv,
qkvg, deltanet's W_in), so both sides run the same GEMM shapes.
--references prints the mixers above (run.sh times every mixer `seqbench list` registers,
and PyTorch's side of those it has). Prints one line of key=value pairs (the keys of
seqbench_bench_mixer) for run.sh: loss0
and y_rms0 are the first step's loss and output RMS (at init; random numbers differ from
ours, so compare y_rms0 and the scale of loss0, not the digits), loss the last step's.

--check FILE recomputes, in float64 from the same weights, x and w, the forward and backward
that `seqbench_bench_mixer --dump FILE` wrote with the same sizes, and prints the worst
difference of y, dx and every parameter gradient (max |ours - torch| over max |torch|, per
tensor); it exits 1 above --tol (run.sh's numerical check).

Threads: torch.set_num_threads(--threads, default 2). --threads may be a list ("2,1"): the
warm-up steps run at the first count, then --steps are timed at each count in turn and one
line is printed per count (run.sh's probe; --stop-above-ms and --stop-factor end a count's
timing early after a step far slower than the best). The line reports blas_threads
(OPENBLAS_NUM_THREADS, "team" when unset) and blas_core (OpenBLAS's kernel set), as
torch_cells.py does. Run it with Debian's interpreter (/usr/bin/python3).
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
    print(f"torch_mixers.py: cannot import torch with {sys.executable} ({e}); "
          "hint: apt-get install python3-torch (make deps-bench) and run /usr/bin/python3",
          file=sys.stderr)
    sys.exit(1)

NORM_EPS = 1e-5  # the per-head RMS norm's ε (gla.hpp, deltanet.hpp)


def heads_split(t, H):
    """(B, N, H d) -> (B, H, N, d)."""
    B, N, E = t.shape
    return t.view(B, N, H, E // H).transpose(1, 2)


def heads_merge(t):
    """(B, H, N, d) -> (B, N, H d)."""
    B, H, N, d = t.shape
    return t.transpose(1, 2).reshape(B, N, H * d)


def rms_norm(o):
    """Per-head RMS norm without a gain over the last dimension."""
    return o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + NORM_EPS)


def xavier_(w, fan_in, fan_out, gain):
    """torch.nn.init.xavier_uniform_ with the fans of one (fan_out, fan_in) projection, for a
    fused weight that stacks several of them."""
    b = gain * math.sqrt(6.0 / (fan_in + fan_out))
    with torch.no_grad():
        w.uniform_(-b, b)


def inv_softplus(y):
    return y + torch.log(-torch.expm1(-y))


def dt_init(n):
    """Mamba's dt_init: exp(U(log 1e-3, log 1e-1)) clamped below at 1e-4."""
    return torch.exp(torch.rand(n) * (math.log(0.1) - math.log(0.001)) + math.log(0.001)).clamp(min=1e-4)


class LinearAttention(torch.nn.Module):
    """lib/nn/mixers/linear_attention.hpp."""

    def __init__(self, E, heads, chunk):
        super().__init__()
        self.H, self.C = heads, chunk
        self.qkv = torch.nn.Linear(E, 3 * E, bias=False)  # PyTorch's default init, as ours
        self.out = torch.nn.Linear(E, E, bias=False)

    def state_floats(self, E):
        d = E // self.H
        return self.H * d * (d + 1)

    def forward(self, x):
        B, N, E = x.shape
        H, C, d = self.H, self.C, E // self.H
        q, k, v = self.qkv(x).chunk(3, -1)
        q, k, v = heads_split(F.elu(q) + 1, H), heads_split(F.elu(k) + 1, H), heads_split(v, H)
        v1 = torch.cat((v, v.new_ones(B, H, N, 1)), -1)  # [v | 1]: the normaliser's column
        P = x.new_zeros(B, H, d, d + 1)                   # [S | z]
        nums = []
        for qc, kc, vc in zip(q.split(C, 2), k.split(C, 2), v1.split(C, 2)):
            a = torch.tril(qc @ kc.transpose(-1, -2))  # causal mask, diagonal included
            nums.append(a @ vc + qc @ P)
            P = P + kc.transpose(-1, -2) @ vc
        num = torch.cat(nums, 2)
        o = num[..., :d] / (num[..., d:] + 1e-6)
        return self.out(heads_merge(o))


class Retention(torch.nn.Module):
    """lib/nn/mixers/gla.hpp: retention (gated=False) and GLA (gated=True)."""

    RANK, TAU = 16, 16.0

    def __init__(self, E, heads, chunk, gated):
        super().__init__()
        self.H, self.C, self.gated = heads, chunk, gated
        small = 2.0 ** -2.5
        self.qkvg = torch.nn.Linear(E, 4 * E, bias=False)
        self.out = torch.nn.Linear(E, E, bias=False)
        xavier_(self.qkvg.weight, E, E, small)  # four (E, E) projections, fans (E, E) each
        xavier_(self.out.weight, E, E, small if gated else 0.5)
        if gated:
            self.gate1 = torch.nn.Linear(E, self.RANK, bias=False)
            self.gate2 = torch.nn.Linear(self.RANK, E, bias=True)
            xavier_(self.gate1.weight, E, self.RANK, small)
            xavier_(self.gate2.weight, self.RANK, E, small)
            torch.nn.init.zeros_(self.gate2.bias)
        else:
            h = torch.arange(heads, dtype=torch.float64)
            self.register_buffer("log_gamma", torch.log1p(-torch.exp2(-5.0 - h)).float())

    def state_floats(self, E):
        d = E // self.H
        return self.H * d * d

    def chunkwise(self, q, k, v):
        """RetNet's chunkwise retention (q, k, v (B, H, N, d)) -> o (B, H, N, d)."""
        B, H, N, d = q.shape
        C = min(self.C, N)
        nc = -(-N // C)
        pad = nc * C - N
        if pad:  # a partial last chunk: zero keys and values add nothing, padded rows are cut
            q, k, v = (F.pad(t, (0, 0, 0, pad)) for t in (q, k, v))
        q, k, v = (t.reshape(B, H, nc, C, d) for t in (q, k, v))
        lg = self.log_gamma.view(H, 1, 1)
        i = torch.arange(C, dtype=q.dtype)
        diff = i.view(C, 1) - i.view(1, C)
        D = torch.where(diff >= 0, torch.exp(lg * diff.clamp(min=0)), torch.zeros(()))  # γ^(t-s)
        q_decay = torch.exp(lg * (i + 1).view(C, 1))       # γ^(t+1): from the chunk start
        k_decay = torch.exp(lg * (C - 1 - i).view(C, 1))   # γ^(C-1-s): to the chunk end
        cross = torch.exp(lg * C).unsqueeze(0)              # γ^C per head (1, H, 1, 1)
        inner = ((q @ k.transpose(-1, -2)) * D.unsqueeze(1)) @ v  # all chunks at once
        kv = (k * k_decay.unsqueeze(1)).transpose(-1, -2) @ v     # (B, H, nc, d, d)
        S = q.new_zeros(B, H, d, d)
        states = []
        for kv_c in kv.unbind(2):
            states.append(S)
            S = S * cross + kv_c
        S0 = torch.stack(states, 2)
        o = inner + (q * q_decay.unsqueeze(1)) @ S0
        return o.reshape(B, H, nc * C, d)[:, :, :N]

    @staticmethod
    def recurrent(q, k, v, gk):
        """fla's naive_recurrent_gla: a loop over tokens; q, k, v, gk = log α (B, H, N, d)."""
        B, H, N, d = q.shape
        h = q.new_zeros(B, H, d, d)
        o = []
        for q_i, k_i, v_i, gk_i in zip(*(t.unbind(2) for t in (q, k, v, gk))):
            h = h * gk_i.exp()[..., None] + k_i[..., None] * v_i[..., None, :]
            o.append((q_i[..., None] * h).sum(-2))
        return torch.stack(o, 2)

    def forward(self, x):
        E = x.shape[-1]
        H, d = self.H, E // self.H
        q, k, v, g = self.qkvg(x).chunk(4, -1)
        k = k * d ** -0.5
        q, k, v = heads_split(q, H), heads_split(k, H), heads_split(v, H)
        if self.gated:
            gk = F.logsigmoid(self.gate2(self.gate1(x))) / self.TAU
            o = self.recurrent(q, k, v, heads_split(gk, H))
        else:
            o = self.chunkwise(q, k, v)
        z = heads_merge(rms_norm(o)) * F.silu(g)
        return self.out(z)


class LRU(torch.nn.Module):
    """lib/nn/mixers/lru.hpp, on torch.complex64."""

    R_MIN, R_MAX, MAX_PHASE = 0.9, 0.999, 2 * math.pi

    def __init__(self, E, d_state):
        super().__init__()
        P, I, O = d_state, E, E
        self.P = P
        u1, u2 = torch.rand(P), torch.rand(P)
        nu_log = torch.log(-0.5 * torch.log(u1 * (self.R_MAX ** 2 - self.R_MIN ** 2) + self.R_MIN ** 2))
        theta_log = torch.log(self.MAX_PHASE * u2)
        gamma_log = torch.log(torch.sqrt(1 - torch.exp(-torch.exp(nu_log)) ** 2))
        self.nu_log = torch.nn.Parameter(nu_log)
        self.theta_log = torch.nn.Parameter(theta_log)
        self.gamma_log = torch.nn.Parameter(gamma_log)
        self.B_re = torch.nn.Parameter(torch.randn(P, I) / math.sqrt(2 * I))
        self.B_im = torch.nn.Parameter(torch.randn(P, I) / math.sqrt(2 * I))
        self.C_re = torch.nn.Parameter(torch.randn(O, P) / math.sqrt(P))
        self.C_im = torch.nn.Parameter(torch.randn(O, P) / math.sqrt(P))
        self.D = torch.nn.Parameter(torch.randn(O, I) / math.sqrt(I))

    def state_floats(self, E):
        return 2 * self.P

    def forward(self, x):
        B, N, _ = x.shape
        lam = torch.exp(torch.complex(-torch.exp(self.nu_log), torch.exp(self.theta_log)))
        B_norm = torch.complex(self.B_re, self.B_im) * torch.exp(self.gamma_log).unsqueeze(-1)
        Bu = x.to(B_norm.dtype) @ B_norm.t()  # (B, N, P), complex64 (complex128 in --check)
        h = Bu.new_zeros(B, self.P)
        hs = []
        for Bu_t in Bu.unbind(1):
            h = lam * h + Bu_t
            hs.append(h)
        Hs = torch.stack(hs, 1)
        C = torch.complex(self.C_re, self.C_im)
        return (Hs @ C.t()).real + x @ self.D.t()


def selective_scan_ref(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False):
    """mamba_ssm.ops.selective_scan_interface.selective_scan_ref, for real A and B, C of shape
    (batch, N, L): u, delta (batch, E, L), A (E, N), D (E), z (batch, E, L)."""
    if delta_bias is not None:
        delta = delta + delta_bias[..., None]
    if delta_softplus:
        delta = F.softplus(delta)
    batch, dim, dstate = u.shape[0], A.shape[0], A.shape[1]
    x = A.new_zeros((batch, dim, dstate))
    ys = []
    deltaA = torch.exp(torch.einsum('bdl,dn->bdln', delta, A))
    deltaB_u = torch.einsum('bdl,bnl,bdl->bdln', delta, B, u)
    for dA_i, dBu_i, C_i in zip(deltaA.unbind(2), deltaB_u.unbind(2), C.unbind(2)):
        x = dA_i * x + dBu_i
        y = torch.einsum('bdn,bn->bd', x, C_i)
        ys.append(y)
    y = torch.stack(ys, dim=2)  # (batch, E, L)
    out = y if D is None else y + u * D.unsqueeze(-1)
    if z is not None:
        out = out * F.silu(z)
    return out


class Mamba(torch.nn.Module):
    """lib/nn/mixers/selective_scan.hpp = mamba_simple.py's Mamba without the fused kernels."""

    EXPAND, CONV = 2, 4

    def __init__(self, E, d_state):
        super().__init__()
        Ei, N, K = self.EXPAND * E, d_state, self.CONV
        R = -(-E // 16)
        self.Ei, self.N, self.K, self.R = Ei, N, K, R
        self.in_proj = torch.nn.Linear(E, 2 * Ei, bias=False)
        self.conv1d = torch.nn.Conv1d(Ei, Ei, K, groups=Ei, padding=K - 1, bias=True)
        self.x_proj = torch.nn.Linear(Ei, R + 2 * N, bias=False)
        self.dt_proj = torch.nn.Linear(R, Ei, bias=True)
        torch.nn.init.uniform_(self.dt_proj.weight, -R ** -0.5, R ** -0.5)
        with torch.no_grad():
            self.dt_proj.bias.copy_(inv_softplus(dt_init(Ei)))
        self.A_log = torch.nn.Parameter(torch.log(torch.arange(1, N + 1, dtype=torch.float32)).repeat(Ei, 1))
        self.D = torch.nn.Parameter(torch.ones(Ei))
        self.out_proj = torch.nn.Linear(Ei, E, bias=False)

    def state_floats(self, E):
        return self.Ei * self.N + (self.K - 1) * self.Ei

    def forward(self, hidden_states):
        batch, seqlen, _ = hidden_states.shape
        xz = self.in_proj(hidden_states).transpose(1, 2)  # (B, 2 Ei, L)
        A = -torch.exp(self.A_log)
        x, z = xz.chunk(2, dim=1)
        x = F.silu(self.conv1d(x)[..., :seqlen])
        x_dbl = self.x_proj(x.transpose(1, 2).reshape(batch * seqlen, self.Ei))
        dt, B, C = torch.split(x_dbl, [self.R, self.N, self.N], dim=-1)
        dt = (self.dt_proj.weight @ dt.t()).view(self.Ei, batch, seqlen).transpose(0, 1)
        B = B.view(batch, seqlen, self.N).transpose(1, 2).contiguous()
        C = C.view(batch, seqlen, self.N).transpose(1, 2).contiguous()
        y = selective_scan_ref(x, dt, A, B, C, self.D, z=z, delta_bias=self.dt_proj.bias,
                               delta_softplus=True)
        return self.out_proj(y.transpose(1, 2))


class DeltaNet(torch.nn.Module):
    """lib/nn/mixers/deltanet.hpp: the gated delta rule, fla's naive recurrent loop."""

    def __init__(self, E, heads):
        super().__init__()
        self.H = heads
        self.w_in = torch.nn.Linear(E, 4 * E + 2 * heads, bias=False)  # [q | k | v | g | beta | a]
        self.w_o = torch.nn.Linear(E, E, bias=False)
        torch.nn.init.normal_(self.w_in.weight, 0.0, E ** -0.5)
        torch.nn.init.normal_(self.w_o.weight, 0.0, E ** -0.5)
        self.A_log = torch.nn.Parameter(torch.log(torch.empty(heads).uniform_(1, 16)))
        self.dt_bias = torch.nn.Parameter(inv_softplus(dt_init(heads)))

    def state_floats(self, E):
        d = E // self.H
        return self.H * d * d

    @staticmethod
    def recurrent_gated_delta_rule(q, k, v, beta, g):
        """fla's recurrent_gated_delta_rule_ref: q, k, v (B, H, N, d), beta, g = log α (B, H, N)."""
        B, H, N, K = k.shape
        q = q * K ** -0.5
        h = v.new_zeros(B, H, K, v.shape[-1])
        o = []
        for b_q, b_k, b_v, b_beta, g_i in zip(*(t.unbind(2) for t in (q, k, v, beta, g))):
            h = h * g_i.exp()[..., None, None]
            b_v = b_v - (h * b_k[..., None]).sum(-2)
            b_v = b_v * b_beta[..., None]
            h = h + b_k.unsqueeze(-1) * b_v.unsqueeze(-2)
            o.append(torch.einsum('bhd,bhdm->bhm', b_q, h))
        return torch.stack(o, 2)

    def forward(self, x):
        E = x.shape[-1]
        H = self.H
        aq, ak, v, ag, ab, aa = torch.split(self.w_in(x), [E, E, E, E, H, H], -1)
        q = heads_split(F.silu(aq), H)
        k = heads_split(F.silu(ak), H)
        q = q * torch.rsqrt(q.pow(2).sum(-1, keepdim=True) + 1e-6)  # fla's l2norm
        k = k * torch.rsqrt(k.pow(2).sum(-1, keepdim=True) + 1e-6)
        beta = torch.sigmoid(ab).transpose(1, 2)                          # (B, H, N)
        g = (-torch.exp(self.A_log) * F.softplus(aa + self.dt_bias)).transpose(1, 2)  # log α
        o = self.recurrent_gated_delta_rule(q, k, heads_split(v, H), beta, g)
        z = heads_merge(rms_norm(o)) * F.silu(ag)
        return self.w_o(z)


class MLSTM(torch.nn.Module):
    """lib/nn/mixers/mlstm.hpp: xLSTM's mLSTM, the paper's parallel stabilised form."""

    def __init__(self, E, heads):
        super().__init__()
        self.H = heads
        self.qkvo = torch.nn.Linear(E, 4 * E, bias=False)  # [q | k | v | õ]
        self.gates = torch.nn.Linear(E, 2 * heads, bias=True)  # [ĩ | f̃] per head
        self.out = torch.nn.Linear(E, E, bias=False)
        torch.nn.init.normal_(self.qkvo.weight, 0.0, math.sqrt(2.0 / (5.0 * E)))
        torch.nn.init.zeros_(self.gates.weight)
        with torch.no_grad():
            self.gates.bias[:heads].normal_(0.0, 0.1)
            self.gates.bias[heads:] = torch.linspace(3.0, 6.0, heads)
        torch.nn.init.normal_(self.out.weight, 0.0, E ** -0.5)

    def state_floats(self, E):
        d = E // self.H
        return self.H * (d * d + d + 1)

    @staticmethod
    def parallel_stabilized(q, k, v, ig, fg):
        """q, k, v (B, H, N, d); ig, fg (B, H, N) -> h̃ (B, H, N, d)."""
        N, d = q.shape[-2], q.shape[-1]
        lf = F.logsigmoid(fg)
        cum = torch.cat([lf.new_zeros(lf.shape[:-1] + (1,)), lf.cumsum(-1)], -1)  # (B, H, N+1)
        lfm = cum[..., 1:, None] - cum[..., None, 1:]  # Σ_{s<r<=t} log f_r at [t, s]
        mask = torch.ones(N, N, dtype=torch.bool, device=q.device).tril()
        logd = torch.where(mask, lfm + ig[..., None, :], torch.full_like(lfm, -math.inf))
        mx = logd.max(-1, keepdim=True).values  # (B, H, N, 1)
        C = (q @ (k / math.sqrt(d)).transpose(-2, -1)) * torch.exp(logd - mx)
        norm = torch.maximum(C.sum(-1, keepdim=True).abs(), torch.exp(-mx))
        return (C / norm) @ v

    def forward(self, x):
        E = x.shape[-1]
        H = self.H
        q, k, v, o = torch.split(self.qkvo(x), [E, E, E, E], -1)
        ig, fg = torch.split(self.gates(x), [H, H], -1)
        h = self.parallel_stabilized(heads_split(q, H), heads_split(k, H), heads_split(v, H),
                                     ig.transpose(1, 2), fg.transpose(1, 2))
        return self.out(torch.sigmoid(o) * heads_merge(h))


class SLSTM(torch.nn.Module):
    """lib/nn/mixers/slstm.hpp: xLSTM's sLSTM, a loop over tokens."""

    def __init__(self, E, heads):
        super().__init__()
        self.H = heads
        d = E // heads
        self.w = torch.nn.Linear(E, 4 * E, bias=True)  # [ĩ | f̃ | z̃ | õ], PyTorch's init
        with torch.no_grad():
            self.w.bias.zero_()
            self.w.bias[E:2 * E] = torch.linspace(3.0, 6.0, heads).repeat_interleave(d)
        # r (4E, d): row g E + h d + i, column j (gate g, head h, unit i <- h_{t-1}[h d + j])
        self.r = torch.nn.Parameter(torch.empty(4 * E, d).uniform_(-d ** -0.5, d ** -0.5))

    def state_floats(self, E):
        return 4 * E

    def forward(self, x):
        B, N, E = x.shape
        H = self.H
        d = E // H
        px = self.w(x)
        R = self.r.view(4, H, d, d)
        h = c = n = m = x.new_zeros(B, E)
        ys = []
        for t in range(N):
            rec = torch.einsum('ghij,bhj->bghi', R, h.view(B, H, d)).reshape(B, 4 * E)
            ig, fg, zg, og = torch.split(px[:, t] + rec, [E, E, E, E], -1)
            lf = F.logsigmoid(fg)
            m_new = torch.maximum(lf + m, ig)
            i = torch.exp(ig - m_new)
            f = torch.exp(lf + m - m_new)
            c = f * c + i * torch.tanh(zg)
            n = f * n + i
            h = torch.sigmoid(og) * c / n
            m = m_new
            ys.append(h)
        return torch.stack(ys, 1)


# The references, keyed by our mixer's name: (E, heads, d_state, chunk) -> the module.
# Which mixers the bench runs comes from `seqbench list` (run.sh); a registered mixer
# missing here is timed on our side only and named as having no reference.
REFERENCES = {
    "linear_attention": lambda E, heads, d_state, chunk: LinearAttention(E, heads, chunk),
    "retention": lambda E, heads, d_state, chunk: Retention(E, heads, chunk, gated=False),
    "gla": lambda E, heads, d_state, chunk: Retention(E, heads, chunk, gated=True),
    "lru": lambda E, heads, d_state, chunk: LRU(E, d_state),
    "mamba": lambda E, heads, d_state, chunk: Mamba(E, d_state),
    "deltanet": lambda E, heads, d_state, chunk: DeltaNet(E, heads),
    "mlstm": lambda E, heads, d_state, chunk: MLSTM(E, heads),
    "slstm": lambda E, heads, d_state, chunk: SLSTM(E, heads),
}


def build(mixer, E, heads, d_state, chunk):
    return REFERENCES[mixer](E, heads, d_state, chunk)


def torch_name(ours):
    """Our parameter name (lib/nn/mixers, without the "<mixer>." prefix) -> PyTorch's."""
    special = {"conv.w": "conv1d.weight", "conv.b": "conv1d.bias", "w_o": "w_o.weight"}
    if ours in special:
        return special[ours]
    if ours in ("w_q", "w_k", "w_v", "w_g", "w_beta", "w_a"):
        return "w_in.weight"  # deltanet's W_in: these rows, in this order
    if ours.endswith(".w"):
        return ours[:-2] + ".weight"
    if ours.endswith(".b"):
        return ours[:-2] + ".bias"
    return ours


def check(a, model):
    """--check: the dump's forward and backward recomputed in float64."""
    dump = {}
    with open(a.check, encoding="utf-8") as f:
        for line in f:
            key, n, *vals = line.split()
            if len(vals) != int(n):
                sys.exit(f"torch_mixers.py: {a.check}: {key} has {len(vals)} values, not {n}")
            dump[key] = torch.tensor([float(v) for v in vals], dtype=torch.float64)
    model = model.double()
    params = dict(model.named_parameters())
    parts = {}  # PyTorch parameter -> our names, in order
    for key in dump:
        if key not in ("x", "w", "y", "dx") and not key.startswith("grad."):
            parts.setdefault(torch_name(key), []).append(key)
    if set(parts) != set(params):
        sys.exit(f"torch_mixers.py: --check: the dump has {sorted(parts)}, the model {sorted(params)} "
                 "(hint: the same --mixer and sizes on both sides)")
    with torch.no_grad():
        for name, keys in parts.items():
            params[name].copy_(torch.cat([dump[k] for k in keys]).view_as(params[name]))
    shape = (a.B, a.N, a.E)
    x = dump["x"].view(shape).clone().requires_grad_(True)
    y = model(x)
    (dump["w"].view(shape) * y).sum().backward()
    got = {"y": (dump["y"], y.detach()), "dx": (dump["dx"], x.grad)}
    for name, keys in parts.items():
        grad = params[name].grad.flatten()
        off = 0
        for k in keys:
            n = dump[k].numel()
            got["grad." + k] = (dump["grad." + k], grad[off:off + n])
            off += n
    worst, on = 0.0, "-"
    for key, (ours, ref) in got.items():
        err = (ours - ref.flatten()).abs().max().item() / max(ref.abs().max().item(), 1e-30)
        if err > worst or math.isnan(err):
            worst, on = err, key
    ok = worst <= a.tol
    print(f"check mixer={a.mixer} B={a.B} N={a.N} E={a.E} heads={a.heads} d_state={a.d_state} "
          f"chunk={a.chunk} tensors={len(got)} worst_rel={worst:.2e} on={on} tol={a.tol:g} "
          f"ok={'yes' if ok else 'no'}", flush=True)
    sys.exit(0 if ok else 1)


def current_rss_mb():
    try:
        with open("/proc/self/statm", encoding="utf-8") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1048576.0
    except (OSError, ValueError, IndexError):
        return 0.0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mixer", default="gla", help="one of --references")
    p.add_argument("--references", action="store_true",
                   help="print the mixers this script has a reference for, then exit")
    p.add_argument("--B", type=int, default=64, help="batch size")
    p.add_argument("--N", type=int, default=64, help="tokens")
    p.add_argument("--E", type=int, default=64, help="width (input = output)")
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--d-state", type=int, default=16, help="lru: complex units; mamba: N")
    p.add_argument("--chunk", type=int, default=64)
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
                   help="recompute seqbench_bench_mixer --dump FILE in float64 and compare")
    p.add_argument("--tol", type=float, default=1e-4, help="--check: the worst difference allowed")
    a = p.parse_args()
    if a.references:
        print(" ".join(REFERENCES))
        return
    if a.mixer not in REFERENCES:
        p.error(f"no PyTorch reference for mixer {a.mixer!r} (have: {', '.join(REFERENCES)})")
    try:
        threads = [int(t) for t in a.threads.split(",")]
    except ValueError:
        p.error(f"--threads must be a count or a list like 2,1, not {a.threads!r}")
    if min(a.B, a.N, a.E, a.heads, a.d_state, a.chunk, a.steps, *threads) < 1 or a.warmup < 0:
        p.error("sizes, --steps and --threads must be >= 1, --warmup >= 0")
    if a.E % a.heads:
        p.error(f"--heads {a.heads} does not divide --E {a.E}")

    torch.set_num_threads(threads[0])
    torch.manual_seed(a.seed)
    model = build(a.mixer, a.E, a.heads, a.d_state, a.chunk)
    if a.check:
        check(a, model)
    params = sum(t.numel() for t in model.parameters())
    x = torch.randn(a.B, a.N, a.E, requires_grad=True)  # dx is computed, as on our side
    w = torch.randn(a.B, a.N, a.E)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    base_rss = current_rss_mb()
    first = {}
    times = {}

    def step():
        opt.zero_grad()
        x.grad = None
        t0 = time.perf_counter()
        y = model(x)
        loss = (w * y).sum()
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        opt.step()
        times["fwd"], times["bwd"] = (t1 - t0) * 1e3, (t2 - t1) * 1e3
        if not first:
            first["loss0"] = loss.item()
            first["y_rms0"] = y.detach().pow(2).mean().sqrt().item()
        return loss.item()

    for _ in range(a.warmup):
        loss = step()
    blas_threads = os.environ.get("OPENBLAS_NUM_THREADS", "team") or "team"
    core = blas_core()
    best = math.inf
    for th in threads:
        torch.set_num_threads(th)
        ms, fwd, bwd = [], [], []
        for _ in range(a.steps):
            t0 = time.perf_counter()
            loss = step()
            ms.append((time.perf_counter() - t0) * 1e3)
            fwd.append(times["fwd"])
            bwd.append(times["bwd"])
            limit = [v for v in (a.stop_above_ms, a.stop_factor * best) if 0 < v < math.inf]
            if limit and ms[-1] > min(limit):
                break  # a probe candidate far slower than the best: no need for more steps
        best = min(best, min(ms))
        if not math.isfinite(loss):
            print(f"torch_mixers.py: loss is {loss} for {a.mixer}", file=sys.stderr)
            sys.exit(1)
        print(f"impl=pytorch-{a.mixer} mixer={a.mixer} B={a.B} N={a.N} E={a.E} heads={a.heads} "
              f"d_state={a.d_state} chunk={a.chunk} params={params} "
              f"state_floats={model.state_floats(a.E)} threads={torch.get_num_threads()} "
              f"blas_threads={blas_threads} blas_core={core} warmup={a.warmup} steps={len(ms)} "
              f"ms_per_step={statistics.median(ms):.2f} ms_min={min(ms):.2f} "
              f"ms_max={max(ms):.2f} fwd_ms={statistics.median(fwd):.2f} "
              f"bwd_ms={statistics.median(bwd):.2f} peak_rss_mb={peak_rss_mb():.1f} "
              f"base_rss_mb={base_rss:.1f} loss0={first['loss0']:.4f} "
              f"y_rms0={first['y_rms0']:.4f} loss={loss:.4f}", flush=True)


if __name__ == "__main__":
    main()
