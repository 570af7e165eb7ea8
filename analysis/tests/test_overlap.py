"""The overlap plot and table: efficiency against message size, GEMM size and NCCL CTAs, from a
host-backend run of the overlap op (and a copy whose chunks sweep is relabelled as a CTA sweep,
which only a GPU run can make)."""

import os
import shutil

import numpy as np
import pytest

import genbench_analysis as ga
from genbench_analysis import plots
from genbench_analysis.report import write_report

from conftest import HERE, run_genbench_config


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
    for c in plots.OVERLAP_COLUMNS + ["t_compute_in_overlap_s", "t_comm_in_overlap_s"]:
        assert np.isfinite(t[c].astype(float)).all(), c
    eff = (t["t_compute_s"] + t["t_comm_s"] - t["t_both_s"]) / np.minimum(t["t_compute_s"], t["t_comm_s"])
    assert np.allclose(eff, t["overlap_efficiency"], rtol=1e-9)
    table = plots.overlap_table([res])
    assert len(table) == 6 + 3
    assert {"t_compute_ms", "t_comm_ms", "t_both_ms", "overlap_efficiency", "nccl_ctas", "chunks"} <= set(table)
    assert np.allclose(table["t_both_ms"].sort_values().to_numpy(),
                       np.sort(np.concatenate([t["t_both_s"], res.table("overlap-chunks")["t_both_s"]])) * 1e3)


def test_plot_efficiency_against_size(overlap_file):
    res = ga.load(overlap_file)
    fig = plots.overlap_efficiency([res])
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
    ax_ctas = plots.overlap_efficiency([res]).axes[2]
    lines = _data_lines(ax_ctas)
    assert len(lines) == 1
    assert [t.get_text() for t in ax_ctas.get_xticklabels()] == ["default", "8", "16"]
    t = res.table("overlap-chunks").sort_values("nccl_ctas")
    assert np.allclose(lines[0].get_ydata(), t["overlap_efficiency"].astype(float))


def test_report_has_overlap(overlap_file, tmp_path):
    out = write_report([ga.load(overlap_file)], str(tmp_path))
    assert "overlap" in out["plots"]
    assert os.path.getsize(out["plots"]["overlap"]) > 5000
    md = open(out["markdown"]).read()
    assert "## Compute-communication overlap" in md and "overlap_efficiency" in md


def test_no_overlap_points_is_no_data(file_a):
    with pytest.raises(plots.NoData, match=r"no point with the overlap columns \(t_compute_s"):
        plots.overlap_efficiency([ga.load(file_a)])
