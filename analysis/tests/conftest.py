"""Fixtures: two result files made by the real genbench binary (host backend, 2 MPI ranks),
and a GPU-like file derived from one of them for the plots a CPU run cannot fill.

Run by ctest (GENBENCH_BIN, GENBENCH_MPIEXEC and PYTHONPATH set), or by hand from the
repository root:  PYTHONPATH=analysis /usr/bin/python3 -m pytest analysis/tests
(defaults: build/bin/genbench and mpirun).
"""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ANALYSIS = os.path.dirname(HERE)
REPO = os.path.dirname(ANALYSIS)
if ANALYSIS not in sys.path:  # so that a plain `pytest analysis/tests` finds the package
    sys.path.insert(0, ANALYSIS)

CONFIG = os.path.join(HERE, "data", "small.yaml")
RANKS = 2
# Schema 1 files of the same configs, kept in the repository (written by genbench a0d2e062a0c0).
V1_SMALL = os.path.join(HERE, "data", "v1_small.h5")
V1_OVERLAP = os.path.join(HERE, "data", "v1_overlap.h5")


def group_axes(g):
    """A benchmark group's axis names: its 'axes' attribute, else its op_description's."""
    if "axes" in g.attrs:
        return [a.decode() if isinstance(a, bytes) else str(a) for a in g.attrs["axes"]]
    return [a["name"] for a in json.loads(g.attrs["op_description"])["axes"]]


def _genbench_env():
    env = dict(os.environ)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    return env


def run_genbench(out_path):
    return run_genbench_config(CONFIG, out_path)


def run_genbench_config(config, out_path):
    binary = os.environ.get("GENBENCH_BIN", os.path.join(REPO, "build", "bin", "genbench"))
    mpiexec = os.environ.get("GENBENCH_MPIEXEC", "mpirun")
    if not os.path.exists(binary):
        pytest.fail(f"genbench binary not found at {binary}; build it (scripts/build.sh build) or set GENBENCH_BIN")
    cmd = [mpiexec, "-np", str(RANKS), "--oversubscribe", binary, "run", config, "-o", str(out_path), "--force"]
    p = subprocess.run(cmd, cwd=REPO, env=_genbench_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=300)
    if p.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} exited with {p.returncode}:\n{p.stdout[-4000:]}")
    return str(out_path)


@pytest.fixture(scope="session")
def result_files(tmp_path_factory):
    """Two runs of the same small config: the A and B of the comparisons."""
    d = tmp_path_factory.mktemp("runs")
    return run_genbench(d / "run_a.h5"), run_genbench(d / "run_b.h5")


@pytest.fixture(scope="session")
def file_a(result_files):
    return result_files[0]


@pytest.fixture(scope="session")
def file_b(result_files):
    return result_files[1]


@pytest.fixture(scope="session", params=["run", "v1"])
def any_file(request, file_a):
    """The binary's own file of small.yaml, then the kept schema 1 file of the same config."""
    return file_a if request.param == "run" else V1_SMALL


@pytest.fixture(scope="session")
def gpu_like_file(file_a, tmp_path_factory):
    """A copy of run A edited to look like a 2-GPU CUDA run: graph-mode points that ran
    (1.25x faster than eager) and rank 1 a 20% straggler. Exercises the plots a CPU run
    leaves empty."""
    import h5py

    path = tmp_path_factory.mktemp("gpu") / "gpu_like.h5"
    shutil.copy(file_a, path)
    with h5py.File(path, "r+") as f:
        f.attrs["backend"] = "cuda"
        sys_t = f["system"][()]
        sys_t["name"] = b"NVIDIA H200"
        sys_t["backend"] = b"cuda"
        f["system"][...] = sys_t
        for name in f["benchmarks"]:
            g = f["benchmarks"][name]
            pts = g["points"][()]
            rs = g["rank_stats"][()]
            if "mode" in pts.dtype.names:
                eager = {}
                keyf = [c for c in pts.dtype.names if c not in ("point", "mode") and c in group_axes(g)]
                for i, row in enumerate(pts):
                    key = tuple(row[c] for c in ["impl"] + keyf)
                    if row["mode"] == b"eager" and row["status"] == b"ok":
                        eager[key] = i
                for i, row in enumerate(pts):
                    key = tuple(row[c] for c in ["impl"] + keyf)
                    if row["mode"] == b"graph" and key in eager:
                        src = pts[eager[key]].copy()
                        for c in pts.dtype.names:
                            if c.startswith("time_"):
                                src[c] = src[c] / 1.25
                        for c in ("tflops", "algbw_GBps", "busbw_GBps"):
                            if c in pts.dtype.names:
                                src[c] = src[c] * 1.25
                        src["point"] = row["point"]
                        src["mode"] = b"graph"
                        pts[i] = src
                        rs[i] = rs[eager[key]]
            # rank 1 is 20% slower than rank 0 everywhere
            ok = np.isfinite(rs["median_s"][:, 0])
            rs["median_s"][ok, 1] = rs["median_s"][ok, 0] * 1.2
            g["points"][...] = pts
            g["rank_stats"][...] = rs
    return str(path)
