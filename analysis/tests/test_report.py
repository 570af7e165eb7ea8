"""The report command: every plot with data written as a non-empty PNG, the others skipped
with a line in the report; every plot names the device and the file."""

import os

import matplotlib.image
import pytest

import genbench_analysis as ga
from genbench_analysis import plots
from genbench_analysis.__main__ import main
from genbench_analysis.report import write_report

from conftest import V1_OVERLAP, V1_SMALL

# The plots of files of tests/data/small.yaml (ops attention, collective, gemm), in report order.
SMALL_PLOTS = ["attention_tflops", "collective_busbw", "gemm_tflops", "rank_variability", "eager_vs_graph",
               "attention_memory", "collective_memory", "gemm_memory"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _check_png(path):
    assert os.path.getsize(path) > 5000, path
    with open(path, "rb") as f:
        assert f.read(8) == PNG_SIGNATURE
    img = matplotlib.image.imread(path)
    h, w = img.shape[:2]
    assert w >= 400 and h >= 300, (path, img.shape)
    assert img[..., :3].std() > 0.01, f"{path} is blank"


def _texts(fig):
    """Every piece of text of a figure: titles, legend entries, labels."""
    out = [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text"))]
    return "\n".join(out)


def _names(results):
    return [n for n, _, _ in plots.plots_for(results)]


def test_plot_names_of_a_schema_1_file():
    """Schema 1: the v1 table gives each op its headline, hence the names the docs use."""
    assert _names([ga.load(V1_SMALL)]) == SMALL_PLOTS


def test_report_on_two_host_runs(result_files, tmp_path):
    out = tmp_path / "report"
    assert main(["report", *result_files, "-o", str(out)]) == 0
    md = (out / "report.md").read_text()
    html = (out / "report.html").read_text()
    names = _names([ga.load(p) for p in result_files])
    # one headline and one memory plot per op of the config
    # no op of these files asks for an extra plot (tests/test_overlap.py, test_extra_plots.py)
    assert len(names) == 2 * 3 + 2 and names[0].startswith("attention_") and "gemm_memory" in names
    expected = [p for p in names if p != "eager_vs_graph"]
    for name in expected:
        _check_png(out / f"{name}.png")
        assert f"]({name}.png)" in md
    # the host backend has no graph mode: that plot is skipped, and the report says so
    assert not (out / "eager_vs_graph.png").exists()
    assert "Plot skipped: no point ran ok in both eager and graph mode" in md
    assert "host backend (CPU)" in md and "run_a.h5" in md and "run_b.h5" in md
    assert html.count("<img ") == len(expected) and "data:image/png;base64," in html
    assert "| run_a.h5 | gemm | 8 | 4 | 0 | 0 | 4 |" in md  # status table


def test_report_on_a_schema_1_file(tmp_path):
    out = write_report([ga.load(V1_SMALL), ga.load(V1_OVERLAP)], str(tmp_path))
    # the overlap benchmarks' extra plot comes from the old-file shim (oldfiles.py)
    assert sorted(out["plots"]) == sorted(p for p in SMALL_PLOTS + ["overlap_tflops", "overlap_memory",
                                                                    "overlap_efficiency"] if p != "eager_vs_graph")
    assert out["skipped"] == {"eager_vs_graph": "no point ran ok in both eager and graph mode (graph mode needs "
                                                "the CUDA backend)"}
    md = open(out["markdown"]).read()
    assert "## Collective bus bandwidth against message size" in md and "](collective_busbw.png)" in md


def test_every_plot_on_a_gpu_like_file(gpu_like_file, file_a, tmp_path):
    res = write_report([ga.load(gpu_like_file)], str(tmp_path))
    assert res["skipped"] == {}
    assert sorted(res["plots"]) == sorted(_names([ga.load(gpu_like_file)]))
    for path in res["plots"].values():
        _check_png(path)
    md = open(res["markdown"]).read()
    # with 2 ranks the cross-rank median is the mean: 1.2 / 1.1 = 9.1% above it
    assert "**Stragglers**: rank 1" in md and "9.1% slower" in md


def test_plots_name_device_and_file(gpu_like_file, file_a):
    gpu, host = ga.load(gpu_like_file), ga.load(file_a)
    for name, _, fn in plots.plots_for([gpu]):
        # one file: device and file in the title
        text = _texts(fn([gpu]))
        assert "2x NVIDIA H200" in text and "gpu_like.h5" in text, name
        # several files: each named in the legend (or the panel titles)
        if name != "eager_vs_graph":  # the host file has no graph points
            text = _texts(fn([gpu, host]))
            assert "2x NVIDIA H200 \u2014 gpu_like.h5" in text, name
            assert "host backend (CPU) \u2014 run_a.h5" in text, name


def test_plots_without_data_raise_nodata(file_a):
    host = ga.load(file_a)
    with pytest.raises(plots.NoData, match="graph"):
        plots.eager_vs_graph([host])
    with pytest.raises(plots.NoData, match="no benchmark of op 'decode'"):
        plots.op_plot([host], "decode")
    empty = ga.Result("none.h5", {"backend": "host"}, host.system.iloc[:0], {}, host.points.iloc[:0],
                      host.ranks.iloc[:0])
    assert _names([empty]) == ["rank_variability", "eager_vs_graph"]
    for name, _, fn in plots.plots_for([empty]):
        with pytest.raises(plots.NoData):
            fn([empty])


def test_straggler_table(gpu_like_file, file_a):
    t = plots.rank_table([ga.load(gpu_like_file)])
    r1 = t[t["rank"] == 1].iloc[0]
    assert bool(r1["straggler"]) and r1["median_rel"] == pytest.approx(1.2 / 1.1)
    assert not t[t["rank"] == 0]["straggler"].any()
