"""End to end: configs/gemm-int4-host.yaml and configs/gemm-grouped-host.yaml (the host
references of the w4a16 and grouped_gemm ops, the small variants of configs/gemm-int4.yaml and
configs/gemm-grouped.yaml) through the binary on the host backend, one rank: every point
validated and timed, the work and effective columns as the ops count them, and the GPU
configs accepted by `genbench validate`."""
import json
import os
import subprocess

import h5py

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("GENBENCH_BIN", os.path.join(ROOT, "build", "bin", "genbench"))


def run(config, out):
    proc = subprocess.run([BIN, "run", os.path.join(ROOT, "configs", config), "-o", out, "--force"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def status_of(points):
    return [s.decode() if isinstance(s, bytes) else s for s in points["status"]]


def test_w4a16_host_config(tmp_path):
    out = str(tmp_path / "int4.h5")
    run("gemm-int4-host.yaml", out)
    with h5py.File(out, "r") as f:
        points = f["benchmarks/w4a16-host/points"][()]
        assert len(points) == 32  # 2 m x 2 weights x 4 groups x 2 dtypes
        assert status_of(points) == ["ok"] * 32
        assert (points["validation_error"] <= points["validation_tolerance"]).all()
        m = points["m"].astype(float)
        assert (points["work_flops"] == 2 * m * 128 * 256).all()
        assert (points["tflops"] > 0).all() and (points["GBps"] > 0).all()
        group_k = points["group_k"]
        assert set(group_k.tolist()) == {32, 64, 128, 256}  # 0 (per column) is k
        desc = json.loads(f["benchmarks/w4a16-host"].attrs["op_description"])
        assert desc["op"] == "w4a16" and desc["headline"] == "tflops"


def test_grouped_host_config(tmp_path):
    out = str(tmp_path / "grouped.h5")
    run("gemm-grouped-host.yaml", out)
    with h5py.File(out, "r") as f:
        routed = f["benchmarks/grouped-routed/points"][()]
        assert len(routed) == 4 and status_of(routed) == ["ok"] * 4
        assert (routed["total_rows"] == routed["tokens"] * 2).all()  # top_k 2
        assert (routed["work_flops"] == 2.0 * routed["total_rows"] * 64 * 96).all()
        assert (routed["validation_error"] <= routed["validation_tolerance"]).all()
        fixed = f["benchmarks/grouped-fixed/points"][()]
        assert status_of(fixed) == ["ok"] * 2
        assert (fixed["total_rows"] == 3 * fixed["rows"]).all() and (fixed["nonempty_groups"] == 3).all()


def test_gpu_configs_validate(tmp_path):
    for config in ("gemm-int4.yaml", "gemm-grouped.yaml"):
        proc = subprocess.run([BIN, "validate", os.path.join(ROOT, "configs", config)], capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0, config + "\n" + proc.stdout + proc.stderr
