#!/usr/bin/env python3
"""The peer for gemm/cublaslt: torch.matmul (bf16, fp16), torch._scaled_mm (fp8 e4m3) and
torch._int_mm (int8) on the same shapes and layout as configs/gemm.yaml (A m x k, B stored
n x k, i.e. A @ B^T), random normal inputs, median of CUDA-event-timed calls.
Prints one line per case: dtype, size, median seconds, TFLOP/s (TOP/s for int8)."""
import sys

import torch

from torch_timing import median_seconds


def bench(fn, warmup=5, reps=50):
    return median_seconds(fn, warmup, reps)

def main():
    sizes = [int(s) for s in sys.argv[1:]] or [4096, 8192]
    dev = torch.device("cuda", 0)
    torch.manual_seed(0)
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(dev)}")
    for n in sizes:
        flops = 2.0 * n * n * n
        for name, dt in (("bf16", torch.bfloat16), ("fp16", torch.float16)):
            a = torch.randn(n, n, device=dev, dtype=dt)
            b = torch.randn(n, n, device=dev, dtype=dt)
            t = bench(lambda: torch.matmul(a, b.t()))
            print(f"torch.matmul {name} {n}^3: {t * 1e3:.3f} ms {flops / t / 1e12:.1f} TFLOP/s")
        a = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn)
        b = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn)
        sa = torch.tensor(0.75, device=dev)
        sb = torch.tensor(1.25, device=dev)
        t = bench(lambda: torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16))
        print(f"torch._scaled_mm fp8_e4m3 {n}^3: {t * 1e3:.3f} ms {flops / t / 1e12:.1f} TFLOP/s")
        a = torch.randint(-8, 8, (n, n), device=dev, dtype=torch.int8)
        b = torch.randint(-8, 8, (n, n), device=dev, dtype=torch.int8)
        t = bench(lambda: torch._int_mm(a, b.t()))
        print(f"torch._int_mm int8 {n}^3: {t * 1e3:.3f} ms {flops / t / 1e12:.1f} TOP/s")
        del a, b
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
