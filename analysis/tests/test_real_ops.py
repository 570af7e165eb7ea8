"""Nothing in the analysis names an op (outside the old-file shims, oldfiles.py), and an op that
the binary has and the package never mentions (decode) is loaded, plotted and compared from its
file."""

import io
import os
import re
import subprocess
import tokenize

import numpy as np
import pytest

import genbench_analysis as ga
from genbench_analysis import plots
from genbench_analysis.compare import compare

from conftest import HERE, REPO, run_genbench_config

PACKAGE = os.path.join(os.path.dirname(HERE), "genbench_analysis")
# The module of old-file shims: the one place that names ops (schema 1 stores nothing else).
SHIMS = "oldfiles.py"
# Words spelled like an op that are not op names where they stand: (module, word, where, why).
# where: "attribute" (only as an attribute name, after a dot), "prose" (comments and
# triple-quoted strings) or "anywhere".
NOT_OP_NAMES = [
    ("loader.py", "decode", "attribute", "bytes.decode, Python's method"),
    ("describe.py", "decode", "attribute", "bytes.decode, Python's method"),
    ("report.py", "decode", "attribute", "bytes.decode, Python's method"),
    ("model.py", "layer", "anywhere", "the model suites' vocabulary: a model's layer, tag per=layer (docs/models.md)"),
    ("model.py", "overlap", "anywhere", "a part's status: its time counted through a measured overlap (tag replaces)"),
    ("__main__.py", "layer", "anywhere", "the model command's help and messages: a model's layer"),
] + [("model.py", w, "prose", "the model suites' parts and phases described in words (docs/models.md)")
     for w in ("attention", "collective", "decode", "gemm")]
_OP_RE = re.compile(r'std::string name\(\) const override \{\s*return "([a-z0-9_]+)"')


def _source_ops():
    """Every op's name, from src/ops/<op>/*.cpp."""
    names = set()
    for d, _, files in os.walk(os.path.join(REPO, "src", "ops")):
        for f in files:
            if f.endswith(".cpp"):
                names |= set(_OP_RE.findall(open(os.path.join(d, f)).read()))
    return names


def _op_words(source, ops):
    """(line, word, token text, where) for every op name that a `grep -wi` would find in the
    source: in identifiers, strings (docstrings and f-strings included) and comments; where is
    "attribute" for a name after a dot, "prose" in a comment or triple-quoted string, else ""."""
    words = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(sorted(map(re.escape, ops))) + r")(?![A-Za-z0-9_])", re.I)
    kinds = {tokenize.NAME, tokenize.STRING, tokenize.COMMENT} | {getattr(tokenize, "FSTRING_MIDDLE", -1)}
    out, prev = [], None
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in kinds:
            for m in words.finditer(tok.string):
                if tok.type == tokenize.NAME and prev is not None and prev.string == ".":
                    where = "attribute"
                elif tok.type == tokenize.COMMENT or tok.string.lstrip("rbfuRBFU").startswith(('"""', "'''")):
                    where = "prose"
                else:
                    where = ""
                out.append((tok.start[0], m.group(1).lower(), tok.string, where))
        if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
            prev = tok
    return out


def test_the_scan_finds_op_names():
    """The scan below finds an op's name as code, string and comment, and not in longer words."""
    src = 'if b.op == "overlap":  # the gemm\n    x = f"{a}-decode"\n    attention = 1\n'
    found = [(line, w) for line, w, _, _ in _op_words(src, {"overlap", "gemm", "decode", "attention"})]
    assert found == [(1, "overlap"), (1, "gemm"), (2, "decode"), (3, "attention")]
    assert _op_words('overlap_table(gemm_tflops)  # decode_GBps\n', {"overlap", "gemm", "decode"}) == []
    assert _op_words('s.decode("utf-8")\n', {"decode"})[0][3] == "attribute"
    assert [w[3] for w in _op_words('"""the gemm"""  # gemm\ny = "gemm"\n', {"gemm"})] == ["prose", "prose", ""]


def test_no_op_names_outside_the_old_file_shims():
    ops = _source_ops()
    assert {"attention", "collective", "gemm", "overlap", "decode"} <= ops
    assert _binary_ops() <= ops  # the source scan misses no op the binary has
    used = set()
    for module in sorted(os.listdir(PACKAGE)):
        if not module.endswith(".py") or module == SHIMS:
            continue
        bad = []
        for line, word, text, where in _op_words(open(os.path.join(PACKAGE, module)).read(), ops):
            allowed = [e for e in NOT_OP_NAMES if e[0] == module and e[1] == word and e[2] in ("anywhere", where)]
            if allowed:
                used.add(allowed[0])
            else:
                bad.append(f"{module}:{line}: {word!r} in {text[:60]!r}")
        assert not bad, "op names outside oldfiles.py:\n" + "\n".join(bad)
    assert used == set(NOT_OP_NAMES), f"exceptions no longer needed: {set(NOT_OP_NAMES) - used}"
    # and the shim module does name them: the scan would find them there
    assert _op_words(open(os.path.join(PACKAGE, SHIMS)).read(), ops)


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
