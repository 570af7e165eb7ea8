#!/usr/bin/env python3
"""Peer numbers for the attention benchmark: torch SDPA (flash and cuDNN backends) over the
anchors' shapes, with genbench's FLOP formula (4 * b * h * sq * sk * d, halved for causal
when sq == sk; the exact unmasked count for causal with sq != sk).

Timing: CUDA events around each call, median of the samples after a warm-up; inputs are
drawn from a normal distribution (never zeros). Layout [b, s, h, d] as FlashAttention and
genbench, passed to SDPA as transposed views.

  python3 scripts/peers/attention_sdpa.py            # the anchors' shapes
  python3 scripts/peers/attention_sdpa.py --shape 8,32,1024,1024,128 --dtype bf16
"""
import argparse
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from torch_timing import median_seconds


def flops(b, h, sq, sk, d, causal):
    if not causal:
        pairs = sq * sk
    elif sq == sk:
        pairs = sq * sk / 2
    else:
        pairs = sum(min(sk, max(0, i + sk - sq + 1)) for i in range(sq))
    return 4.0 * b * h * pairs * d


def time_ms(fn, warmup=5, iters=30):
    return 1e3 * median_seconds(fn, warmup, iters)

def run(b, h, sq, sk, d, causal, dtype, backends):
    g = torch.Generator(device="cuda").manual_seed(0)
    q = torch.randn(b, sq, h, d, device="cuda", dtype=dtype, generator=g).transpose(1, 2)
    k = torch.randn(b, sk, h, d, device="cuda", dtype=dtype, generator=g).transpose(1, 2)
    v = torch.randn(b, sk, h, d, device="cuda", dtype=dtype, generator=g).transpose(1, 2)
    out = {}
    for name, be in backends:
        # SDPA's is_causal is top-left aligned; the bottom-right mask equals it when sq == sk.
        if causal and sq != sk:
            out[name] = None
            continue
        try:
            with sdpa_kernel([be]):
                ms = time_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
            out[name] = (ms, flops(b, h, sq, sk, d, causal) / (ms * 1e-3) / 1e12)
        except RuntimeError as e:  # backend refuses the shape
            out[name] = None
            print(f"# {name}: {str(e).splitlines()[0]}", file=sys.stderr)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", action="append", help="b,h,sq,sk,d (default: the anchors' shapes)")
    ap.add_argument("--dtype", default=None, choices=["bf16", "fp16"])
    ap.add_argument("--causal", default=None, choices=["0", "1"])
    args = ap.parse_args()
    dts = {"bf16": torch.bfloat16, "fp16": torch.float16}
    backends = [("torch-flash", SDPBackend.FLASH_ATTENTION), ("torch-cudnn", SDPBackend.CUDNN_ATTENTION)]
    cases = []
    if args.shape:
        for s in args.shape:
            b, h, sq, sk, d = (int(x) for x in s.split(","))
            for c in ([bool(int(args.causal))] if args.causal else [False, True]):
                cases.append((b, h, sq, sk, d, c, args.dtype or "bf16"))
    else:
        for dt, d, s, c in [("bf16", 128, 512, False), ("bf16", 128, 2048, False), ("bf16", 128, 8192, False),
                            ("bf16", 128, 16384, False), ("bf16", 128, 8192, True), ("bf16", 128, 16384, True),
                            ("bf16", 64, 16384, False), ("bf16", 64, 16384, True), ("fp16", 128, 16384, False)]:
            cases.append((16384 // s, 2048 // d, s, s, d, c, dt))
    print(f"# {torch.cuda.get_device_name()} torch {torch.__version__} cudnn {torch.backends.cudnn.version()}")
    print("dtype d    b   h    sq    sk causal  " + "  ".join(f"{n:>22}" for n, _ in backends))
    for b, h, sq, sk, d, c, dt in cases:
        r = run(b, h, sq, sk, d, c, dts[dt], backends)
        cols = "  ".join(f"{'-':>22}" if r[n] is None else f"{r[n][0]:9.3f} ms {r[n][1]:6.1f} TF" for n, _ in backends)
        print(f"{dt:5} {d:3} {b:4} {h:3} {sq:5} {sk:5} {int(c):6}  {cols}", flush=True)


if __name__ == "__main__":
    main()
