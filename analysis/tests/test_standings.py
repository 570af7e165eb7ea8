"""Rounds in one file, the standings tables of a page, and the regression gate, on small
synthetic files (schema 2, written with h5py as v2files.py does)."""

import json
import os

import h5py
import numpy as np
import pytest

from genbench_analysis import loader, standings
from genbench_analysis.__main__ import main
from genbench_analysis.versus import versus

import v2files

MS = (256, 1024, 4096)
N, K = 1024, 2048
OURS_TIME = {256: 2e-5, 1024: 6e-5, 4096: 2e-4}


def _points(ratios, offset=0, skip=()):
    """Points of one round: for each m, "ours" at OURS_TIME and "peer" `ratio` times slower
    (so ours / peer of TFLOP/s is the ratio). m in skip: ours not run there (status "")."""
    out = []
    for j, m in enumerate(MS):
        flops = 2.0 * m * N * K
        if m not in skip:
            out.append({"point": offset + j, "impl": "ours", "m": m, "k": K, "dtype": "bf16",
                        "time": OURS_TIME[m], "work_flops": flops, "spread": 0.0})
        out.append({"point": offset + len(MS) + j, "impl": "peer", "m": m, "k": K, "dtype": "bf16",
                    "time": OURS_TIME[m] * ratios[m], "work_flops": flops, "spread": 0.0})
    return out


def one_round(path, ratios, skip=(), device="NVIDIA H200"):
    return v2files.write_v2(path, [("gemm", v2files.GEMM, v2files.gemm_metrics, 2 * len(MS), _points(ratios, 0, skip))],
                            backend="cuda", device=device)


def rounds_file(path, per_round, device="NVIDIA H200"):
    """A file of len(per_round) rounds in the new layout: sweep_size x rounds rows, row = round *
    sweep_size + point, the columns round and order, the benchmark attribute rounds."""
    sweep = 2 * len(MS)
    pts = []
    for r, ratios in enumerate(per_round):
        pts += _points(ratios, offset=r * sweep)
    v2files.write_v2(path, [("gemm", v2files.GEMM, v2files.gemm_metrics, sweep * len(per_round), pts)],
                     backend="cuda", device=device)
    with h5py.File(path, "r+") as f:
        g = f["benchmarks/gemm"]
        old = g["points"][()]
        fields = [(n, old.dtype.fields[n][0]) for n in old.dtype.names]
        dt = np.dtype(fields[:2] + [("round", "<i8"), ("order", "<i8")] + fields[2:])
        new = np.zeros(old.shape, dtype=dt)
        for name in old.dtype.names:
            new[name] = old[name]
        rows = np.arange(len(old))
        new["round"] = rows // sweep
        new["point"] = rows % sweep
        new["order"] = (rows * 5) % sweep  # some shuffled order
        del g["points"]
        g.create_dataset("points", data=new)
        cols = json.loads(g.attrs["columns"])
        cols[2:2] = [{"name": "round", "type": "i64", "unit": "", "meaning": "round", "kind": "fixed"},
                     {"name": "order", "type": "i64", "unit": "", "meaning": "place in the round", "kind": "fixed"}]
        g.attrs["columns"] = json.dumps(cols)
        g.attrs["sweep_size"] = np.int64(sweep)
        g.attrs["rounds"] = np.int64(len(per_round))
        f.attrs["source_tree"] = "0123456789abcdef"
        f.attrs["git_revision"] = "abc1234"
    return str(path)


ROUNDS = [{256: 1.10, 1024: 1.02, 4096: 1.06}, {256: 1.08, 1024: 1.05, 4096: 1.00},
          {256: 1.12, 1024: 1.03, 4096: 0.98}]


# --- rounds in one file ---------------------------------------------------------------------

def test_a_file_of_rounds_has_one_view_per_round(tmp_path):
    r = loader.load(rounds_file(tmp_path / "three.h5", ROUNDS))
    assert r.round_count == 3
    assert sorted(r.points["round"].unique()) == [0, 1, 2]
    views = r.rounds()
    assert [v.path for v in views] == [f"{r.path}#round{i}" for i in range(3)]
    assert [v.name for v in views] == [f"three.h5#round{i}" for i in range(3)]
    for i, v in enumerate(views):
        assert set(v.points["round"]) == {i} and len(v.points) == 2 * len(MS)
        assert sorted(v.points["point"]) == list(range(2 * len(MS)))
        assert not v.ranks.empty and set(v.ranks["row"]) == set(v.points["row"])
        assert v.rounds() == [v]
        assert len(v.samples("gemm")["point"].unique()) == 2 * len(MS)  # read from the file on disk


def test_a_file_without_rounds_is_round_zero(tmp_path):
    r = loader.load(one_round(tmp_path / "one.h5", ROUNDS[0]))
    assert r.round_count == 1 and set(r.points["round"]) == {0}
    assert r.rounds() == [r]
    assert "round" not in r.table("gemm")  # not a column of the stored table


def test_versus_over_rounds_equals_versus_over_files(tmp_path):
    three = loader.load(rounds_file(tmp_path / "three.h5", ROUNDS))
    files = [loader.load(one_round(tmp_path / f"r{i}.h5", ratios)) for i, ratios in enumerate(ROUNDS)]
    a = versus([three], "ours", "peer", target=1.03)
    b = versus(files, "ours", "peer", target=1.03)
    cols = ["m", "rounds", "files", "impl", "peer", "ratio", "ratio_min", "ratio_max", "verdict"]
    assert a[cols].to_dict("records") == pytest.approx(b[cols].to_dict("records")) or \
        a[cols].equals(b[cols])
    for _, row in a.iterrows():
        per_round = [x[int(row["m"])] for x in ROUNDS]
        assert row["rounds"] == 3 and row["files"] == 3
        assert row["ratio"] == pytest.approx(np.median(per_round))
        assert row["ratio_min"] == pytest.approx(min(per_round))
        assert row["ratio_max"] == pytest.approx(max(per_round))
    assert list(a["verdict"]) == ["met", "spread", "spread"]


# --- spec, page, json ----------------------------------------------------------------------

SPEC = """\
root: ..
json: docs/standings.json
tables:
  - id: gemm-ours
    title: "ours against the peer"
    kind: versus
    files: results/committed/run/r*.h5
    impl: ours
    peer: peer
    target: 1.03
    label: "m={m|size}"
    config: configs/gemm.yaml
    run_args: ["--rounds", "3"]
    output: gemm.h5
  - id: gemm-alone
    title: "ours alone"
    kind: values
    files: results/committed/three.h5
    impl: ours
    where: {m: [256, 4096]}
    label: "{dtype} {m}"
    format: {value: ".2f"}
"""

PAGE = """\
# Standings

Prose before, kept as it is.

<!-- standings:gemm-ours begin -->
<!-- standings:gemm-ours end -->

Prose between.

<!-- standings:gemm-alone begin -->
old text
<!-- standings:gemm-alone end -->
Prose after.
"""


@pytest.fixture
def project(tmp_path):
    """A project root with a spec, a page and committed files: three one-round files and one of
    three rounds."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "results" / "committed" / "run").mkdir(parents=True)
    for i, ratios in enumerate(ROUNDS):
        one_round(tmp_path / "results" / "committed" / "run" / f"r{i + 1}.h5", ratios)
    rounds_file(tmp_path / "results" / "committed" / "three.h5", ROUNDS)
    (tmp_path / "docs" / "standings.yaml").write_text(SPEC)
    (tmp_path / "docs" / "page.md").write_text(PAGE)
    return tmp_path


def _cli(project, *args):
    return main(["standings", str(project / "docs" / "standings.yaml"), *args])


def test_write_then_check_round_trip(project, capsys):
    page = project / "docs" / "page.md"
    js = project / "docs" / "standings.json"
    assert _cli(project, "--write", str(page), "--json", str(js)) == 0
    text = page.read_text()
    # Text outside the markers untouched.
    for prose in ("Prose before, kept as it is.", "Prose between.", "Prose after.", "# Standings"):
        assert prose in text
    assert "old text" not in text
    assert "| m=256 |" in text and "| m=1K |" in text and "| m=4K |" in text
    assert "1.100 (1.080-1.120)" in text  # m=256: median (min-max) of 1.10, 1.08, 1.12
    assert "met" in text and "spread" in text
    assert "`results/committed/run/r1.h5`" in text and "(3 rounds)" in text
    assert "card: 2x NVIDIA H200" in text and "date: 2026-12-01" in text
    assert "--print gemm-ours`" in text and "docs/standings.yaml" in text
    assert "source_tree: 0123456789abcdef" in text and "git_revision: abc1234" in text  # three.h5's
    # values: median (min-max) over the three rounds, only the rows of the where filter.
    alone = text.split("standings:gemm-alone begin")[1]
    assert "| bf16 256 |" in alone and "| bf16 4096 |" in alone and "1024" not in alone.split("Files")[0]
    tflops = 2.0 * 256 * N * K / OURS_TIME[256] / 1e12
    assert f"{tflops:.2f} ({tflops:.2f}-{tflops:.2f})" in alone
    capsys.readouterr()
    assert _cli(project, "--check", str(page)) == 0
    doc = json.loads(js.read_text())
    p = doc["tables"]["gemm-ours"]["points"]["m=256"]
    assert p == {"ratio": pytest.approx(1.10), "ratio_min": pytest.approx(1.08), "ratio_max": pytest.approx(1.12),
                 "rounds": 3, "impl": pytest.approx(p["impl"]), "peer": pytest.approx(p["peer"]), "verdict": "met"}
    # Writing twice changes nothing (deterministic).
    assert _cli(project, "--write", str(page), "--json", str(js)) == 0
    assert page.read_text() == text and json.loads(js.read_text()) == doc


def test_check_names_the_table_that_drifted(project, capsys):
    page = project / "docs" / "page.md"
    assert _cli(project, "--write", str(page), "--json", str(project / "docs" / "standings.json")) == 0
    capsys.readouterr()
    page.write_text(page.read_text().replace("1.100 (1.080-1.120)", "1.101 (1.080-1.120)"))
    assert _cli(project, "--check", str(page)) == 1
    out, err = capsys.readouterr()
    assert "+| m=256 |" in out and "1.101" in out  # a unified diff
    assert "tables that differ: gemm-ours" in err and "gemm-alone" not in err
    # A changed result file: the page and the json are both stale.
    assert _cli(project, "--write", str(page)) == 0
    one_round(project / "results" / "committed" / "run" / "r2.h5", {256: 1.20, 1024: 1.05, 4096: 1.00})
    capsys.readouterr()
    assert _cli(project, "--check", str(page)) == 1
    out, err = capsys.readouterr()
    assert "tables that differ: gemm-ours" in err and "standings.json is not current" in err


@pytest.mark.parametrize("edit,message", [
    (lambda t: t.replace("<!-- standings:gemm-ours end -->\n", ""), "end marker"),
    (lambda t: t.replace("<!-- standings:gemm-alone begin -->\n", ""), "end of 'gemm-alone' without its begin"),
    (lambda t: t + "<!-- standings:nope begin -->\n<!-- standings:nope end -->\n", "unknown table id 'nope'"),
    (lambda t: t + "<!-- standings:gemm-ours begin -->\n<!-- standings:gemm-ours end -->\n", "a second block"),
])
def test_marker_errors(project, capsys, edit, message):
    page = project / "docs" / "page.md"
    page.write_text(edit(PAGE))
    for mode in ("--check", "--write"):
        assert _cli(project, mode, str(page)) == 2
        assert message in capsys.readouterr().err
    assert page.read_text() == edit(PAGE)  # nothing written


def test_missing_files_and_spec_errors(project, capsys):
    page = project / "docs" / "page.md"
    os.remove(project / "results" / "committed" / "three.h5")
    assert _cli(project, "--check", str(page)) == 2
    assert "missing file 'results/committed/three.h5'" in capsys.readouterr().err
    spec = project / "docs" / "standings.yaml"
    spec.write_text(SPEC.replace("results/committed/three.h5", "results/committed/none-*.h5"))
    assert _cli(project, "--print") == 2
    assert "no file matches 'results/committed/none-*.h5'" in capsys.readouterr().err
    spec.write_text(SPEC.replace("    target: 1.03\n", "    target: 1.03\n    colour: red\n"))
    assert _cli(project, "--print") == 2
    assert "(gemm-ours): unknown key 'colour'" in capsys.readouterr().err
    spec.write_text(SPEC.replace("kind: values", "kind: plot"))
    assert _cli(project, "--print") == 2
    assert "(gemm-alone).kind: expected one of versus, values" in capsys.readouterr().err
    spec.write_text(SPEC.replace('label: "m={m|size}"', 'label: "{dtype}"'))
    assert _cli(project, "--print", "gemm-ours") == 2
    assert "two points are both labelled 'bf16'" in capsys.readouterr().err
    spec.write_text(SPEC)
    assert _cli(project, "--print", "nope") == 2
    assert "unknown table id 'nope'" in capsys.readouterr().err
    assert _cli(project, "--check", str(project / "docs" / "absent.md")) == 2
    assert "no such page" in capsys.readouterr().err


def test_print_one_table(project, capsys):
    assert _cli(project, "--print", "gemm-ours") == 0
    out = capsys.readouterr().out
    assert out.startswith("*ours against the peer*") and "| m=4K |" in out and "ours alone" not in out


# --- the gate -------------------------------------------------------------------------------

def _committed(project):
    js = project / "docs" / "standings.json"
    assert _cli(project, "--json", str(js)) == 0
    return js


def _gate(project, new_dir, *extra):
    return main(["gate", str(project / "docs" / "standings.yaml"), "--new", str(new_dir), *extra])


def test_gate_fails_naming_each_point_that_fell_or_is_missing(project, tmp_path, capsys):
    _committed(project)  # m=256: 1.08-1.12, m=1K: 1.02-1.05, m=4K: 0.98-1.06
    new = tmp_path / "new"
    new.mkdir()
    # m=256 5% under its committed lowest round; m=1K inside the spread; m=4K not run.
    rounds_file(new / "gemm.h5", [{256: 1.08 * 0.95, 1024: 1.03, 4096: 1.0}] * 3)
    with h5py.File(new / "gemm.h5", "r+") as f:  # ours at m=4K never ran in any round
        ds = f["benchmarks/gemm/points"]
        p = ds[()]
        p["status"][(p["impl"] == b"ours") & (p["m"] == 4096)] = b""
        ds[...] = p
    capsys.readouterr()
    assert _gate(project, new) == 1
    out = capsys.readouterr().out
    fell = [ln for ln in out.splitlines() if ln.startswith("FELL")]
    missing = [ln for ln in out.splitlines() if ln.startswith("MISSING")]
    assert len(fell) == 1 and "gemm-ours: m=256: new 1.026" in fell[0] and "1.080-1.120" in fell[0]
    assert len(missing) == 1 and "m=4K" in missing[0]
    assert "m=1K" not in out.split("gate:")[0]
    assert "1 fell, 1 missing, 0 improved, 1 within" in out and "FAIL" in out


def test_gate_passes_within_the_spread_and_names_improvements(project, tmp_path, capsys):
    _committed(project)
    new = tmp_path / "new"
    new.mkdir()
    # m=256 2% under its lowest round (inside the 3% tolerance), m=1K well above, m=4K inside.
    one_round(new / "gemm.h5", {256: 1.08 * 0.98, 1024: 1.20, 4096: 1.01})
    capsys.readouterr()
    assert _gate(project, new) == 0
    out = capsys.readouterr().out
    assert "improved  gemm-ours: m=1K: new 1.200" in out and "FELL" not in out and "pass" in out
    assert _gate(project, new, "--tolerance", "0.01") == 1  # 2% is past a 1% tolerance
    assert "FELL      gemm-ours: m=256" in capsys.readouterr().out


def test_gate_refuses_a_run_on_another_card(project, tmp_path, capsys):
    _committed(project)  # the committed rounds ran on an NVIDIA H200
    new = tmp_path / "new"
    new.mkdir()
    one_round(new / "gemm.h5", {256: 1.10, 1024: 1.03, 4096: 1.01}, device="NVIDIA H100 80GB HBM3")
    capsys.readouterr()
    assert _gate(project, new) == 1
    out = capsys.readouterr().out
    card = [ln for ln in out.splitlines() if ln.startswith("CARD")]
    assert len(card) == 1 and "NVIDIA H100 80GB HBM3" in card[0] and "NVIDIA H200" in card[0]
    assert "1 on another card" in out and "FELL" not in out and "FAIL" in out


def test_gate_on_another_card_uses_that_cards_baseline(project, tmp_path, capsys):
    _committed(project)
    base = project / "results" / "gate-h100"
    base.mkdir(parents=True)
    rounds_file(base / "gemm.h5", [{256: 1.30, 1024: 1.03, 4096: 1.01}, {256: 1.32, 1024: 1.04, 4096: 1.00}],
                device="NVIDIA H100 80GB HBM3")
    spec = project / "docs" / "standings.yaml"
    spec.write_text(spec.read_text() + "gate_baselines:\n  NVIDIA H100 80GB HBM3: results/gate-h100\n")
    new = tmp_path / "new"
    new.mkdir()
    # m=256: within the H100 rounds (1.30-1.32), far above the H200 ones; m=1K 5% under H100's lowest
    one_round(new / "gemm.h5", {256: 1.31, 1024: 1.03 * 0.95, 4096: 1.005}, device="NVIDIA H100 80GB HBM3")
    capsys.readouterr()
    assert _gate(project, new) == 1
    out = capsys.readouterr().out
    assert not [ln for ln in out.splitlines() if ln.startswith(("CARD", "improved"))], out
    fell = [ln for ln in out.splitlines() if ln.startswith("FELL")]
    assert len(fell) == 1 and "m=1K" in fell[0] and "1.030-1.040" in fell[0]
    assert "0 on another card, 1 fell, 0 missing, 0 improved, 2 within" in out


def test_gate_without_the_new_file_fails_every_point(project, tmp_path, capsys):
    _committed(project)
    empty = tmp_path / "empty"
    empty.mkdir()
    capsys.readouterr()
    assert _gate(project, empty) == 1
    out = capsys.readouterr().out
    assert out.count("MISSING") == 4 and "no file" in out


def test_gate_plan_lists_the_runs(project, capsys):
    assert main(["gate", str(project / "docs" / "standings.yaml"), "--plan"]) == 0
    assert capsys.readouterr().out == "gemm.h5\tconfigs/gemm.yaml\t--rounds\t3\n"


def test_repository_spec_loads():
    """docs/standings.yaml is a valid spec whose gated tables name configs that exist."""
    from conftest import REPO
    spec = standings.load_spec(os.path.join(REPO, "docs", "standings.yaml"))
    runs = standings.gate_runs(spec)
    assert runs and all(os.path.exists(os.path.join(REPO, cfg)) for _, cfg, _ in runs)
