"""Promise 2: SIGINT, SIGTERM or SIGUSR1 let the current point finish, close the file cleanly
(state "interrupted"), exit 130 and say how to resume. Signals reach the ranks directly (kill,
a scheduler) or through mpirun: Open MPI forwards SIGUSR1 to the ranks but answers SIGINT and
SIGTERM by killing them, so launch/genbench-local turns the first SIGINT/SIGTERM into SIGUSR1.
A hard stop of mpirun still leaves a valid file that --resume completes."""
import os
import signal
import time

import pytest

from conftest import (BIN, MPI_FLAGS, MPIEXEC, ROOT, check_consistent, finish, genbench, genbench_ranks,
                      point_set, rank_of, rank_pids, start, write)
from configs import SLOW

EXPECTED = {("g", i, "ok") for i in range(8)}


def wait_for_file(path, timeout=30):
    deadline = time.monotonic() + timeout
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert os.path.exists(path), "the run never created its file"


def assert_graceful(rc, out, err, path, cfg):
    assert rc == 130, (rc, out, err)
    assert check_consistent(path) == "interrupted"
    assert "--resume" in err and path in err, err
    n = len(point_set(path))
    assert 1 <= n < 8, n
    # resume completes the sweep
    genbench("run", cfg, "-o", path, "--backend", "host", "--resume", ranks=2, check=True)
    assert point_set(path) == EXPECTED
    assert check_consistent(path) == "complete"


@pytest.fixture
def cfg(tmp_path):
    return write(tmp_path / "slow.yaml", SLOW)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGUSR1])
def test_signal_to_every_rank(cfg, tmp_path, sig):
    out = str(tmp_path / "r.h5")
    job = start("run", cfg, "-o", out, "--backend", "host", ranks=2)
    pids = rank_pids(job.pid, 2)
    wait_for_file(out)
    time.sleep(0.35)  # inside the third point or so
    for p in pids:
        os.kill(p, sig)
    t0 = time.monotonic()
    rc, stdout, stderr = finish(job, timeout=60)
    assert time.monotonic() - t0 < 10, "the current point (0.15 s) should finish promptly"
    assert_graceful(rc, stdout, stderr, out, cfg)


def test_signal_to_one_rank_stops_all(cfg, tmp_path):
    out = str(tmp_path / "one.h5")
    job = start("run", cfg, "-o", out, "--backend", "host", ranks=2)
    pids = rank_pids(job.pid, 2)
    wait_for_file(out)
    time.sleep(0.35)
    os.kill(next(p for p in pids if rank_of(p) == 1), signal.SIGTERM)
    rc, stdout, stderr = finish(job, timeout=60)
    assert_graceful(rc, stdout, stderr, out, cfg)


def test_sigusr1_to_mpirun_is_forwarded(cfg, tmp_path):
    out = str(tmp_path / "m.h5")
    job = start("run", cfg, "-o", out, "--backend", "host", ranks=2)
    rank_pids(job.pid, 2)
    wait_for_file(out)
    time.sleep(0.35)
    os.kill(job.pid, signal.SIGUSR1)
    rc, stdout, stderr = finish(job, timeout=60)
    assert_graceful(rc, stdout, stderr, out, cfg)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_sigint_sigterm_to_the_launcher(cfg, tmp_path, sig):
    out = str(tmp_path / "l.h5")
    env = {"GENBENCH_BIN": BIN, "GENBENCH_HOST_RANKS": "2", "PATH": os.environ["PATH"]}
    job = start("run", cfg, "-o", out, launcher=os.path.join(ROOT, "launch", "genbench-local"), env=env)
    wait_for_file(out)
    time.sleep(0.35)
    os.kill(job.pid, sig)
    rc, stdout, stderr = finish(job, timeout=60)
    assert_graceful(rc, stdout, stderr, out, cfg)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_sigint_sigterm_to_mpirun_stops_hard_but_file_survives(cfg, tmp_path, sig):
    out = str(tmp_path / "hard.h5")
    job = start("run", cfg, "-o", out, "--backend", "host", ranks=2)
    rank_pids(job.pid, 2)
    wait_for_file(out)
    time.sleep(0.35)
    os.kill(job.pid, sig)
    rc, stdout, stderr = finish(job, timeout=60)
    assert rc != 0
    state = check_consistent(out)
    # A signal that lands after the last point leaves a complete file; otherwise it is resumable.
    assert state in ("running", "interrupted") or (state == "complete" and point_set(out) == EXPECTED), state
    genbench("run", cfg, "-o", out, "--backend", "host", "--resume", ranks=2, check=True)
    assert point_set(out) == EXPECTED


def _start_with_rank1_late(cfg, out, tmp_path, delay_s):
    """mpirun -np 2 where rank 1 starts genbench delay_s late: rank 0 waits inside MPI_Init."""
    wrapper = write(tmp_path / "late-rank1.sh",
                    f'#!/bin/sh\n[ "$OMPI_COMM_WORLD_RANK" = 1 ] && sleep {delay_s}\nexec "{BIN}" "$@"\n')
    os.chmod(wrapper, 0o755)
    return start(*MPI_FLAGS, "-np", "2", wrapper, "run", cfg, "-o", out, "--backend", "host", launcher=MPIEXEC)


def _catches(pid, sig):
    with open(f"/proc/{pid}/status") as f:
        mask = next(int(l.split()[1], 16) for l in f if l.startswith("SigCgt:"))
    return bool(mask >> (sig - 1) & 1)


@pytest.mark.parametrize("signals", [1, 2])
def test_signal_while_the_ranks_start(cfg, tmp_path, signals):
    # A scheduler's warning signal soon after a job starts can land while MPI_Init is still
    # waiting for a slow rank. Rank 1 starts 3 s late; rank 0 is signalled as soon as it catches
    # SIGUSR1, and rank 1 must not have started then, so rank 0 is inside MPI_Init.
    out = str(tmp_path / "start.h5")
    job = _start_with_rank1_late(cfg, out, tmp_path, 3)
    deadline = time.monotonic() + 30
    while 0 not in genbench_ranks(job.pid):
        assert time.monotonic() < deadline, "rank 0 never ran genbench"
        time.sleep(0.01)
    r0 = genbench_ranks(job.pid)[0]
    deadline = time.monotonic() + 2
    while not _catches(r0, signal.SIGUSR1):
        assert time.monotonic() < deadline, "rank 0 does not catch SIGUSR1 before MPI_Init"
        time.sleep(0.005)
    assert 1 not in genbench_ranks(job.pid), "rank 1 started before rank 0 was signalled"
    for _ in range(signals):
        os.kill(r0, signal.SIGUSR1)
        time.sleep(0.05)
    rc, stdout, stderr = finish(job, timeout=60)
    if signals == 2:
        # a second signal before the run has started stops the rank at once
        assert rc != 0 and rc != 130, (rc, stdout, stderr)
        assert not os.path.exists(out), "the run got as far as its file"
        return
    assert rc == 130, (rc, stdout, stderr)
    assert check_consistent(out) == "interrupted"
    assert point_set(out) == set()
    assert "--resume" in stderr and out in stderr, stderr
    genbench("run", cfg, "-o", out, "--backend", "host", "--resume", ranks=2, check=True)
    assert point_set(out) == EXPECTED
    assert check_consistent(out) == "complete"
