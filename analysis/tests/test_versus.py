"""versus: one implementation against another run beside it, over rounds (files)."""

import os
import shutil

import numpy as np
import pandas as pd
import pytest

from genbench_analysis import loader
from genbench_analysis.__main__ import main
from genbench_analysis.versus import MET, NOT_MET, SPREAD, VersusError, target_verdict, versus

from conftest import REPO

# Per file (round): the reference implementation's throughput over the peer's.
RATIOS = [1.10, 1.02, 1.06]


def _add_peer(src, dst, ratio, fail_first=False):
    """A copy of src whose gemm benchmark also holds a second implementation, "peer", at
    1 / ratio of the reference's throughput on every point (the same statuses); with
    fail_first the peer's first point failed."""
    import h5py

    shutil.copy(src, dst)
    with h5py.File(dst, "r+") as f:
        for bench in ("gemm", "attention"):
            g = f["benchmarks"][bench]
            pts, rs, smp = g["points"][()], g["rank_stats"][()], g["samples"][()]
            n = len(pts)
            peer = pts.copy()
            peer["impl"] = b"peer"
            peer["point"] = pts["point"] + n
            peer["tflops"] = pts["tflops"] / ratio
            for c in peer.dtype.names:
                if c.startswith("time_"):
                    peer[c] = pts[c] * ratio
            if fail_first and bench == "gemm":
                peer["status"][0] = b"failed"
            for name, extra in (("points", peer), ("rank_stats", rs), ("samples", smp * ratio)):
                both = np.concatenate([g[name][()], extra])
                attrs = dict(g[name].attrs)
                del g[name]
                g.create_dataset(name, data=both)
                g[name].attrs.update(attrs)
            g.attrs["implementations"] = np.array(["reference", "peer"], dtype=h5py.string_dtype())
    return str(dst)


@pytest.fixture(scope="module")
def rounds(file_a, tmp_path_factory):
    d = tmp_path_factory.mktemp("versus")
    return [_add_peer(file_a, d / f"round{i}.h5", r, fail_first=(i == 1)) for i, r in enumerate(RATIOS)]


def _eager(v):
    return v[(v["benchmark"] == "gemm") & (v["mode"] == "eager")]


def test_ratio_is_the_median_of_the_per_file_ratios(rounds):
    v = versus([loader.load(p) for p in rounds], "reference", "peer")
    e = _eager(v)
    assert len(e) == 4
    first = e.iloc[0]
    # The peer failed at the first point of round 1 (1.02): that point has two rounds left.
    assert first["rounds"] == 2 and first["files"] == 3
    assert first["ratio"] == pytest.approx(np.median([1.10, 1.06]))
    assert first["ratio_min"] == pytest.approx(1.06) and first["ratio_max"] == pytest.approx(1.10)
    for _, row in e.iloc[1:].iterrows():
        assert row["rounds"] == 3
        assert row["ratio"] == pytest.approx(1.06)
        assert row["ratio_min"] == pytest.approx(1.02) and row["ratio_max"] == pytest.approx(1.10)
        assert row["impl"] / row["peer"] == pytest.approx(row["ratio"], rel=0.05)
    assert set(e["metric"]) == {"tflops"}
    # Each benchmark keeps its own axes: no column of the other's.
    att = v[v["benchmark"] == "attention"]
    assert len(att) == 6 and att["m"].isna().all() and e["seqlen_q"].isna().all()
    assert _eager(v)[["m", "dtype"]].notna().all().all()
    att_eager = att[att["mode"] == "eager"]
    assert len(att_eager) == 3 and (att_eager["rounds"] == 3).all()
    assert att_eager["ratio"].to_numpy() == pytest.approx(1.06)


def test_points_that_never_ran_are_not_compared(rounds):
    v = versus([loader.load(p) for p in rounds], "reference", "peer")
    graph = v[(v["benchmark"] == "gemm") & (v["mode"] == "graph")]
    assert len(graph) == 4
    assert (graph["rounds"] == 0).all()
    assert graph["ratio"].isna().all()
    assert set(graph["verdict"]) == {"not compared: reference and peer unsupported"}


def test_target_verdicts(rounds):
    results = [loader.load(p) for p in rounds]
    for target, want in ((1.0, MET), (1.05, SPREAD), (1.2, NOT_MET)):
        e = _eager(versus(results, "reference", "peer", target=target)).iloc[1:]
        assert set(e["verdict"]) == {want}, target
    # Swapping the two inverts every ratio.
    e = _eager(versus(results, "peer", "reference", target=1.0)).iloc[1:]
    assert e["ratio"].to_numpy() == pytest.approx(1 / 1.06)
    assert set(e["verdict"]) == {NOT_MET}


def test_target_verdict_edges():
    assert target_verdict([1.05, 1.05], 1.05) == MET
    assert target_verdict([1.049, 1.2], 1.05) == SPREAD
    assert target_verdict([float("nan")], 1.05) == "-"
    assert target_verdict([0.9], None) == ""


def test_bad_requests_are_errors(rounds, file_a):
    results = [loader.load(p) for p in rounds]
    with pytest.raises(VersusError, match="both 'peer'"):
        versus(results, "peer", "peer")
    with pytest.raises(VersusError, match="positive"):
        versus(results, "reference", "peer", target=0)
    # A file without the peer: nothing ran side by side, and the message names what there is.
    with pytest.raises(VersusError, match=r"no benchmark ran both 'reference' and 'cudnn'.*peer, reference"):
        versus(results, "reference", "cudnn")
    with pytest.raises(VersusError, match="implementations seen: mpi, reference"):
        versus([loader.load(file_a)], "reference", "peer")


def test_command_line(rounds, tmp_path, capsys):
    assert main(["versus", *rounds, "--impl", "reference", "--peer", "peer", "--target", "1.05"]) == 0
    out = capsys.readouterr().out
    assert "reference against peer" in out and "target 1.05" in out
    assert "== gemm (TFLOP/s) ==" in out and "1.060" in out and "1.020-1.100" in out and SPREAD in out
    assert " 2/3 " in out  # the point the peer failed in one round

    md = tmp_path / "v.md"
    assert main(["versus", *rounds, "--impl", "reference", "--peer", "peer", "--markdown", "-o", str(md),
                 "-b", "gemm"]) == 0
    text = md.read_text()
    assert "### gemm (TFLOP/s)" in text and "| rounds |" in text.replace("|  rounds |", "| rounds |")
    assert "attention" not in text

    csv = tmp_path / "v.csv"
    assert main(["versus", *rounds, "--impl", "reference", "--peer", "peer", "--csv", "-o", str(csv)]) == 0
    df = pd.read_csv(csv)
    assert {"benchmark", "rounds", "ratio", "ratio_min", "ratio_max", "verdict"} <= set(df.columns)
    assert len(df[df["benchmark"] == "gemm"]) == 8 and len(df[df["benchmark"] == "attention"]) == 6

    assert main(["versus", *rounds, "--impl", "reference", "--peer", "nope"]) == 2
    assert "error: no benchmark ran both" in capsys.readouterr().err


def test_files_from_different_devices_warn(rounds, tmp_path, capsys):
    import h5py

    other = tmp_path / "other_device.h5"
    shutil.copy(rounds[0], other)
    with h5py.File(other, "r+") as f:  # as if run on GPUs (a host run's label names no device)
        f.attrs["backend"] = "cuda"
        sys_t = f["system"][()]
        sys_t["name"] = b"NVIDIA H200"
        sys_t["backend"] = b"cuda"
        f["system"][...] = sys_t
    assert main(["versus", rounds[1], str(other), "--impl", "reference", "--peer", "peer"]) == 0
    err = capsys.readouterr().err
    assert "warning: the files come from different devices" in err
    assert main(["versus", *rounds[1:], "--impl", "reference", "--peer", "peer"]) == 0
    assert "different devices" not in capsys.readouterr().err


# Two rounds of experiments/configs/decode-fp8.yaml on an H200 (fa3 with bf16 and fp8_e4m3 K/V
# in each file): the committed files, read as they are.
DECODE_FP8 = [os.path.join(REPO, "results", "committed", "decode-combine2-h200-2026-12-02", "e-back-to-back",
                           f"eager-r{i}.h5") for i in (1, 2)]


def _times(path):
    """(benchmark, kv_dtype, page_size) -> median time of fa3's point, read straight from the file."""
    import h5py

    out = {}
    with h5py.File(path, "r") as f:
        for name, g in f["benchmarks"].items():
            for p in g["points"][()]:
                if p["status"] == b"ok":
                    out[(name, p["kv_dtype"].decode(), int(p["page_size"]))] = p["time_median_s"]
    return out


def test_two_values_of_an_axis_by_a_requested_metric():
    v = versus([loader.load(p) for p in DECODE_FP8], "fp8_e4m3", "bf16", target=1.8, by="kv_dtype",
               metric="tokens_per_s")
    times = [_times(p) for p in DECODE_FP8]
    assert len(v) == 5 and set(v["implementation"]) == {"fa3"} and set(v["metric"]) == {"tokens_per_s"}
    for _, row in v.iterrows():
        key = (row["benchmark"], "bf16", int(row["page_size"]))
        fp8 = (row["benchmark"], "fp8_e4m3", int(row["page_size"]))
        # Same tokens on both sides: the tokens/s ratio is bf16's time over fp8's, per file.
        per_file = [t[key] / t[fp8] for t in times]
        assert row["rounds"] == 2
        assert row["ratio"] == pytest.approx(np.median(per_file), rel=1e-9)
        assert row["ratio_min"] == pytest.approx(min(per_file), rel=1e-9)
        assert row["verdict"] == (MET if min(per_file) >= 1.8 else NOT_MET if max(per_file) < 1.8 else SPREAD)
    b64 = v[v["benchmark"] == "llama3-8b-b64"].iloc[0]
    assert b64["verdict"] == MET and 1.8 < b64["ratio"] < 1.9
    # By the description's metric instead (GB/s: fp8 moves half the bytes, so the ratio is lower).
    gbps = versus([loader.load(p) for p in DECODE_FP8], "fp8_e4m3", "bf16", by="kv_dtype")
    assert set(gbps["metric"]) == {"GBps"} and (gbps["ratio"].to_numpy() < v["ratio"].to_numpy()).all()


def test_axis_requests_that_cannot_be_met_are_errors():
    results = [loader.load(DECODE_FP8[0])]
    with pytest.raises(VersusError, match="two sides of 'kv_dtype' are both 'bf16'"):
        versus(results, "bf16", "bf16", by="kv_dtype")
    with pytest.raises(VersusError, match=r"values of kv_dtype seen: bf16, fp8_e4m3"):
        versus(results, "fp8", "bf16", by="kv_dtype")
    with pytest.raises(VersusError, match="has no column 'nope'"):
        versus(results, "fp8_e4m3", "bf16", by="kv_dtype", metric="nope")


def test_axis_on_the_command_line(capsys):
    assert main(["versus", *DECODE_FP8, "--by", "kv_dtype", "--impl", "fp8_e4m3", "--peer", "bf16", "--metric",
                 "tokens_per_s", "--target", "1.8", "-b", "llama3-8b-b64"]) == 0
    out = capsys.readouterr().out
    assert "kv_dtype=fp8_e4m3 against kv_dtype=bf16" in out and "== llama3-8b-b64 (tokens/s) ==" in out
    assert "implementation" in out and "fa3" in out and MET in out and "llama3-8b-b8" not in out
    assert main(["versus", *DECODE_FP8, "--by", "kv_dtype", "--impl", "fp8_e4m3", "--peer", "bf16", "--metric",
                 "nope"]) == 2
    assert "has no column 'nope'" in capsys.readouterr().err


# Two rounds of a decode smoke run on an H200 (fa3 and cudnn side by side, kv_dtype "same"), committed.
DECODE_SMOKE = [os.path.join(REPO, "results", "committed", "decode-cudnn-h200-2026-12-02", f"smoke-r{i}.h5")
                for i in (1, 2)]


def _set_status(src, dst, bench, statuses, kv_dtype=None):
    """A copy of src whose benchmark bench has the given statuses: {(impl, page_size): status}
    ("" leaves the point out, as a point never run); with kv_dtype, that K/V type on every point."""
    import h5py

    shutil.copy(src, dst)
    with h5py.File(dst, "r+") as f:
        ds = f["benchmarks"][bench]["points"]
        p = ds[()]
        if kv_dtype is not None:
            p["kv_dtype"] = kv_dtype.encode()
        for (impl, page), status in statuses.items():
            row = (p["impl"] == impl.encode()) & (p["page_size"] == page)
            assert row.sum() == 1, (impl, page)
            p["status"][row] = status.encode()
        ds[...] = p
    return str(dst)


def test_a_point_one_side_did_not_run_names_that_side(tmp_path, capsys):
    # fp8 K/V on decode: fa3 runs it, cudnn refuses it, in both rounds.
    rounds = [_set_status(src, tmp_path / f"fp8-r{i}.h5", "llama3-8b-b8",
                          {("cudnn", 0): "unsupported", ("cudnn", 16): "unsupported", ("cudnn", 64): "unsupported"},
                          kv_dtype="fp8_e4m3") for i, src in enumerate(DECODE_SMOKE)]
    results = [loader.load(p) for p in rounds]
    for impl, peer in (("fa3", "cudnn"), ("cudnn", "fa3")):
        v = versus(results, impl, peer, benchmarks=["llama3-8b-b8"])
        assert len(v) == 3 and (v["rounds"] == 0).all()
        assert set(v["verdict"]) == {"not compared: cudnn unsupported, fa3 ok"}, (impl, peer)
    assert main(["versus", *rounds, "--impl", "fa3", "--peer", "cudnn", "-b", "llama3-8b-b8"]) == 0
    assert capsys.readouterr().out.count("not compared: cudnn unsupported, fa3 ok") == 3


def test_every_combination_of_statuses_is_named(tmp_path):
    one = _set_status(DECODE_SMOKE[0], tmp_path / "r1.h5", "llama3-8b-b8",
                      {("cudnn", 0): "unsupported", ("fa3", 16): "failed",
                       ("fa3", 64): "failed", ("cudnn", 64): "unsupported"})
    one = _set_status(one, tmp_path / "r1b.h5", "llama3-8b-b64", {("fa3", 0): "unsupported", ("cudnn", 0): "unsupported",
                                                                  ("cudnn", 16): ""})
    v = versus([loader.load(one)], "fa3", "cudnn", benchmarks=["llama3-8b-b8", "llama3-8b-b64"])
    got = {(b, int(p)): s for b, p, s in zip(v["benchmark"], v["page_size"], v["verdict"])}
    assert got == {
        ("llama3-8b-b8", 0): "not compared: cudnn unsupported, fa3 ok",
        ("llama3-8b-b8", 16): "not compared: fa3 failed, cudnn ok",
        ("llama3-8b-b8", 64): "not compared: fa3 failed, cudnn unsupported",
        ("llama3-8b-b64", 0): "not compared: fa3 and cudnn unsupported",
        ("llama3-8b-b64", 16): "not compared: cudnn absent, fa3 ok",
    }
    # Rounds that disagree: each case once.
    two = versus([loader.load(one), loader.load(DECODE_SMOKE[1])], "fa3", "cudnn", benchmarks=["llama3-8b-b8"])
    first = two[two["page_size"] == 0].iloc[0]
    assert first["rounds"] == 1 and first["files"] == 2 and first["verdict"] == ""
    e = _set_status(DECODE_SMOKE[1], tmp_path / "r2.h5", "llama3-8b-b8", {("fa3", 0): "failed"})
    both = versus([loader.load(one), loader.load(e)], "fa3", "cudnn", benchmarks=["llama3-8b-b8"])
    assert both[both["page_size"] == 0].iloc[0]["verdict"] == \
        "not compared: cudnn unsupported, fa3 ok; fa3 failed, cudnn ok"


def test_two_values_of_an_axis_are_named_by_axis_and_value(tmp_path):
    src = DECODE_FP8[0]
    one = _set_status(src, tmp_path / "fp8.h5", "llama3-8b-b8", {})
    import h5py

    with h5py.File(one, "r+") as f:  # fa3's fp8 K/V refused at page_size 16
        ds = f["benchmarks"]["llama3-8b-b8"]["points"]
        p = ds[()]
        p["status"][(p["kv_dtype"] == b"fp8_e4m3") & (p["page_size"] == 16)] = b"unsupported"
        ds[...] = p
    v = versus([loader.load(one)], "fp8_e4m3", "bf16", by="kv_dtype", benchmarks=["llama3-8b-b8"])
    got = dict(zip(v["page_size"].astype(int), v["verdict"]))
    assert got[16] == "not compared: kv_dtype=fp8_e4m3 unsupported, kv_dtype=bf16 ok"
    assert got[0] == ""
