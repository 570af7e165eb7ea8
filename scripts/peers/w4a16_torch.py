"""Peers of the W4A16 benchmark (configs/gemm-int4.yaml) in the same device call: torch's int4 kernel
(torch._weight_int4pack_mm, bf16 activations, group 128), fp16 torch.matmul at the same shapes,
and torch._scaled_mm (fp8 e4m3, 8192^3) with the name of the kernel it runs. L2 cold like the
C++ side (rotating copies of the weights); 3 rounds, medians. Prints CSV lines."""
import statistics
import sys

import torch

L2 = torch.cuda.get_device_properties(0).L2_cache_size


def copies_for(nbytes):
    return max(2, (2 * L2 + nbytes - 1) // max(nbytes, 1) + 1)


def time_it(fn, copies):
    def reps_time(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        fn(0)
        fn(1)
        a.record()
        for i in range(reps):
            fn(i % copies)
        b.record()
        b.synchronize()
        return a.elapsed_time(b) * 1e-3 / reps

    one = reps_time(3)
    return reps_time(max(5, min(2000, int(3e-3 / max(one, 1e-7)))))


def int4(ms, n, k, group=128):
    wbytes = n * k // 2 + (k // group) * n * 4
    c = copies_for(wbytes)
    packed, sz = [], []
    for i in range(c):
        q = torch.randint(0, 256, (n, k // 2), dtype=torch.uint8, device="cuda")
        packed.append(torch._convert_weight_to_int4pack(q, 8))
        s = torch.rand(k // group, n, 1, device="cuda", dtype=torch.bfloat16) * 0.01 + 0.005
        sz.append(torch.cat([s, torch.zeros_like(s)], dim=2).contiguous())
    # torch's own semantics (w = (q - 8) * s + zero) checked once against the dequantised weights
    q0 = torch.randint(0, 16, (n, k), dtype=torch.int32, device="cuda")
    qb = (q0[:, ::2] << 4 | q0[:, 1::2]).to(torch.uint8)
    p0 = torch._convert_weight_to_int4pack(qb, 8)
    x = torch.rand(16, k, device="cuda", dtype=torch.bfloat16) * 2 - 1
    out = torch._weight_int4pack_mm(x, p0, group, sz[0])
    s0 = sz[0][:, :, 0].float().repeat_interleave(group, dim=0)  # k x n
    w = (q0.t().float() - 8) * s0
    ref = x.float() @ w
    err = ((out.float() - ref).abs().max() / (x.float().abs() @ w.abs()).max()).item()
    print(f"CHECK,torch_int4,n={n},k={k},max_err_rel={err:.3g}", flush=True)
    w16 = [torch.randn(n, k, device="cuda", dtype=torch.float16) * 0.02 for _ in range(copies_for(n * k * 2))]
    for m in ms:
        xb = torch.rand(m, k, device="cuda", dtype=torch.bfloat16)
        xh = xb.half()
        t4, t16 = [], []
        f4 = lambda i: torch._weight_int4pack_mm(xb, packed[i % c], group, sz[i % c])
        f16 = lambda i: torch.matmul(xh, w16[i % len(w16)].t())
        for r in range(3):
            if r % 2 == 0:
                t4.append(time_it(f4, c))
                t16.append(time_it(f16, len(w16)))
            else:
                t16.append(time_it(f16, len(w16)))
                t4.append(time_it(f4, c))
        print(f"CSV,torch,{m},{n},{k},{group},int4_us={statistics.median(t4) * 1e6:.2f},"
              f"fp16_matmul_us={statistics.median(t16) * 1e6:.2f}", flush=True)


def fp8():
    n = 8192
    a = (torch.randn(n, n, device="cuda") * 0.5).to(torch.float8_e4m3fn)
    b = (torch.randn(n, n, device="cuda") * 0.5).to(torch.float8_e4m3fn)
    one = torch.ones((), device="cuda")
    f = lambda i: torch._scaled_mm(a, b.t(), one, one, out_dtype=torch.bfloat16)
    t = statistics.median([time_it(f, 2) for _ in range(3)])
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        f(0)
        torch.cuda.synchronize()
    names = sorted({e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})
    print(f"CSV,torch_scaled_mm,8192,TFLOPs={2 * n**3 / t * 1e-12:.0f},kernels={'|'.join(names)}", flush=True)


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    if what in ("all", "int4", "int4-small"):
        ms = [1, 4, 8, 16] if what == "int4-small" else [1, 4, 8, 16, 64, 256, 1024, 4096]
        for n, k in [(4096, 4096), (14336, 4096), (4096, 14336), (8192, 8192), (28672, 8192), (8192, 28672)]:
            int4(ms, n, k)
    if what in ("all", "fp8"):
        fp8()
