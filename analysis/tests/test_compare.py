"""Compare arithmetic on constructed tables, then the compare command on real files."""

import io
import math

import numpy as np
import pandas as pd
import pytest

import genbench_analysis as ga
from genbench_analysis.__main__ import main
from genbench_analysis.compare import (compare, compare_points, combined_noise, format_comparison, geomean, summary,
                                       verdict)


def test_geomean():
    assert geomean([1.0, 4.0]) == pytest.approx(2.0)
    assert geomean([2.0, 8.0, np.nan, 0.0, -1.0]) == pytest.approx(4.0)  # only finite positive values count
    assert geomean([0.5, 2.0]) == pytest.approx(1.0)
    assert math.isnan(geomean([]))


def test_verdict_uses_combined_noise():
    assert combined_noise(0.03, 0.04) == pytest.approx(0.05)
    assert combined_noise(np.nan, 0.04) == pytest.approx(0.04)
    assert verdict(1.04, 0.03, 0.04) == "same"      # 4% < 5% combined noise
    assert verdict(1.06, 0.03, 0.04) == "faster"
    assert verdict(0.94, 0.03, 0.04) == "slower"
    assert verdict(1.001, 0.0, 0.0) == "faster"     # no noise: any difference counts...
    assert verdict(1.001, 0.0, 0.0, threshold=0.01) == "same"  # ...unless below the threshold
    assert verdict(np.nan, 0.01, 0.01) == "-"


def _points(rows):
    cols = ["impl", "m", "dtype", "status", "tflops", "time_median_s", "rel_noise"]
    return pd.DataFrame(rows, columns=cols)


def test_compare_points_ratios_and_verdicts():
    a = _points([
        ["cublas", 1024, "bf16", "ok", 100.0, 1.0, 0.01],
        ["cublas", 2048, "bf16", "ok", 200.0, 1.0, 0.01],
        ["cublas", 4096, "bf16", "ok", 400.0, 1.0, 0.10],
        ["cublas", 8192, "bf16", "ok", 500.0, 1.0, 0.01],
        ["cublas", 1024, "fp8_e4m3", "ok", 100.0, 1.0, 0.01],
        ["cublas", 1024, "fp32", "ok", 50.0, 1.0, 0.01],
    ])
    b = _points([
        ["cublas", 2048, "bf16", "ok", 100.0, 2.0, 0.01],    # half as fast
        ["cublas", 1024, "bf16", "ok", 150.0, 0.6, 0.01],    # 1.5x, rows in another order
        ["cublas", 4096, "bf16", "ok", 420.0, 0.9, 0.10],    # +5% within 14% noise
        ["cublas", 1024, "fp8_e4m3", "failed", 0.0, 0.0, np.nan],
        ["cublas", 1024, "fp32", "ok", 55.0, 1.0, 0.01],
        ["cublas", 16384, "bf16", "ok", 600.0, 1.0, 0.01],  # new point
    ])
    c = compare_points(a, b, ["impl", "m", "dtype"], benchmark="gemm", metric="tflops",
                       unit="TFLOP/s").set_index(["m", "dtype"])
    assert (c["metric"] == "tflops").all() and (c["metric_label"] == "TFLOP/s").all()
    assert c.loc[(1024, "bf16"), "ratio"] == pytest.approx(1.5)
    assert c.loc[(1024, "bf16"), "verdict"] == "faster"
    assert c.loc[(2048, "bf16"), "ratio"] == pytest.approx(0.5)
    assert c.loc[(2048, "bf16"), "verdict"] == "slower"
    assert c.loc[(4096, "bf16"), "ratio"] == pytest.approx(1.05)
    assert c.loc[(4096, "bf16"), "noise"] == pytest.approx(math.hypot(0.1, 0.1))
    assert c.loc[(4096, "bf16"), "verdict"] == "same"
    assert c.loc[(8192, "bf16"), "verdict"] == "only in A"
    assert c.loc[(16384, "bf16"), "verdict"] == "only in B"
    assert c.loc[(1024, "fp8_e4m3"), "verdict"] == "A ok, B failed"
    assert np.isnan(c.loc[(1024, "fp8_e4m3"), "ratio"])
    assert (c["benchmark"] == "gemm").all()

    s = summary(c.reset_index()).iloc[0]
    assert s["points"] == 4
    assert s["geomean_ratio"] == pytest.approx((1.5 * 0.5 * 1.05 * 1.1) ** 0.25)
    assert (s["faster"], s["slower"], s["same"], s["not_compared"]) == (2, 1, 1, 3)


def test_compare_points_falls_back_to_inverse_time():
    cols = ["impl", "n", "status", "tflops", "time_median_s", "time_p10_s", "time_p90_s"]
    a = pd.DataFrame([["x", 1, "ok", 0.0, 2.0e-3, 1.9e-3, 2.1e-3], ["x", 2, "ok", 0.0, 4.0e-3, 4.0e-3, 4.0e-3]],
                     columns=cols)
    b = pd.DataFrame([["x", 1, "ok", 0.0, 1.0e-3, 0.95e-3, 1.05e-3], ["x", 2, "ok", 0.0, 4.1e-3, 4.1e-3, 4.1e-3]],
                     columns=cols)
    # tflops is named but 0 everywhere: it cannot rate the points, 1/time does
    c = compare_points(a, b, ["impl", "n"], metric="tflops").set_index("n")
    assert (c["metric"] == "inverse_time").all()
    assert c.loc[1, "ratio"] == pytest.approx(2.0)  # B takes half the time: twice as fast
    assert c.loc[1, "verdict"] == "faster"
    # noise comes from the p10..p90 spread: 0.2/(2.563*2) for A
    assert c.loc[1, "noise_a"] == pytest.approx(0.2e-3 / (2 * 1.2815515655446004 * 2.0e-3))
    assert c.loc[2, "ratio"] == pytest.approx(4.0 / 4.1)
    assert c.loc[2, "verdict"] == "slower"  # zero spread: 2.4% slower counts


@pytest.fixture(scope="module")
def two(result_files):
    return ga.load(result_files[0]), ga.load(result_files[1])


def test_compare_real_files(two):
    a, b = two
    c = compare(a, b)
    assert set(c["benchmark"]) == {"attention", "gemm", "collectives"}
    assert len(c) == len(a.points)  # same config: every point pairs up
    ok = c[(c["status_a"] == "ok") & (c["status_b"] == "ok")]
    assert len(ok) == int((a.points["status"] == "ok").sum())
    assert set(ok["verdict"]) <= {"faster", "slower", "same"}
    assert (ok["ratio"] > 0).all()
    assert set(c[c["status_a"] == "unsupported"]["verdict"]) == {"unsupported"}
    assert dict(zip(c["benchmark"], c["metric"]))["collectives"] == "busbw_GBps"
    assert dict(zip(c["benchmark"], c["metric"]))["gemm"] == "tflops"
    # a file against itself: ratio 1 and "same" everywhere
    self_cmp = compare(a, a)
    rated = self_cmp[self_cmp["status_a"] == "ok"]
    assert np.allclose(rated["ratio"], 1.0) and (rated["verdict"] == "same").all()
    assert np.allclose(summary(self_cmp)["geomean_ratio"], 1.0)


def test_compare_cli_formats(result_files, capsys):
    fa, fb = result_files
    assert main(["compare", fa, fb]) == 0
    text = capsys.readouterr().out
    assert "== gemm (TFLOP/s) ==" in text and "== collectives (busbw GB/s) ==" in text
    assert text.count("geomean B/A") == 3
    assert "B/A" in text and "verdict" in text

    assert main(["compare", fa, fb, "--markdown"]) == 0
    md = capsys.readouterr().out
    assert "### attention (TFLOP/s)" in md
    assert "| seqlen_q | mode |" in md and "|---:|" in md

    assert main(["compare", fa, fb, "--csv"]) == 0
    df = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert {"benchmark", "impl", "m", "seqlen_q", "collective", "ratio", "noise", "verdict"} <= set(df.columns)
    assert len(df) == 20


def test_format_comparison_text_columns(two):
    a, b = two
    out = format_comparison(compare(a, b, benchmarks=["gemm"]), a, b, "text")
    assert "== gemm" in out and "attention" not in out.split("\n", 3)[3]
    header = [l for l in out.splitlines() if l.startswith(" m") or l.startswith("m ")][0]
    assert header.split()[:3] == ["m", "dtype", "mode"]  # only the axes that vary are shown


def test_samples_noise_is_robust_and_uses_the_slowest_rank():
    from genbench_analysis.loader import samples_noise

    nan = np.nan
    s = np.array([
        # point 0: rank 1 is the slower one each iteration; one 100x outlier iteration
        [[1.0, 1.0, 1.0, 1.0, 1.0, nan], [2.0, 2.2, 1.8, 2.0, 200.0, nan]],
        # point 1: a single iteration: no spread to measure
        [[1.0, nan, nan, nan, nan, nan], [1.0, nan, nan, nan, nan, nan]],
    ])
    n = samples_noise(s)
    # slowest per iteration: 2, 2.2, 1.8, 2, 200 -> median 2, MAD 0.2
    assert n[0] == pytest.approx(1.482602218505602 * 0.2 / 2.0)
    assert np.isnan(n[1])


def test_loaded_noise_comes_from_the_samples(file_a):
    from genbench_analysis.loader import samples_noise

    r = ga.load(file_a)
    s = r.samples("gemm")
    t = r.table("gemm").set_index("point")
    for point, g in s.groupby("point"):
        slowest = g.pivot(index="iteration", columns="rank", values="time_s").max(axis=1).to_numpy()
        expected = samples_noise(slowest[None, :])[0]
        if np.isnan(expected):
            # fewer than 2 finite samples or a zero median (a point cut short on a loaded host):
            # the loader falls back to the noise of the stored statistics, never NaN
            assert np.isfinite(t.loc[point, "rel_noise"]), point
            continue
        assert t.loc[point, "rel_noise"] == pytest.approx(expected)
