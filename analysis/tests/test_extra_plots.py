"""Extra plots and report sections come from the hints an op's description stores
(op_description "extra_plots"), for an op the package has never heard of; descriptions stored
before ops declared them get them from oldfiles.py, keyed by the points' columns."""

import copy

import numpy as np
import pytest

import genbench_analysis as ga
from genbench_analysis import plots
from genbench_analysis.report import write_report

import v2files

# An op no part of the package names: a gain measured by the case, swept over depth (lines per
# flavor) and over width (0 = the implementation's choice), at lanes 1 unless a panel frees it.
RIPPLE = {
    "op": "ripple", "summary": "a synthetic op with an extra plot", "headline": "ops_per_s",
    "axes": [{"name": "depth", "type": "integer", "help": "", "tuning": False},
             {"name": "width", "type": "integer", "help": "", "tuning": False},
             {"name": "flavor", "type": "choice", "help": "", "tuning": False},
             {"name": "lanes", "type": "integer", "help": "", "tuning": False}],
    "columns": [{"name": "ops_per_s", "type": "f64", "unit": "1/s", "meaning": "ops per second", "kind": "metric"},
                {"name": "ripple_gain", "type": "f64", "unit": "", "meaning": "gain", "kind": "extra"},
                {"name": "settle_s", "type": "f64", "unit": "s", "meaning": "settling time", "kind": "extra"}],
    "metrics": [{"name": "ops_per_s", "unit": "1/s", "meaning": "ops per second"}],
    "plot": {"title": "Ripple rate", "x": "depth", "log_x": True, "facets": [], "ceiling_line": ""},
    "compare": {"metric": "ops_per_s", "higher_is_better": True},
    "extra_plots": [{
        "name": "gain", "title": "Ripple gain", "subtitle": "gain = out / in; 0.5 = half",
        "y": "ripple_gain", "y_label": "gain", "reference_lines": [0.5],
        "hold": {"lanes": 1, "width": 0},
        "panels": [{"x": "depth", "label": "depth of the ripple", "log_x": True, "lines": ["flavor"]},
                   {"x": "width", "label": "width", "categorical": True, "tick_labels": {"0": "auto"},
                    "lines": ["flavor", "depth"], "free": ["width"]}],
        "table": ["depth", "width", "flavor", "lanes", "ripple_gain", "settle_s"],
        "table_note": "Gains of every point; settling times in ms."}],
}
v2files.AXIS_TYPES["ripple"] = {"depth": "i64", "width": "i64", "flavor": "str", "lanes": "i64"}


def _gain(depth, width, flavor, lanes):
    return 0.1 * depth + 0.001 * width + (0.05 if flavor == "b" else 0.0) + 0.2 * (lanes - 1)


def ripple_points():
    rows = [(d, 0, f, 1) for f in ("a", "b") for d in (1, 2, 4, 8)]  # the depth sweep
    rows += [(4, w, "a", 1) for w in (16, 32)]                        # a width sweep at depth 4
    rows += [(d, 0, "a", 4) for d in (1, 2, 4, 8)]                    # lanes 4: held out
    out = []
    for i, (d, w, f, lanes) in enumerate(rows):
        out.append({"point": i, "impl": "host", "depth": d, "width": w, "flavor": f, "lanes": lanes,
                    "time": 1e-5 * d, "ripple_gain": _gain(d, w, f, lanes), "settle_s": 0.002 * d})
    # a point that ran but measured no gain: left out of the plot and its table
    out.append({"point": len(rows), "impl": "host", "depth": 16, "width": 0, "flavor": "b", "lanes": 1,
                "time": 1e-4, "ripple_gain": float("nan"), "settle_s": 0.001})
    return out, len(out)


def ripple_metrics(p):
    return {"ops_per_s": 1.0 / p["time"]}


def _write(path, desc=RIPPLE, name="ripple"):
    pts, n = ripple_points()
    return v2files.write_v2(path, [(name, desc, ripple_metrics, n, pts)])


def _data_lines(ax):
    return [ln for ln in ax.get_lines() if ln.get_marker() not in (None, "None", "", " ")]


def _flat_lines(ax):
    return [ln for ln in ax.get_lines() if ln.get_marker() in (None, "None", "", " ")]


def test_a_new_op_gets_its_extra_plot(tmp_path):
    r = ga.load(_write(tmp_path / "ripple.h5"))
    d = r.benchmarks["ripple"].description
    assert d.extra_plots_source == "file" and [e.name for e in d.extra_plots] == ["gain"]
    names = [n for n, _, _ in plots.plots_for([r])]
    assert names[-1] == "ripple_gain" and names[0] == "ripple_ops_per_s"
    title = dict((n, t) for n, t, _ in plots.plots_for([r]))["ripple_gain"]
    assert title == "Ripple gain"
    fig = dict((n, f) for n, _, f in plots.plots_for([r]))["ripple_gain"]([r])
    ax_depth, ax_width = [ax for ax in fig.axes if ax.get_visible()]
    # depth panel: lanes and width held at 1 and 0, one line per flavor, NaN gain left out
    lines = _data_lines(ax_depth)
    assert len(lines) == 2
    assert [list(ln.get_xdata()) for ln in lines] == [[1.0, 2.0, 4.0, 8.0]] * 2
    for ln, f in zip(lines, ("a", "b")):
        assert np.allclose(ln.get_ydata(), [_gain(x, 0, f, 1) for x in (1, 2, 4, 8)])
    assert ax_depth.get_xlabel() == "depth of the ripple" and ax_depth.get_ylabel() == "gain"
    assert ax_depth.get_xscale() == "log"
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "host \u00b7 flavor=a" in legend and "host \u00b7 flavor=b" in legend
    # width panel: width free, categorical, its tick labels; only (a, 4) has a width sweep
    (wl,) = _data_lines(ax_width)
    assert list(wl.get_xdata()) == [0, 1, 2]
    assert np.allclose(wl.get_ydata(), [_gain(4, w, "a", 1) for w in (0, 16, 32)])
    assert [t.get_text() for t in ax_width.get_xticklabels()] == ["auto", "16", "32"]
    # the reference line
    for ax in (ax_depth, ax_width):
        assert [list(ln.get_ydata()) for ln in _flat_lines(ax)] == [[0.5, 0.5]]
    sup = fig._suptitle.get_text()
    assert sup.startswith("Ripple gain\ngain = out / in; 0.5 = half\n") and "ripple.h5" in sup


def test_a_new_op_gets_its_report_section(tmp_path):
    r = ga.load(_write(tmp_path / "ripple.h5"))
    t = plots.extra_table([r], "ripple", "gain")
    assert list(t.columns) == ["file", "benchmark", "impl", "depth", "width", "flavor", "lanes", "ripple_gain",
                               "settle_ms"]
    assert len(t) == 14  # every point with a gain, lanes 4 included; not the NaN one
    assert np.allclose(t["settle_ms"], 2.0 * t["depth"])
    out = write_report([r], str(tmp_path / "report"))
    assert "ripple_gain" in out["plots"] and out["skipped"] == {"eager_vs_graph": out["skipped"]["eager_vs_graph"]}
    md = open(out["markdown"]).read()
    section = md[md.index("## Ripple gain"):]
    assert section.index("](ripple_gain.png)") < section.index("Gains of every point; settling times in ms.") < \
        section.index("| settle_ms |")
    assert "| ripple.h5 | ripple | host | 8 | 0 | b | 1 | 0.850 | 16.000 |" in section


def test_an_op_without_extra_plots_gets_none(tmp_path):
    desc = copy.deepcopy(RIPPLE)
    desc["extra_plots"] = []
    r = ga.load(_write(tmp_path / "plain.h5", desc))
    assert r.benchmarks["ripple"].description.extra_plots == []
    assert [n for n, _, _ in plots.plots_for([r])] == ["ripple_ops_per_s", "rank_variability", "eager_vs_graph",
                                                        "ripple_memory"]
    assert plots.report_tables([r]) == {}
    with pytest.raises(plots.NoData, match="asks for no plot 'gain'"):
        plots.extra_plot([r], "ripple", "gain")


@pytest.mark.parametrize("edit, message", [
    (lambda e: e.update(y="no_such_column"), r"extra plot 'gain': y 'no_such_column' is not a column"),
    (lambda e: e["panels"][0].update(x="nope"), r"extra plot 'gain': panel x 'nope' is not a column"),
    (lambda e: e["table"].append("gone_s"), r"extra plot 'gain': table 'gone_s' is not a column"),
    (lambda e: e["panels"][1].update(free=["depth"]), r"panels\[1\]: frees depth, which the plot does not hold"),
    (lambda e: e.update(panels=[]), r"\('gain'\): no panels"),
    (lambda e: e.update(name="../x"), r"the name should be letters, digits"),
    (lambda e: e.update(reference_lines=["one"]), r"reference_lines should be a list of numbers"),
])
def test_bad_extra_plots_are_refused(tmp_path, edit, message):
    def bad(name, d):
        edit(d["extra_plots"][0])
        return d

    pts, n = ripple_points()
    path = v2files.write_v2(tmp_path / "bad.h5", [("ripple", RIPPLE, ripple_metrics, n, pts)], description_edit=bad)
    with pytest.raises(ga.DescriptionError, match=message):
        ga.load(path)


# --- descriptions stored before extra plots ------------------------------------------------

# A schema 2 op under another name whose points have the columns of the op the old-file shim
# knows (overlap's), stored without "extra_plots".
TANDEM = {
    "op": "tandem", "summary": "", "headline": "tflops",
    "axes": [{"name": a, "type": "integer", "help": "", "tuning": False}
             for a in ("m", "n", "k", "bytes", "nccl_ctas", "chunks")] +
            [{"name": "collective", "type": "choice", "help": "", "tuning": False},
             {"name": "priority", "type": "choice", "help": "", "tuning": False}],
    "columns": [{"name": "tflops", "type": "f64", "unit": "TFLOP/s", "meaning": "", "kind": "metric"}] +
               [{"name": c, "type": "f64", "unit": "s", "meaning": "", "kind": "extra"}
                for c in ("t_compute_s", "t_comm_s", "t_both_s")] +
               [{"name": "overlap_efficiency", "type": "f64", "unit": "", "meaning": "", "kind": "extra"}],
    "metrics": [{"name": "tflops", "unit": "TFLOP/s", "meaning": ""}],
    "plot": {"title": "", "x": "bytes", "log_x": True, "facets": [], "ceiling_line": ""},
    "compare": {"metric": "overlap_efficiency", "higher_is_better": True},
}
v2files.AXIS_TYPES["tandem"] = {a: "i64" for a in ("m", "n", "k", "bytes", "nccl_ctas", "chunks")}
v2files.AXIS_TYPES["tandem"].update(collective="str", priority="str")


def _tandem(path, desc):
    pts = []
    for i, b in enumerate((1024, 4096, 16384)):
        tc, tm, tb = 1e-3, 0.5e-3, 1.2e-3
        pts.append({"point": i, "impl": "cuda", "m": 64, "n": 64, "k": 64, "bytes": b, "nccl_ctas": 0, "chunks": 1,
                    "collective": "all_reduce", "priority": "equal", "time": tb, "work_flops": 2.0 * 64 ** 3,
                    "t_compute_s": tc, "t_comm_s": tm, "t_both_s": tb * (1 + i / 10),
                    "overlap_efficiency": (tc + tm - tb * (1 + i / 10)) / min(tc, tm)})
    return v2files.write_v2(path, [("tandem", desc, lambda p: {"tflops": p["work_flops"] / p["time"] / 1e12}, 3,
                                    pts)])


def test_pre_hint_descriptions_get_the_shim_by_their_columns(tmp_path):
    r = ga.load(_tandem(tmp_path / "old.h5", TANDEM))
    d = r.benchmarks["tandem"].description
    assert d.extra_plots_source == "old-file shim" and [e.name for e in d.extra_plots] == ["efficiency"]
    assert "tandem_efficiency" in [n for n, _, _ in plots.plots_for([r])]
    (line,) = _data_lines(plots.extra_plot([r], "tandem", "efficiency").axes[0])
    assert np.allclose(line.get_ydata(), r.table("tandem").sort_values("bytes")["overlap_efficiency"])
    # the same description stored with its (empty) extra plots: the file wins, no shim
    desc = dict(TANDEM, extra_plots=[])
    r2 = ga.load(_tandem(tmp_path / "new.h5", desc))
    assert r2.benchmarks["tandem"].description.extra_plots == []
    assert "tandem_efficiency" not in [n for n, _, _ in plots.plots_for([r2])]
