"""Promise 8: every broken config (tests/reliability/bad_configs/ plus large and deeply nested
files generated here) is rejected by `genbench validate` with exit code 2 and a message naming
file:line:column; none crashes the process (no signal exit)."""
import os
import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import genbench

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = sorted(f for f in os.listdir(os.path.join(HERE, "bad_configs")) if f.endswith(".yaml"))

VALID = """benchmarks:
  - name: g
    op: gemm
    implementations: [reference]
    axes: {m: 64, n: 64, k: 64, dtype: fp32}
"""


def generated(d):
    """Bad inputs too large to keep in the repository: name -> path."""
    out = {}

    def put(name, data):
        p = os.path.join(d, name + ".yaml")
        with open(p, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        out[name] = p

    # 10 MB: a valid header, then ~10 MB of list values, then an error at the very end
    body = ", ".join(str(64 + i % 512) for i in range(2_100_000))
    put("huge_10mb_list", f"{VALID}    timing: {{warmup: 0}}\n  - name: h\n    op: gemm\n    implementations: [reference]\n"
        f"    axes: {{m: [{body}], n: 64, k: 64, dtype: fp33}}\n")
    assert os.path.getsize(out["huge_10mb_list"]) > 10_000_000
    # 10 MB of comment lines, then a syntax error
    put("huge_10mb_comments", ("# " + "x" * 98 + "\n") * 100_000 + VALID + "  - name: [\n")
    # under the 1 MiB limit, so yaml-cpp parses all of it: ~170000 values, an error at the end
    body = ", ".join(str(64 + i % 512) for i in range(170_000))
    put("large_900k_list", f"{VALID}  - name: h\n    op: gemm\n    implementations: [reference]\n"
        f"    axes: {{m: [{body}], n: 64, k: 64, dtype: fp33}}\n")
    assert 800_000 < os.path.getsize(out["large_900k_list"]) < 1 << 20
    put("deep_flow_10000", "benchmarks: " + "[" * 10000 + "]" * 10000 + "\n")
    put("deep_flow_maps_10000", "benchmarks: " + "{a: " * 10000 + "1" + "}" * 10000 + "\n")
    put("deep_dash_10000", "benchmarks:\n" + "- " * 10000 + "x\n")
    put("deep_block_1000", "".join(" " * i + f"k{i}:\n" for i in range(1000)) + " " * 1000 + "v\n")
    put("deep_flow_unclosed_10000", "benchmarks: " + "[" * 10000 + "\n")
    put("binary_random", bytes((i * 7919 + 13) % 256 for i in range(4096)))
    return out


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("bad"))
    paths = {f[:-5]: os.path.join(HERE, "bad_configs", f) for f in CORPUS}
    paths.update(generated(d))

    def one(item):
        name, path = item
        proc, elapsed = genbench("validate", path, "--backend", "host", "--world-size", "2", timeout=120)
        return name, (path, proc, elapsed)

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(one, sorted(paths.items())))


def test_corpus_size(results):
    assert len(CORPUS) >= 80
    assert len(results) == len(CORPUS) + 9


@pytest.mark.parametrize("name", [f[:-5] for f in CORPUS] + [
    "huge_10mb_list", "huge_10mb_comments", "large_900k_list", "deep_flow_10000", "deep_flow_maps_10000",
    "deep_dash_10000", "deep_block_1000", "deep_flow_unclosed_10000", "binary_random"])
def test_rejected_with_location(results, name):
    path, proc, elapsed = results[name]
    assert proc.returncode >= 0, f"killed by signal {-proc.returncode}: {proc.stderr[-2000:]}"
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr[-2000:])
    assert re.search(re.escape(path) + r":\d+:\d+: \S", proc.stderr), proc.stderr[-2000:]
    assert len(proc.stderr) < 4000, "one clear message, not a dump"
    assert elapsed < 60


def test_non_utf8_is_named(results):
    for name in ("latin1_bytes", "invalid_utf8_continuation", "overlong_utf8", "utf16_bom"):
        assert "UTF-8" in results[name][1].stderr, (name, results[name][1].stderr)


def test_valid_config_still_passes(tmp_path):
    p = tmp_path / "ok.yaml"
    p.write_text("# café: UTF-8 comments are fine\n" + VALID.replace("name: g", "name: 'g'"))
    proc, _ = genbench("validate", str(p), "--backend", "host", "--world-size", "2")
    assert proc.returncode == 0, proc.stderr
