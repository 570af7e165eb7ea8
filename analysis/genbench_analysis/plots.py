"""The report's plots. Each function takes a list of Results and returns a matplotlib Figure,
or raises NoData with the reason there is nothing to draw.

Figures are made with matplotlib.figure.Figure directly (no pyplot), so they neither need a
display nor disturb the backend of a notebook that calls them.
"""

from __future__ import annotations

import math
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

from .loader import OK, Result

MAX_PANELS = 12
MAX_BARS = 80


class NoData(Exception):
    """Nothing to plot; the message says why."""


# --- shared helpers -----------------------------------------------------------------------

def human_bytes(n: float) -> str:
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:g} {unit}" if n == int(n) else f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:g}"


def flops_unit(max_tflops: float) -> Tuple[str, float]:
    """TFLOP/s, or GFLOP/s when every value is small (CPU runs): unit and factor from TFLOP/s."""
    return ("TFLOP/s", 1.0) if not np.isfinite(max_tflops) or max_tflops >= 0.1 else ("GFLOP/s", 1e3)


def bytes_unit(max_bytes: float) -> Tuple[str, float]:
    for unit, f in (("GiB", 2.0**30), ("MiB", 2.0**20), ("KiB", 2.0**10)):
        if max_bytes >= f:
            return unit, 1.0 / f
    return "B", 1.0


def _bytes_formatter():
    return FuncFormatter(lambda x, _: human_bytes(x) if x > 0 else "")


def ok_points(results: Sequence[Result], op: str) -> pd.DataFrame:
    """The ok points of one op over all results, with the columns source (device and file),
    device, file and benchmark, and only the axes that op has."""
    frames = []
    for i, r in enumerate(results):
        names = [n for n, b in r.benchmarks.items() if b.op == op]
        for n in names:
            t = r.table(n)
            t = t[t["status"] == OK].copy()
            if t.empty:
                continue
            t["source"] = r.label
            t["device"] = r.device
            t["file"] = r.name
            t["result_index"] = i
            frames.append(t)
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True, sort=False)


def op_axes(results: Sequence[Result], op: str) -> List[str]:
    axes: List[str] = []
    for r in results:
        for b in r.benchmarks.values():
            if b.op == op:
                axes += [a for a in b.axes if a not in axes]
    return axes


def varying(df: pd.DataFrame, cols: Sequence[str]) -> List[str]:
    return [c for c in cols if c in df and df[c].astype(str).nunique(dropna=False) > 1]


def series_key(df: pd.DataFrame, extra: Sequence[str] = ()) -> pd.Series:
    """Legend text per row: implementation (and benchmark, if an op has several), plus the
    device and file when more than one result is plotted, plus the extra varying columns."""
    parts = []
    if df["benchmark"].nunique() > 1:
        parts.append(df["benchmark"].astype(str))
    parts.append(df["impl"].astype(str))
    for c in extra:
        parts.append(c + "=" + df[c].astype(str))
    if df["source"].nunique() > 1:
        parts.append(df["source"].astype(str))
    out = parts[0]
    for p in parts[1:]:
        out = out + " \u00b7 " + p
    return out


def sources_title(df: pd.DataFrame) -> str:
    """Device and file for a title when one result is plotted; else the legend carries them."""
    src = list(dict.fromkeys(df["source"]))
    if len(src) == 1:
        return src[0]
    return f"{len(src)} result files (device and file in the legend)"


def facet_label(row: pd.Series, cols: Sequence[str]) -> str:
    return ", ".join(f"{c}={_fmt(c, row[c])}" for c in cols) if cols else ""


def _fmt(col: str, v) -> str:
    if col in ("bytes",) and isinstance(v, (int, np.integer, float)) and not pd.isna(v):
        return human_bytes(v)
    return str(v)


def _grid(n: int, ncols_max: int = 3) -> Tuple[int, int]:
    ncols = min(n, ncols_max)
    return int(math.ceil(n / ncols)), ncols


def _figure(npanels: int, panel_w: float = 5.2, panel_h: float = 3.8, ncols_max: int = 3, legend_rows: int = 0):
    nrows, ncols = _grid(npanels, ncols_max)
    fig = Figure(figsize=(panel_w * ncols, panel_h * nrows + 0.9), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax in axes.flat[npanels:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:npanels])


def _legend_below(fig, handles_labels: Dict[str, object]):
    """One legend for the whole figure, under the panels, so it never covers data."""
    if not handles_labels:
        return
    labels = list(handles_labels)
    ncol = 1 if max(len(x) for x in labels) > 60 else min(3, len(labels))
    # Anchored just below the figure; saving with bbox_inches="tight" takes it in.
    fig.legend([handles_labels[k] for k in labels], labels, loc="upper center", bbox_to_anchor=(0.5, 0.0),
               ncol=ncol, fontsize=9, frameon=False)


def _facets(df: pd.DataFrame, cols: Sequence[str]) -> Tuple[List[Tuple[str, pd.DataFrame]], str]:
    """Splits df by cols; at most MAX_PANELS panels (a note says how many were left out)."""
    if not cols:
        return [("", df)], ""
    groups = []
    for _, g in df.groupby(list(cols) if len(cols) > 1 else cols[0], sort=True, dropna=False):
        groups.append((facet_label(g.iloc[0], cols), g))
    note = ""
    if len(groups) > MAX_PANELS:
        note = f"{len(groups) - MAX_PANELS} of {len(groups)} panels left out ({', '.join(cols)})"
        groups = groups[:MAX_PANELS]
    return groups, note


def _line_panels(df: pd.DataFrame, x: str, y: str, facet_cols: Sequence[str], series_extra: Sequence[str],
                 title: str, xlabel: str, ylabel: str, logx: bool = False, bytes_x: bool = False,
                 logy: Optional[bool] = None, ytransform=None) -> Figure:
    df = df.copy()
    df["_series"] = series_key(df, series_extra)
    panels, note = _facets(df, facet_cols)
    nseries = df["_series"].nunique()
    fig, axes = _figure(len(panels), legend_rows=nseries)
    handles: Dict[str, object] = {}
    colors = {s: f"C{i % 10}" for i, s in enumerate(dict.fromkeys(df["_series"]))}
    markers = "osD^v<>ph*"
    for ax, (label, g) in zip(axes, panels):
        for i, (s, gs) in enumerate(g.groupby("_series", sort=False)):
            gs = gs.sort_values(x)
            xs = gs[x].astype(float).to_numpy()
            ys = gs[y].astype(float).to_numpy()
            if ytransform is not None:
                ys = ytransform(ys)
            (h,) = ax.plot(xs, ys, marker=markers[list(colors).index(s) % len(markers)], color=colors[s],
                           linewidth=1.5, markersize=5)
            handles.setdefault(s, h)
        xvals = sorted(set(g[x].astype(float)))
        if logx:
            ax.set_xscale("log", base=2)
        # Ticks at the measured values when there are few, else at powers of two.
        if len(xvals) <= 10:
            ax.xaxis.set_major_locator(FixedLocator(xvals))
        elif logx:
            ax.xaxis.set_major_locator(LogLocator(base=2, numticks=12))
        ax.xaxis.set_minor_locator(FixedLocator([]))
        ax.xaxis.set_major_formatter(_bytes_formatter() if bytes_x else FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        if bytes_x or len(xvals) > 6:
            for t in ax.get_xticklabels():
                t.set_rotation(30)
                t.set_horizontalalignment("right")
        vals = g[y].astype(float) if ytransform is None else pd.Series(ytransform(g[y].astype(float).to_numpy()))
        use_logy = logy if logy is not None else (vals.min() > 0 and vals.max() / vals.min() > 50)
        if use_logy:
            ax.set_yscale("log")
        else:
            ax.set_ylim(bottom=0)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if label:
            ax.set_title(label, fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
    return _finish(fig, title, df, handles, note)


def _points_with(results: Sequence[Result], op: str, needed: str, column: str, op_label: str,
                 missing: str) -> pd.DataFrame:
    """The op's ok points that have column `needed` and a positive `column`; NoData otherwise
    ("no <op_label> point ran ok", or `missing` when none has a positive value)."""
    df = ok_points(results, op)
    if df.empty or needed not in df:
        raise NoData(f"no {op_label} point ran ok")
    df = df[df[column] > 0]
    if df.empty:
        raise NoData(missing)
    return df


def _finish(fig: Figure, title: str, df: pd.DataFrame, handles: Dict[str, object], note: str = "") -> Figure:
    """Title with the sources, the legend below the panels, an optional note top left."""
    fig.suptitle(title + "\n" + sources_title(df), fontsize=11)
    _legend_below(fig, handles)
    if note:
        fig.text(0.01, 1.0, note, fontsize=8, color="0.4", va="bottom")
    return fig


# --- the plots ------------------------------------------------------------------------------

def attention_tflops(results: Sequence[Result]) -> Figure:
    df = _points_with(results, "attention", "seqlen_q", "tflops", "attention", "no attention point has a TFLOP/s value")
    facets = [c for c in varying(df, op_axes(results, "attention")) if c not in ("seqlen_q", "seqlen_k")]
    unit, f = flops_unit(df["tflops"].max())
    return _line_panels(df, "seqlen_q", "tflops", facets, [], "Attention throughput against sequence length",
                        "query sequence length (seqlen_q)", unit, logx=df["seqlen_q"].nunique() > 2,
                        ytransform=lambda v: v * f)


def attention_memory(results: Sequence[Result]) -> Figure:
    df = _points_with(results, "attention", "peak_memory_bytes", "peak_memory_bytes", "attention",
                      "no attention point recorded its peak memory")
    facets = [c for c in varying(df, op_axes(results, "attention")) if c not in ("seqlen_q", "seqlen_k")]
    unit, f = bytes_unit(float(df["peak_memory_bytes"].max()))
    return _line_panels(df, "seqlen_q", "peak_memory_bytes", facets, [],
                        "Attention peak memory per implementation (largest over ranks)",
                        "query sequence length (seqlen_q)", f"peak memory ({unit})",
                        logx=df["seqlen_q"].nunique() > 2, ytransform=lambda v: v * f)


def gemm_tflops(results: Sequence[Result]) -> Figure:
    df = _points_with(results, "gemm", "tflops", "tflops", "GEMM", "no GEMM point has a TFLOP/s value").copy()
    axes = op_axes(results, "gemm")
    shape_extra = [c for c in varying(df, axes) if c not in ("m", "n", "k", "dtype")]

    def shape(row):
        s = f"{row['m']}x{row['n']}x{row['k']}"
        extra = [f"{c}={row[c]}" for c in shape_extra]
        return s + ("\n" + " ".join(extra) if extra else "")

    df["_shape"] = df.apply(shape, axis=1)
    unit, f = flops_unit(df["tflops"].max())
    df["_series"] = series_key(df)
    dtypes = list(dict.fromkeys(df["dtype"])) if "dtype" in df else [""]
    series = list(dict.fromkeys(df["_series"]))
    shapes_all = list(dict.fromkeys(df.sort_values(["m", "n", "k"])["_shape"]))
    per_panel = max(1, len(shapes_all)) * len(series)
    width = min(16.0, max(5.2, 0.22 * per_panel + 1.5))
    ncols = 1 if width > 8 else min(3, len(dtypes))
    fig, axs = _figure(len(dtypes), panel_w=width, panel_h=3.9, ncols_max=ncols, legend_rows=len(series))
    handles: Dict[str, object] = {}
    note = ""
    colors = {s: f"C{i % 10}" for i, s in enumerate(series)}
    for ax, dt in zip(axs, dtypes):
        g = df[df["dtype"] == dt] if dt != "" else df
        series = [s for s in colors if s in set(g["_series"])]
        bar_w = min(0.8 / len(series), 0.5)
        shapes = [s for s in shapes_all if s in set(g["_shape"])]
        if len(shapes) * len(series) > MAX_BARS:
            keep = max(1, MAX_BARS // len(series))
            note = f"only the first {keep} shapes per precision are drawn"
            shapes = shapes[:keep]
        xs = np.arange(len(shapes))
        for i, s in enumerate(series):
            gs = g[g["_series"] == s].groupby("_shape")["tflops"].max() * f
            ys = [gs.get(sh, np.nan) for sh in shapes]
            h = ax.bar(xs + (i - (len(series) - 1) / 2) * bar_w, ys, bar_w, color=colors[s])
            handles.setdefault(s, h)
        ax.set_xticks(xs)
        ax.set_xlim(-0.5, len(shapes) - 0.5)
        rotate = len(shapes) > 4
        ax.set_xticklabels(shapes, rotation=30 if rotate else 0, ha="right" if rotate else "center", fontsize=8)
        ax.set_title(f"dtype={dt}", fontsize=10)
        # Integer GEMMs count operations, not floating-point ones.
        ax.set_ylabel(unit.replace("FLOP", "OP") if str(dt).startswith("int") else unit)
        ax.set_xlabel("shape m x n x k")
        ax.grid(True, axis="y", alpha=0.3)
    return _finish(fig, "GEMM throughput per precision and shape", df, handles, note)


def collective_busbw(results: Sequence[Result]) -> Figure:
    df = _points_with(results, "collective", "bytes", "busbw_GBps", "collective",
                      "no collective point has a bus bandwidth")
    extra = [c for c in varying(df, op_axes(results, "collective")) if c not in ("collective", "bytes")]
    return _line_panels(df, "bytes", "busbw_GBps", ["collective"] if "collective" in df else [], extra,
                        "Collective bus bandwidth against message size", "message size", "bus bandwidth (GB/s)",
                        logx=True, bytes_x=True, logy=False)


def eager_vs_graph(results: Sequence[Result]) -> Figure:
    """Speed-up of graph over eager mode (eager median time / graph median time) per point."""
    rows = []
    for op in ("attention", "gemm", "collective"):
        df = ok_points(results, op)
        if df.empty or "mode" not in df:
            continue
        keys = ["source", "benchmark", "impl"] + [a for a in op_axes(results, op) if a != "mode" and a in df]
        e = df[df["mode"] == "eager"]
        g = df[df["mode"] == "graph"]
        if e.empty or g.empty:
            continue
        m = e.merge(g, on=keys, suffixes=("_eager", "_graph"))
        if m.empty:
            continue
        shown = varying(m, [k for k in keys if k not in ("source", "benchmark", "impl")])
        m["_point"] = m.apply(lambda r: ", ".join(f"{c}={_fmt(c, r[c])}" for c in shown) or r["benchmark"], axis=1)
        m["speedup"] = m["time_median_s_eager"] / m["time_median_s_graph"]
        m["op"] = op
        rows.append(m[["op", "source", "benchmark", "impl", "_point", "speedup"]])
    if not rows:
        raise NoData("no point ran ok in both eager and graph mode (graph mode needs the CUDA backend)")
    df = pd.concat(rows, ignore_index=True)
    df["_series"] = series_key(df)
    panels = list(dict.fromkeys(df["benchmark"]))[:MAX_PANELS]
    fig, axs = _figure(len(panels), panel_w=6.5, panel_h=4.2, ncols_max=2, legend_rows=df["_series"].nunique())
    handles: Dict[str, object] = {}
    colors = {s: f"C{i % 10}" for i, s in enumerate(dict.fromkeys(df["_series"]))}
    for ax, b in zip(axs, panels):
        g = df[df["benchmark"] == b]
        series = [s for s in colors if s in set(g["_series"])]
        bar_w = min(0.8 / len(series), 0.5)
        pts = list(dict.fromkeys(g["_point"]))[: max(1, MAX_BARS // len(series))]
        xs = np.arange(len(pts))
        ax.set_xlim(-0.5, len(pts) - 0.5)
        for i, s in enumerate(series):
            gs = g[g["_series"] == s].groupby("_point")["speedup"].max()
            h = ax.bar(xs + (i - (len(series) - 1) / 2) * bar_w, [gs.get(p, np.nan) for p in pts], bar_w,
                       color=colors[s])
            handles.setdefault(s, h)
        ax.axhline(1.0, color="0.3", linewidth=1, linestyle="--")
        ax.set_xticks(xs)
        ax.set_xticklabels(pts, rotation=30 if len(pts) > 3 else 0, ha="right" if len(pts) > 3 else "center",
                           fontsize=8)
        ax.set_ylabel("graph speed-up (eager time / graph time)")
        ax.set_title(b, fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
    return _finish(fig, "Eager against CUDA-graph execution (> 1: graph is faster)", df, handles)


def rank_table(results: Sequence[Result], threshold: float = 0.05) -> pd.DataFrame:
    """Per file and rank: how its median time compares with the other ranks' over ok points.

    rel_median of a (point, rank) is the rank's median time / the median over all ranks of that
    point. A rank is flagged as a straggler when its typical (median) rel_median is above
    1 + threshold.
    """
    rows = []
    for r in results:
        rk = r.ranks
        if rk.empty or "rel_median" not in rk:
            continue
        rk = rk[(rk["status"] == OK) & rk["rel_median"].notna()]
        nranks = rk["rank"].nunique()
        for rank, g in rk.groupby("rank"):
            rel = g["rel_median"].astype(float)
            rows.append({
                "file": r.name,
                "device": r.device,
                "rank": int(rank),
                "host": g["host"].iloc[0] if "host" in g else "",
                "points": int(len(g)),
                "median_rel": float(rel.median()),
                "max_rel": float(rel.max()),
                "frac_slow_points": float((rel > 1 + threshold).mean()),
                "straggler": bool(nranks > 1 and rel.median() > 1 + threshold),
            })
    return pd.DataFrame(rows, columns=["file", "device", "rank", "host", "points", "median_rel", "max_rel",
                                       "frac_slow_points", "straggler"])


def rank_variability(results: Sequence[Result], threshold: float = 0.05) -> Figure:
    use = []
    for r in results:
        rk = r.ranks
        if rk.empty or "rel_median" not in rk:
            continue
        rk = rk[(rk["status"] == OK) & rk["rel_median"].notna()]
        if rk["rank"].nunique() > 1:
            use.append((r, rk))
    if not use:
        raise NoData("no file has ok points measured on more than one rank")
    table = rank_table([r for r, _ in use], threshold)
    fig, axs = _figure(len(use), panel_w=max(5.5, min(16, 0.35 * max(rk["rank"].nunique() for _, rk in use) + 2)),
                       panel_h=3.9, ncols_max=1 if len(use) > 1 else 1)
    for ax, (r, rk) in zip(axs, use):
        ranks = sorted(rk["rank"].unique())
        data = [rk[rk["rank"] == k]["rel_median"].astype(float).to_numpy() for k in ranks]
        bp = ax.boxplot(data, positions=np.arange(len(ranks)), widths=0.6, showfliers=False, patch_artist=True,
                        medianprops={"color": "black"})
        flagged = set(table[(table["file"] == r.name) & table["straggler"]]["rank"])
        for patch, k in zip(bp["boxes"], ranks):
            patch.set_facecolor("tab:red" if k in flagged else "tab:blue")
            patch.set_alpha(0.6)
        # The points themselves, spread a little sideways, on top of the boxes.
        rng = np.random.default_rng(0)
        for x, (k, d) in enumerate(zip(ranks, data)):
            ax.scatter(x + rng.uniform(-0.15, 0.15, len(d)), d, s=9, zorder=3, linewidths=0,
                       color="darkred" if k in flagged else "navy", alpha=0.7)
        lo = min(float(np.nanmin(np.concatenate(data))), 1 - 2 * threshold)
        hi = max(float(np.nanmax(np.concatenate(data))), 1 + 2 * threshold)
        pad = 0.08 * (hi - lo)
        ax.set_ylim(lo - pad, hi + pad)
        ax.axhline(1.0, color="0.3", linewidth=1)
        ax.axhline(1 + threshold, color="tab:red", linewidth=1, linestyle="--",
                   label=f"{100 * threshold:g}% slower than the cross-rank median")
        ax.set_xticks(np.arange(len(ranks)))
        ax.set_xlim(-0.6, len(ranks) - 0.4)
        ax.set_xticklabels([str(k) for k in ranks], fontsize=8 if len(ranks) > 16 else 10)
        ax.set_xlabel("rank")
        ax.set_ylabel("rank median / cross-rank median")
        title = f"{r.label}  ({len(data[0])} ok points per rank)"
        if flagged:
            title += "\nstragglers: rank " + ", ".join(str(k) for k in sorted(flagged))
        ax.set_title(title, fontsize=10, color="tab:red" if flagged else "black")
        ax.legend(loc="upper right", fontsize=8)
        ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle("Per-rank variability: a box shows one rank's median time at each ok point divided by\n"
                 "the median over ranks of that point (red box: straggler)", fontsize=11)
    return fig


# --- compute-communication overlap ---------------------------------------------------------

OVERLAP_DEFAULTS = {"nccl_ctas": 0, "chunks": 1, "priority": "equal"}
OVERLAP_COLUMNS = ["t_compute_s", "t_comm_s", "t_both_s", "overlap_efficiency", "compute_slowdown", "comm_slowdown"]


def _overlap_points(results: Sequence[Result]) -> pd.DataFrame:
    df = ok_points(results, "overlap")
    if df.empty or "overlap_efficiency" not in df:
        raise NoData("no overlap point ran ok")
    df = df[np.isfinite(df["overlap_efficiency"].astype(float))].copy()
    if df.empty:
        raise NoData("no overlap point has an efficiency")
    df["_shape"] = df["m"].astype(str) + "x" + df["n"].astype(str) + "x" + df["k"].astype(str)
    df["_gemm_flops"] = 2.0 * df["m"].astype(float) * df["n"].astype(float) * df["k"].astype(float)
    return df


def _at_defaults(df: pd.DataFrame, keep: Sequence[str] = ()) -> pd.DataFrame:
    """Rows at NCCL's default CTAs, one chunk and equal priorities (the axes not in keep), when
    there are any; else all rows."""
    mask = pd.Series(True, index=df.index)
    for c, v in OVERLAP_DEFAULTS.items():
        if c in df and c not in keep:
            mask &= df[c].astype(str) == str(v)
    return df[mask] if mask.any() else df


def overlap_table(results: Sequence[Result]) -> pd.DataFrame:
    """One row per ok overlap point: its parameters, the alone and overlapped medians, the
    efficiency and both slowdowns."""
    df = _overlap_points(results)
    cols = ["file", "benchmark", "impl"] + [a for a in op_axes(results, "overlap") if a in df and a != "compute"]
    out = df[cols + OVERLAP_COLUMNS].copy()
    for c in ("t_compute_s", "t_comm_s", "t_both_s"):
        out[c.replace("_s", "_ms")] = out.pop(c) * 1e3
    return out.reset_index(drop=True)


def overlap_efficiency(results: Sequence[Result]) -> Figure:
    """Overlap efficiency, (t_compute + t_comm - t_both) / min(t_compute, t_comm), against the
    collective's size, the GEMM's size, and the CTAs NCCL may use."""
    df = _overlap_points(results)
    df["_series"] = series_key(df)
    panels = [
        ("bytes", "collective size", _at_defaults(df), ["collective", "_shape"], True),
        ("_gemm_flops", "GEMM size (FLOP)", _at_defaults(df), ["collective", "bytes"], False),
        ("nccl_ctas", "NCCL CTAs (0: NCCL's default)", _at_defaults(df, keep=["nccl_ctas", "chunks", "priority"]),
         ["collective", "bytes", "_shape", "chunks", "priority"], False),
    ]
    fig, axs = _figure(len(panels), panel_w=5.6, panel_h=4.2, ncols_max=3, legend_rows=8)
    handles: Dict[str, object] = {}
    markers = "osD^v<>ph*"
    for ax, (x, xlabel, g, split, bytes_x) in zip(axs, panels):
        split = [c for c in split if c in g and g[c].astype(str).nunique() > 1]
        g = g.copy()
        g["_line"] = g["_series"]
        for c in split:
            name = "shape" if c == "_shape" else c
            g["_line"] = g["_line"] + " \u00b7 " + name + "=" + g[c].map(lambda v, c=c: _fmt(c, v))
        xs_all = sorted(set(g[x].astype(float)))
        categorical = x == "nccl_ctas"
        pos = {v: i for i, v in enumerate(xs_all)}
        drawn = 0
        for i, (line, gl) in enumerate(g.groupby("_line", sort=True)):
            gl = gl.groupby(x, as_index=False)["overlap_efficiency"].median().sort_values(x)
            if len(gl) < 2:
                continue
            xv = [pos[v] for v in gl[x].astype(float)] if categorical else gl[x].astype(float)
            (h,) = ax.plot(xv, gl["overlap_efficiency"].astype(float), marker=markers[i % len(markers)],
                           color=f"C{i % 10}", linewidth=1.5, markersize=5)
            handles.setdefault(line, h)
            drawn += 1
        if not drawn:
            ax.text(0.5, 0.5, f"no sweep over {xlabel}", ha="center", va="center", transform=ax.transAxes,
                    color="0.4")
        if categorical:
            ax.set_xticks(range(len(xs_all)))
            ax.set_xticklabels(["default" if v == 0 else f"{v:g}" for v in xs_all])
        elif len(xs_all) > 1:
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_locator(FixedLocator(xs_all))
            ax.xaxis.set_minor_locator(FixedLocator([]))
            ax.xaxis.set_major_formatter(_bytes_formatter() if bytes_x else FuncFormatter(lambda v, _: f"{v:.3g}"))
            for t in ax.get_xticklabels():
                t.set_rotation(30)
                t.set_horizontalalignment("right")
        ax.axhline(1.0, color="0.3", linewidth=1, linestyle="--")
        ax.axhline(0.0, color="0.3", linewidth=1)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("overlap efficiency")
        ax.grid(True, which="major", alpha=0.3)
    return _finish(fig, "Compute-communication overlap: (t_compute + t_comm - t_both) / min(t_compute, t_comm); "
                   "1 = the shorter one fully hidden", df, handles)


# name, title, function: the report draws them in this order.
PLOTS = [
    ("attention_tflops", "Attention TFLOP/s against sequence length", attention_tflops),
    ("gemm_tflops", "GEMM TFLOP/s per precision and shape", gemm_tflops),
    ("collective_busbw", "Collective bus bandwidth against message size", collective_busbw),
    ("rank_variability", "Per-rank variability (stragglers)", rank_variability),
    ("eager_vs_graph", "Eager against graph mode", eager_vs_graph),
    ("attention_memory", "Attention memory footprint", attention_memory),
    ("overlap", "Compute-communication overlap", overlap_efficiency),
]
