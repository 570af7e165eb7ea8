"""End to end: the README's main job (configs/smoke.yaml) under mpirun with 2 ranks on the
host backend, then the HDF5 file read the way the README shows."""
import os
import subprocess
import sys

import h5py
import numpy as np
import pandas as pd
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("GENBENCH_BIN", os.path.join(ROOT, "build", "bin", "genbench"))
MPIEXEC = os.environ.get("GENBENCH_MPIEXEC", "mpirun")
MPI_FLAGS = ["--oversubscribe", "--allow-run-as-root"]
HOST_IMPLS = {b"reference", b"mpi"}


def genbench(*args, ranks=None, check=True):
    cmd = ([MPIEXEC, *MPI_FLAGS, "-np", str(ranks)] if ranks else []) + [BIN, *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if check and proc.returncode != 0:
        raise AssertionError(f"{cmd} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("smoke") / "smoke.h5")
    proc = genbench("run", os.path.join(ROOT, "configs", "smoke.yaml"), "-o", out, "--backend", "host", ranks=2)
    return out, proc


def test_progress_and_summary_on_rank_zero(smoke):
    _, proc = smoke
    lines = proc.stdout.splitlines()
    assert any(line.startswith("Summary (host backend") for line in lines), proc.stdout
    assert sum(1 for line in lines if line.startswith("[")) >= 30  # one progress line per point
    assert "ok" in lines[-1]  # the tally line


def test_file_holds_both_ranks(smoke):
    path, _ = smoke
    with h5py.File(path, "r") as f:
        assert f.attrs["format"] == "genbench-results"
        assert f.attrs["schema_version"] == 2
        assert f.attrs["world_size"] == 2
        assert f.attrs["backend"] == "host"
        assert f.attrs["state"] == "complete"
        assert "benchmarks:" in f.attrs["config"]
        assert list(f["system"]["rank"]) == [0, 1]
        for name in ("attention", "gemm", "collectives"):
            g = f["benchmarks"][name]
            points = g["points"][:]
            samples = g["samples"][:]
            # one row per sweep point (row = point index), each completed here
            assert len(points) == g.attrs["sweep_size"] and list(points["point"]) == list(range(len(points)))
            assert samples.shape[0] == len(points) and samples.shape[1] == 2
            for row, s in zip(points, samples):
                if row["impl"] not in HOST_IMPLS:
                    # CUDA implementations are listed with the reason they did not run here.
                    assert row["status"] == b"unsupported" and b"no host implementation" in row["reason"], row
                    assert row["iterations"] == 0
                    continue
                assert row["status"] == b"ok", row
                n = row["iterations"]
                # every rank has `iterations` samples (entries past them are not part of the point)
                assert n >= 1 and np.all(np.isfinite(s[:, :n])) and np.all(s[:, :n] > 0)


def test_readme_snippet_loads_a_dataframe(smoke):
    """The h5py + pandas lines the README shows, run verbatim on the smoke file."""
    path, _ = smoke
    readme = open(os.path.join(ROOT, "README.md")).read()
    start = readme.index("```python\n", readme.index("## Reading the results")) + len("```python\n")
    snippet = readme[start:readme.index("```", start)]
    scope = {"PATH": path}
    exec(snippet.replace('"results/smoke.h5"', "PATH"), scope)
    df = scope["df"]
    assert isinstance(df, pd.DataFrame) and len(df) > 0
    assert {"impl", "status", "time_median_s"} <= set(df.columns)


def test_validate_lists_points_without_running(smoke):
    proc = genbench("validate", os.path.join(ROOT, "configs", "smoke.yaml"), "--world-size", "2", "--backend", "host")
    assert "points in all" in proc.stdout


def test_bad_config_names_file_line_and_key(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("benchmarks:\n  - name: a\n    op: gemm\n    implementations: [reference]\n    axes: {mm: 4}\n")
    proc = genbench("validate", str(bad), check=False)
    assert proc.returncode == 2
    assert f"{bad}:5:12: unknown key 'mm'" in proc.stderr


def test_existing_file_is_not_overwritten(smoke, tmp_path):
    out = tmp_path / "keep.h5"
    out.write_bytes(b"precious")
    proc = genbench("run", os.path.join(ROOT, "configs", "smoke.yaml"), "-o", str(out), check=False)
    assert proc.returncode == 2 and "already exists" in proc.stderr
    assert out.read_bytes() == b"precious"


def test_list_and_info(smoke):
    assert "op attention" in genbench("list").stdout
    assert "host backend" in genbench("info").stdout


def test_export_csv_and_json(smoke, tmp_path):
    import json
    path, _ = smoke
    out = tmp_path / "csv"
    genbench("export", path, "--csv", "-o", str(out))
    gemm = pd.read_csv(out / "gemm.csv")
    with h5py.File(path, "r") as f:
        assert len(gemm) == int(np.count_nonzero(f["benchmarks/gemm/points"]["status"] != b""))
    assert set(gemm[gemm["impl"] == "reference"]["status"]) == {"ok"}
    assert len(pd.read_csv(out / "system.csv")) == 2
    doc = json.loads(genbench("export", path, "--json").stdout)
    assert doc["attributes"]["world_size"] == 2
    coll = [r for r in doc["benchmarks"]["collectives"] if r["impl"] == "mpi"]
    assert len(coll) == 21
    assert all(r["busbw_GBps"] > 0 for r in coll)


def test_export_refuses_foreign_files(tmp_path):
    text = tmp_path / "text.h5"
    text.write_text("not a result file")
    proc = genbench("export", str(text), "--json", check=False)
    assert proc.returncode == 2 and "not an HDF5 file" in proc.stderr
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as f:
        f["x"] = np.arange(3)
    proc = genbench("export", str(other), "--csv", check=False)
    assert proc.returncode == 2 and "not a genbench result file" in proc.stderr
