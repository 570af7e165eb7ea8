"""What a card gives a model: one layer's time composed from its measured parts (docs/models.md).

A model suite (configs/models/) runs each part of one transformer layer as a benchmark of its
own and labels it with tags (Benchmark.tags). Nothing here names an op; only these tags count:

  model, phase, tp      the group a part belongs to (tp: tensor-parallel degree = cards a layer spans);
                        phase may join several with '+' (the part then belongs to each phase's layers)
  part                  the part's name (qkv, o, gate_up, down, attention, all_reduce, ...)
  count                 times the part runs per layer (default 1)
  layers                layers of the model (one step of the model is `layers` layers)
  tokens                tokens one step produces (prefill: the sequence; decode: the batch)
  layer_parts           the parts a complete layer has, joined by '+', so absent ones are reported
                        (continued in layer_parts_2, layer_parts_3, ...: a tag value holds 64 characters)
  left_out              parts no op measures, joined by '+' (reported as left out, never counted)
  per                   'step': the part runs once a step (embedding, final norm, LM head), not once a
                        layer; step = layers x layer + these parts
  params                GEMM weights of the model on one card (training suites): the step's model FLOPs are
                        6 x params x tokens (forward 2, backward 4, attention not counted), and the model
                        FLOPs utilisation (mfu) is their rate per card over the file's bf16 GEMM ceiling
  ranks                 ranks the part needs (a tensor-parallel collective: the TP degree); in a file
                        of fewer ranks it is reported missing, with the bytes it would move, not counted
  replaces              (alternative parts) '+'-joined parts whose single runs this one replaces in
                        the overlapped sum (a GEMM and its collective measured overlapped)
  time                  the column holding the part's time (default time_median_s)
  any other tag         scenario and variant keys (precision, seq, batch, cache, ...): a part
                        belongs to every layer whose keys include all of its own with equal values

A layer is a combination of scenario values that every kind of part (set of keys) of its group was
measured at; its parts are the benchmarks that match it. A part counts only when a point ran ok:
one that is absent, not run, failed or unsupported is reported and the layer's time is then
unknown (NaN), never a sum with that part as zero.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

import numpy as np
import pandas as pd

GROUP_TAGS = ("model", "phase", "tp")
PART_TAGS = {"part", "count", "layer_parts", "left_out", "replaces", "time", "layers", "tokens", "per", "ranks",
             "params"}


def _is_part_tag(name: str) -> bool:
    return name in PART_TAGS or name.startswith("layer_parts_")


def _layer_parts(tags: Dict[str, str]) -> List[str]:
    """layer_parts, then layer_parts_2, _3, ... in order, split on '+'."""
    out = _split(tags.get("layer_parts"))
    i = 2
    while f"layer_parts_{i}" in tags:
        out += _split(tags[f"layer_parts_{i}"])
        i += 1
    return out
DEFAULT_TIME = "time_median_s"


class ModelError(Exception):
    """Files whose tags cannot be composed (no model parts, a malformed tag)."""


@dataclass
class Composition:
    """The composition of one result file.

    layers  one row per layer: model, phase, tp, its scenario keys, tokens, layers, parts_s (sum of
            the per-layer parts that ran ok), layer_s (that sum when the layer is complete, else NaN),
            layer_overlapped_s (with the measured overlaps applied, where the file has them),
            step_parts_s (the parts run once a step), step_s (layers x layer_s + step_parts_s),
            s_per_token, tokens_per_s, tokens_per_card_s (tokens/s per card), complete, missing
    parts   one row per (layer, part): part, per ('layer' or 'step'), status (ok, missing, not run,
            failed, unsupported, ambiguous, left out, overlap), benchmark, impl, count, time_s (one
            run), total_s (count x time_s), share (of the step: total_s x layers / step_s for a
            per-layer part, total_s / step_s for a per-step part), reason
    """

    path: str
    label: str
    world_size: Optional[int]
    keys: List[str]
    layers: pd.DataFrame
    parts: pd.DataFrame
    notes: List[str] = field(default_factory=list)

    @property
    def issues(self) -> pd.DataFrame:
        """The parts that were not counted: missing, not run, failed, unsupported, ambiguous, left out."""
        p = self.parts
        return p[~p["status"].isin(["ok", "overlap"])].reset_index(drop=True)


def _num(v, what: str) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise ModelError(f"{what}: {v!r} is not a number") from None
    if not math.isfinite(x):
        raise ModelError(f"{what}: {v!r} is not a finite number")
    return x


def _split(v) -> List[str]:
    return [p for p in str(v or "").split("+") if p]


def _sort_key(v):
    try:
        return (0, float(v), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(v))


def _part_time(result, bname: str, tags: Dict[str, str], world_size: Optional[int] = None):
    """(status, impl, time_s, reason) of one part's benchmark: the fastest point that ran ok."""
    col = tags.get("time", DEFAULT_TIME)
    t = result.table(bname)
    if "ranks" in tags and world_size is not None:
        need = _num(tags["ranks"], f"{result.path}: benchmark {bname!r}: tag ranks")
        if world_size < need:
            moved = ""
            if not t.empty and "bytes" in t:
                b = pd.to_numeric(t["bytes"], errors="coerce").dropna()
                if not b.empty:
                    moved = f"; it would move {float(b.iloc[0]):.4g} bytes a call"
            return ("missing", "", math.nan,
                    f"needs {int(need)} ranks, the file ran on {world_size}{moved} (run it with mpirun -np {int(need)})")
    if t.empty:
        return "not run", "", math.nan, "no point of the benchmark ran (the run stopped before it?)"
    ok = t[t["status"] == "ok"]
    if not ok.empty:
        if col not in ok:
            return "failed", "", math.nan, f"the benchmark has no column {col!r} (tag time)"
        times = pd.to_numeric(ok[col], errors="coerce")
        good = ok[np.isfinite(times) & (times > 0)]
        if good.empty:
            return "failed", "", math.nan, f"no point has a positive {col}"
        i = pd.to_numeric(good[col]).idxmin()
        return "ok", str(good.loc[i, "impl"]), float(good.loc[i, col]), ""
    row = t.iloc[0]
    reason = str(row.get("reason", "") or "")
    return str(row["status"]), str(row.get("impl", "")), math.nan, reason


def compose(result) -> Composition:
    """Composes every layer of one loaded Result from its tagged benchmarks."""
    benches = []
    for name, b in result.benchmarks.items():
        tags = dict(getattr(b, "tags", {}) or {})
        if "part" not in tags:
            continue
        missing = [g for g in GROUP_TAGS if g not in tags]
        if missing:
            raise ModelError(f"{result.path}: benchmark {name!r} has a part tag but no {', '.join(missing)} tag")
        ident = {k: v for k, v in tags.items() if not _is_part_tag(k) and k not in GROUP_TAGS}
        # a part that serves several phases' layers (a prefill's forward GEMM in the training step too)
        for phase in _split(tags["phase"]):
            benches.append((name, dict(tags, phase=phase), ident))
    if not benches:
        raise ModelError(f"{result.path}: no benchmark has a 'part' tag; is it a model suite (configs/models/)?")

    ws = result.attrs.get("world_size")
    world_size = int(ws) if ws not in (None, "") else None
    notes: List[str] = []
    layer_rows, part_rows = [], []
    all_keys: List[str] = []
    groups: Dict[tuple, list] = {}
    for bn in benches:
        groups.setdefault(tuple(bn[1][g] for g in GROUP_TAGS), []).append(bn)
    for gkey, members in sorted(groups.items(), key=lambda kv: tuple(_sort_key(v) for v in kv[0])):
        model, phase, tp = gkey
        tp_n = _num(tp, f"{result.path}: tag tp of {model} {phase}")
        if world_size is not None and int(tp_n) != world_size:
            notes.append(f"{model} {phase}: tp {tp} but the file ran on {world_size} ranks; its collectives "
                         f"ran over {world_size} ranks, not {tp}")
        keys = []
        for _, _, ident in members:
            keys += [k for k in ident if k not in keys]
        all_keys += [k for k in keys if k not in all_keys]
        values = {k: sorted({ident[k] for _, _, ident in members if k in ident}, key=_sort_key) for k in keys}
        seen = {}
        for _, _, ident in members:
            seen.setdefault(frozenset(ident), set()).add(tuple(sorted(ident.items())))
        candidates = []
        for combo in itertools.product(*(values[k] for k in keys)):
            layer = dict(zip(keys, combo))
            if all(tuple(sorted((k, layer[k]) for k in ks)) in obs for ks, obs in seen.items()):
                candidates.append(layer)
        for layer in candidates:
            lrow, prow = _layer(result, gkey, layer, members)
            layer_rows.append(lrow)
            part_rows += prow
    layers = pd.DataFrame(layer_rows)
    parts = pd.DataFrame(part_rows)
    return Composition(result.path, getattr(result, "label", result.path), world_size, all_keys, layers, parts, notes)


def _bf16_peak(result) -> float:
    """TFLOP/s of the file's measured bf16 GEMM ceiling (the lowest rank's), NaN without one."""
    c = result.ceiling("gemm_bf16_tflops") if hasattr(result, "ceiling") else None
    return float(c[0]) if c and c[0] and math.isfinite(float(c[0])) else math.nan


def _layer(result, gkey, layer: Dict[str, str], members):
    model, phase, tp = gkey
    tp_n = _num(tp, "tp")
    base = {"model": model, "phase": phase, "tp": int(tp_n) if tp_n.is_integer() else tp_n, **layer}
    match = [(n, t) for n, t, ident in members if all(layer.get(k) == v for k, v in ident.items())]
    expected, left_out = [], []
    for _, t in match:
        expected += [p for p in _layer_parts(t) if p not in expected]
        left_out += [p for p in _split(t.get("left_out")) if p not in left_out]
    for _, t in match:
        if "replaces" not in t and t["part"] not in expected:
            expected.append(t["part"])
    overlaps = sorted({t["part"] for _, t in match if "replaces" in t})

    def one(part: str):
        found = [(n, t) for n, t in match if t["part"] == part]
        if not found:
            return {"part": part, "per": "layer", "status": "missing", "benchmark": "", "impl": "", "count": math.nan,
                    "time_s": math.nan, "total_s": math.nan, "reason": "no benchmark of the file is this part"}, None
        if len(found) > 1:
            return {"part": part, "per": "layer", "status": "ambiguous", "benchmark": ", ".join(n for n, _ in found),
                    "impl": "",
                    "count": math.nan, "time_s": math.nan, "total_s": math.nan,
                    "reason": "several benchmarks match this layer and part; none is counted"}, None
        n, t = found[0]
        count = _num(t.get("count", 1), f"{result.path}: benchmark {n!r}: tag count")
        ws = result.attrs.get("world_size")
        status, impl, time_s, reason = _part_time(result, n, t, int(ws) if ws not in (None, "") else None)
        per = str(t.get("per", "layer"))
        if per not in ("layer", "step"):
            raise ModelError(f"{result.path}: benchmark {n!r}: tag per is {per!r}; 'layer' or 'step'")
        return {"part": part, "per": per, "status": status, "benchmark": n, "impl": impl, "count": count,
                "time_s": time_s, "total_s": count * time_s if status == "ok" else math.nan, "reason": reason}, t

    prows = []
    for part in expected:
        row, _ = one(part)
        prows.append(row)
    for part in left_out:
        prows.append({"part": part, "per": "layer", "status": "left out", "benchmark": "", "impl": "", "count": math.nan,
                      "time_s": math.nan, "total_s": math.nan, "reason": "no op measures it (docs/models.md)"})
    measured = [r for r in prows if r["status"] != "left out"]
    complete = bool(measured) and all(r["status"] == "ok" for r in measured)
    parts_s = float(sum(r["total_s"] for r in measured if r["status"] == "ok" and r["per"] == "layer"))
    step_parts_s = float(sum(r["total_s"] for r in measured if r["status"] == "ok" and r["per"] == "step"))
    layer_s = parts_s if complete else math.nan

    overlapped = math.nan
    if overlaps and complete:
        overlapped = layer_s
    by_part = {r["part"]: r for r in prows}
    for part in overlaps:
        row, t = one(part)
        rep = _split(t.get("replaces")) if t else []
        row["status"] = "overlap" if row["status"] == "ok" else row["status"]
        row["reason"] = (row["reason"] + "; " if row["reason"] else "") + "replaces one run of " + " and ".join(rep)
        row["total_s"] = math.nan
        prows.append(row)
        if row["status"] != "overlap" or any(by_part.get(p, {}).get("status") != "ok" for p in rep):
            overlapped = math.nan
        elif math.isfinite(overlapped):
            overlapped += row["time_s"] - sum(by_part[p]["time_s"] for p in rep)

    def numtag(name):
        vals = {t.get(name) for _, t in match if t.get(name) is not None}
        if len(vals) > 1:
            raise ModelError(f"{result.path}: {model} {phase} {layer}: the parts disagree on tag {name} "
                             f"({', '.join(sorted(vals))})")
        return _num(vals.pop(), f"{result.path}: tag {name}") if vals else math.nan

    tokens, nlayers, params = numtag("tokens"), numtag("layers"), numtag("params")
    step = nlayers * layer_s + (step_parts_s if complete else math.nan)
    for r in prows:
        mult = nlayers if r["per"] == "layer" else 1.0
        r["share"] = r["total_s"] * mult / step if math.isfinite(step) and step > 0 else math.nan
    lrow = dict(base)
    lrow.update({"tokens": tokens, "layers": nlayers, "parts_s": parts_s, "layer_s": layer_s,
                 "layer_overlapped_s": overlapped, "step_parts_s": step_parts_s, "step_s": step,
                 "s_per_token": step / tokens,
                 "tokens_per_s": tokens / step, "tokens_per_card_s": tokens / step / tp_n,
                 "tokens_per_card_s_overlapped": tokens / (nlayers * overlapped + step_parts_s) / tp_n,
                 "model_tflops_per_card": 6 * params * tokens / step / 1e12,
                 "mfu": 6 * params * tokens / step / 1e12 / _bf16_peak(result),
                 "complete": complete,
                 "missing": sum(r["status"] not in ("ok", "left out") for r in measured)})
    for r in prows:
        r.update({k: v for k, v in base.items()})
    return lrow, prows


# --- side by side and text -------------------------------------------------------------------

def side_by_side(comps: Sequence[Composition]) -> pd.DataFrame:
    """Layers of several files joined on model, phase and the scenario keys (not tp, so two TP
    degrees line up): per file its tp, layer time, tokens/s per card, and its ratio to the first
    file's tokens/s per card (> 1: more tokens per card)."""
    keys = ["model", "phase"] + [k for c in comps for k in c.keys]
    keys = list(dict.fromkeys(keys))
    merged = None
    for i, c in enumerate(comps):
        if c.layers.empty:
            continue
        df = c.layers.copy()
        for k in keys:
            if k not in df:
                df[k] = ""
        df = df[keys + ["tp", "layer_s", "tokens_per_card_s", "complete"]].rename(columns={
            "tp": f"tp[{i}]", "layer_s": f"layer_ms[{i}]", "tokens_per_card_s": f"tok/s/card[{i}]",
            "complete": f"complete[{i}]"})
        df[f"layer_ms[{i}]"] = df[f"layer_ms[{i}]"] * 1e3
        merged = df if merged is None else merged.merge(df, on=keys, how="outer")
    if merged is None:
        return pd.DataFrame()
    first = "tok/s/card[0]"
    for i in range(1, len(comps)):
        col = f"tok/s/card[{i}]"
        if first in merged and col in merged:
            with np.errstate(divide="ignore", invalid="ignore"):
                merged[f"ratio[{i}/0]"] = merged[col] / merged[first]
    return merged.reset_index(drop=True)


def _fmt(v) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (float, np.floating)):
        if not math.isfinite(v):
            return "-"
        if v == 0:
            return "0"
        if abs(v) >= 1e5 or abs(v) < 1e-3:
            return f"{v:.3e}"
        return f"{v:.4g}"
    return "" if v is None else str(v)


def _table(df: pd.DataFrame, fmt: str) -> str:
    if df.empty:
        return "(none)\n"
    if fmt == "csv":
        return df.to_csv(index=False)
    cols = list(df.columns)
    rows = [[_fmt(v) for v in r] for r in df.itertuples(index=False)]
    if fmt == "markdown":
        out = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(out) + "\n"
    w = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(cols)]
    out = ["  ".join(c.rjust(w[i]) for i, c in enumerate(cols)), "  ".join("-" * x for x in w)]
    out += ["  ".join(r[i].rjust(w[i]) for i in range(len(cols))) for r in rows]
    return "\n".join(out) + "\n"


def _layer_view(c: Composition) -> pd.DataFrame:
    if c.layers.empty:
        return c.layers
    df = c.layers.copy()
    keys = [k for k in ["model", "phase", "tp"] + c.keys if k in df]
    out = df[keys].copy()
    out["layer_ms"] = df["layer_s"] * 1e3
    out["parts_ms"] = df["parts_s"] * 1e3
    out["overlapped_ms"] = df["layer_overlapped_s"] * 1e3
    out["per_step_ms"] = df["step_parts_s"] * 1e3
    out["step_ms"] = df["step_s"] * 1e3
    out["ms/token"] = df["s_per_token"] * 1e3
    out["tok/s"] = df["tokens_per_s"]
    out["tok/s/card"] = df["tokens_per_card_s"]
    if "model_tflops_per_card" in df and df["model_tflops_per_card"].notna().any():
        out["model TFLOP/s/card"] = df["model_tflops_per_card"]
        out["mfu"] = df["mfu"]
    out["missing"] = df["missing"]
    return out


def _share_view(c: Composition) -> pd.DataFrame:
    """One row per layer, one column per part: its share of the step in percent (a per-layer
    part's count x time x layers, a per-step part's time, over the step); '-' where the layer is
    incomplete or the layer lacks the part."""
    if c.parts.empty or "share" not in c.parts:
        return pd.DataFrame()
    keys = [k for k in ["model", "phase", "tp"] + c.keys if k in c.parts]
    p = c.parts[c.parts["status"] == "ok"].copy()
    if p.empty:
        return pd.DataFrame()
    p["share"] = p["share"] * 100
    for k in keys:  # a key a layer does not have (a prefill's cache) would drop the row
        p[k] = p[k].where(p[k].notna(), "-").astype(str)
    rows = {}
    for _, r in p.iterrows():
        rows.setdefault(tuple(r[k] for k in keys), {})[r["part"]] = r["share"]
    order = list(dict.fromkeys(p["part"]))
    return pd.DataFrame([dict(zip(keys, key), **{o: v.get(o, math.nan) for o in order}) for key, v in rows.items()])


def _issue_view(c: Composition) -> pd.DataFrame:
    iss = c.issues
    if iss.empty:
        return iss
    keys = [k for k in ["model", "phase", "tp"] + c.keys if k in iss]
    # one row per (part, status, reason) with the layers it affects counted
    g = iss.groupby(["model", "phase", "tp", "part", "status", "reason"], dropna=False, sort=False)
    rows = []
    for (model, phase, tp, part, status, reason), d in g:
        scen = sorted({" ".join(f"{k}={r[k]}" for k in keys[3:] if isinstance(r.get(k), str))
                       for _, r in d.iterrows()})
        rows.append({"model": model, "phase": phase, "tp": tp, "part": part, "status": status,
                     "layers": len(d), "where": "; ".join(scen)[:120], "reason": reason})
    return pd.DataFrame(rows)


def format_model(comps: Sequence[Composition], fmt: str = "text") -> str:
    """Per file the layer table and the table of parts not counted, then the files side by side."""
    head = (lambda s: f"## {s}\n\n") if fmt == "markdown" else (lambda s: f"== {s} ==\n")
    out = []
    if fmt == "csv":
        frames = []
        for i, c in enumerate(comps):
            df = c.layers.copy()
            df.insert(0, "file", c.path)
            frames.append(df)
        return pd.concat(frames, ignore_index=True).to_csv(index=False) if frames else ""
    for i, c in enumerate(comps):
        out.append(head(f"[{i}] {c.label}"))
        for n in c.notes:
            out.append(f"note: {n}\n")
        out.append("Layer time = sum over its parts of count x median time; step = layers x layer + the parts run "
                   "once a step (per_step_ms); "
                   "tok/s/card = tokens per step / step / tp. '-': the layer misses a part (below).\n")
        out.append(_table(_layer_view(c), fmt))
        out.append("\n" + head(f"[{i}] share of the step per part, % (per-layer parts x layers, per-step parts once)"))
        out.append(_table(_share_view(c), fmt))
        out.append("\n" + head(f"[{i}] parts not counted (missing, failed, unsupported, left out)"))
        out.append(_table(_issue_view(c), fmt))
        out.append("\n")
    if len(comps) > 1:
        out.append(head("side by side: layer ms and tokens/s per card; ratio[i/0] = file i / file 0"))
        out.append(_table(side_by_side(comps), fmt))
    return "".join(out)


# --- plot ------------------------------------------------------------------------------------

def plot_layer_breakdown(comps: Sequence[Composition], max_bars: int = 40):
    """A stacked horizontal bar per layer: each part's share of the step (count x time x layers for a
    per-layer part, its time for a per-step part), the step's time at the bar's end; a layer with
    parts not counted is labelled so."""
    import matplotlib
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    panels = []
    for c in comps:
        if c.layers.empty:
            continue
        for (model, phase), d in c.layers.groupby(["model", "phase"], sort=False):
            panels.append((c, model, phase, d.head(max_bars)))
    if not panels:
        raise ValueError("no layers to plot")
    names = []
    for c in comps:
        if not c.parts.empty:
            names += [p for p in c.parts[c.parts["status"] == "ok"]["part"] if p not in names]
    cmap = plt.get_cmap("tab20")
    color = {p: cmap(i % 20) for i, p in enumerate(names)}
    height = sum(max(2.0, 0.32 * len(d) + 1.2) for *_, d in panels)
    fig, axes = plt.subplots(len(panels), 1, figsize=(11, height), squeeze=False)
    for ax, (c, model, phase, d) in zip(axes[:, 0], panels):
        labels = []
        for y, (_, lay) in enumerate(d.iterrows()):
            keys = [k for k in c.keys if isinstance(lay.get(k), str)]
            labels.append(f"tp{lay['tp']} " + " ".join(f"{k}={lay[k]}" for k in keys))
            sel = (c.parts["model"] == model) & (c.parts["phase"] == phase) & (c.parts["status"] == "ok")
            for k in ["tp"] + keys:
                sel &= c.parts[k] == lay[k]
            pr = c.parts[sel]
            nl = float(lay["layers"]) if math.isfinite(float(lay["layers"])) else 1.0
            mult = {"layer": nl, "step": 1.0}
            total = sum(r["total_s"] * mult.get(r.get("per", "layer"), nl) for _, r in pr.iterrows())
            left = 0.0
            for _, r in pr.iterrows():
                share = r["total_s"] * mult.get(r.get("per", "layer"), nl) / total if total > 0 else 0
                ax.barh(y, share, left=left, color=color[r["part"]], edgecolor="white", linewidth=0.5,
                        label=r["part"])
                left += share
            txt = f"step {lay['step_s'] * 1e3:.3g} ms" if lay["complete"] else \
                f"incomplete: {int(lay['missing'])} not counted ({total * 1e3:.3g} ms measured)"
            ax.text(1.01, y, txt, va="center", fontsize=7)
        ax.set_yticks(range(len(d)))
        ax.set_yticklabels(labels, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_title(f"{model} {phase}: share of a step's time per part (layers x per-layer parts, per-step "
                     f"parts once) \u2014 {c.label}", fontsize=9)
        h, l = ax.get_legend_handles_labels()
        uniq = dict(zip(l, h))
        ax.legend(uniq.values(), uniq.keys(), fontsize=7, ncol=min(6, len(uniq)), loc="upper center",
                  bbox_to_anchor=(0.5, -0.18 if len(d) < 4 else -0.08))
    fig.tight_layout()
    return fig
