"""End to end, every registered op: the ops come from `genbench list --json`, and each one's host
example (Op::host_example(), declared in the op's folder) runs its host path whole: a config made
from the example, `genbench validate`, `genbench run` on the host backend (under mpirun where the
example needs more than one rank), the HDF5 file, `genbench schema`, `genbench describe` (the op,
then the file), and the analysis (load, describe, report). An op added later is covered by this
test as it is; one without a host implementation, or whose example fails a step, fails it."""
import json
import os
import subprocess
import sys

import h5py
import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("GENBENCH_BIN", os.path.join(ROOT, "build", "bin", "genbench"))
MPIEXEC = os.environ.get("GENBENCH_MPIEXEC", "mpirun")
MPI_FLAGS = ["--oversubscribe", "--allow-run-as-root"]
sys.path.insert(0, os.path.join(ROOT, "analysis"))

TIMING = {"warmup": 1, "min_iterations": 2, "max_iterations": 3, "min_time": 0, "max_time": 0.5}


def genbench(*args, ranks=1, timeout=600):
    cmd = ([MPIEXEC, *MPI_FLAGS, "-np", str(ranks)] if ranks > 1 else []) + [BIN, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def registry():
    proc = genbench("list", "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


OPS = registry()["ops"]


def _s(v):
    return v.decode() if isinstance(v, bytes) else v


def test_the_registry_lists_ops():
    names = [o["name"] for o in OPS]
    assert len(names) >= 10 and names == sorted(names), names
    assert {"attention", "gemm", "collective", "overlap"} <= set(names)


def config_of(op):
    """A config of one benchmark: the op's host implementations at its host example."""
    host = [i for i in op["implementations"] if i["backend"] == "host"]
    assert host, f"op {op['name']} has no host implementation"
    assert all(i["built"] for i in host), host
    axes = {k: (v[0] if len(v) == 1 else v) for k, v in op["host_example"]["axes"].items()}
    return {"genbench": 1,
            "settings": {"backend": "host", "timing": TIMING},
            "benchmarks": [{"name": f"{op['name']}-host", "op": op["name"],
                            "implementations": sorted({i["name"] for i in host}), "axes": axes}]}


@pytest.mark.parametrize("op", OPS, ids=[o["name"] for o in OPS])
def test_host_path_end_to_end(op, tmp_path):
    name, ranks = op["name"], op["host_example"]["ranks"]
    bench = f"{name}-host"
    cfg = tmp_path / f"{name}.yaml"
    cfg.write_text(json.dumps(config_of(op), indent=1))  # JSON is YAML
    out = str(tmp_path / f"{name}.h5")

    # validate: every point legal for the ranks and runnable on the host
    v = genbench("validate", str(cfg), "--backend", "host", "--world-size", str(ranks))
    assert v.returncode == 0, v.stdout + v.stderr
    total, runnable = [int(w) for w in v.stdout.splitlines()[-1].split() if w.isdigit()][:2]
    assert total > 0 and runnable == total, v.stdout

    # run on the host backend with the example's ranks
    r = genbench("run", str(cfg), "-o", out, "--backend", "host", ranks=ranks)
    assert r.returncode == 0, f"{name}: genbench run exited {r.returncode}\n{r.stdout}\n{r.stderr}"

    # the file: every point ok, validated within its tolerance, timed on every rank
    with h5py.File(out, "r") as f:
        assert _s(f.attrs["state"]) == "complete" and f.attrs["world_size"] == ranks
        g = f["benchmarks"][bench]
        points = g["points"][()]
        assert len(points) == total
        status = [_s(s) for s in points["status"]]
        assert status == ["ok"] * total, [(_s(p["status"]), _s(p["reason"])) for p in points if _s(p["status"]) != "ok"]
        err, tol = points["validation_error"], points["validation_tolerance"]
        assert np.all(err <= tol), list(zip(err, tol))
        assert np.all(points["iterations"] >= TIMING["min_iterations"])
        assert g["samples"].shape[1] == ranks
        desc = json.loads(_s(g.attrs["op_description"]))
        assert desc["op"] == name
        fields = set(points.dtype.names)
        missing = [c["name"] for c in desc["columns"] if c["name"] not in fields]
        assert not missing, f"{name}: declared columns not in the points table: {missing}"
        headline = desc["headline"]
        assert np.all(np.isfinite(points[headline])) and np.all(points[headline] > 0), points[headline]

    # genbench schema names the op's columns
    s = genbench("schema")
    assert s.returncode == 0, s.stderr
    assert f"op {name}:" in s.stdout
    for c in desc["columns"]:
        assert c["name"] in s.stdout, c["name"]

    # genbench describe: the op from the registry and the op as the file stores it, each declared
    # column on its own line with its unit and how its value is obtained
    def column_lines(text):
        return {l.split()[0]: l for l in text.splitlines() if l.startswith("  ") and l.split()}

    d = genbench("describe", name)
    assert d.returncode == 0, d.stdout + d.stderr
    assert d.stdout.startswith(f"op {name}"), d.stdout
    f = genbench("describe", out)
    assert f.returncode == 0, f.stdout + f.stderr
    assert f"benchmark {bench} (op {name}): " in f.stdout and f"status: ok {total}\n" in f.stdout, f.stdout
    for text in (d.stdout, f.stdout):
        lines = column_lines(text)
        for c in desc["columns"]:
            line = lines.get(c["name"])
            assert line, f"{name}: column {c['name']} not described\n{text}"
            assert f" {c['unit'] or '-'} " in line and c["meaning"] in line, line
            assert ("from " if c["kind"] in ("effective", "metric") else "reported by the case") in line, line
    dj = genbench("describe", name, "--json")
    assert dj.returncode == 0, dj.stderr
    dj = json.loads(dj.stdout)
    want = [(c["name"], c["unit"], c["kind"]) for c in desc["columns"]]
    assert [(c["name"], c["unit"], c["kind"]) for c in dj["columns"]] == want
    assert all(c["computed"] for c in dj["columns"])
    fj = genbench("describe", out, "--json")
    assert fj.returncode == 0, fj.stderr
    [b] = json.loads(fj.stdout)["benchmarks"]
    assert b["name"] == bench and b["op"] == name and b["status"] == {"ok": total} and b["completed"] == total
    assert [(c["name"], c["unit"], c["kind"]) for c in b["description"]["columns"]] == want

    # the analysis: load, describe, report
    import genbench_analysis as ga
    from genbench_analysis.__main__ import describe_text
    from genbench_analysis.report import write_report

    res = ga.load(out)
    b = res.benchmarks[bench]
    assert b.op == name and b.headline.name == headline
    table = res.table(bench)
    assert len(table) == total and (table["status"] == "ok").all()
    assert f"{bench} (op {name}" in describe_text(res)
    rep = write_report([res], str(tmp_path / "report"))
    text = open(rep["markdown"]).read()
    assert bench in text and os.path.exists(rep["html"])
