#!/usr/bin/env python3
"""The peer of attention_backward (configs/attention-backward.yaml): torch SDPA's backward with
the flash (FlashAttention-2) and cuDNN backends on the same shapes, timed alone: the forward runs
once, then torch.autograd.grad(O, (Q, K, V), dO, retain_graph=True) is timed (CUDA events,
median after a warm-up, 3 rounds, median of the rounds' medians). FLOPs as genbench counts them:
2.5 x the forward's 4 * b * h * sq * sk * d, halved for causal (sq == sk). Layout [b, s, h, d],
passed to SDPA as transposed views; GQA through enable_gqa where the backend has it. Prints:

    CSV,<backend>,<dtype>,<b>,<h>,<h_kv>,<sq>,<d>,<causal>,<seconds>,<TFLOP/s>

  python3 scripts/peers/attention_backward_torch.py            # the config's anchor and Llama shapes
"""
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from torch_timing import median_seconds

BACKENDS = [("torch-flash", SDPBackend.FLASH_ATTENTION), ("torch-cudnn", SDPBackend.CUDNN_ATTENTION)]


def flops(b, h, s, d, causal):
    return 2.5 * 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)


def run(b, h, hk, s, d, causal, dtype, name, be):
    g = torch.Generator(device="cuda").manual_seed(0)
    q = torch.randn(b, s, h, d, device="cuda", dtype=dtype, generator=g).transpose(1, 2).requires_grad_()
    k = torch.randn(b, s, hk, d, device="cuda", dtype=dtype, generator=g).transpose(1, 2).requires_grad_()
    v = torch.randn(b, s, hk, d, device="cuda", dtype=dtype, generator=g).transpose(1, 2).requires_grad_()
    do = torch.randn(b, s, h, d, device="cuda", dtype=dtype, generator=g).transpose(1, 2)
    try:
        with sdpa_kernel([be]):
            o = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=hk != h)
            fn = lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True)  # noqa: E731
            t = statistics.median(median_seconds(fn, 3, 20) for _ in range(3))
    except RuntimeError as e:  # the backend refuses the shape
        print(f"# {name} b={b} h={h}/{hk} s={s} d={d} causal={int(causal)}: {str(e).splitlines()[0]}",
              file=sys.stderr)
        return None
    return t


def main():
    print(f"# {torch.cuda.get_device_name()} torch {torch.__version__} cudnn {torch.backends.cudnn.version()}")
    cases = []
    for d in (64, 128, 256):
        for s in (512, 2048, 8192, 16384):
            for c in (False, True):
                cases.append((16384 // s, 2048 // d, 2048 // d, s, d, c, "bf16"))
    for h in (32, 64):
        for s in (2048, 8192):
            for dt in ("bf16", "fp16"):
                cases.append((16384 // s, h, 8, s, 128, True, dt))
    dts = {"bf16": torch.bfloat16, "fp16": torch.float16}
    for b, h, hk, s, d, c, dt in cases:
        for name, be in BACKENDS:
            t = run(b, h, hk, s, d, c, dts[dt], name, be)
            if t is not None:
                tf = flops(b, h, s, d, c) / t / 1e12
                print(f"CSV,{name},{dt},{b},{h},{hk},{s},{d},{int(c)},{t:.6g},{tf:.1f}", flush=True)


if __name__ == "__main__":
    main()
