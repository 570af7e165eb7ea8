"""Nothing in the analysis names an op (outside the v1 table), and an op that the binary has and
the package never mentions (decode) is loaded, plotted and compared from its file."""

import ast
import os
import subprocess

import numpy as np
import pytest

import genbench_analysis as ga
from genbench_analysis import describe, plots
from genbench_analysis.compare import compare

from conftest import HERE, REPO, run_genbench_config

PACKAGE = os.path.join(os.path.dirname(HERE), "genbench_analysis")
# Modules that must decide nothing by an op's name.
GENERIC = ["plots.py", "compare.py", "versus.py", "report.py", "loader.py", "__main__.py"]


def _strings(path):
    tree = ast.parse(open(path).read())
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def test_no_op_names_outside_the_v1_table():
    ops = set(describe._V1_OPS) | {"decode", "w4a16"}
    for module in GENERIC:
        found = _strings(os.path.join(PACKAGE, module)) & ops
        if module in ("plots.py", "report.py"):
            # "overlap" also names the plot drawn for benchmarks with the overlap columns, whose
            # column "collective" (the overlapped collective) splits its lines
            found -= {"overlap", "collective"}
        assert not found, f"{module} names ops {sorted(found)}"


def _binary_ops():
    binary = os.environ.get("GENBENCH_BIN", os.path.join(REPO, "build", "bin", "genbench"))
    if not os.path.exists(binary):
        pytest.fail(f"genbench binary not found at {binary}")
    out = subprocess.run([binary, "list"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    return {line.split()[1].rstrip(":") for line in out.splitlines() if line.startswith("op ")}


@pytest.fixture(scope="module")
def decode_files(tmp_path_factory):
    if "decode" not in _binary_ops():
        pytest.skip("this genbench build has no decode op")
    d = tmp_path_factory.mktemp("decode")
    cfg = os.path.join(HERE, "data", "decode.yaml")
    return run_genbench_config(cfg, d / "dec_a.h5"), run_genbench_config(cfg, d / "dec_b.h5")


def test_an_op_the_package_never_names(decode_files):
    a, b = (ga.load(p) for p in decode_files)
    bench = a.benchmarks["decode"]
    d = bench.description
    assert d.source == "file" and a.schema_version >= 2
    head = bench.headline
    t = a.table("decode")
    assert len(t) == 12 and (t["status"] == "ok").all()
    assert head.name in t and (t[head.name] > 0).all() and bench.units[head.name] == head.unit
    # its plot: named after its headline, lines against its x at the cache lengths of the config
    name = f"decode_{plots.short_metric(head.name, head.unit)}"
    fn = dict((n, f) for n, _, f in plots.plots_for([a]))[name]
    fig = fn([a])
    x = d.plot.x
    assert x in t
    lines = [ln for ax in fig.axes for ln in ax.get_lines() if ln.get_marker() not in (None, "None", "", " ")]
    assert lines and all(list(ln.get_xdata()) == sorted(set(t[x].astype(float))) for ln in lines)
    drawn = np.sort(np.concatenate([ln.get_ydata() for ln in lines]))
    scale = drawn.max() / t[head.name].max()  # the unit may have dropped a prefix
    assert np.allclose(drawn, np.sort(t[head.name].to_numpy()) * scale)
    assert d.plot.title in fig._suptitle.get_text()
    # its comparison: by its compare metric, each ratio the quotient of the two files' values
    c = compare(a, b)
    assert set(c["metric"]) == {bench.compare_metric}
    rated = c[np.isfinite(c["ratio"])]
    assert len(rated) == 12
    assert np.allclose(rated["ratio"], rated["b"] / rated["a"] if bench.higher_is_better else rated["a"] / rated["b"])
