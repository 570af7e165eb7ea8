#!/usr/bin/env python3
"""Peer timings for fa3 (docs/performance.md; the record: docs/lab/fa3-*.md): torch SDPA with the flash and cuDNN
backends on the shapes of configs/fa3.yaml and experiments/configs/fa3-short.yaml (argument: a comma-separated
list of sequence lengths keeps only those shapes), timed with CUDA events (median of 30 calls after
5 warm-up calls). FLOPs as FlashAttention counts them: 4*b*h*sq*sk*d, halved for causal."""
import sys

import torch

from torch_timing import median_seconds
from torch.nn.attention import SDPBackend, sdpa_kernel
import torch.nn.functional as F

SHAPES = [  # (dtype, d, seqlen, causal); hidden 2048, 16384 tokens
    ("bf16", 128, 512, False), ("bf16", 128, 1024, False), ("bf16", 128, 2048, False), ("bf16", 128, 8192, False), ("bf16", 128, 16384, False),
    ("bf16", 128, 512, True), ("bf16", 128, 1024, True), ("bf16", 128, 2048, True), ("bf16", 128, 8192, True), ("bf16", 128, 16384, True),
    ("bf16", 64, 512, False), ("bf16", 64, 1024, False), ("bf16", 64, 2048, False), ("bf16", 64, 8192, False), ("bf16", 64, 16384, False),
    ("bf16", 64, 512, True), ("bf16", 64, 1024, True), ("bf16", 64, 2048, True), ("bf16", 64, 8192, True), ("bf16", 64, 16384, True), ("bf16", 256, 16384, False), ("bf16", 256, 16384, True),
    ("fp16", 128, 16384, False), ("fp16", 128, 16384, True),
]


def bench(fn, reps=30):
    return median_seconds(fn, 5, reps)

def main():
    # Optional: only the shapes of these sequence lengths, e.g. "512,1024".
    only = {int(x) for x in sys.argv[1].split(",")} if len(sys.argv) > 1 else None
    print(f"device {torch.cuda.get_device_name()} torch {torch.__version__} cudnn {torch.backends.cudnn.version()}")
    print(f"{'dtype':5} {'d':>4} {'seqlen':>6} {'causal':>6} {'flash TF/s':>10} {'cudnn TF/s':>10}")
    for dt, d, s, causal in SHAPES:
        if only and s not in only:
            continue
        h, b = 2048 // d, 16384 // s
        dtype = torch.bfloat16 if dt == "bf16" else torch.float16
        # [b, s, h, d] storage (the fa3 layout), viewed as [b, h, s, d] for SDPA.
        q, k, v = (torch.randn(b, s, h, d, device="cuda", dtype=dtype).transpose(1, 2) for _ in range(3))
        flops = 4.0 * b * h * s * s * d / (2 if causal else 1)
        row = []
        for be in (SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION):
            try:
                with sdpa_kernel([be]):
                    t = bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
                row.append(f"{flops / t * 1e-12:10.1f}")
            except RuntimeError as e:  # backend refuses the shape
                row.append(f"{'n/a':>10}")
                print("  ", be, str(e).splitlines()[0], file=sys.stderr)
        print(f"{dt:5} {d:4d} {s:6d} {str(causal):>6} {row[0]} {row[1]}", flush=True)


if __name__ == "__main__":
    main()
