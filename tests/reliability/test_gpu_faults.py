"""Promises 3 and 4 on real GPUs (cuda backend, NCCL, 2 ranks): a real device fault on one rank
ends every rank within a bounded time, naming rank, host, point and the CUDA call; a rank that
leaves out one NCCL collective leaves its peer inside a real NCCL kernel, and the watchdog aborts
the communicators (ncclCommAbort) and ends the job within deadline + grace, naming on each rank
the NCCL collective and its number. Skipped without 2 GPUs or without the CUDA backend. Every
job has a hard timeout (conftest.finish), so no test can hang."""
import os
import re
import shutil
import socket
import subprocess
import threading
import time

import pytest

from conftest import BIN, check_consistent, finish, point_set, start, write

RANKS = 2
DEADLINE = 5       # watchdog deadline (s) for the skipped collective
GRACE = 15         # watchdog line -> job gone: report pause, ncclCommAbort (<= 5 s), MPI_Abort
STARTUP = 90       # MPI, CUDA and NCCL start-up before the faulty point, at most
HARD_CAP = STARTUP + DEADLINE + GRACE + 30

CONFIG = """settings:
  backend: cuda
benchmarks:
  - name: c
    op: collective
    implementations: [nccl]
    axes: {collective: all_reduce, bytes: [4K, 64K, 1M, 4M], dtype: fp32}
    timing: {warmup: 1, min_iterations: 3, max_iterations: 10, min_time: 0}
"""


def _gpus():
    if not shutil.which("nvidia-smi"):
        return 0
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(1 for l in out.splitlines() if l.startswith("GPU "))


def _cuda_built():
    if not os.path.exists(BIN):
        return False
    try:
        out = subprocess.run([BIN, "list"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    first = out.splitlines()[0] if out else ""
    return "cuda" in first and "cuda (not built)" not in first


def _skip_reason():
    n = _gpus()
    if n < RANKS:
        return f"needs {RANKS} GPUs (nvidia-smi -L lists {n})"
    if not _cuda_built():
        return f"{BIN} was built without the CUDA backend"
    return None


_why = _skip_reason()
pytestmark = pytest.mark.skipif(_why is not None, reason=_why or "")

GPU_ENV = {"NCCL_NVLS_ENABLE": "0", "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def run_timed(cfg, out, fault, watchdog_s):
    """Runs the 2-rank job; returns (rc, stdout, stderr lines with arrival times, end time)."""
    env = dict(GPU_ENV, GENBENCH_INJECT_FAULT=fault, GENBENCH_WATCHDOG_S=str(watchdog_s))
    # The ranks inherit mpirun's environment (conftest adds -x for the fault and watchdog).
    proc = start("run", cfg, "-o", out, "--backend", "cuda", "-q", ranks=RANKS, env=env)
    lines = []

    def read():
        for line in proc.stderr:
            lines.append((time.monotonic(), line.rstrip("\n")))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        proc.wait(timeout=HARD_CAP)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.wait()
        reader.join(5)
        raise AssertionError(f"job did not end within {HARD_CAP} s\n" + "\n".join(l for _, l in lines))
    end = time.monotonic()
    reader.join(10)
    stdout = proc.stdout.read()
    return proc.returncode, stdout, lines, end


@pytest.fixture
def cfg(tmp_path):
    return write(tmp_path / "gpu.yaml", CONFIG)


def test_skipped_nccl_collective_is_ended_by_the_watchdog(cfg, tmp_path):
    out = str(tmp_path / "skip.h5")
    t0 = time.monotonic()
    rc, stdout, lines, end = run_timed(cfg, out, "rank=1,point=2,kind=skip_collective", DEADLINE)
    text = "\n".join(l for _, l in lines)
    assert rc != 0, text
    assert end - t0 < STARTUP + DEADLINE + GRACE, (end - t0, text)
    dog = [(t, l) for t, l in lines if "watchdog:" in l]
    found = {}
    for rank in range(RANKS):
        hit = next(((t, l) for t, l in dog if f"rank {rank} on " in l), None)
        assert hit, f"no watchdog line from rank {rank}\n{text}"
        t, line = hit
        assert "benchmark 'c' point 2" in line, line
        # Each rank names the NCCL collective and its number: rank 0 waits inside it, rank 1
        # skipped it.
        m = re.search(r"(nccl\w+) #(\d+)", line)
        assert m, line
        found[rank] = (m.group(1), int(m.group(2)))
        # It fired after the deadline, not before, and within one poll of it.
        idle = float(re.search(r"no progress for ([0-9.]+) s", line).group(1))
        assert DEADLINE <= idle < DEADLINE + 2, line
    assert found[0] == found[1] and found[0][0] == "ncclAllReduce", found
    assert "waiting for the device" in next(l for _, l in dog if "rank 0 on " in l)
    assert "skipped" in next(l for _, l in dog if "rank 1 on " in l)
    # deadline + grace: from the first watchdog line to the end of the job.
    assert end - min(t for t, _ in dog) < GRACE, text
    # The points completed before the skipped collective are in the file.
    assert check_consistent(out) == "running"
    assert point_set(out) == {("c", 0, "ok"), ("c", 1, "ok")}


def test_device_fault_on_rank_zero_ends_every_rank(cfg, tmp_path):
    out = str(tmp_path / "dev.h5")
    t0 = time.monotonic()
    # The watchdog only bounds the test should anything block; the fault must end the job first.
    rc, stdout, lines, end = run_timed(cfg, out, "rank=0,point=1,kind=device_error", 60)
    text = "\n".join(l for _, l in lines)
    assert rc != 0, text
    assert end - t0 < STARTUP + GRACE, (end - t0, text)
    assert not any("watchdog:" in l for _, l in lines), text
    host = socket.gethostname()
    hit = next(((t, l) for t, l in lines if l.startswith("genbench: error on rank 0")), None)
    assert hit, text
    t, line = hit
    assert f"rank 0 ({host})" in line and "benchmark 'c' point 1" in line, line
    assert re.search(r"\bcuda\w+\(.*\) failed", line), line  # the CUDA call that reported it
    assert "GENBENCH_INJECT_FAULT" in line, line
    assert end - t < GRACE, text  # every rank gone soon after the error
    assert check_consistent(out) == "running"
    assert point_set(out) == {("c", 0, "ok")}


def test_unset_fault_runs_clean_on_the_gpus(cfg, tmp_path):
    out = str(tmp_path / "clean.h5")
    proc = start("run", cfg, "-o", out, "--backend", "cuda", "-q", ranks=RANKS, env=dict(GPU_ENV))
    rc, _, err = finish(proc, timeout=HARD_CAP)
    assert rc == 0, err
    assert "watchdog" not in err
    assert point_set(out) == {("c", i, "ok") for i in range(4)}
    assert check_consistent(out) == "complete"
