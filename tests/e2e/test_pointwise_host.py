"""End to end: configs/pointwise-host.yaml (the pointwise op's host reference: every kind, forward
and backward, bf16 and fp16, widths that are not multiples of 8, embedding_backward with repeated
ids) through the binary on the host backend, one rank; every point validated and timed, its bytes
as docs/pointwise.md counts them."""
import json
import math
import os
import subprocess

import h5py
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("GENBENCH_BIN", os.path.join(ROOT, "build", "bin", "genbench"))


FORWARD = ["rmsnorm", "add_rmsnorm", "rope", "silu_mul", "embedding"]
KINDS = FORWARD + [k + "_backward" for k in FORWARD]


def expected_bytes(kind, rows, hidden, vocab, e=2):
    heads, heads_kv, head_dim, positions = 4, 2, 32, 4096
    rope = e * 2 * rows * (heads + heads_kv) * head_dim + 4 * rows + 4 * head_dim * min(rows, positions)
    touched = vocab * (1 - (1 - 1 / vocab) ** rows)  # distinct ids expected among the rows' draws
    return {"rmsnorm": e * (2 * rows * hidden + hidden),
            "add_rmsnorm": e * (4 * rows * hidden + hidden),
            "rope": rope,
            "silu_mul": e * 3 * rows * hidden,
            "embedding": e * 2 * rows * hidden + 4 * rows,
            "rmsnorm_backward": e * (3 * rows * hidden + hidden) + 4 * hidden,
            "add_rmsnorm_backward": e * (4 * rows * hidden + hidden) + 4 * hidden,
            "rope_backward": rope,
            "silu_mul_backward": e * 5 * rows * hidden,
            "embedding_backward": e * rows * hidden + 4 * rows + 4 * touched * hidden}[kind]


def _s(v):
    return v.decode() if isinstance(v, bytes) else v


def test_pointwise_host_config(tmp_path):
    out = str(tmp_path / "pointwise.h5")
    proc = subprocess.run([BIN, "run", os.path.join(ROOT, "configs", "pointwise-host.yaml"), "-o", out, "--force"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with h5py.File(out, "r") as f:
        g = f["benchmarks/pointwise-host"]
        points = g["points"][()]
        assert len(points) == 10 * 2 * 2 * 2  # kinds x rows x widths x dtypes
        status = [_s(s) for s in points["status"]]
        assert status == ["ok"] * len(points), status
        assert (points["validation_error"] <= points["validation_tolerance"]).all()
        kinds = {_s(k) for k in points["kind"]}
        assert kinds == set(KINDS)
        # the backward kinds are held to twice the forward's tolerance (docs/pointwise.md)
        for r in points:
            kind = _s(r["kind"])
            tol = 2.0 ** (-8 if _s(r["dtype"]) == "bf16" else -11) * (2 if kind.endswith("_backward") else 1)
            assert r["validation_tolerance"] == (0 if kind == "embedding" else tol), kind
        repeated = f["benchmarks/pointwise-host-repeated-ids/points"][()]
        assert len(repeated) == 2 * 2 * 2
        assert [_s(s) for s in repeated["status"]] == ["ok"] * len(repeated)
        for r in list(points) + list(repeated):
            kind = _s(r["kind"])
            want = expected_bytes(kind, int(r["rows"]), int(r["hidden"]), int(r["vocab"]))
            assert r["work_bytes"] == pytest.approx(want, rel=1e-12), (kind, r["rows"], r["hidden"])
            assert r["bytes"] == r["work_bytes"]
            assert r["GBps"] > 0
        desc = json.loads(g.attrs["op_description"])
        assert desc["op"] == "pointwise" and desc["headline"] == "GBps"
        assert desc["plot"]["ceiling_line"] == "copy_GBps"
        assert math.isclose(expected_bytes("embedding_backward", 70, 64, 3), 2 * 70 * 64 + 280 + 4 * 3 * 64,
                            rel_tol=1e-12)  # 70 draws of 3 ids: every row touched


def test_layer_host_config(tmp_path):
    """configs/layer-host.yaml: the layer op's host reference, decode and prefill in bf16 and
    int4; each point validated (every part), timed, and its parts timed alone."""
    out = str(tmp_path / "layer.h5")
    proc = subprocess.run([BIN, "run", os.path.join(ROOT, "configs", "layer-host.yaml"), "-o", out, "--force"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    parts = ["add_rmsnorm", "qkv", "rope", "attention", "o", "gate_up", "silu_mul", "down"]
    with h5py.File(out, "r") as f:
        points = f["benchmarks/layer-host/points"][()]
        assert len(points) == 4
        status = [s.decode() if isinstance(s, bytes) else s for s in points["status"]]
        assert status == ["ok"] * 4, status
        for r in points:
            alone = [float(r[f"t_{p}_s"]) for p in parts]
            assert min(alone) > 0
            assert float(r["parts_alone_s"]) == pytest.approx(sum(alone) + alone[0], rel=1e-12)  # norm twice
            assert r["tokens_per_s"] > 0 and r["time_median_s"] > 0
