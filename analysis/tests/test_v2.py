"""Schema 2 files (synthetic, v2files.py): descriptions drive the loader, the plots, compare,
versus and the report; an op the package has never heard of ("decode": GB/s against cache_len,
bounded by the copy ceiling) gets its plot and comparison from its file alone."""

import json
import os

import h5py
import numpy as np
import pytest

import genbench_analysis as ga
from genbench_analysis import plots
from genbench_analysis.__main__ import main
from genbench_analysis.compare import compare, summary
from genbench_analysis.report import write_report
from genbench_analysis.versus import versus

import v2files
from v2files import DECODE

MAD_SIGMA = 1.482602218505602


@pytest.fixture(scope="module")
def v2(tmp_path_factory):
    d = tmp_path_factory.mktemp("v2")
    a = v2files.standard_file(d / "v2_a.h5")
    # B: every time 0.8x (rates 1.25x), the probe's overhead 2x (worse, lower is better)
    b = v2files.standard_file(d / "v2_b.h5", scale=0.8, overhead_scale=2.0)
    return a, b


@pytest.fixture(scope="module")
def ra(v2):
    return ga.load(v2[0])


def _lines(ax):
    return [ln for ln in ax.get_lines() if ln.get_marker() not in (None, "None", "", " ")]


# --- loader --------------------------------------------------------------------------------

def test_descriptions_come_from_the_file(ra):
    assert ra.schema_version == 2 and ra.schema["version"] == 2
    fixed = {c.name: c for c in ga.describe.fixed_columns(ra.schema, "points")}
    assert fixed["time_median_s"].unit == "s" and fixed["work_bytes"].unit == "B"
    assert fixed["iterations"].meaning == "timed iterations"
    b = ra.benchmarks["decode"]
    assert b.op == "decode" and b.description.source == "file"
    assert b.axes == ["batch", "cache_len", "dtype", "split"]
    assert b.headline == ga.Metric("GBps", "GB/s", "KV bytes / time")
    assert [m.name for m in b.metrics] == ["GBps", "tokens_per_s"]
    assert b.units["tokens_per_s"] == "tokens/s" and b.units["launch_overhead_s"] == "s"
    assert b.meanings["effective_pages"] == "pages read"
    assert b.description.columns_of_kind("chosen") == ["split_chosen"]
    kinds = {c.name: c.kind for c in b.columns}  # the list's fixed / axis, the op's own kinds
    assert (kinds["time_median_s"], kinds["cache_len"], kinds["effective_pages"], kinds["GBps"],
            kinds["launch_overhead_s"]) == ("fixed", "axis", "effective", "metric", "extra")
    assert b.description.plot == ga.PlotHints("Decode KV-cache bandwidth against cache length", "cache_len", True,
                                              ["dtype"], "copy_GBps")
    assert (b.compare_metric, b.higher_is_better) == ("GBps", True)
    assert b.label("GBps") == "GB/s" and b.label("tokens_per_s") == "tokens/s"
    # compare.metric "" falls back to the headline; lower is better where the file says so
    assert ra.benchmarks["gemm"].compare_metric == "tflops"
    assert (ra.benchmarks["probe"].compare_metric, ra.benchmarks["probe"].higher_is_better) == ("overhead_s", False)
    # the lowest over ranks of the copy ceiling
    assert ra.ceiling("copy_GBps") == (3900.0, "GB/s")
    assert ra.ceiling("gemm_fp8_e4m3_tflops") is None


def test_axes_from_the_description_without_the_attribute(tmp_path, v2):
    path = tmp_path / "noaxes.h5"
    import shutil
    shutil.copy(v2[0], path)
    with h5py.File(path, "r+") as f:
        del f["benchmarks/decode"].attrs["axes"]
    b = ga.load(path).benchmarks["decode"]
    assert b.axes == ["batch", "cache_len", "dtype", "split"]


def test_axis_units_from_the_description(tmp_path, ra):
    # Files before axes had units: none, and the description says ''.
    b = ra.benchmarks["decode"]
    assert [a.unit for a in b.description.axes] == ["", "", "", ""]
    assert b.units["cache_len"] == ""

    def edit(name, d):
        if name == "decode":
            d["axes"][1]["unit"] = "tokens"
        return d

    path = v2files.standard_file(tmp_path / "units.h5", description_edit=edit)
    b = ga.load(path).benchmarks["decode"]
    assert b.description.axes[1] == ga.describe.Axis("cache_len", "size", "cached tokens per sequence", False,
                                                      "tokens")
    assert b.units["cache_len"] == "tokens" and b.label("cache_len") == "cache_len (tokens)"
    assert b.description.to_dict()["axes"][1]["unit"] == "tokens"
    bad = v2files.standard_file(tmp_path / "badunit.h5",
                                description_edit=lambda n, d: {**d, "axes": [{**d["axes"][0], "unit": 3}] + d["axes"][1:]})
    with pytest.raises(ga.DescriptionError, match="unit"):
        ga.load(bad)


def test_rows_that_did_not_run_are_skipped(ra, v2):
    t = ra.table("decode")
    with h5py.File(v2[0], "r") as f:
        stored = f["benchmarks/decode/points"][()]
    assert len(stored) == 16
    assert int((stored["status"] == b"").sum()) == 4
    # 2 impls x 3 cache lengths x 2 dtypes ran; rows 6, 7, 14, 15 never did
    assert len(t) == 12 and "" not in set(t["status"])
    assert sorted(t["row"]) == [0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13]
    assert (t["point"] == t["row"]).all()
    # their rank_stats rows are gone too
    rk = ra.ranks[ra.ranks["benchmark"] == "decode"]
    assert sorted(set(rk["row"])) == sorted(t["row"]) and len(rk) == 12 * v2files.RANKS
    # gemm: the skipped point is kept (it ran through the sweep), nothing else
    g = ra.table("gemm")
    assert list(g["status"]).count("skipped") == 1 and len(g) == 7


def test_samples_are_cut_at_the_iterations(ra):
    """Past its iterations a schema 2 samples row holds 0 here: neither the samples nor the
    noise may see those."""
    t = ra.table("decode").set_index("point")
    s = ra.samples("decode")
    assert (s["time_s"] > 0).all()
    per = s.groupby(["point", "rank"]).size()
    for point, p in t.iterrows():
        assert per[(point, 0)] == p["iterations"] == per[(point, 1)]
        assert p["samples_per_rank"] == p["iterations"]
        # v2files: median t, times t(1+-2%) at every other iteration: MAD 1% for 4 and 6
        # iterations, 0 for 5
        want = 0.0 if p["iterations"] == 5 else MAD_SIGMA * 0.02 / 2
        assert p["rel_noise"] == pytest.approx(want, abs=1e-12)
    assert set(t["iterations"]) == {4, 5, 6}


def test_metric_values_and_effective_columns(ra):
    t = ra.table("decode")
    # only decode's own columns: none of gemm's or probe's
    assert "tflops" not in t and "overhead_s" not in t and "k" not in t
    assert list(t.columns[:5]) == ["benchmark", "op", "row", "point", "impl"]
    assert [c for c in t.columns if c not in ("samples_per_rank", "rel_noise")][3:] == \
        [c.name for c in ra.benchmarks["decode"].columns]
    assert np.allclose(t["GBps"], t["work_bytes"] / t["time_median_s"] / 1e9)
    assert np.allclose(t["tokens_per_s"], 8.0 / t["time_median_s"])
    assert list(t.loc[t["cache_len"] >= 4096, "split_chosen"].unique()) == ["4"]
    assert (t["effective_pages"] == t["cache_len"] // 16).all()


# --- plots ---------------------------------------------------------------------------------

def test_unknown_op_gets_its_plot(ra):
    names = [n for n, _, _ in plots.plots_for([ra])]
    assert names[:3] == ["decode_GBps", "gemm_tflops", "probe_ops_per_s"]
    assert {"decode_memory", "rank_variability"} <= set(names)
    assert not [n for n in names if n.endswith("_efficiency")]  # no op of the file asks for one
    fn = dict((n, f) for n, _, f in plots.plots_for([ra]))["decode_GBps"]
    fig = fn([ra])
    assert "Decode KV-cache bandwidth against cache length" in fig._suptitle.get_text()
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in axes] == ["dtype=bf16", "dtype=fp8"]  # facets
    t = ra.table("decode")
    for ax, dt in zip(axes, ("bf16", "fp8")):
        assert ax.get_xlabel() == "cache_len" and ax.get_ylabel() == "GB/s"
        assert ax.get_xscale() == "log"
        lines = _lines(ax)
        assert len(lines) == 2  # one per implementation
        for ln, impl in zip(lines, ("fa3", "flashinfer")):
            want = t[(t["dtype"] == dt) & (t["impl"] == impl)].sort_values("cache_len")
            assert list(ln.get_xdata()) == [1024.0, 4096.0, 16384.0]
            assert np.allclose(ln.get_ydata(), want["GBps"])
        # the copy ceiling (lowest over ranks) as a horizontal line
        flat = [ln for ln in ax.get_lines() if ln.get_marker() in (None, "None", "", " ")]
        assert [list(ln.get_ydata()) for ln in flat] == [[3900.0, 3900.0]]
        assert ax.get_ylim()[1] >= 3900.0
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["fa3", "flashinfer", "ceiling copy_GBps"]


def test_file_hints_win_over_the_v1_table(ra):
    """gemm in a schema 2 file is drawn as its file says (lines against k, panels per m, the
    bf16 GEMM ceiling through the {dtype} template), not as the v1 table's bars."""
    fig = plots.op_plot([ra], "gemm")
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in axes] == ["m=256", "m=1024"]
    for ax in axes:
        assert ax.get_xlabel() == "k" and ax.get_ylabel() == "TFLOP/s"
        (ln,) = _lines(ax)
        assert list(ln.get_xdata()) == [512.0, 2048.0, 8192.0]
        assert np.allclose(ln.get_ydata(), 500.0)  # v2files: 500 TFLOP/s everywhere
        flat = [l for l in ax.get_lines() if l not in _lines(ax)]
        assert [l.get_ydata()[0] for l in flat] == [700.0]


def test_empty_x_draws_bars_per_point(tmp_path):
    """plot.x "": one bar per point, labelled by the axes that vary, heights the headline."""
    desc = json.loads(json.dumps(v2files.PROBE))
    desc["plot"]["x"] = ""
    pts, n = v2files.probe_points()
    path = v2files.write_v2(tmp_path / "bars.h5", [("probe", desc, v2files.probe_metrics, n, pts)])
    ax = plots.op_plot([ga.load(path)], "probe").axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["depth=1", "depth=2", "depth=4"]
    heights = [p.get_height() for p in ax.patches]
    assert np.allclose(heights, [1e5, 5e4, 2.5e4])  # 1 / (1e-5 s x depth)
    assert ax.get_ylabel() == "ops_per_s (1/s)"


def test_no_ceiling_line_without_ceilings(tmp_path):
    dec, n = v2files.decode_points()
    path = v2files.write_v2(tmp_path / "noceil.h5", [("decode", DECODE, v2files.decode_metrics, n, dec)])
    ax = plots.op_plot([ga.load(path)], "decode").axes[0]
    assert all(ln.get_marker() not in (None, "None", "", " ") for ln in ax.get_lines())


def test_report_draws_the_unknown_op(v2, tmp_path):
    out = write_report([ga.load(v2[0])], str(tmp_path))
    assert {"decode_GBps", "decode_memory", "gemm_tflops", "probe_ops_per_s"} <= set(out["plots"])
    assert os.path.getsize(out["plots"]["decode_GBps"]) > 5000
    md = open(out["markdown"]).read()
    assert "## Decode KV-cache bandwidth against cache length" in md and "](decode_GBps.png)" in md
    assert "| v2_a.h5 | decode | 12 | 12 | 0 | 0 | 0 |" in md


# --- compare and versus --------------------------------------------------------------------

def test_unknown_op_gets_its_comparison(v2):
    a, b = (ga.load(p) for p in v2)
    c = compare(a, b)
    d = c[c["benchmark"] == "decode"]
    assert len(d) == 12 and set(d["metric"]) == {"GBps"} and set(d["metric_label"]) == {"GB/s"}
    # B's times are 0.8x: its GB/s are 1.25x, at every point, beyond the 2% noise
    assert np.allclose(d["ratio"], 1.25)
    assert np.allclose(d["b"] / d["a"], 1.25)
    assert set(d["verdict"]) == {"faster"}
    g = c[c["benchmark"] == "gemm"]
    assert set(g["metric"]) == {"tflops"}
    assert np.allclose(g[g["status_a"] == "ok"]["ratio"], 1.25)
    assert set(g[g["status_a"] == "skipped"]["verdict"]) == {"skipped"}
    s = summary(c).set_index("benchmark")
    assert s.loc["decode", "metric"] == "GB/s" and s.loc["decode", "geomean_ratio"] == pytest.approx(1.25)
    assert s.loc["decode", "faster"] == 12


def test_lower_is_better_inverts_the_ratio(v2):
    a, b = (ga.load(p) for p in v2)
    p = compare(a, b, benchmarks=["probe"])
    assert set(p["metric"]) == {"overhead_s"} and not p["higher_is_better"].any()
    # B's overhead is twice A's: A/B = 0.5, B is worse
    assert np.allclose(p["b"] / p["a"], 2.0)
    assert np.allclose(p["ratio"], 0.5)
    assert set(p["verdict"]) == {"slower"}


def test_compare_command_on_schema_2(v2, capsys):
    assert main(["compare", *v2]) == 0
    out = capsys.readouterr().out
    assert "== decode (GB/s) ==" in out and "== probe (overhead (s)) ==" in out
    assert "geomean B/A 1.250 over 12 points: 12 faster" in out
    assert "geomean A/B 0.500 over 3 points: 0 faster, 3 slower" in out
    header = [l for l in out.splitlines() if l.lstrip().startswith("impl")][0]
    # the axes that vary (batch and split do not), then A, B and their ratio
    assert header.split()[:6] == ["impl", "cache_len", "dtype", "A", "GB/s", "B"]


def test_versus_on_the_unknown_op(v2):
    v = versus([ga.load(p) for p in v2], "fa3", "flashinfer")
    d = v[v["benchmark"] == "decode"]
    assert len(d) == 6 and set(d["metric"]) == {"GBps"} and set(d["metric_label"]) == {"GB/s"}
    # v2files: flashinfer's times are 1.2x fa3's in both files
    assert np.allclose(d["ratio"], 1.2) and (d["rounds"] == 2).all()


def test_describe_command(v2, capsys):
    assert main(["describe", v2[0]]) == 0
    out = capsys.readouterr().out
    assert "decode (op decode, from the file)" in out
    assert "headline GBps [GB/s]" in out and "tokens_per_s [tokens/s]" in out
    assert "plot: GBps against cache_len (log), panels by dtype, ceiling copy_GBps" in out
    assert "compare: overhead_s, lower is better" in out


# --- bad descriptions ----------------------------------------------------------------------

def _bad(tmp_path, edit):
    dec, n = v2files.decode_points()
    return v2files.write_v2(tmp_path / "bad.h5", [("decode", DECODE, v2files.decode_metrics, n, dec)],
                            description_edit=edit)


def test_malformed_op_description_is_an_error(tmp_path):
    path = _bad(tmp_path, lambda name, d: "{not json")
    with pytest.raises(ga.DescriptionError, match=r"benchmark 'decode': op_description is not valid JSON"):
        ga.load(path)


def test_headline_must_be_a_metric(tmp_path):
    def edit(name, d):
        d["headline"] = "TBps"
        return d
    with pytest.raises(ga.DescriptionError, match=r"the headline 'TBps' is not among its metrics \(GBps, tokens_per_s\)"):
        ga.load(_bad(tmp_path, edit))


def test_plot_x_must_be_a_column(tmp_path):
    def edit(name, d):
        d["plot"]["x"] = "seqlen"
        return d
    with pytest.raises(ga.DescriptionError, match=r"plot.x 'seqlen' is not a column of the points table"):
        ga.load(_bad(tmp_path, edit))


def test_wrong_types_are_named(tmp_path):
    def edit(name, d):
        d["compare"]["higher_is_better"] = "yes"
        return d
    with pytest.raises(ga.DescriptionError, match=r"compare: 'higher_is_better' should be a bool"):
        ga.load(_bad(tmp_path, edit))


def test_missing_schema_description(tmp_path):
    path = _bad(tmp_path, lambda name, d: d)
    with h5py.File(path, "r+") as f:
        del f.attrs["schema_description"]
    with pytest.raises(ga.DescriptionError, match="no root attribute 'schema_description'"):
        ga.load(path)


def test_metric_label():
    assert ga.metric_label("tflops", "TFLOP/s") == "TFLOP/s"
    assert ga.metric_label("busbw_GBps", "GB/s") == "busbw GB/s"
    assert ga.metric_label("GBps", "GB/s") == "GB/s"
    assert ga.metric_label("tokens_per_s", "tokens/s") == "tokens/s"
    assert ga.metric_label("ceiling_fraction", "") == "ceiling_fraction"
    assert ga.metric_label("overhead_s", "s") == "overhead (s)"
    assert plots.short_metric("busbw_GBps", "GB/s") == "busbw" and plots.short_metric("GBps", "GB/s") == "GBps"
    assert plots.rescale_unit("TFLOP/s", 0.009) == ("GFLOP/s", 1e3)
    assert plots.rescale_unit("TFLOP/s", 7e-5) == ("MFLOP/s", 1e6)
    assert plots.rescale_unit("TFLOP/s", 0.5) == ("TFLOP/s", 1.0)
    assert plots.rescale_unit("GB/s", 0.002) == ("MB/s", 1e3)
    assert plots.rescale_unit("tokens/s", 0.001) == ("tokens/s", 1.0)  # no SI prefix to drop


def test_plot_command(v2, tmp_path, capsys):
    out = tmp_path / "png"
    assert main(["plot", v2[0], "-o", str(out), "--only", "decode_GBps", "--only", "eager_vs_graph"]) == 0
    text = capsys.readouterr().out
    assert f"decode_GBps: {out / 'decode_GBps.png'}" in text
    assert "eager_vs_graph: skipped (no point ran ok in both eager and graph mode" in text
    assert sorted(os.listdir(out)) == ["decode_GBps.png"] and os.path.getsize(out / "decode_GBps.png") > 5000
    assert main(["plot", v2[0], "-o", str(out), "--only", "attention_tflops"]) == 2
    err = capsys.readouterr().err
    assert "error: no plot attention_tflops for these files (have: decode_GBps, gemm_tflops" in err
