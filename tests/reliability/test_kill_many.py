"""The in-place writer under repeated SIGKILL: a run of 2,000 tiny points is killed (rank 0, the
writer, or rank 1) at random moments five times (after a random number of reported points, a
random fraction of a point later) and resumed each time. After every kill the
file opens and holds every point reported done; at the end every point is in the file exactly
once, at its row, with its samples, and no point was run to completion twice."""
import os
import random
import re
import signal
import threading
import time

import h5py
import numpy as np

from conftest import check_consistent, finish, genbench, point_set, rank_of, rank_pids, start, write

POINTS = 2000
KILLS = 5
# m = 1 .. 2000 (n = k = 1): each point's progress line names its m, so runs can be compared.
CONFIG = f"""benchmarks:
  - name: g
    op: gemm
    implementations: [reference]
    axes: {{m: {{from: 1, to: {POINTS}, step: 1}}, n: 1, k: 1, dtype: fp32}}
    timing: {{warmup: 0, min_iterations: 2, max_iterations: 2, min_time: 0, state_period: 0}}
"""
DONE = re.compile(r"^\[\s*\d+/\d+\] g/reference\s+fp32 (\d+)x1x1 .*\bok\b")


def reported(stdout):
    """The m of every point a run reported complete."""
    return [int(m.group(1)) for m in map(DONE.match, stdout.splitlines()) if m]


def test_random_kills_then_resume_keep_every_point_exactly_once(tmp_path):
    cfg = write(tmp_path / "many.yaml", CONFIG)
    out = str(tmp_path / "many.h5")
    rng = random.Random(20261201)
    runs = []  # the m values each run reported
    t_start = time.monotonic()
    for kill in range(KILLS):
        resume = os.path.exists(out)
        job = start("run", cfg, "-o", out, "--backend", "host", *(["--resume"] if resume else []), ranks=2)
        victim = 0 if kill % 3 != 2 else 1  # mostly the writer
        try:
            target = next(p for p in rank_pids(job.pid, 2) if rank_of(p) == victim)
        except AssertionError:
            rc, stdout, stderr = finish(job, timeout=60)
            raise AssertionError(f"run {kill + 1} ended before its ranks were seen: rc {rc}\n{stdout[-2000:]}\n{stderr[-2000:]}")
        # Let the run report a random number of points, then kill at a random moment of the
        # next point's measurement or write.
        wanted, seen = rng.randint(20, 250), []
        for line in job.stdout:
            seen.append(line)
            if DONE.match(line) and len(reported("".join(seen))) >= wanted:
                break
        time.sleep(rng.uniform(0, 0.02))
        try:
            os.kill(target, signal.SIGKILL)
        except ProcessLookupError:
            pass
        # mpirun must end the job by itself; the rest of stdout is read from the same stream
        # (communicate() would bypass what the line iterator has buffered).
        guard = threading.Timer(120, lambda: os.killpg(job.pid, signal.SIGKILL))
        guard.start()
        seen += list(job.stdout)
        stderr = job.stderr.read()
        rc = job.wait()
        guard.cancel()
        assert rc != -signal.SIGKILL, "the job did not end within 120 s after the kill"
        done_now = reported("".join(seen))
        runs.append(done_now)
        if not os.path.exists(out):
            assert not done_now, "points reported done but no file"
            continue
        check_consistent(out)  # opens; completed rows at their index with their samples
        recorded = {p for (_, p, s) in point_set(out)}
        # every point reported done is in the file (m = point index + 1)
        assert {m - 1 for m in done_now} <= recorded, (kill, rc, stderr[-2000:])
        print(f"kill {kill + 1} (rank {victim}, rc {rc}): {len(done_now)} points this run, {len(recorded)} in the file")
    proc, _ = genbench("run", cfg, "-o", out, "--backend", "host", "--resume", ranks=2, check=True, timeout=300)
    runs.append(reported(proc.stdout))
    assert check_consistent(out) == "complete"
    with h5py.File(out, "r") as f:
        pts = f["benchmarks/g/points"][:]
        assert len(pts) == POINTS
        assert np.array_equal(pts["point"], np.arange(POINTS))
        assert np.all(pts["status"] == b"ok")
        assert np.array_equal(pts["m"], np.arange(1, POINTS + 1))
        assert np.all(pts["iterations"] == 2)
        assert np.all(np.isfinite(f["benchmarks/g/samples"][:, :, :2]))
    # No point was completed twice: each is reported by one run at most; the ones no run
    # reported are those a kill caught after their write and before their progress line.
    every = [m for r in runs for m in r]
    assert len(every) == len(set(every)), "a point reported complete by two runs"
    assert POINTS - KILLS <= len(every) <= POINTS
    assert [len(r) for r in runs[:-1]].count(0) < KILLS, "no kill landed inside a run"
    print(f"{KILLS} kills, per run {[len(r) for r in runs]}, {time.monotonic() - t_start:.1f} s")
    assert not [f for f in os.listdir(tmp_path) if ".tmp" in f]
