#!/usr/bin/env python3
"""The real-layer check of the model suites (docs/models.md): one Llama-3 decoder layer in plain
PyTorch (random weights, bf16, SDPA with grouped K/V, rotate-half rope, RMSNorm, SiLU MLP, the
two residual adds), captured in a CUDA graph and replayed, on the suites' scenarios: decode steps
at (batch, cache) and prefills of one sequence. Its time per layer stands beside genbench's sum
of parts (genbench_analysis model) measured in the same device call.

    python3 scripts/peers/llama_layer_torch.py [8b|70b] [--tp N]

Prints CSV lines: CSV,torch_layer,<model>,<phase>,<batch or 1>,<cache or seq>,<layer seconds>."""
import argparse
import statistics
import sys

import torch
import torch.nn.functional as F

MODELS = {"8b": dict(hidden=4096, heads=32, kv_heads=8, head_dim=128, inter=14336),
          "70b": dict(hidden=8192, heads=64, kv_heads=8, head_dim=128, inter=28672)}
DECODE = [(1, 4096), (1, 131072), (16, 32768), (64, 8192), (256, 4096)]
PREFILL = [2048, 8192, 32768]


class Layer:
    def __init__(self, cfg, tp, dev):
        h, d = cfg["hidden"], cfg["head_dim"]
        self.h, self.d = h, d
        self.nh, self.nkv = cfg["heads"] // tp, max(1, cfg["kv_heads"] // tp)
        inter = cfg["inter"] // tp
        self.inter = inter
        w = lambda n, k: torch.randn(n, k, device=dev, dtype=torch.bfloat16) * (k ** -0.5)
        self.wqkv = w((self.nh + 2 * self.nkv) * d, h)
        self.wo = w(h, self.nh * d)
        self.wgu = w(2 * inter, h)
        self.wd = w(h, inter)
        self.n1 = torch.ones(h, device=dev, dtype=torch.bfloat16)
        self.n2 = torch.ones(h, device=dev, dtype=torch.bfloat16)
        inv = 500000.0 ** (-torch.arange(0, d // 2, device=dev, dtype=torch.float32) * 2 / d)
        self.inv = inv

    def rope(self, x, pos):  # x [b, heads, s, d], pos [s] or [b, 1]
        ang = pos[..., None].float() * self.inv
        c, s = ang.cos(), ang.sin()
        while c.dim() < x.dim():
            c, s = c.unsqueeze(-3), s.unsqueeze(-3)
        half = self.d // 2
        x1, x2 = x[..., :half].float(), x[..., half:].float()
        return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).to(x.dtype)

    def forward(self, x, pos, kcache=None, vcache=None, at=None):
        b, s, _ = x.shape
        r = x
        x = F.rms_norm(x, (self.h,), self.n1, 1e-5)
        qkv = x @ self.wqkv.t()
        q, k, v = qkv.split([self.nh * self.d, self.nkv * self.d, self.nkv * self.d], dim=-1)
        q = q.view(b, s, self.nh, self.d).transpose(1, 2)
        k = k.view(b, s, self.nkv, self.d).transpose(1, 2)
        v = v.view(b, s, self.nkv, self.d).transpose(1, 2)
        q, k = self.rope(q, pos), self.rope(k, pos)
        if kcache is not None:  # decode: the new key and value go into the cache's last slot
            kcache[:, :, at:at + 1] = k
            vcache[:, :, at:at + 1] = v
            a = F.scaled_dot_product_attention(q, kcache, vcache, enable_gqa=True)
        else:
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = r + a.transpose(1, 2).reshape(b, s, self.nh * self.d) @ self.wo.t()
        r = x
        x = F.rms_norm(x, (self.h,), self.n2, 1e-5)
        g, u = (x @ self.wgu.t()).split(self.inter, dim=-1)
        return r + (F.silu(g) * u) @ self.wd.t()


def graph_time(fn, replays=20):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    samples = []
    for _ in range(5):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(replays):
            g.replay()
        b.record()
        b.synchronize()
        samples.append(a.elapsed_time(b) * 1e-3 / replays)
    del g
    return statistics.median(samples)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", nargs="?", default="8b", choices=sorted(MODELS))
    ap.add_argument("--tp", type=int, default=1)
    args = ap.parse_args()
    dev = torch.device("cuda", 0)
    torch.manual_seed(0)
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(dev)}", flush=True)
    layer = Layer(MODELS[args.model], args.tp, dev)
    name = f"llama3-{args.model}"
    with torch.inference_mode():
        for batch, cache in DECODE:
            x = torch.randn(batch, 1, layer.h, device=dev, dtype=torch.bfloat16)
            kc = torch.randn(batch, layer.nkv, cache, layer.d, device=dev, dtype=torch.bfloat16)
            vc = torch.randn_like(kc)
            pos = torch.full((batch, 1), cache - 1, device=dev)
            t = graph_time(lambda: layer.forward(x, pos, kc, vc, cache - 1))
            print(f"CSV,torch_layer,{name},decode,{batch},{cache},{t:.6g}", flush=True)
            del kc, vc
            torch.cuda.empty_cache()
        for seq in PREFILL:
            x = torch.randn(1, seq, layer.h, device=dev, dtype=torch.bfloat16)
            pos = torch.arange(seq, device=dev)
            t = graph_time(lambda: layer.forward(x, pos), replays=5)
            print(f"CSV,torch_layer,{name},prefill,1,{seq},{t:.6g}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
