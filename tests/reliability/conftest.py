"""Shared helpers for the reliability tests: the real genbench binary under mpirun on the host
backend. Every subprocess has a timeout, so no test can hang CI."""
import os
import signal
import subprocess
import sys
import time

import h5py
import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("GENBENCH_BIN", os.path.join(ROOT, "build", "bin", "genbench"))
MPIEXEC = os.environ.get("GENBENCH_MPIEXEC", "mpirun")
MPI_FLAGS = ["--oversubscribe", "--allow-run-as-root"]
# Environment variables the ranks must see (mpirun -x).
FORWARD = ["GENBENCH_INJECT_FAULT", "GENBENCH_WATCHDOG_S"]
TIMEOUT = 120  # seconds, for any single genbench job

os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
os.environ.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")


def mpi_cmd(args, ranks, env=None):
    env = env or {}
    fwd = []
    for k in FORWARD:
        if k in env or k in os.environ:
            fwd += ["-x", k]
    return [MPIEXEC, *MPI_FLAGS, *fwd, "-np", str(ranks), BIN, *args]


def genbench(*args, ranks=None, env=None, timeout=TIMEOUT, check=False):
    """Runs genbench (under mpirun when ranks is given); returns (CompletedProcess, seconds)."""
    cmd = mpi_cmd(list(args), ranks, env) if ranks else [BIN, *args]
    full_env = dict(os.environ, **(env or {}))
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env,
                          errors="replace")
    elapsed = time.monotonic() - t0
    if check and proc.returncode != 0:
        raise AssertionError(f"{cmd} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc, elapsed


def start(*args, ranks=2, env=None, launcher=None):
    """Starts a job in its own process group; returns the Popen."""
    if launcher:
        cmd = [launcher, *args]
    else:
        cmd = mpi_cmd(list(args), ranks, env)
    full_env = dict(os.environ, **(env or {}))
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env,
                            start_new_session=True, errors="replace")


def finish(proc, timeout=TIMEOUT):
    """Waits for a started job; kills its whole process group if it outlives the timeout."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"job did not end within {timeout} s\n{out}\n{err}")
    return proc.returncode, out, err


def genbench_ranks(mpirun_pid):
    """{rank: pid} of this mpirun's descendants that run the genbench binary now (a process
    caught between fork and exec, or just after exec, may not show its rank yet: left out)."""
    name = os.path.basename(BIN)[:15]
    found = {}
    for pid in descendants(mpirun_pid):
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() != name:
                    continue
        except OSError:
            continue
        r = rank_of(pid)
        if r >= 0:
            found[r] = pid
    return found


def rank_pids(mpirun_pid, ranks, timeout=30):
    """PIDs of the genbench ranks 0 .. ranks-1 started by this mpirun, once every one is seen."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = genbench_ranks(mpirun_pid)
        if set(found) >= set(range(ranks)):
            return sorted(found.values())
        time.sleep(0.02)
    raise AssertionError(f"ranks of mpirun {mpirun_pid} not found")


def rank_of(pid):
    """The MPI rank in a process's environment, or -1 (not set yet, or the process is gone)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            for item in f.read().split(b"\0"):
                if item.startswith(b"OMPI_COMM_WORLD_RANK="):
                    return int(item.split(b"=", 1)[1])
    except OSError:
        pass
    return -1


def descendants(pid):
    children = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(d))
            except (OSError, IndexError, ValueError):
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for c in children.get(p, []):
            out.append(c)
            todo.append(c)
    return out


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return str(path)


def completed(points):
    """The rows of a points table whose point completed (schema 2 allocates a row for every point
    of the sweep; a row whose status is empty has not completed)."""
    return points[points["status"] != b""]


def point_set(path):
    """{(benchmark, point index, status)} of a result file's completed points."""
    out = set()
    with h5py.File(path, "r") as f:
        for name, g in f["benchmarks"].items():
            for row in completed(g["points"][:]):
                out.add((name, int(row["point"]), row["status"].decode()))
    return out


def check_consistent(path):
    """The file opens, is a genbench file of schema 2; every benchmark's tables have one row per
    sweep point; each completed row sits at its point's index; completed ok points have their
    samples on every rank, the others no timing."""
    with h5py.File(path, "r") as f:
        assert f.attrs["format"] == "genbench-results"
        assert f.attrs["schema_version"] == 2
        for name, g in f["benchmarks"].items():
            n = int(g.attrs["sweep_size"])
            assert len(g["points"]) == n and g["samples"].shape[0] == n and g["rank_stats"].shape[0] == n, name
            pts = g["points"][:]
            done = pts["status"] != b""
            rows = np.nonzero(done)[0]
            assert np.array_equal(pts["point"][done], rows), f"{name}: a completed row not at its point's index"
            ok = pts["status"] == b"ok"
            if ok.any():  # every completed point has its samples on every rank
                iters = pts["iterations"][ok]
                assert np.all(iters >= 1), name
                samples = g["samples"][:][ok]
                for s, k in zip(samples, iters):
                    assert np.all(np.isfinite(s[:, :k])), name
            bad = done & ~ok
            assert np.all(np.isnan(pts["time_median_s"][bad])), f"{name}: a timing for a point that did not run"
            assert np.all(pts["iterations"][bad] == 0), f"{name}: iterations for a point that did not run"
        return f.attrs["state"]


def sha(path):
    import hashlib
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


@pytest.fixture(scope="session")
def hostname():
    import socket
    return socket.gethostname()
