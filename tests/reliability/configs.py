"""Small configs the reliability tests run (host backend, 2 ranks)."""

# ~40 quick points in two benchmarks: rank 0 spends much of its time writing the file, so
# random kills often land inside a write.
FAST = """benchmarks:
  - name: g
    op: gemm
    implementations: [reference]
    axes: {m: [8, 16, 24, 32, 40, 48, 56, 64, 72, 80], n: 8, k: 8, dtype: [fp32, fp16]}
    timing: {warmup: 0, min_iterations: 2, max_iterations: 40, min_time: 0.02, max_time: 1}
  - name: c
    op: collective
    implementations: [mpi]
    axes: {collective: [all_reduce, all_gather, broadcast, reduce, send_recv], bytes: [64, 4K, 64K, 1M]}
    timing: {warmup: 0, min_iterations: 2, max_iterations: 40, min_time: 0.02, max_time: 1}
"""

# 8 points of ~0.15 s each: a signal lands inside a point.
SLOW = """benchmarks:
  - name: g
    op: gemm
    implementations: [reference]
    axes: {m: [16, 32, 48, 64], n: 16, k: 16, dtype: [fp32, fp16]}
    timing: {warmup: 0, min_iterations: 2, max_iterations: 100000, min_time: 0.15, max_time: 0.15, target_noise: 0}
"""

# 8 tiny points for fault injection.
SMALL = """benchmarks:
  - name: g
    op: gemm
    implementations: [reference]
    axes: {m: [16, 32, 48, 64], n: 16, k: 16, dtype: [fp32, fp16]}
    timing: {warmup: 0, min_iterations: 2, max_iterations: 5, min_time: 0}
"""
