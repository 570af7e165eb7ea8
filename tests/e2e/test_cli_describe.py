"""`genbench describe` on bad input: a name that is no op and no file lists the ops (and the
closest one); a missing file, a file that is not HDF5 and an HDF5 file of another tool each say
what is wrong; all exit with 2, as bad input does everywhere (README, "Exit codes"). Every op and
a real file are described in test_every_op_host.py."""
import json
import os
import subprocess

import h5py

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("GENBENCH_BIN", os.path.join(ROOT, "build", "bin", "genbench"))


def genbench(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120)


def op_names():
    proc = genbench("list", "--json")
    assert proc.returncode == 0, proc.stderr
    return [o["name"] for o in json.loads(proc.stdout)["ops"]]


def test_an_unknown_op_lists_the_known_ones():
    r = genbench("describe", "attentoin")
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stdout == ""
    names = op_names()
    assert r.stderr == (f"genbench: describe: 'attentoin' is no op and no file (did you mean 'attention'?); "
                        f"the ops: {', '.join(names)}; or give a result file (.h5)\n")
    r = genbench("describe", "zzzzzzzz", "--json")
    assert r.returncode == 2 and "did you mean" not in r.stderr and ", ".join(names) in r.stderr, r.stderr


def test_a_missing_file(tmp_path):
    for path in (str(tmp_path / "none.h5"), str(tmp_path / "none")):
        r = genbench("describe", path)
        assert r.returncode == 2, r.stdout + r.stderr
        assert r.stderr == f"genbench: {path}: no such file\n"


def test_a_file_that_is_not_hdf5(tmp_path):
    path = tmp_path / "results.h5"
    path.write_text("benchmarks: []\n")
    r = genbench("describe", str(path))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == f"genbench: {path}: not an HDF5 file (or truncated)\n"


def test_an_hdf5_file_of_another_tool(tmp_path):
    path = tmp_path / "other.h5"
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "something-else"
        f.create_group("benchmarks")
    r = genbench("describe", str(path), "--json")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == f"genbench: {path}: not a genbench result file (no format='genbench-results' attribute)\n"


def test_a_stored_description_that_is_not_json(tmp_path):
    """A genbench file whose op_description was damaged: named, with its benchmark."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps({"settings": {"backend": "host", "timing": {"warmup": 0, "min_iterations": 1,
                                                                           "max_iterations": 2, "max_time": 0.2}},
                               "benchmarks": [{"name": "mm", "op": "gemm", "implementations": ["reference"],
                                               "axes": {"m": 8, "n": 8, "k": 8}}]}))
    out = tmp_path / "r.h5"
    r = genbench("run", str(cfg), "-o", str(out), "-q")
    assert r.returncode == 0, r.stdout + r.stderr
    ok = genbench("describe", str(out))
    assert ok.returncode == 0 and "benchmark mm (op gemm): 1 point x 1 round = 1 row, 1 completed" in ok.stdout
    with h5py.File(out, "a") as f:
        f["benchmarks/mm"].attrs["op_description"] = "{not json"
    r = genbench("describe", str(out))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == f"genbench: {out}: benchmark 'mm': op_description is not valid JSON\n"


def test_describe_needs_what():
    r = genbench("describe")
    assert r.returncode == 2 and "what is required" in r.stderr
