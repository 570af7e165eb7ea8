"""Model composition (genbench_analysis.model) on a tiny model suite the real binary runs on the host
backend with 2 ranks (data/model-host.yaml), checked against sums computed by hand from the
file's own medians; parts missing, unsupported, failed or not run are reported, never counted as
zero. And every configs/models/*.yaml validates with the binary at its tensor-parallel degree."""

import functools
import glob
import json
import math
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np
import pytest

import genbench_analysis as ga
from genbench_analysis import model as gm
from conftest import HERE, REPO, _genbench_env, run_genbench_config

CONFIG = os.path.join(HERE, "data", "model-host.yaml")
BINARY = os.environ.get("GENBENCH_BIN", os.path.join(REPO, "build", "bin", "genbench"))
MODELS = os.path.join(REPO, "configs", "models")


@functools.lru_cache(maxsize=None)
def _binary_ops():
    if not os.path.exists(BINARY):
        pytest.fail(f"genbench binary not found at {BINARY}")
    out = subprocess.run([BINARY, "list"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    return {line.split()[1].rstrip(":") for line in out.splitlines() if line.startswith("op ")}


def _needs(ops):
    lacking = sorted(set(ops) - _binary_ops())
    if lacking:
        pytest.skip(f"this genbench build has no {', '.join(lacking)} op")


@pytest.fixture(scope="module")
def model_files(tmp_path_factory):
    _needs(["gemm", "w4a16", "attention", "decode", "collective", "overlap", "pointwise"])
    d = tmp_path_factory.mktemp("model")
    return run_genbench_config(CONFIG, d / "tiny_a.h5"), run_genbench_config(CONFIG, d / "tiny_b.h5")


def _medians(path):
    """benchmark -> (status, time_median_s, t_both_s or nan) of its one point, read with h5py."""
    out = {}
    with h5py.File(path, "r") as f:
        for name, g in f["benchmarks"].items():
            p = g["points"][()]
            assert len(p) == 1, name
            r = p[0]
            tb = float(r["t_both_s"]) if "t_both_s" in p.dtype.names else math.nan
            out[name] = (r["status"].decode(), float(r["time_median_s"]), tb)
    return out


def _layer(comp, **keys):
    d = comp.layers
    for k, v in keys.items():
        d = d[d[k] == v]
    assert len(d) == 1, (keys, comp.layers)
    return d.iloc[0]


def _parts(comp, **keys):
    d = comp.parts
    for k, v in keys.items():
        d = d[d[k] == v]
    return d.set_index("part")


def test_tags_are_loaded(model_files):
    r = ga.load(model_files[0])
    t = r.benchmarks["p-all-reduce-32"].tags
    assert t["part"] == "all_reduce" and t["count"] == "2" and t["tp"] == "2" and t["seq"] == "32"
    assert "tags" not in r.benchmarks["p-all-reduce-32"].attrs
    with h5py.File(model_files[0], "r") as f:
        assert json.loads(f["benchmarks/p-qkv-int4-32"].attrs["tags"]) == r.benchmarks["p-qkv-int4-32"].tags


def test_layers_are_the_sums_of_their_parts(model_files):
    path = model_files[0]
    m = _medians(path)
    assert all(m[b][0] == "ok" for b in m if b != "p-o-int4-32"), m
    comp = gm.compose(ga.load(path))
    # prefill bf16 layers at 32 and 64 tokens, prefill int4 at 32 only, decode at two caches, and
    # the training layers at 32 and 64 (test_training_layers_...)
    assert len(comp.layers) == 7
    for seq in (32, 64):
        s = str(seq)
        by_hand = (m[f"p-qkv-bf16-{s}"][1] + m[f"p-o-bf16-{s}"][1] + m[f"p-gate-up-bf16-{s}"][1]
                   + m[f"p-down-bf16-{s}"][1] + m[f"p-attention-{s}"][1] + 2 * m[f"p-all-reduce-{s}"][1]
                   + 2 * m[f"p-norm-{s}"][1] + m[f"p-rope-{s}"][1] + m[f"p-silu-{s}"][1])
        once = m[f"p-embedding-{s}"][1] + m[f"p-lm-head-{s}"][1]  # per step, not per layer
        step = 4 * by_hand + once
        lay = _layer(comp, phase="prefill", precision="bf16", seq=s)
        assert lay["complete"] and lay["missing"] == 0
        assert lay["layer_s"] == pytest.approx(by_hand, rel=1e-12)
        assert lay["step_parts_s"] == pytest.approx(once, rel=1e-12)
        assert lay["step_s"] == pytest.approx(step, rel=1e-12)
        assert lay["s_per_token"] == pytest.approx(step / seq, rel=1e-12)
        assert lay["tokens_per_s"] == pytest.approx(seq / step, rel=1e-12)
        assert lay["tokens_per_card_s"] == pytest.approx(seq / step / 2, rel=1e-12)
        parts = _parts(comp, phase="prefill", precision="bf16", seq=s)
        ok = parts[parts["status"] == "ok"]
        assert ok["share"].sum() == pytest.approx(1.0, rel=1e-9)
        assert parts.loc["add_rmsnorm", "share"] == pytest.approx(4 * 2 * m[f"p-norm-{s}"][1] / step, rel=1e-12)
        assert parts.loc["lm_head", "per"] == "step"
        assert parts.loc["lm_head", "share"] == pytest.approx(m[f"p-lm-head-{s}"][1] / step, rel=1e-12)
        if seq == 32:  # the overlapped o + all_reduce replaces one of each
            ov = by_hand - m["p-o-bf16-32"][1] - m["p-all-reduce-32"][1] + m["p-o-ar-bf16-32"][2]
            assert lay["layer_overlapped_s"] == pytest.approx(ov, rel=1e-12)
            assert lay["tokens_per_card_s_overlapped"] == pytest.approx(seq / (4 * ov + once) / 2, rel=1e-12)
            assert _parts(comp, phase="prefill", precision="bf16", seq="32").loc["o_all_reduce", "time_s"] == \
                m["p-o-ar-bf16-32"][2]
        else:
            assert math.isnan(lay["layer_overlapped_s"])
    gemms = sum(m[f"d-{p}-bf16-b2"][1] for p in ("qkv", "o", "gate-up", "down")) + 2 * m["d-all-reduce-b2"][1]
    for cache in (64, 256):
        lay = _layer(comp, phase="decode", cache=str(cache))
        by_hand = gemms + m[f"d-attention-b2-c{cache}"][1]
        assert lay["layer_s"] == pytest.approx(by_hand, rel=1e-12)
        assert lay["tokens_per_card_s"] == pytest.approx(2 / (4 * by_hand) / 2, rel=1e-12)
    parts = _parts(comp, phase="prefill", precision="bf16", seq="32")
    assert parts.loc["all_reduce", "count"] == 2
    assert parts.loc["all_reduce", "total_s"] == pytest.approx(2 * m["p-all-reduce-32"][1], rel=1e-12)
    # parts no op measures are listed as left out, with no time
    assert parts.loc["sampling", "status"] == "left out" and math.isnan(parts.loc["sampling", "total_s"])


def test_missing_and_unsupported_parts_are_reported_not_zero(model_files):
    path = model_files[0]
    m = _medians(path)
    comp = gm.compose(ga.load(path))
    lay = _layer(comp, phase="prefill", precision="int4")
    assert lay["seq"] == "32" and not lay["complete"] and lay["missing"] == 2
    assert math.isnan(lay["layer_s"]) and math.isnan(lay["tokens_per_s"]) and math.isnan(lay["step_s"])
    measured = (m["p-qkv-int4-32"][1] + m["p-down-int4-32"][1] + m["p-attention-32"][1]
                + 2 * m["p-all-reduce-32"][1] + 2 * m["p-norm-32"][1] + m["p-rope-32"][1] + m["p-silu-32"][1])
    assert lay["parts_s"] == pytest.approx(measured, rel=1e-12)
    parts = _parts(comp, phase="prefill", precision="int4")
    assert parts.loc["gate_up", "status"] == "missing"
    assert parts.loc["o", "status"] == "unsupported" and parts.loc["o", "reason"]
    iss = comp.issues
    got = {(r.part, r.status) for r in iss[iss["precision"] == "int4"].itertuples()}
    assert {("gate_up", "missing"), ("o", "unsupported")} <= got
    text = gm.format_model([comp])
    assert "missing" in text and "unsupported" in text and "gate_up" in text


def _edited(src, dst, fn):
    shutil.copy(src, dst)
    with h5py.File(dst, "r+") as f:
        fn(f)
    return str(dst)


def test_failed_not_run_and_deleted_parts(model_files, tmp_path):
    def edit(f):
        g = f["benchmarks/p-gate-up-bf16-64"]
        p = g["points"][()]
        p["status"] = b"failed"
        p["reason"] = b"validation: max error 1e9 over tolerance"
        g["points"][...] = p
        g = f["benchmarks/d-attention-b2-c256"]
        p = g["points"][()]
        p["status"] = b""          # a pre-sized row never run: the loader drops it
        g["points"][...] = p
        del f["benchmarks/p-down-bf16-32"]

    path = _edited(model_files[0], tmp_path / "edited.h5", edit)
    comp = gm.compose(ga.load(path))
    for keys, part, status in [(dict(phase="prefill", precision="bf16", seq="64"), "gate_up", "failed"),
                               (dict(phase="decode", cache="256"), "attention", "not run"),
                               (dict(phase="prefill", precision="bf16", seq="32"), "down", "missing")]:
        lay = _layer(comp, **keys)
        assert not lay["complete"] and math.isnan(lay["layer_s"]) and math.isnan(lay["tokens_per_card_s"])
        assert _parts(comp, **keys).loc[part, "status"] == status
        if status == "failed":
            assert "validation" in _parts(comp, **keys).loc[part, "reason"]
    # a missing o part spoils the overlapped sum too (seq 32 lost its down GEMM: no layer time at all)
    assert math.isnan(_layer(comp, phase="prefill", precision="bf16", seq="32")["layer_overlapped_s"])
    # the untouched decode layer is still whole
    assert _layer(comp, phase="decode", cache="64")["complete"]


def test_training_layers_share_the_forward_parts_and_report_model_flops(model_files):
    path = model_files[0]
    m = _medians(path)
    comp = gm.compose(ga.load(path))
    # prefill keeps its layers; the shared forward benchmarks also make the training layers
    assert len(comp.layers[comp.layers["phase"] == "prefill"]) == 3
    train = comp.layers[comp.layers["phase"] == "train"]
    assert sorted(train["seq"]) == ["32", "64"]
    fwd = (m["p-qkv-bf16-64"][1] + m["p-o-bf16-64"][1] + m["p-gate-up-bf16-64"][1] + m["p-down-bf16-64"][1]
           + m["p-attention-64"][1] + 2 * m["p-all-reduce-64"][1] + 2 * m["p-norm-64"][1] + m["p-rope-64"][1]
           + m["p-silu-64"][1])
    lay = _layer(comp, phase="train", seq="64")
    assert lay["complete"]
    assert lay["layer_s"] == pytest.approx(fwd + m["t-qkv-dgrad-64"][1], rel=1e-12)
    step = 4 * lay["layer_s"] + m["p-embedding-64"][1] + m["t-lm-head-64"][1]
    assert lay["step_s"] == pytest.approx(step, rel=1e-12)
    assert lay["model_tflops_per_card"] == pytest.approx(6 * 100000 * 64 / step / 1e12, rel=1e-12)
    assert math.isnan(_layer(comp, phase="prefill", precision="bf16", seq="64")["model_tflops_per_card"])
    # the training LM head (every token), not the prefill one (the last token), in the step
    parts = _parts(comp, phase="train", seq="64")
    assert parts.loc["lm_head", "benchmark"] == "t-lm-head-64"
    # seq 32 lists a backward part nothing measures: missing, the layer incomplete, no model FLOPs
    lay = _layer(comp, phase="train", seq="32")
    assert not lay["complete"] and math.isnan(lay["model_tflops_per_card"])
    assert _parts(comp, phase="train", seq="32").loc["attention_backward", "status"] == "missing"


def test_collectives_on_fewer_ranks_than_tp_are_missing_with_their_bytes(model_files, tmp_path):
    def one_rank(f):
        f.attrs["world_size"] = 1

    comp = gm.compose(ga.load(_edited(model_files[0], tmp_path / "one-rank.h5", one_rank)))
    parts = _parts(comp, phase="prefill", precision="bf16", seq="32")
    ar = parts.loc["all_reduce"]
    assert ar["status"] == "missing" and math.isnan(ar["total_s"])
    assert "needs 2 ranks, the file ran on 1" in ar["reason"] and "4096 bytes" in ar["reason"], ar["reason"]
    lay = _layer(comp, phase="prefill", precision="bf16", seq="32")
    assert not lay["complete"] and math.isnan(lay["step_s"])
    # the overlapped o + all_reduce needs no ranks tag of its own to be refused: the layer is incomplete
    assert math.isnan(lay["layer_overlapped_s"])

    def bad_per(f):
        g = f["benchmarks/p-rope-32"]
        tags = json.loads(g.attrs["tags"])
        tags["per"] = "token"
        g.attrs["tags"] = json.dumps(tags)

    with pytest.raises(gm.ModelError, match="tag per is 'token'"):
        gm.compose(ga.load(_edited(model_files[0], tmp_path / "bad-per.h5", bad_per)))


def test_files_side_by_side_and_command_line(model_files, tmp_path):
    a, b = model_files
    ca, cb = gm.compose(ga.load(a)), gm.compose(ga.load(b))
    sbs = gm.side_by_side([ca, cb])
    row = sbs[(sbs["phase"] == "prefill") & (sbs["precision"] == "bf16") & (sbs["seq"] == "64")].iloc[0]
    la, lb = _layer(ca, phase="prefill", precision="bf16", seq="64"), _layer(cb, phase="prefill", precision="bf16",
                                                                              seq="64")
    assert row["ratio[1/0]"] == pytest.approx(lb["tokens_per_card_s"] / la["tokens_per_card_s"], rel=1e-12)
    assert row["layer_ms[0]"] == pytest.approx(la["layer_s"] * 1e3, rel=1e-12)
    png, csv = tmp_path / "layers.png", tmp_path / "parts.csv"
    env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE), MPLBACKEND="Agg")
    p = subprocess.run([sys.executable, "-m", "genbench_analysis", "model", a, b, "--plot", str(png),
                        "--parts", str(csv)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert "side by side" in p.stdout and "parts not counted" in p.stdout and "unsupported" in p.stdout
    assert "share of the step per part" in p.stdout and "add_rmsnorm" in p.stdout
    assert png.stat().st_size > 10000
    import pandas as pd
    parts = pd.read_csv(csv)
    assert set(parts["file"]) == {a, b} and "missing" in set(parts["status"])
    p = subprocess.run([sys.executable, "-m", "genbench_analysis", "model", os.path.join(HERE, "data", "v1_small.h5")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert p.returncode == 2 and "no benchmark has a 'part' tag" in p.stderr


def _model_configs():
    return sorted(glob.glob(os.path.join(MODELS, "*.yaml")))


def test_model_configs_are_generated():
    assert len(_model_configs()) == 16
    p = subprocess.run([sys.executable, os.path.join(MODELS, "generate.py"), "--check"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    assert p.returncode == 0, p.stdout
    # every suite measures the whole layer and step: nothing left out, the pointwise parts and the
    # parts run once a step present, the tensor-parallel collectives tagged with the ranks they need
    for path in _model_configs():
        text = open(path).read()
        assert "left_out" not in text, path
        for part in ("add_rmsnorm", "rope", "silu_mul", "embedding", "final_norm", "lm_head"):
            assert f"part: {part}," in text or f"part: experts_{part}," in text, (path, part)
        # LM head, its dgrad and wgrad, the embedding's and the final norm's backward, at 2 sequences
        train_steps = 5 * 2 if "-prefill" in path else 0
        assert text.count("per: step") == 3 * (3 if "-prefill" in path else 4) + train_steps, path
        tp = int(os.path.basename(path).split("-tp")[1].split("-")[0])
        # every prefill suite carries the training step: each GEMM's dgrad and wgrad, every part
        # it lists measured, the GEMM weights for the FLOPs
        if "-prefill" in path:
            assert "phase: train" in text and "phase: prefill+train" in text, path
            moe = "llama" not in path
            for part in (("o_dgrad", "router_wgrad", "experts_down_dgrad", "experts_gate_up_wgrad") if moe else
                         ("qkv_dgrad", "down_wgrad")) + ("lm_head_wgrad",):
                assert f"part: {part}," in text, (path, part)
            assert "attention_backward" in text and "params: " in text, path
            assert _train_missing(path) == {"2048": set(), "8192": set()}, path
        else:
            assert "phase: train" not in text, path
        for line in text.splitlines():
            if "part: all_reduce," in line or "part: o_all_reduce," in line:
                assert f"ranks: {tp}" in line, (path, line)


def _train_missing(path):
    """Per training sequence of a suite: the parts its training layers list (layer_parts*) that no
    benchmark of the training phase measures (a part of phase train or prefill+train, at that seq,
    bf16 or without a precision)."""
    import yaml
    benches = yaml.safe_load(open(path))["benchmarks"]
    listed, measured = {}, {}
    for b in benches:
        t = b["tags"]
        if "train" not in str(t["phase"]).split("+") or t.get("precision", "bf16") != "bf16":
            continue
        seq = str(t["seq"])
        measured.setdefault(seq, set()).add(t["part"])
        for k, v in t.items():
            if k == "layer_parts" or k.startswith("layer_parts_"):
                listed.setdefault(seq, set()).update(str(v).split("+"))
    return {seq: listed[seq] - measured.get(seq, set()) for seq in listed}


def test_training_step_measures_every_part():
    """The training layers of the dense prefill suites measure every part: the attention's
    backward is an attention_backward benchmark at the forward attention's shape (our fused fa2),
    the pointwise parts' backward are pointwise benchmarks at the forward parts' shapes, the
    embedding's and final norm's once a step."""
    import yaml
    path = os.path.join(MODELS, "llama3-70b-tp2-prefill.yaml")
    assert _train_missing(path) == {"2048": set(), "8192": set()}
    by_name = {b["name"]: b for b in yaml.safe_load(open(path))["benchmarks"]}
    att = by_name["train-attention-backward-seq2048"]
    assert att["op"] == "attention_backward" and att["implementations"] == ["fa3"]
    assert att["axes"] == by_name[next(n for n in by_name if n.startswith("attention-seq2048"))]["axes"]
    assert att["tags"]["phase"] == "train" and att["tags"]["count"] == 1
    want = {"train-add-rmsnorm-backward-seq2048": (dict(kind="add_rmsnorm_backward", rows=2048, hidden=8192), 2),
            "train-rope-backward-seq2048": (dict(kind="rope_backward", rows=2048, heads=32, heads_kv=4, head_dim=128),
                                            1),
            "train-silu-mul-backward-seq2048": (dict(kind="silu_mul_backward", rows=2048, hidden=14336), 1),
            "train-final-norm-backward-seq2048": (dict(kind="rmsnorm_backward", rows=2048, hidden=8192), 1),
            "train-embedding-backward-seq2048": (dict(kind="embedding_backward", rows=2048, hidden=8192,
                                                      vocab=128256), 1)}
    for name, (axes, count) in want.items():
        b = by_name[name]
        assert b["op"] == "pointwise" and b["implementations"] == ["cuda"], name
        assert {k: b["axes"][k] for k in axes} == axes, name
        assert b["tags"]["phase"] == "train" and b["tags"]["count"] == count, name
        assert b["tags"].get("per", "layer") == ("step" if "embedding" in name or "final" in name else "layer"), name


def test_moe_training_step_trains_the_routed_experts():
    """MoE prefill suites train too: the routed experts' forward grouped GEMMs serve the training
    layer, their dgrad is the grouped GEMM on the same routing with n and k swapped, their wgrad one
    expert's GEMM at the balanced row count counted once per expert; the model FLOPs count the
    active parameters (top_k experts a token)."""
    import yaml
    for model, experts, top_k, hidden, inter in (("mixtral-8x7b-tp2", 8, 2, 4096, 14336 // 2),
                                                 ("deepseek-v3-tp8", 256, 8, 7168, 2048 // 8)):
        path = os.path.join(MODELS, f"{model}-prefill.yaml")
        assert _train_missing(path) == {"2048": set(), "8192": set()}, path
        by_name = {b["name"]: b for b in yaml.safe_load(open(path))["benchmarks"]}
        fwd = by_name["experts-gate-up-bf16-seq8192"]
        assert fwd["tags"]["phase"] == "prefill+train", model
        dgrad = by_name["train-experts-gate-up-dgrad-bf16-seq8192"]
        assert dgrad["op"] == "grouped_gemm" and dgrad["tags"]["count"] == 1, model
        assert dgrad["axes"] == dict(fwd["axes"], n=fwd["axes"]["k"], k=fwd["axes"]["n"]), model
        wgrad = by_name["train-experts-down-wgrad-bf16-seq8192"]
        assert wgrad["op"] == "gemm" and wgrad["tags"]["count"] == experts, model
        rows = -(-8192 * top_k // experts)
        assert wgrad["axes"] == dict(m=hidden, n=inter, k=rows, trans_a="t", dtype="bf16", cache="cold"), model
        assert by_name["train-attention-backward-seq2048"]["op"] == "attention_backward", model
        # active parameters: the dense projections, top_k experts' gate_up and down, the LM head
        att = sum(b["axes"]["n"] * b["axes"]["k"] for n, b in by_name.items()
                  if n.endswith("-bf16-seq2048") and b["op"] == "gemm" and b["tags"]["phase"] == "prefill+train")
        expert = 2 * inter * hidden + hidden * inter
        vocab = 32000 if "mixtral" in model else 129280
        tp = int(model.split("-tp")[1])
        params = fwd["tags"]["layers"] * (att + top_k * expert) + vocab // tp * hidden
        assert by_name["train-experts-down-wgrad-bf16-seq8192"]["tags"]["params"] == params, model


def test_model_dimensions_that_do_not_fit_are_refused_with_their_line(tmp_path):
    """generate.py refuses a model whose dimensions do not fit (GQA groups, TP splits, a missing
    field), naming generate.py:LINE of the model, and writes nothing."""
    src = open(os.path.join(MODELS, "generate.py")).read()
    lines = src.splitlines()
    line = next(i + 1 for i, t in enumerate(lines) if t.strip().startswith('"llama3-70b":'))
    for old, new, says in [("kv_heads=8, head_dim=128, inter=28672", "kv_heads=7, head_dim=128, inter=28672",
                            "heads 64 is not a multiple of kv_heads 7"),
                           ("inter=28672, layers=80", "inter=28670, layers=80", "inter 28670 does not split over tp 4"),
                           ("inter=28672, layers=80", "layers=80", "missing inter")]:
        assert old in src
        gen = tmp_path / "generate.py"
        gen.write_text(src.replace(old, new, 1))
        out = tmp_path / "out"
        out.mkdir(exist_ok=True)
        p = subprocess.run([sys.executable, str(gen), "--dir", str(out)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        assert p.returncode == 2, p.stderr
        assert f"generate.py:{line}: model llama3-70b: {says}" in p.stderr, p.stderr
        assert not list(out.iterdir())


def _config_ops(path):
    text = open(path).read()
    return {ln.split(":", 1)[1].strip() for ln in text.splitlines() if ln.strip().startswith("op:")}


def _validate(path):
    tp = int(os.path.basename(path).split("-tp")[1].split("-")[0])
    return subprocess.run([BINARY, "validate", path, "--world-size", str(tp)], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, env=_genbench_env(), cwd=REPO, timeout=300)


@pytest.fixture(scope="module")
def validated():
    """`genbench validate` of every model config whose ops this build has, run side by side (most
    of each run is MPI's start-up, spent waiting): config name -> CompletedProcess."""
    from concurrent.futures import ThreadPoolExecutor
    paths = [c for c in _model_configs() if not _config_ops(c) - _binary_ops()]
    with ThreadPoolExecutor(max_workers=8) as pool:
        return dict(zip(map(os.path.basename, paths), pool.map(_validate, paths)))


@pytest.mark.parametrize("config", [os.path.basename(c) for c in _model_configs()])
def test_model_config_validates(config, validated):
    _needs(_config_ops(os.path.join(MODELS, config)))
    p = validated[config]
    assert p.returncode == 0, p.stdout[-3000:]
    assert "benchmark" in p.stdout.lower() or p.stdout.strip()


def test_notebook_model_section(model_files, monkeypatch):
    nbclient = pytest.importorskip("nbclient", reason="python3-nbclient is needed to run the notebook")
    import nbformat
    nb_path = os.path.join(os.path.dirname(HERE), "notebooks", "compare_generations.ipynb")
    monkeypatch.setenv("GENBENCH_A", model_files[0])
    monkeypatch.setenv("GENBENCH_B", model_files[1])
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = nbformat.read(nb_path, as_version=4)
    nbclient.NotebookClient(nb, timeout=180, startup_timeout=180, kernel_name="python3",
                            resources={"metadata": {"path": os.path.dirname(nb_path)}}).execute()
    cell = next(c for c in nb.cells if c.cell_type == "code" and "gmodel.compose" in c.source)
    assert not [o for o in cell.outputs if o.output_type == "error"]
    text = "\n".join(str(o.get("data", {}).get("text/plain", "")) + str(o.get("text", "")) for o in cell.outputs)
    assert "tokens_per_card_s" in text and "unsupported" in text and "ratio[1/0]" in text
    assert [o for o in cell.outputs if "image/png" in o.get("data", {})]
