"""End to end: configs/attention-backward-host.yaml (attention_backward's host reference: MHA and
MQA, causal, seqlen_k != seqlen_q, bf16 and fp16) through the binary on the host backend, one
rank; every point validated against double and timed, its FLOPs 2.5 x the forward's."""
import json
import os
import subprocess

import h5py

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("GENBENCH_BIN", os.path.join(ROOT, "build", "bin", "genbench"))


def text(x):
    return x.decode() if isinstance(x, bytes) else x


def test_attention_backward_host_config(tmp_path):
    out = str(tmp_path / "bwd.h5")
    proc = subprocess.run([BIN, "run", os.path.join(ROOT, "configs", "attention-backward-host.yaml"), "-o", out,
                           "--force"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with h5py.File(out, "r") as f:
        g = f["benchmarks/attention-backward-host"]
        points = g["points"][()]
        assert len(points) == 2 * 2 * 2 * 2 * 2  # heads_kv x seqlen_q x seqlen_k x causal x dtype
        status = [text(s) for s in points["status"]]
        assert status == ["ok"] * len(points), status
        assert (points["validation_error"] <= points["validation_tolerance"]).all()
        assert (points["validation_error"] < 1e-4).all()  # fp32 arithmetic, held to the fp32 bound
        for r in points:
            sq = int(r["seqlen_q"])
            sk = int(r["seqlen_k"]) or sq
            pairs = sq * sk
            if r["causal"]:
                pairs = sq * sk / 2 if sq == sk else sum(min(sk, max(0, i + sk - sq + 1)) for i in range(sq))
            assert r["work_flops"] == 2.5 * 4 * 2 * 4 * pairs * 64, (sq, sk, r["causal"])
            assert r["tflops"] > 0
        desc = json.loads(g.attrs["op_description"])
        assert desc["op"] == "attention_backward" and desc["headline"] == "tflops"
