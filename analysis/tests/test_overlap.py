"""The overlap op's extra plot and table, drawn from the hints its description stores: efficiency
against message size, GEMM size and NCCL CTAs, from a host-backend run of the overlap op (and a
copy whose chunks sweep is relabelled as a CTA sweep, which only a GPU run can make); the same
plot for files stored before ops declared extra plots (oldfiles.py)."""

import os
import shutil

import numpy as np
import pytest

import genbench_analysis as ga
from genbench_analysis import plots
from genbench_analysis.report import write_report

from genbench_analysis import oldfiles

from conftest import HERE, V1_OVERLAP, run_genbench_config

OVERLAP_COLUMNS = ["t_compute_s", "t_comm_s", "t_both_s", "overlap_efficiency", "compute_slowdown", "comm_slowdown"]
PLOT = "overlap_efficiency"  # <op>_<name of its extra plot>


def _efficiency(results):
    return plots.extra_plot(results, "overlap", "efficiency")


def _data_lines(ax):
    """The plotted series (with markers), not the reference lines at 0 and 1."""
    return [ln for ln in ax.get_lines() if ln.get_marker() not in (None, "None", "", " ")]


@pytest.fixture(scope="session")
def overlap_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("overlap")
    return run_genbench_config(os.path.join(HERE, "data", "overlap.yaml"), d / "overlap.h5")


@pytest.fixture(scope="session")
def ctas_like_file(overlap_file, tmp_path_factory):
    """chunks 1, 2, 4 relabelled as nccl_ctas 0, 8, 16 (chunks back to 1)."""
    import h5py

    path = tmp_path_factory.mktemp("ctas") / "ctas_like.h5"
    shutil.copy(overlap_file, path)
    with h5py.File(path, "r+") as f:
        pts = f["benchmarks/overlap-chunks/points"][()]
        pts["nccl_ctas"] = [{1: 0, 2: 8, 4: 16}[int(c)] for c in pts["chunks"]]
        pts["chunks"] = 1
        f["benchmarks/overlap-chunks/points"][...] = pts
    return str(path)


def test_columns_and_table(overlap_file):
    res = ga.load(overlap_file)
    t = res.table("overlap-sizes")
    assert (t["status"] == "ok").all()
    for c in OVERLAP_COLUMNS + ["t_compute_in_overlap_s", "t_comm_in_overlap_s"]:
        assert np.isfinite(t[c].astype(float)).all(), c
    eff = (t["t_compute_s"] + t["t_comm_s"] - t["t_both_s"]) / np.minimum(t["t_compute_s"], t["t_comm_s"])
    assert np.allclose(eff, t["overlap_efficiency"], rtol=1e-9)
    table = plots.extra_table([res], "overlap", "efficiency")
    assert len(table) == 6 + 3
    assert {"t_compute_ms", "t_comm_ms", "t_both_ms", "overlap_efficiency", "nccl_ctas", "chunks"} <= set(table)
    assert np.allclose(table["t_both_ms"].sort_values().to_numpy(),
                       np.sort(np.concatenate([t["t_both_s"], res.table("overlap-chunks")["t_both_s"]])) * 1e3)


def test_plot_efficiency_against_size(overlap_file):
    res = ga.load(overlap_file)
    fig = _efficiency([res])
    ax_bytes, ax_flops, ax_ctas = fig.axes[:3]
    t = res.table("overlap-sizes")
    # one line per GEMM shape, at the three sizes, with the file's medians
    data = _data_lines(ax_bytes)
    assert len(data) == 2
    for ln in data:
        assert list(ln.get_xdata()) == [4096.0, 16384.0, 65536.0]
    got = sorted(np.concatenate([ln.get_ydata() for ln in data]))
    want = sorted(t["overlap_efficiency"].astype(float))
    assert np.allclose(got, want)
    # GEMM size panel: one line per message size, two GEMM sizes each
    flop_lines = _data_lines(ax_flops)
    assert len(flop_lines) == 3
    assert sorted(set(np.concatenate([ln.get_xdata() for ln in flop_lines]))) == [2.0 * 32 * 32 * 64, 2.0 * 64 * 32 * 64]
    # no CTA sweep on the host: the panel says so
    assert "no sweep over NCCL CTAs" in " ".join(t.get_text() for t in ax_ctas.texts)
    assert "host backend (CPU)" in fig._suptitle.get_text() and "overlap.h5" in fig._suptitle.get_text()


def test_plot_efficiency_against_ctas(ctas_like_file):
    res = ga.load(ctas_like_file)
    ax_ctas = _efficiency([res]).axes[2]
    lines = _data_lines(ax_ctas)
    assert len(lines) == 1
    assert [t.get_text() for t in ax_ctas.get_xticklabels()] == ["default", "8", "16"]
    t = res.table("overlap-chunks").sort_values("nccl_ctas")
    assert np.allclose(lines[0].get_ydata(), t["overlap_efficiency"].astype(float))


def test_report_has_overlap(overlap_file, tmp_path):
    out = write_report([ga.load(overlap_file)], str(tmp_path))
    assert PLOT in out["plots"]
    assert os.path.getsize(out["plots"][PLOT]) > 5000
    md = open(out["markdown"]).read()
    section = md[md.index("## Compute-communication overlap"):]
    assert "Times are medians (ms) on rank 0" in section
    assert "| t_compute_ms |" in section and "| overlap_efficiency |" in section


def test_the_plot_comes_from_the_files_hints(overlap_file):
    b = ga.load(overlap_file).benchmarks["overlap-sizes"]
    assert b.description.extra_plots_source == "file"
    (e,) = b.description.extra_plots
    assert (e.name, e.y, e.reference_lines) == ("efficiency", "overlap_efficiency", [0.0, 1.0])
    assert [q.x for q in e.panels] == ["bytes", "work_flops", "nccl_ctas"]
    assert e.hold == {"nccl_ctas": 0, "chunks": 1, "priority": "equal"}


def test_old_files_get_the_same_plot(overlap_file):
    """The old-file shim holds what the op declares: a schema 1 file of the same config gets the
    same plot, with the same lines."""
    new = ga.load(overlap_file).benchmarks["overlap-sizes"].description.extra_plots
    for version in (1, 2):
        shim = oldfiles.pre_hint_extra_plots(version, ga.load(overlap_file).table("overlap-sizes").columns)
        assert [e.to_dict() for e in shim] == [e.to_dict() for e in new]
    old = ga.load(V1_OVERLAP)
    assert old.schema_version == 1
    assert old.benchmarks["overlap-sizes"].description.extra_plots_source == "old-file shim"
    assert PLOT in [n for n, _, _ in plots.plots_for([old])]
    got = [[list(ln.get_xdata()) for ln in _data_lines(ax)] for ax in _efficiency([old]).axes[:3]]
    new_fig = _efficiency([ga.load(overlap_file)])
    want = [[list(ln.get_xdata()) for ln in _data_lines(ax)] for ax in new_fig.axes[:3]]
    assert got == want and got[0]


def test_no_overlap_points_is_no_data(file_a):
    a = ga.load(file_a)
    assert not [n for n, _, _ in plots.plots_for([a]) if n.endswith("_efficiency")]
    with pytest.raises(plots.NoData, match=r"no benchmark of op 'overlap'"):
        _efficiency([a])
