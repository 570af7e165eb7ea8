"""Promises 3-5: injected faults (GENBENCH_INJECT_FAULT) and the watchdog.
error -> every rank exits within a bounded time, the message names rank, host, point and call;
wrong -> the point is recorded as failed with its error measure, never as a timing, exit 3;
oom   -> the point is skipped with the reason and the sweep goes on (also a real over-large point);
hang  -> the watchdog aborts the job within deadline + grace and names, on each rank, the point,
         the operation and its sequence number;
held  -> the point is timed and reported as held back (progress line, summary, file)."""
import math
import os
import socket

import h5py
import numpy as np
import pytest

from conftest import check_consistent, completed, genbench, point_set, write
from configs import SMALL

ALL_OK = {("g", i, "ok") for i in range(8)}


@pytest.fixture
def cfg(tmp_path):
    return write(tmp_path / "small.yaml", SMALL)


def run(cfg, out, fault=None, ranks=2, **env):  # ranks=None: one rank without mpirun
    e = dict(env)
    if fault:
        e["GENBENCH_INJECT_FAULT"] = fault
    return genbench("run", cfg, "-o", out, "--backend", "host", "-q", ranks=ranks, env=e, timeout=90)


def rows(path):
    with h5py.File(path, "r") as f:
        return {int(r["point"]): r for r in completed(f["benchmarks/g/points"][:])}


@pytest.mark.parametrize("call", [None, "cudaMemcpyAsync"])
def test_error_on_one_rank_ends_every_rank(cfg, tmp_path, call):
    out = str(tmp_path / "e.h5")
    fault = "rank=1,point=3,kind=error" + (f",call={call}" if call else "")
    proc, elapsed = run(cfg, out, fault)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert elapsed < 30
    host = socket.gethostname()
    line = next(l for l in proc.stderr.splitlines() if l.startswith("genbench: error on rank 1"))
    assert f"rank 1 ({host})" in line and "benchmark 'g' point 3" in line, line
    assert f"{call or 'cudaLaunchKernel'} failed" in line, line
    # the points before the fault are in the file
    assert check_consistent(out) == "running"
    assert point_set(out) == {("g", i, "ok") for i in range(3)}


def test_error_on_rank_zero_of_three(cfg, tmp_path):
    out = str(tmp_path / "e0.h5")
    proc, elapsed = run(cfg, out, "rank=0,point=0,kind=error", ranks=3)
    assert proc.returncode == 1 and elapsed < 30
    assert "error on rank 0" in proc.stderr and "point 0" in proc.stderr


def test_wrong_result_is_a_failed_point_not_a_timing(cfg, tmp_path):
    out = str(tmp_path / "w.h5")
    proc, _ = run(cfg, out, "rank=1,point=3,kind=wrong")
    assert proc.returncode == 3, proc.stderr
    r = rows(out)
    bad = r[3]
    assert bad["status"] == b"failed"
    assert b"validation" in bad["reason"] and b"rank 1" in bad["reason"]
    assert bad["validation_error"] > bad["validation_tolerance"] > 0
    for col in ("time_median_s", "time_mean_s", "time_min_s", "tflops"):
        assert math.isnan(bad[col]) or bad[col] == 0, col
    assert math.isnan(bad["time_median_s"])
    assert bad["iterations"] == 0  # no samples: readers take samples[3, :, :iterations]
    with h5py.File(out, "r") as f:
        assert np.all(f["benchmarks/g/rank_stats"][3]["iterations"] == 0)
    assert all(r[i]["status"] == b"ok" for i in r if i != 3)
    assert check_consistent(out) == "complete"


def held_config(tmp_path, retime, cooldown):
    text = SMALL.replace("min_time: 0}", f"min_time: 0, retime_held: {retime}, cooldown: {cooldown}}}")
    assert text != SMALL
    return write(tmp_path / "held.yaml", text)


@pytest.mark.parametrize("retime", [0, 2])
def test_held_back_point_is_timed_and_reported(tmp_path, retime):
    # Rank 1's device state during point 2's iterations reads as capped (software power cap) at
    # every timing: the point is timed retime + 1 times (after a rest each), then kept; rank 0's
    # progress lines and summary say so, the file records it for that point only (the state is
    # gathered over ranks).
    out = str(tmp_path / "held.h5")
    proc, _ = genbench("run", held_config(tmp_path, retime, 0.3), "-o", out, "--backend", "host", ranks=2,
                       env={"GENBENCH_INJECT_FAULT": "rank=1,point=2,kind=held"}, timeout=90)
    assert proc.returncode == 0, proc.stderr
    held = [l for l in proc.stdout.splitlines() if "(held back: software power cap)" in l]
    assert len(held) == 1 and held[0].startswith("[") and "ok" in held[0], proc.stdout
    again = [l for l in proc.stdout.splitlines() if "held back while timed; timing it again after 0.3s" in l]
    assert len(again) == retime and all(f"({i + 1}/{retime})" in l for i, l in enumerate(again)), proc.stdout
    assert "1 point timed with the card held back (software power cap)" in proc.stdout, proc.stdout
    r = rows(out)
    assert r[2]["status"] == b"ok" and r[2]["time_median_s"] > 0
    assert r[2]["throttled"] == 1 and r[2]["throttle_reasons"] & 0x4 and r[2]["retimed"] == retime
    assert all(r[i]["throttled"] == 0 and r[i]["throttle_reasons"] == 0 and r[i]["retimed"] == 0 for i in r if i != 2)
    assert point_set(out) == ALL_OK


def test_point_held_back_once_is_timed_again_after_a_rest(tmp_path):
    # Held back at its first timing only: the second timing, after the rest, is the one kept,
    # and it is not flagged.
    out = str(tmp_path / "held-once.h5")
    proc, elapsed = genbench("run", held_config(tmp_path, 3, 1.0), "-o", out, "--backend", "host", ranks=2,
                             env={"GENBENCH_INJECT_FAULT": "rank=1,point=2,kind=held,times=1"}, timeout=90)
    assert proc.returncode == 0, proc.stderr
    again = [l for l in proc.stdout.splitlines() if "timing it again after 1s of rest (1/3)" in l]
    assert len(again) == 1, proc.stdout
    assert "held back:" not in proc.stdout and "timed with the card held back" not in proc.stdout, proc.stdout
    assert elapsed >= 1.0
    r = rows(out)
    assert r[2]["status"] == b"ok" and r[2]["retimed"] == 1 and r[2]["throttled"] == 0
    assert r[2]["throttle_reasons"] == 0
    assert point_set(out) == ALL_OK


def test_injected_oom_is_a_skip_and_the_sweep_goes_on(cfg, tmp_path):
    out = str(tmp_path / "o.h5")
    proc, _ = run(cfg, out, "rank=0,point=2,kind=oom")
    assert proc.returncode == 0, proc.stderr
    r = rows(out)
    assert r[2]["status"] == b"skipped" and b"out of memory" in r[2]["reason"]
    assert point_set(out) == (ALL_OK - {("g", 2, "ok")}) | {("g", 2, "skipped")}


def test_real_over_large_point_is_a_skip(tmp_path):
    # A is m x k fp32 with m = 1M: choose k so that A alone exceeds this machine's memory (the
    # host backend refuses any allocation over half of it), within its FLOP limit (2e10).
    with open("/proc/meminfo") as f:
        total = int(next(l for l in f if l.startswith("MemTotal:")).split()[1]) * 1024
    k = total // (4 << 20) + 1
    if 2 * (1 << 20) * k > 2e10:
        pytest.skip(f"{total >> 30} GiB of memory: no over-large gemm fits the host FLOP limit")
    cfg = write(tmp_path / "big.yaml", f"""benchmarks:
  - name: g
    op: gemm
    implementations: [reference]
    axes: {{m: [16, 1M, 32], n: 1, k: {k}, dtype: fp32}}
    timing: {{warmup: 0, min_iterations: 2, max_iterations: 3, min_time: 0}}
""")
    out = str(tmp_path / "big.h5")
    proc, _ = genbench("run", cfg, "-o", out, "--backend", "host", "-q", ranks=2, timeout=90)
    assert proc.returncode == 0, proc.stderr
    r = rows(out)
    assert r[1]["status"] == b"skipped" and b"cannot allocate" in r[1]["reason"], r[1]["reason"]
    assert r[0]["status"] == b"ok" and r[2]["status"] == b"ok"


@pytest.mark.parametrize("where", ["env", "config"])
def test_watchdog_aborts_a_hang_and_names_each_rank(tmp_path, where):
    deadline = 3
    text = SMALL if where == "env" else SMALL.replace("benchmarks:", f"settings: {{watchdog_s: {deadline}}}\nbenchmarks:", 1)
    cfg = write(tmp_path / "hang.yaml", text)
    out = str(tmp_path / "h.h5")
    env = {"GENBENCH_WATCHDOG_S": str(deadline)} if where == "env" else {}
    proc, elapsed = run(cfg, out, "rank=1,point=3,kind=hang", **env)
    assert proc.returncode != 0
    assert elapsed < deadline + 10, elapsed  # deadline + grace (poll, report, MPI_Abort, start-up)
    lines = [l for l in proc.stderr.splitlines() if "watchdog:" in l]
    seqs = {}
    for rank in (0, 1):
        line = next((l for l in lines if f"rank {rank} on" in l), None)
        assert line, proc.stderr
        assert "benchmark 'g' point 3" in line and "operation #" in line, line
        seqs[rank] = int(line.split("operation #")[1].split(")")[0])
    assert "MPI_Allreduce" in next(l for l in lines if "rank 0 on" in l)
    assert seqs[0] == seqs[1]  # the same collective: rank 1 never entered it
    assert point_set(out) == {("g", i, "ok") for i in range(3)}


def test_watchdog_off_and_unset_fault_are_harmless(cfg, tmp_path):
    out = str(tmp_path / "n.h5")
    proc, _ = run(cfg, out, None, GENBENCH_WATCHDOG_S="0")
    assert proc.returncode == 0, proc.stderr
    assert point_set(out) == ALL_OK


@pytest.mark.parametrize("spec", ["rank=1,point=3", "kind=explode", "rank=-1,kind=error", "point=x,kind=hang",
                                  "rank=1;point=2;kind=oom", "colour=red,kind=oom"])
def test_malformed_fault_spec_is_a_usage_error(cfg, tmp_path, spec):
    proc, _ = run(cfg, str(tmp_path / "m.h5"), spec, ranks=None)
    assert proc.returncode == 2, proc.stderr
    assert "GENBENCH_INJECT_FAULT" in proc.stderr


def test_malformed_watchdog_env_is_a_usage_error(cfg, tmp_path):
    proc, _ = run(cfg, str(tmp_path / "m.h5"), None, ranks=None, GENBENCH_WATCHDOG_S="soon")
    assert proc.returncode == 2 and "GENBENCH_WATCHDOG_S" in proc.stderr
