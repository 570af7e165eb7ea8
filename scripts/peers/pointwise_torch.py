#!/usr/bin/env python3
"""The peer of the pointwise op (configs/pointwise.yaml, docs/pointwise.md): PyTorch's eager ops on
the same shapes, bf16, with the same byte counts, L2 flushed before each timed call (as
timing.cache: cold does), median of CUDA-event-timed calls over 3 rounds. Each kind's math is
checked once against a float64 version of it. Prints CSV lines:

    CSV,torch,<kind>,<rows>,<width>,<seconds>,<GB/s>

with width the hidden size (norms, embedding), the MLP width (silu_mul) or heads/heads_kv (rope).
    rmsnorm      torch.nn.functional.rms_norm(x, (hidden,), w, 1e-5)
    add_rmsnorm  r = x + r; y = rms_norm(r)         (two kernels in eager mode)
    rope         rotate-half with cos/sin gathered by position (Llama's reference code)
    silu_mul     silu(x[:, :h]) * x[:, h:]
    embedding    torch.nn.functional.embedding(ids, table)

The backward kinds (configs/pointwise.yaml's *-backward benchmarks, Llama-3-8B training shapes)
are timed as torch.autograd.grad of the forward above with the graph kept, so only the backward's
kernels run in the timed call; their bytes are genbench's for the same point (docs/pointwise.md):
    rmsnorm_backward      grad of rms_norm(x, w) for x and w
    add_rmsnorm_backward  the same of s, plus dr_in added to ds
    rope_backward         grad of the rotate-half rope (autograd's own kernels), Q and K
    silu_mul_backward     grad of silu(g) * u for x = [g | u]
    embedding_backward    grad of embedding(ids, table) for the table: torch makes a zeroed bf16
                          table of the whole vocabulary and adds the rows into it (ours: fp32)"""
import statistics
import sys

import torch
import torch.nn.functional as F

ROWS = [1, 64, 4096, 16384, 32768]
E = 2  # bytes of a bf16
POSITIONS = 4096
L2 = torch.cuda.get_device_properties(0).L2_cache_size
_scratch = torch.empty(2 * L2 // 4 + 1, dtype=torch.float32, device="cuda")


def cold_median(fn, reps):
    samples = []
    for _ in range(reps):
        _scratch.fill_(1.0)  # evicts what the last call left in L2, outside the timed region
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        samples.append(a.elapsed_time(b) * 1e-3)
    return statistics.median(samples)


def timed(fn):
    fn()
    torch.cuda.synchronize()
    return statistics.median(cold_median(fn, 30) for _ in range(3))


def rope_tables(d):
    inv = 500000.0 ** (-torch.arange(0, d // 2, dtype=torch.float64, device="cuda") * 2 / d)
    ang = torch.arange(POSITIONS, dtype=torch.float64, device="cuda")[:, None] * inv[None, :]
    return ang.cos().float(), ang.sin().float()


def rope_apply(qk, cos, sin, pos):  # qk [rows, heads, d] in place, float math, rotate-half
    h = qk.shape[-1] // 2
    c, s = cos[pos][:, None, :], sin[pos][:, None, :]
    x1, x2 = qk[..., :h].float(), qk[..., h:].float()
    qk[..., :h] = (x1 * c - x2 * s).to(qk.dtype)
    qk[..., h:] = (x2 * c + x1 * s).to(qk.dtype)


def check(name, got, ref):
    err = ((got.double() - ref).abs() / (ref.abs() + 1e-3 * ref.abs().mean())).max().item()
    print(f"CHECK,torch,{name},max_err_rel={err:.3g}", flush=True)


def out(kind, rows, width, t, nbytes):
    print(f"CSV,torch,{kind},{rows},{width},{t:.6g},{nbytes / t / 1e9:.1f}", flush=True)


def main():
    dev = torch.device("cuda", 0)
    torch.manual_seed(0)
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(dev)}", flush=True)
    bf = torch.bfloat16
    for h in (4096, 8192):
        w = torch.randn(h, device=dev, dtype=bf)
        for rows in ROWS:
            x = torch.randn(rows, h, device=dev, dtype=bf)
            r = torch.randn(rows, h, device=dev, dtype=bf)
            if rows == 64:
                xd = x.double()
                check(f"rmsnorm-{h}", F.rms_norm(x, (h,), w, 1e-5),
                      xd * torch.rsqrt((xd * xd).mean(-1, keepdim=True) + 1e-5) * w.double())
            out("rmsnorm", rows, h, timed(lambda: F.rms_norm(x, (h,), w, 1e-5)), E * (2 * rows * h + h))

            def add_norm():
                r.add_(x)
                return F.rms_norm(r, (h,), w, 1e-5)

            out("add_rmsnorm", rows, h, timed(add_norm), E * (4 * rows * h + h))
    for heads in (32, 64):
        cos, sin = rope_tables(128)
        for rows in ROWS:
            qk = torch.randn(rows, heads + 8, 128, device=dev, dtype=bf)
            pos = (torch.arange(rows, device=dev) + 17) % POSITIONS
            if rows == 64:
                ref = qk.double().clone()
                c, s = cos[pos][:, None, :].double(), sin[pos][:, None, :].double()
                x1, x2 = ref[..., :64].clone(), ref[..., 64:].clone()
                ref[..., :64], ref[..., 64:] = x1 * c - x2 * s, x2 * c + x1 * s
                got = qk.clone()
                rope_apply(got, cos, sin, pos)
                check(f"rope-{heads}", got, ref)
            nbytes = E * 2 * rows * (heads + 8) * 128 + 4 * rows + 4 * 128 * min(rows, POSITIONS)
            out("rope", rows, f"{heads}/8", timed(lambda: rope_apply(qk, cos, sin, pos)), nbytes)
    for h in (14336, 28672):
        for rows in ROWS:
            x = torch.randn(rows, 2 * h, device=dev, dtype=bf)
            if rows == 64:
                xd = x.double()
                check(f"silu_mul-{h}", F.silu(x[:, :h]) * x[:, h:], F.silu(xd[:, :h]) * xd[:, h:])
            out("silu_mul", rows, h, timed(lambda: F.silu(x[:, :h]) * x[:, h:]), E * 3 * rows * h)
    for h in (4096, 8192):
        table = torch.randn(128256, h, device=dev, dtype=bf)
        for rows in ROWS:
            ids = torch.randint(0, 128256, (rows,), device=dev, dtype=torch.int32)
            out("embedding", rows, h, timed(lambda: F.embedding(ids, table)), E * 2 * rows * h + 4 * rows)
        del table
    backward(dev)
    return 0


def grad_timed(y, inputs, dy):
    return timed(lambda: torch.autograd.grad(y, inputs, dy, retain_graph=True))


def backward(dev):
    bf = torch.bfloat16
    rows_all, h, vocab = (4096, 16384), 4096, 128256
    w = torch.randn(h, device=dev, dtype=bf, requires_grad=True)
    for rows in rows_all:
        x = torch.randn(rows, h, device=dev, dtype=bf, requires_grad=True)
        dy = torch.randn(rows, h, device=dev, dtype=bf)
        dr = torch.randn(rows, h, device=dev, dtype=bf)
        y = F.rms_norm(x, (h,), w, 1e-5)
        if rows == rows_all[0]:
            xd, wd = x.detach().double().requires_grad_(), w.detach().double().requires_grad_()
            yd = xd * torch.rsqrt((xd * xd).mean(-1, keepdim=True) + 1e-5) * wd
            check("rmsnorm_backward", torch.autograd.grad(y, x, dy, retain_graph=True)[0],
                  torch.autograd.grad(yd, xd, dy.double())[0])
        out("rmsnorm_backward", rows, h, grad_timed(y, (x, w), dy), E * (3 * rows * h + h) + 4 * h)

        def add_norm_grad():
            dx, dw = torch.autograd.grad(y, (x, w), dy, retain_graph=True)
            return dx.add_(dr), dw

        out("add_rmsnorm_backward", rows, h, timed(add_norm_grad), E * (4 * rows * h + h) + 4 * h)
    heads, kv, d = 32, 8, 128
    cos, sin = rope_tables(d)
    for rows in rows_all:
        qk = torch.randn(rows, heads + kv, d, device=dev, dtype=bf, requires_grad=True)
        pos = (torch.arange(rows, device=dev) + 17) % POSITIONS
        c, s_ = cos[pos][:, None, :].repeat(1, 1, 2), sin[pos][:, None, :].repeat(1, 1, 2)
        half = d // 2
        y = (qk.float() * c + torch.cat((-qk[..., half:], qk[..., :half]), -1).float() * s_).to(bf)
        dy = torch.randn_like(y)
        if rows == rows_all[0]:
            qd = qk.detach().double().requires_grad_()
            yd = qd * c.double() + torch.cat((-qd[..., half:], qd[..., :half]), -1) * s_.double()
            check("rope_backward", torch.autograd.grad(y, qk, dy, retain_graph=True)[0],
                  torch.autograd.grad(yd, qd, dy.double())[0])
        nbytes = E * 2 * rows * (heads + kv) * d + 4 * rows + 4 * d * min(rows, POSITIONS)
        out("rope_backward", rows, f"{heads}/{kv}", grad_timed(y, (qk,), dy), nbytes)
    inter = 14336
    for rows in rows_all:
        x = torch.randn(rows, 2 * inter, device=dev, dtype=bf, requires_grad=True)
        y = F.silu(x[:, :inter]) * x[:, inter:]
        dy = torch.randn_like(y)
        if rows == rows_all[0]:
            xd = x.detach().double().requires_grad_()
            yd = F.silu(xd[:, :inter]) * xd[:, inter:]
            check("silu_mul_backward", torch.autograd.grad(y, x, dy, retain_graph=True)[0],
                  torch.autograd.grad(yd, xd, dy.double())[0])
        out("silu_mul_backward", rows, inter, grad_timed(y, (x,), dy), E * 5 * rows * inter)
    table = torch.randn(vocab, h, device=dev, dtype=bf, requires_grad=True)
    for rows in rows_all:
        ids = torch.randint(0, vocab, (rows,), device=dev)
        y = F.embedding(ids, table)
        dy = torch.randn_like(y)
        touched = vocab * (1 - (1 - 1 / vocab) ** rows)
        out("embedding_backward", rows, h, grad_timed(y, (table,), dy), E * rows * h + 4 * rows + 4 * h * touched)


if __name__ == "__main__":
    sys.exit(main())
