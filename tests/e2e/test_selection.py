"""The command line's -b / -a / --list (nvbench-style) on the real binary: what runs, what the
file records, and that --resume refuses another selection."""
import os
import subprocess

import h5py
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("GENBENCH_BIN", os.path.join(ROOT, "build", "bin", "genbench"))

CONFIG = """genbench: 1
settings:
  backend: host
  timing: {warmup: 0, min_iterations: 2, max_iterations: 2, min_time: 0, max_time: 1}
benchmarks:
  - name: gemm-small
    op: gemm
    implementations: reference
    axes: {m: [16, 32], n: 16, k: 16, dtype: fp32}
  - name: gemm-wide
    op: gemm
    implementations: reference
    axes: {m: 8, n: [64, 128, 256], k: 16, dtype: fp32}
  - name: coll
    op: collective
    implementations: mpi
    axes: {bytes: [1K, 4K]}
"""


def genbench(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300)


def config(tmp_path):
    p = tmp_path / "sel.yaml"
    p.write_text(CONFIG)
    return str(p)


def test_list_prints_the_selected_points_and_writes_nothing(tmp_path):
    cfg = config(tmp_path)
    out = tmp_path / "never.h5"
    proc = genbench("run", cfg, "-o", str(out), "--list", "-b", "gemm-*", "-a", "m=8,24")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "gemm-small (op gemm, 2 points)"
    assert [l.split()[0] for l in lines if l.startswith("  ")] == ["0", "1", "0", "1", "2", "3", "4", "5"]
    assert "m=8" in lines[1] and "m=24" in lines[2]
    assert lines[-1] == "8 points in 2 benchmark(s), selection: -b gemm-* -a m=8,24"
    assert not out.exists()


def test_run_records_the_selection_and_resume_refuses_another(tmp_path):
    cfg = config(tmp_path)
    out = str(tmp_path / "sel.h5")
    proc = genbench("run", cfg, "-o", out, "-q", "-b", "gemm-wide", "-a", "n=64,256")
    assert proc.returncode == 0, proc.stderr
    with h5py.File(out, "r") as f:
        assert list(f["benchmarks"]) == ["gemm-wide"]
        points = f["benchmarks"]["gemm-wide"]["points"][:]
        assert len(points) == 2 and set(points["status"]) == {b"ok"}
        assert f.attrs["selection"] == "-b gemm-wide -a n=64,256"
        assert "-b gemm-wide" in f.attrs["command_line"]
    proc = genbench("run", cfg, "-o", out, "--resume", "-b", "gemm-wide")
    assert proc.returncode == 2
    assert "was made with the selection '-b gemm-wide -a n=64,256', this run has '-b gemm-wide'" in proc.stderr
    proc = genbench("run", cfg, "-o", out, "--resume")
    assert proc.returncode == 2 and "this run has none" in proc.stderr, proc.stderr
    # the same selection resumes (nothing left to run)
    proc = genbench("run", cfg, "-o", out, "--resume", "-q", "-b", "gemm-wide", "-a", "n=64,256")
    assert proc.returncode == 0, proc.stderr


def test_bad_selection_is_a_usage_error_naming_the_choices(tmp_path):
    cfg = config(tmp_path)
    out = tmp_path / "bad.h5"
    cases = [
        (["-b", "gem"], "no benchmark of"),
        (["-b", "gem"], "gemm-small, gemm-wide, coll"),
        (["-a", "seq=4K"], "no selected benchmark has an axis 'seq'"),
        (["-b", "coll", "-a", "m=8"], "no selected benchmark has an axis 'm'"),
        (["-a", "m=many"], "'m' must be"),
        (["-a", "m"], "expected axis=value"),
    ]
    for args, text in cases:
        proc = genbench("run", cfg, "-o", str(out), *args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert text in proc.stderr, (args, proc.stderr)
    assert not out.exists()


def test_rounds_write_a_row_per_round_in_shuffled_orders_and_resume(tmp_path):
    cfg = config(tmp_path)
    out = str(tmp_path / "rounds.h5")
    proc = genbench("run", cfg, "-o", out, "--list", "-b", "gemm-wide", "--rounds", "3")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == "gemm-wide (op gemm, 3 points, 3 rounds in shuffled orders)"
    # A fatal error at point 1 in the first round stops the job part-way: the rows it finished stay.
    env = dict(os.environ, GENBENCH_INJECT_FAULT="rank=0,point=1,kind=error")
    proc = subprocess.run([BIN, "run", cfg, "-o", out, "-q", "-b", "gemm-wide", "--rounds", "3"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode != 0
    with h5py.File(out, "r") as f:
        g = f["benchmarks"]["gemm-wide"]
        assert g.attrs["rounds"] == 3 and g.attrs["sweep_size"] == 3
        first = g["points"][:]
        assert len(first) == 9
        done = first["status"] != b""
        assert 0 < done.sum() < 9
    # The same selection continues it; another rounds count is refused.
    proc = genbench("run", cfg, "-o", out, "--resume", "-q", "-b", "gemm-wide", "--rounds", "2")
    assert proc.returncode == 2 and "--rounds 2" in proc.stderr, proc.stderr
    proc = genbench("run", cfg, "-o", out, "--resume", "-q", "-b", "gemm-wide", "--rounds", "3")
    assert proc.returncode == 0, proc.stderr
    with h5py.File(out, "r") as f:
        assert f.attrs["selection"] == "-b gemm-wide --rounds 3"
        p = f["benchmarks"]["gemm-wide"]["points"][:]
        samples = f["benchmarks"]["gemm-wide"]["samples"]
        assert set(p["status"]) == {b"ok"}
        # row = round * sweep_size + point; every round holds every point once, in its own order
        assert list(p["round"]) == [0, 0, 0, 1, 1, 1, 2, 2, 2]
        assert list(p["point"]) == [0, 1, 2] * 3
        orders = [tuple(p["point"][r * 3:(r + 1) * 3][np.argsort(p["order"][r * 3:(r + 1) * 3])]) for r in range(3)]
        assert all(sorted(o) == [0, 1, 2] for o in orders)
        # the rows finished before the fault are kept as they were
        for r in np.nonzero(done)[0]:
            assert p["time_median_s"][r] == first["time_median_s"][r]
        assert samples.shape[0] == 9
        assert all(np.isfinite(samples[r, 0, :2]).all() and samples[r, 0, 0] > 0 for r in range(9))
