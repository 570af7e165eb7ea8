"""The loader on files the real genbench binary wrote: the one the tests run (whatever schema
it writes) and the schema 1 file kept in tests/data (same config)."""

import shutil
import warnings

import h5py
import numpy as np
import pytest

import genbench_analysis as ga
from conftest import RANKS, V1_OVERLAP, V1_SMALL

STATUSES = {"ok", "failed", "skipped", "unsupported"}
# From tests/data/small.yaml
MIN_ITERS, MAX_ITERS = 4, 12


@pytest.fixture(scope="module")
def res(any_file):
    return ga.load(any_file)


def test_root_attributes(res):
    a = res.attrs
    assert a["format"] == "genbench-results"
    assert a["schema_version"] in ga.SCHEMA_VERSIONS
    if res.path == V1_SMALL:
        assert a["schema_version"] == 1 and res.schema["version"] == 1
    assert a["world_size"] == RANKS
    assert a["backend"] == "host"
    assert a["state"] == "complete"
    assert "benchmarks:" in a["config"]
    assert res.device == "host backend (CPU)"
    assert res.label == f"host backend (CPU) \u2014 {res.name}" and res.name in ("run_a.h5", "v1_small.h5")


def test_benchmarks_and_axes(res):
    assert set(res.benchmarks) == {"attention", "gemm", "collectives"}
    assert res.benchmarks["gemm"].op == "gemm"
    assert res.benchmarks["collectives"].implementations == ["mpi"]
    assert {"m", "n", "k", "dtype", "mode"} <= set(res.axes("gemm"))
    t = res.table("gemm")
    assert set(res.axes("gemm")) <= set(t.columns)
    assert "seqlen_q" not in t.columns  # another benchmark's axis
    # 3 seqlens x 2 modes; 2 m x 2 dtypes x 2 modes; 2 collectives x 3 sizes
    counts = res.points.groupby("benchmark").size().to_dict()
    assert counts == {"attention": 6, "gemm": 8, "collectives": 6}


def test_strings_are_decoded(res):
    p = res.points
    for col in ("benchmark", "impl", "status", "reason", "dtype", "mode"):
        assert all(isinstance(v, str) for v in p[col].dropna()), col
    assert set(res.system["host"].map(type)) == {str}


def test_statuses(res):
    p = res.points
    assert set(p["status"]) <= STATUSES
    # the host backend runs eager mode and marks graph mode unsupported, with a reason
    eager, graph = p[p["mode"] == "eager"], p[p["mode"] == "graph"]
    assert (eager["status"] == "ok").all()
    assert (graph["status"] == "unsupported").all()
    assert graph["reason"].str.contains("graph").all()


def test_all_ranks_present(res):
    assert sorted(res.system["rank"]) == list(range(RANKS))
    per_point = res.ranks.groupby(["benchmark", "row"])["rank"].apply(sorted)
    assert len(per_point) == len(res.points)
    assert all(r == list(range(RANKS)) for r in per_point)
    ok = res.ranks[res.ranks["status"] == "ok"]
    assert ok["median_s"].gt(0).all()
    # rel_median is the rank's median over the cross-rank median: with 2 ranks they straddle 1
    med = ok.groupby(["benchmark", "row"])["rel_median"].median()
    assert np.allclose(med, 1.0)


def test_sample_counts_match_iterations(res):
    for name in res.benchmarks:
        s = res.samples(name)
        assert list(s.columns) == ["benchmark", "point", "impl", "rank", "iteration", "time_s"]
        assert np.isfinite(s["time_s"]).all() and (s["time_s"] > 0).all()
        pts = res.table(name)
        counts = s.groupby(["point", "rank"]).size()
        ranks = res.ranks[res.ranks["benchmark"] == name].set_index(["point", "rank"])
        for _, p in pts.iterrows():
            if p["status"] != "ok":
                assert p["point"] not in s["point"].values
                assert p["samples_per_rank"] == 0
                continue
            assert 1 <= p["iterations"] <= MAX_ITERS
            if p["iterations"] < MIN_ITERS:  # only the time limit stops a point this early
                assert p["stop_reason"] == "max_time"
            assert p["samples_per_rank"] == p["iterations"]
            for rank in range(RANKS):
                n = counts[(p["point"], rank)]
                assert n == ranks.loc[(p["point"], rank), "iterations"]
                assert n == p["iterations"]
            # iterations are numbered 0..n-1 without gaps
            its = s[(s["point"] == p["point"]) & (s["rank"] == 0)]["iteration"].tolist()
            assert its == list(range(p["iterations"]))


def test_point_time_is_the_slowest_rank_per_iteration(res):
    s = res.samples("gemm")
    pts = res.table("gemm").set_index("point")
    slowest = s.pivot_table(index=["point", "iteration"], columns="rank", values="time_s").max(axis=1)
    for point, times in slowest.groupby(level="point"):
        assert times.min() == pytest.approx(pts.loc[point, "time_min_s"], rel=1e-9)
        assert times.max() == pytest.approx(pts.loc[point, "time_max_s"], rel=1e-9)


def test_metrics(res):
    ok = res.points[res.points["status"] == "ok"]
    compute = ok[ok["op"].isin(["attention", "gemm"])]
    assert (compute["tflops"] > 0).all()
    coll = ok[ok["op"] == "collective"]
    assert (coll["busbw_GBps"] > 0).all()
    assert (ok["time_min_s"] <= ok["time_median_s"]).all() and (ok["time_median_s"] <= ok["time_max_s"]).all()
    assert ok["rel_noise"].notna().all() and (ok["rel_noise"] >= 0).all()
    assert res.units["tflops"] == "TFLOP/s" and res.units["time_median_s"] == "s"


def _copy_with_gemm_points(src, dst, edit):
    """A copy of src whose gemm points table is edit(points), rewritten (with its dtype)."""
    shutil.copy(src, dst)
    with h5py.File(dst, "r+") as f:
        g = f["benchmarks/gemm"]
        new = edit(g["points"][()])
        del g["points"]
        g.create_dataset("points", data=new)
    return dst


def test_extra_columns_are_tolerated(file_a, tmp_path):
    """A later writer may add columns (clocks, ceiling_fraction): the loader keeps them."""
    def add_columns(old):
        extra = [("test_fraction", "<f8"), ("test_count", "<i8"), ("test_note", "S8")]
        dt = np.dtype([(n, old.dtype.fields[n][0]) for n in old.dtype.names] + extra)
        new = np.zeros(old.shape, dtype=dt)
        for c in old.dtype.names:
            new[c] = old[c]
        new["test_fraction"] = 0.5
        new["test_count"] = 1980
        new["test_note"] = b"x"
        return new
    path = _copy_with_gemm_points(file_a, tmp_path / "extra.h5", add_columns)
    res = ga.load(path)
    gemm = res.table("gemm")
    assert (gemm["test_fraction"] == 0.5).all()
    assert (gemm["test_count"] == 1980).all()
    assert (gemm["test_note"] == "x").all()
    assert len(res.points) == 20


def test_unfinished_run_warns(file_a, tmp_path):
    path = tmp_path / "running.h5"
    shutil.copy(file_a, path)
    with h5py.File(path, "r+") as f:
        f.attrs["state"] = "interrupted"
    with pytest.warns(ga.ResultStateWarning, match="interrupted"):
        res = ga.load(path)
    assert len(res.points) == 20


def test_held_back_points_warn(file_a, tmp_path):
    # Three ok points marked as timed under the software power cap (0x4), one of them also under
    # the power brake (0x80): the warning counts them and names both reasons.
    def hold_three(pts):
        ok = np.flatnonzero(pts["status"] == b"ok")
        assert len(ok) >= 3
        pts["throttled"][ok[:3]] = 1
        pts["throttle_reasons"][ok[:3]] = 0x4
        pts["throttle_reasons"][ok[0]] = 0x4 | 0x80 | 0x1
        return pts
    path = _copy_with_gemm_points(file_a, tmp_path / "held.h5", hold_three)
    with pytest.warns(ga.HeldBackWarning, match=r"3 of \d+ points were timed with the card held back "
                                                r"\(software power cap, power brake\)"):
        res = ga.load(path)
    assert int(res.points["throttled"].sum()) == 3


def test_no_held_back_warning_without_throttled_points(file_a):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ga.HeldBackWarning)
        ga.load(file_a)


def test_holding_reasons_in_words():
    assert ga.holding_reasons(0x4 | 0x80) == "software power cap, power brake"
    assert ga.holding_reasons(0x8 | 0x20 | 0x40) == "hardware slowdown, software thermal, hardware thermal"
    assert ga.holding_reasons(0x1 | 0x2) == ""


def test_descriptions(res):
    """Every benchmark has a description (stored, or derived from schema 1) whose metrics are
    columns of its table with the units of the table's columns."""
    for name, b in res.benchmarks.items():
        d = b.description
        assert d is not None and d.op == b.op
        assert d.source == ("v1" if res.schema_version == 1 else "file")
        t = res.table(name)
        assert b.headline is not None and b.headline.name in t.columns
        for m in b.metrics:
            assert m.name in t.columns and b.units[m.name] == m.unit
        assert b.compare_metric in t.columns
    # the metric names of schema 1 stayed in schema 2
    assert res.benchmarks["gemm"].headline.name == "tflops"
    assert res.benchmarks["gemm"].headline.unit == "TFLOP/s"
    assert "busbw_GBps" in [m.name for m in res.benchmarks["collectives"].metrics]


def test_schema_1_descriptions_are_derived():
    r = ga.load(V1_SMALL)
    att, coll, gemm = (r.benchmarks[n] for n in ("attention", "collectives", "gemm"))
    assert att.headline == ga.Metric("tflops", "TFLOP/s", "work_flops / time_median_s")
    assert (att.description.plot.x, att.description.plot.log_x) == ("seqlen_q", True)
    assert [m.name for m in coll.metrics] == ["busbw_GBps", "algbw_GBps"]
    assert coll.compare_metric == "busbw_GBps" and coll.units["bytes"] == "B"
    assert coll.description.plot.facets == ["collective"]
    assert (gemm.description.plot.x, gemm.description.plot.facets, gemm.description.plot.ceiling_line) == \
        ("m", ["dtype"], "")
    ov = ga.load(V1_OVERLAP).benchmarks["overlap-sizes"]
    assert ov.headline.name == "tflops" and ov.compare_metric == "overlap_efficiency"
    assert ov.description.columns_of_kind("extra")[:3] == ["t_compute_s", "t_comm_s", "t_both_s"]
    assert gemm.units["time_median_s"] == "s" and gemm.units["work_flops"] == "FLOP"
    # the schema description: the fixed columns v1 has, typed, with the file's units
    fixed = {c.name: c for c in ga.describe.fixed_columns(r.schema, "points")}
    assert fixed["tflops"].unit == "TFLOP/s" and fixed["iterations"].type == "i64" and fixed["impl"].type == "str"
    assert "m" not in fixed and "seqlen_q" not in fixed


def test_schema_1_op_outside_the_v1_table(tmp_path):
    """A schema 1 op the v1 table does not know: tflops as headline, plotted against its first axis."""
    path = tmp_path / "mystery.h5"
    shutil.copy(V1_SMALL, path)
    with h5py.File(path, "r+") as f:
        f["benchmarks/gemm"].attrs["op"] = "mystery"
    b = ga.load(path).benchmarks["gemm"]
    assert b.op == "mystery" and b.headline.name == "tflops" and b.description.plot.x == "m"
    assert b.compare_metric == "tflops"
