"""The command line's -b / -a / --list (nvbench-style) on the real binary: what runs, what the
file records, and that --resume refuses another selection."""
import os
import subprocess

import h5py

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
