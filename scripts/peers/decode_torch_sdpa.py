#!/usr/bin/env python3
"""Peer timings for decode attention (docs/decode.md): torch SDPA on the contiguous bf16 shapes of
configs/decode.yaml (one new token, uniform cache lengths), with each backend
that accepts the shape: cuDNN, flash, memory-efficient, and torch's own choice. Q is
[b, h, 1, d], K and V [b, heads_kv, cache, d] with enable_gqa (grouped heads read once per KV
head); backends that refuse GQA are also timed on K/V expanded to all heads ("expanded": they
then read group x the bytes, reported against the same byte count as the decode kernel).
Times: back-to-back launches between two CUDA events, divided by their count (as genbench's
timing.launches_per_sample does), the median of --rounds rounds. CSV on stdout."""
import argparse
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

SHAPES = [  # (batch, heads, heads_kv, d, cache)
    (8, 32, 8, 128, 8192),
    (64, 32, 8, 128, 8192),
    (16, 64, 8, 128, 16384),
    (1, 32, 8, 128, 131072),
]


def per_call_seconds(fn, iters):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(iters):
        fn()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) * 1e-3 / iters


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    print(f"# device {torch.cuda.get_device_name()} torch {torch.__version__} cudnn {torch.backends.cudnn.version()}")
    print("shape,backend,time_us_median,time_us_rounds,GBps")
    backends = [("cudnn", [SDPBackend.CUDNN_ATTENTION]), ("flash", [SDPBackend.FLASH_ATTENTION]),
                ("efficient", [SDPBackend.EFFICIENT_ATTENTION]), ("auto", None)]
    for b, h, hkv, d, L in SHAPES:
        q = torch.randn(b, h, 1, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(b, hkv, L, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(b, hkv, L, d, device="cuda", dtype=torch.bfloat16)
        nbytes = 2.0 * b * hkv * L * d * 2 + 2 * b * h * d * 2
        iters = max(10, min(200, int(2e10 / nbytes)))
        shape = f"b={b} h={h}/{hkv} d={d} new=1 cache={L} page=0 q=bf16 kv=bf16"
        for name, be in backends:
            for expanded in (False, True):
                if expanded:
                    kk, vv = k.repeat_interleave(h // hkv, dim=1), v.repeat_interleave(h // hkv, dim=1)
                    fn = lambda: F.scaled_dot_product_attention(q, kk, vv)
                else:
                    fn = lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
                label = name + ("+expanded" if expanded else "")
                try:
                    ts = []
                    for _ in range(args.rounds):
                        if be is None:
                            ts.append(per_call_seconds(fn, iters))
                        else:
                            with sdpa_kernel(be):
                                ts.append(per_call_seconds(fn, iters))
                except RuntimeError as e:
                    print(f"# {shape} {label}: {str(e).splitlines()[0][:160]}", file=sys.stderr)
                    continue
                t = statistics.median(ts)
                print(f"{shape},{label},{t*1e6:.2f},{'/'.join(f'{x*1e6:.2f}' for x in ts)},{nbytes/t/1e9:.1f}", flush=True)
                if expanded:
                    del kk, vv
        del q, k, v
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
