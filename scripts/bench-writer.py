#!/usr/bin/env python3
"""Result-file writer benchmark: a sweep of many tiny host points on several ranks, timed from
the progress lines. Prints ms per point over the first and the last N points (default 1,000)
and the result file's size (apparent and on disk).

    scripts/bench-writer.py [--bin build/bin/genbench] [--points 20000] [--ranks 4]
                            [--iterations 20] [--max-iterations 1000] [--window 1000] [--out DIR]

Every point is a gemm `reference` point with n = k = 1 and m cycling through 1..100, timed for
--iterations iterations (no warm-up; target_noise 1 stops it there) in a benchmark whose
timing.max_iterations is --max-iterations (the samples dataset's last dimension), so each window
of points holds the same work and a growing per-point cost can only come from writing the file. A point's
time is the gap between the arrival of its progress line and the previous one's (rank 0 prints
the line right after the point is in the file): it holds the point's iterations, the gather to
rank 0 and the write. The same numbers come from a build of any version, so two builds can be
compared (docs/reliability.md, "The writer").
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINE = re.compile(r"^\[\s*(\d+)/(\d+)\]")


def config(points, iterations, max_iterations):
    ms = [1 + i % 100 for i in range(points)]
    noise = 0 if iterations == max_iterations else 1  # 1: converged as soon as min_iterations ran
    return ("benchmarks:\n  - name: w\n    op: gemm\n    implementations: [reference]\n"
            f"    axes: {{m: [{', '.join(map(str, ms))}], n: 1, k: 1, dtype: fp32}}\n"
            f"    timing: {{warmup: 0, min_iterations: {iterations}, max_iterations: {max_iterations}, "
            f"min_time: 0, max_time: 1000, target_noise: {noise}, state_period: 0}}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin", "genbench"))
    ap.add_argument("--points", type=int, default=20000)
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--iterations", type=int, default=20, help="timed iterations per point")
    ap.add_argument("--max-iterations", type=int, default=1000,
                    help="timing.max_iterations: the samples dataset's last dimension (default 1000, the config default)")
    ap.add_argument("--window", type=int, default=1000)
    ap.add_argument("--mpirun", default=os.environ.get("GENBENCH_MPIEXEC", "mpirun"))
    ap.add_argument("--out", help="folder for the config and the result file (default: a temporary one, removed)")
    a = ap.parse_args()
    if a.points < 2 * a.window:
        sys.exit(f"--points ({a.points}) must be at least twice --window ({a.window})")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    tmp = None if a.out else tempfile.TemporaryDirectory(prefix="bench-writer-")
    out_dir = a.out or tmp.name
    os.makedirs(out_dir, exist_ok=True)
    cfg = os.path.join(out_dir, "bench-writer.yaml")
    h5 = os.path.join(out_dir, "bench-writer.h5")
    with open(cfg, "w") as f:
        f.write(config(a.points, a.iterations, max(a.iterations, a.max_iterations)))
    if os.path.exists(h5):
        os.unlink(h5)
    cmd = [a.mpirun, "--oversubscribe", "--allow-run-as-root", "-np", str(a.ranks), a.bin, "run", cfg, "-o", h5,
           "--backend", "host"]
    print(" ".join(cmd), flush=True)
    stamps = []
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, bufsize=1)
    for line in proc.stdout:
        if LINE.match(line):
            stamps.append(time.monotonic())
            n = len(stamps)
            if n % 1000 == 0:
                print(f"  {n} points, {stamps[-1] - t0:.0f} s", flush=True)
    err = proc.stderr.read()
    rc = proc.wait()
    if rc != 0:
        sys.exit(f"genbench exited {rc}:\n{err}")
    if len(stamps) != a.points:
        sys.exit(f"{len(stamps)} progress lines for {a.points} points")
    w = a.window
    first = (stamps[w] - stamps[0]) / w * 1e3        # the gaps before points 2 .. w+1
    last = (stamps[-1] - stamps[-1 - w]) / w * 1e3   # the last w gaps
    st = os.stat(h5)
    print(f"points {a.points}, ranks {a.ranks}, iterations per point {a.iterations} (max_iterations "
          f"{max(a.iterations, a.max_iterations)}), total {stamps[-1] - t0:.1f} s")
    print(f"ms per point: first {w}: {first:.2f}, last {w}: {last:.2f}, last/first {last / first:.2f}")
    print(f"file: {st.st_size / 1e6:.1f} MB apparent, {st.st_blocks * 512 / 1e6:.1f} MB on disk ({h5})")
    if tmp:
        tmp.cleanup()


if __name__ == "__main__":
    main()
