"""End to end: configs/decode-host.yaml (the decode op's host reference: GQA, new tokens 1 and 3,
odd cache lengths, contiguous and paged caches, bf16 and fp8 K/V, varlen) through the binary
on the host backend, one rank; every point validated and timed, and the file holds them."""
import json
import os
import subprocess

import h5py

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("GENBENCH_BIN", os.path.join(ROOT, "build", "bin", "genbench"))


def test_decode_host_config(tmp_path):
    out = str(tmp_path / "decode.h5")
    proc = subprocess.run([BIN, "run", os.path.join(ROOT, "configs", "decode-host.yaml"), "-o", out, "--force"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    progress = [line for line in proc.stdout.splitlines() if line.startswith("[")]
    assert len(progress) == 24, proc.stdout  # 2 new-token counts x 2 caches x 3 layouts x 2 K/V types
    with h5py.File(out, "r") as f:
        points = f["benchmarks/decode-host/points"][()]
        assert len(points) == 24
        status = [s.decode() if isinstance(s, bytes) else s for s in points["status"]]
        assert status == ["ok"] * 24, status
        assert (points["validation_error"] <= points["validation_tolerance"]).all()
        assert (points["work_bytes"] > 0).all()
        assert (points["GBps"] > 0).all() and (points["tokens_per_s"] > 0).all()
        desc = json.loads(f["benchmarks/decode-host"].attrs["op_description"])
        assert desc["op"] == "decode" and desc["headline"] == "GBps"
        assert desc["plot"]["x"] == "cache" and desc["plot"]["ceiling_line"] == "copy_GBps"
