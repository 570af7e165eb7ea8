"""Timing shared by the torch peer scripts: CUDA events around each call, after a warm-up;
the median of the samples, in seconds."""
import statistics

import torch


def median_seconds(fn, warmup=5, reps=30):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        samples.append(start.elapsed_time(stop) * 1e-3)
    return statistics.median(samples)
