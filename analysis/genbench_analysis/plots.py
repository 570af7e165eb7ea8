"""The report's plots. Each function takes a list of Results and returns a matplotlib Figure,
or raises NoData with the reason there is nothing to draw. plots_for(results) lists the plots
for a set of files: one headline plot and one memory plot per op and the extra plots each op
asks for (all from the ops' descriptions), and the plots every file gets (per-rank
variability, eager against graph mode).

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

from .describe import metric_label
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


def series_key(df: pd.DataFrame, extra: Sequence[str] = (), byte_cols=frozenset()) -> pd.Series:
    """Legend text per row: implementation (and benchmark, if an op has several), plus the
    device and file when more than one result is plotted, plus the extra varying columns."""
    parts = []
    if df["benchmark"].nunique() > 1:
        parts.append(df["benchmark"].astype(str))
    parts.append(df["impl"].astype(str))
    for c in extra:
        parts.append(c + "=" + df[c].map(lambda v, c=c: _fmt(c, v, byte_cols)))
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


def facet_label(row: pd.Series, cols: Sequence[str], byte_cols=frozenset()) -> str:
    return ", ".join(f"{c}={_fmt(c, row[c], byte_cols)}" for c in cols) if cols else ""


def byte_columns(results: Sequence[Result]) -> frozenset:
    """The columns whose unit is B in the files' descriptions: shown as sizes (1 KiB, 16 MiB)."""
    return frozenset(c for r in results for b in r.benchmarks.values() for c, u in b.units.items() if u == "B")


def _fmt(col: str, v, byte_cols=frozenset()) -> str:
    if col in byte_cols and isinstance(v, (int, np.integer, float)) and not pd.isna(v):
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


def _facets(df: pd.DataFrame, cols: Sequence[str], byte_cols=frozenset()) -> Tuple[List[Tuple[str, pd.DataFrame]], str]:
    """Splits df by cols; at most MAX_PANELS panels (a note says how many were left out)."""
    if not cols:
        return [("", df)], ""
    groups = []
    for _, g in df.groupby(list(cols) if len(cols) > 1 else cols[0], sort=True, dropna=False):
        groups.append((facet_label(g.iloc[0], cols, byte_cols), g))
    note = ""
    if len(groups) > MAX_PANELS:
        note = f"{len(groups) - MAX_PANELS} of {len(groups)} panels left out ({', '.join(cols)})"
        groups = groups[:MAX_PANELS]
    return groups, note


def _line_panels(df: pd.DataFrame, x: str, y: str, facet_cols: Sequence[str], series_extra: Sequence[str],
                 title: str, xlabel: str, ylabel: str, logx: bool = False, bytes_x: bool = False,
                 logy: Optional[bool] = None, ytransform=None, decorate=None, byte_cols=frozenset()) -> Figure:
    df = df.copy()
    df["_series"] = series_key(df, series_extra, byte_cols)
    panels, note = _facets(df, facet_cols, byte_cols)
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
        if decorate is not None:  # before the y limits are set, so that autoscaling takes it in
            decorate(ax, g, handles)
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


def _finish(fig: Figure, title: str, df: pd.DataFrame, handles: Dict[str, object], note: str = "") -> Figure:
    """Title with the sources, the legend below the panels, an optional note top left."""
    fig.suptitle(title + "\n" + sources_title(df), fontsize=11)
    _legend_below(fig, handles)
    if note:
        fig.text(0.01, 1.0, note, fontsize=8, color="0.4", va="bottom")
    return fig


# --- the plots ------------------------------------------------------------------------------
#
# Each op's plot is made from the description its benchmarks carry (loader.Benchmark.description:
# stored in schema 2 files, derived for schema 1): the headline metric with its unit on the y
# axis, against plot.x (bars per point when x is ""), one panel per combination of plot.facets,
# one line per implementation and per other varying axis, the /ceilings value plot.ceiling_line
# names as a horizontal line. No op is named here: an op the package has never heard of gets its
# plot from its file.

def op_descriptions(results: Sequence[Result]) -> Dict[str, object]:
    """op -> the OpDescription of its first benchmark, over results, in order of appearance."""
    out: Dict[str, object] = {}
    for r in results:
        for b in r.benchmarks.values():
            if b.op not in out and b.description is not None:
                out[b.op] = b.description
    return out


def op_units(results: Sequence[Result], op: str) -> Dict[str, str]:
    units: Dict[str, str] = {}
    for r in results:
        for b in r.benchmarks.values():
            if b.op == op:
                for k, v in b.units.items():
                    units.setdefault(k, v)
    return units


def short_metric(name: str, unit: str) -> str:
    """A metric's name without a trailing unit part, for file names: busbw_GBps -> busbw;
    tflops and GBps stay (they are the unit spelled as a word)."""
    label = metric_label(name, unit)
    if unit and label.endswith(" " + unit) and label != unit:
        return label[: -len(unit) - 1].replace(" ", "_")
    return name


_SI = [("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3), ("", 1.0)]


def rescale_unit(unit: str, max_value: float) -> Tuple[str, float]:
    """A smaller SI prefix for a rate whose values are all small (CPU runs): (unit, factor);
    0.009 TFLOP/s -> ('GFLOP/s', 1e3). Units without a prefix stay."""
    if not unit or not np.isfinite(max_value) or max_value <= 0 or max_value >= 0.1:
        return unit, 1.0
    prefix = next(((p, f) for p, f in _SI[:-1] if unit.startswith(p) and len(unit) > 1 and unit[1:2].isupper()),
                  None)
    if prefix is None:
        return unit, 1.0
    base, f0 = unit[1:], prefix[1]
    for p, f in _SI:
        if f < f0 and max_value * f0 / f >= 0.1:
            return p + base, f0 / f
    return base, f0


def _function_of(df: pd.DataFrame, col: str, x: str) -> bool:
    """col takes one value at each value of x (seqlen_k = seqlen_q): splitting lines by it
    would leave one point per line."""
    if not x or x not in df:
        return False
    return bool((df.groupby(x, dropna=False)[col].nunique(dropna=False) <= 1).all())


def _op_frame(results: Sequence[Result], op: str, y: str, what: str):
    """The op's ok points with a positive finite y, its description, axes and units."""
    descs = op_descriptions(results)
    if op not in descs:
        raise NoData(f"no benchmark of op {op!r} in these files")
    df = ok_points(results, op)
    if df.empty:
        raise NoData(f"no {op} point ran ok")
    if y not in df:
        raise NoData(f"the {op} points have no column {y!r}")
    v = pd.to_numeric(df[y], errors="coerce")
    df = df[np.isfinite(v) & (v > 0)]
    if df.empty:
        raise NoData(f"no {op} point has a {what}")
    return df, descs[op], op_axes(results, op), op_units(results, op)


def _layout(df: pd.DataFrame, desc, axes: Sequence[str]) -> Tuple[str, List[str], List[str]]:
    """x (or '' for bars), the facets that vary, and the other varying axes (series)."""
    x = desc.plot.x if desc.plot.x and desc.plot.x in df else ""
    facets = [c for c in varying(df, desc.plot.facets) if c != x]
    extra = [c for c in varying(df, axes) if c != x and c not in facets and not _function_of(df, c, x)]
    return x, facets, extra


def _ceiling_lines(results: Sequence[Result], name_template: str, unit: str, factor: float,
                   panel: pd.DataFrame):
    """(label, value) for each file of the panel that measured the ceiling plot.ceiling_line names
    ('{column}' filled with the panel's value of that column; skipped where it varies)."""
    if not name_template:
        return []
    values = {}
    for c in panel.columns:
        u = panel[c].astype(str).unique()
        if len(u) == 1:
            values[c] = u[0]
    try:
        name = name_template.format_map(values)
    except (KeyError, IndexError, ValueError):
        return []
    out = []
    sources = list(dict.fromkeys(panel["source"]))
    for i in sorted(set(panel["result_index"])):
        r = results[int(i)]
        got = r.ceiling(name)
        if got is None or (got[1] and unit and got[1] != unit):
            continue
        label = f"ceiling {name}" + (f" \u00b7 {r.label}" if len(sources) > 1 else "")
        out.append((label, got[0] * factor))
    return out


def _draw_ceilings(ax, lines, handles):
    for label, value in lines:
        h = ax.axhline(value, color="0.35", linestyle=":", linewidth=1.3)
        handles.setdefault(label, h)


def op_plot(results: Sequence[Result], op: str) -> Figure:
    """The op's headline metric as its description's plot hints say."""
    descs = op_descriptions(results)
    desc = descs.get(op)
    if desc is None:
        raise NoData(f"no benchmark of op {op!r} in these files")
    metric = desc.headline_metric
    if metric is None:
        raise NoData(f"op {op!r} declares no metric")
    df, desc, axes, units = _op_frame(results, op, metric.name, f"{metric.label} value")
    unit, f = rescale_unit(metric.unit, float(pd.to_numeric(df[metric.name]).max()))
    ylabel = metric_label(metric.name, metric.unit).replace(metric.unit, unit) if metric.unit else metric.name
    x, facets, extra = _layout(df, desc, axes)
    title = desc.plot.title or f"{op}: {metric_label(metric.name, metric.unit)}" + (f" against {x}" if x else "")

    def ceilings(ax, panel, handles):
        _draw_ceilings(ax, _ceiling_lines(results, desc.plot.ceiling_line, metric.unit, f, panel), handles)

    if x:
        return _line_panels(df, x, metric.name, facets, extra, title, _x_label(x, units), ylabel,
                            logx=desc.plot.log_x and df[x].nunique() > 2, bytes_x=units.get(x) == "B",
                            ytransform=lambda v: v * f, decorate=ceilings, byte_cols=byte_columns(results))
    return _bar_panels(df, metric.name, facets, extra, title, ylabel, f, decorate=ceilings,
                       byte_cols=byte_columns(results))


def memory_plot(results: Sequence[Result], op: str) -> Figure:
    """Peak memory (largest over ranks) of the op's points, laid out like its headline plot."""
    df, desc, axes, units = _op_frame(results, op, "peak_memory_bytes", "recorded peak memory")
    unit, f = bytes_unit(float(df["peak_memory_bytes"].max()))
    x, facets, extra = _layout(df, desc, axes)
    title = f"{op}: peak memory per implementation (largest over ranks)"
    if x:
        return _line_panels(df, x, "peak_memory_bytes", facets, extra, title, _x_label(x, units),
                            f"peak memory ({unit})", logx=desc.plot.log_x and df[x].nunique() > 2,
                            bytes_x=units.get(x) == "B", ytransform=lambda v: v * f, byte_cols=byte_columns(results))
    return _bar_panels(df, "peak_memory_bytes", facets, extra, title, f"peak memory ({unit})", f,
                       byte_cols=byte_columns(results))


def _x_label(x: str, units: Dict[str, str]) -> str:
    u = units.get(x, "")
    return x if not u or u == "B" else f"{x} ({u})"


def _bar_panels(df: pd.DataFrame, y: str, facets: Sequence[str], extra: Sequence[str], title: str, ylabel: str,
                factor: float, decorate=None, byte_cols=frozenset()) -> Figure:
    """Bars per point (labelled by the varying axes that are not facets), one panel per facet
    combination, one colour per implementation (and file)."""
    df = df.copy()
    sort_cols = [c for c in extra if c in df]
    df["_label"] = df.apply(lambda row: ", ".join(f"{c}={_fmt(c, row[c], byte_cols)}" for c in extra)
                            or row["benchmark"], axis=1) if len(df) else []
    df["_series"] = series_key(df)
    series_all = list(dict.fromkeys(df["_series"]))
    labels_all = list(dict.fromkeys(df.sort_values(sort_cols)["_label"] if sort_cols else df["_label"]))
    panels, note = _facets(df, facets, byte_cols)
    per_panel = max(1, len(labels_all)) * len(series_all)
    width = min(16.0, max(5.2, 0.22 * per_panel + 1.5))
    ncols = 1 if width > 8 else min(3, len(panels))
    fig, axs = _figure(len(panels), panel_w=width, panel_h=3.9, ncols_max=ncols, legend_rows=len(series_all))
    handles: Dict[str, object] = {}
    colors = {s: f"C{i % 10}" for i, s in enumerate(series_all)}
    for ax, (label, g) in zip(axs, panels):
        series = [s for s in colors if s in set(g["_series"])]
        bar_w = min(0.8 / len(series), 0.5)
        shown = [s for s in labels_all if s in set(g["_label"])]
        if len(shown) * len(series) > MAX_BARS:
            keep = max(1, MAX_BARS // len(series))
            note = f"only the first {keep} points per panel are drawn"
            shown = shown[:keep]
        xs = np.arange(len(shown))
        for i, s in enumerate(series):
            gs = g[g["_series"] == s].groupby("_label")[y].max() * factor
            h = ax.bar(xs + (i - (len(series) - 1) / 2) * bar_w, [gs.get(p, np.nan) for p in shown], bar_w,
                       color=colors[s])
            handles.setdefault(s, h)
        ax.set_xticks(xs)
        ax.set_xlim(-0.5, len(shown) - 0.5)
        rotate = len(shown) > 4
        ax.set_xticklabels(shown, rotation=30 if rotate else 0, ha="right" if rotate else "center", fontsize=8)
        if label:
            ax.set_title(label, fontsize=10)
        ax.set_ylabel(ylabel)
        ax.grid(True, axis="y", alpha=0.3)
        if decorate is not None:
            decorate(ax, g, handles)
    return _finish(fig, title, df, handles, note)


def eager_vs_graph(results: Sequence[Result]) -> Figure:
    """Speed-up of graph over eager mode (eager median time / graph median time) per point."""
    rows = []
    for op in op_descriptions(results):  # every op with a mode axis
        if "mode" not in op_axes(results, op):
            continue
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
        bc = byte_columns(results)
        m["_point"] = m.apply(lambda r: ", ".join(f"{c}={_fmt(c, r[c], bc)}" for c in shown) or r["benchmark"],
                              axis=1)
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


# --- the plots an op asks for beyond its headline ----------------------------------------
#
# Each ExtraPlot of an op's description (extra_plots: declared in src/ops/<op>/, or for older
# files given by oldfiles.py) is drawn as <op>_<name>: its column y against each panel's x, and
# its table goes in the report after the plot.

def extra_plot_spec(results: Sequence[Result], op: str, name: str):
    desc = op_descriptions(results).get(op)
    if desc is None:
        raise NoData(f"no benchmark of op {op!r} in these files")
    spec = next((e for e in desc.extra_plots or [] if e.name == name), None)
    if spec is None:
        raise NoData(f"op {op!r} asks for no plot {name!r}")
    return spec


def _extra_points(results: Sequence[Result], op: str, spec) -> pd.DataFrame:
    """The op's ok points with a finite y."""
    df = ok_points(results, op)
    if df.empty:
        raise NoData(f"no {op} point ran ok")
    if spec.y not in df:
        raise NoData(f"the {op} points have no column {spec.y!r}")
    df = df[np.isfinite(pd.to_numeric(df[spec.y], errors="coerce").astype(float))].copy()
    if df.empty:
        raise NoData(f"no {op} point has a value of {spec.y}")
    return df


def _equals(col: pd.Series, value) -> pd.Series:
    if isinstance(value, str):
        return col.astype(str) == value
    return pd.to_numeric(col, errors="coerce") == float(value)


def _held(df: pd.DataFrame, hold: Dict[str, object], free: Sequence[str]) -> pd.DataFrame:
    """The rows at the held values of the axes a panel does not free, when there are any; else
    all rows."""
    mask = pd.Series(True, index=df.index)
    for c, v in hold.items():
        if c in df and c not in free:
            mask &= _equals(df[c], v)
    return df[mask] if mask.any() else df


def _tick(value: float, labels: Dict[str, str]) -> str:
    text = f"{value:g}"
    return labels.get(text, text)


def extra_plot(results: Sequence[Result], op: str, name: str) -> Figure:
    """The op's extra plot `name` as its description declares it (describe.ExtraPlot)."""
    spec = extra_plot_spec(results, op, name)
    df = _extra_points(results, op, spec)
    units = op_units(results, op)
    bc = byte_columns(results)
    df["_series"] = series_key(df)
    ylabel = spec.y_label or metric_label(spec.y, units.get(spec.y, ""))
    fig, axs = _figure(len(spec.panels), panel_w=5.6, panel_h=4.2, ncols_max=3, legend_rows=8)
    handles: Dict[str, object] = {}
    markers = "osD^v<>ph*"
    for ax, q in zip(axs, spec.panels):
        xlabel = q.label or _x_label(q.x, units)
        if q.x not in df:
            ax.text(0.5, 0.5, f"no column {q.x}", ha="center", va="center", transform=ax.transAxes, color="0.4")
            ax.set_xlabel(xlabel)
            continue
        g = _held(df, spec.hold, q.free).copy()
        split = [c for c in q.lines if c in g and g[c].astype(str).nunique() > 1]
        g["_line"] = g["_series"]
        for c in split:
            g["_line"] = g["_line"] + " \u00b7 " + c + "=" + g[c].map(lambda v, c=c: _fmt(c, v, bc))
        g["_x"] = pd.to_numeric(g[q.x], errors="coerce").astype(float)
        xs_all = sorted(set(g["_x"].dropna()))
        pos = {v: i for i, v in enumerate(xs_all)}
        drawn = 0
        for i, (line, gl) in enumerate(g.groupby("_line", sort=True)):
            gl = gl.assign(_y=gl[spec.y].astype(float)).groupby("_x", as_index=False)["_y"].median().sort_values("_x")
            if len(gl) < 2:
                continue
            xv = [pos[v] for v in gl["_x"]] if q.categorical else gl["_x"]
            (h,) = ax.plot(xv, gl["_y"], marker=markers[i % len(markers)], color=f"C{i % 10}", linewidth=1.5,
                           markersize=5)
            handles.setdefault(line, h)
            drawn += 1
        if not drawn:
            ax.text(0.5, 0.5, f"no sweep over {xlabel}", ha="center", va="center", transform=ax.transAxes,
                    color="0.4")
        if q.categorical:
            ax.set_xticks(range(len(xs_all)))
            ax.set_xticklabels([_tick(v, q.tick_labels) for v in xs_all])
        elif len(xs_all) > 1:
            if q.log_x and xs_all[0] > 0:
                ax.set_xscale("log", base=2)
            ax.xaxis.set_major_locator(FixedLocator(xs_all))
            ax.xaxis.set_minor_locator(FixedLocator([]))
            ax.xaxis.set_major_formatter(_bytes_formatter() if units.get(q.x) == "B" else
                                         FuncFormatter(lambda v, _: f"{v:.3g}"))
            for t in ax.get_xticklabels():
                t.set_rotation(30)
                t.set_horizontalalignment("right")
        for r in spec.reference_lines:  # 0 as the axis, the others dashed
            ax.axhline(r, color="0.3", linewidth=1, linestyle="-" if r == 0 else "--")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, which="major", alpha=0.3)
    title = spec.title or f"{op}: {ylabel}"
    return _finish(fig, title + (f"\n{spec.subtitle}" if spec.subtitle else ""), df, handles)


def extra_table(results: Sequence[Result], op: str, name: str) -> pd.DataFrame:
    """One row per ok point of the op with a finite y of its extra plot `name`: file,
    benchmark, implementation and the plot's table columns, those in seconds shown in ms
    (t_both_s becomes t_both_ms)."""
    spec = extra_plot_spec(results, op, name)
    df = _extra_points(results, op, spec)
    units = op_units(results, op)
    cols = [c for c in spec.table if c in df]
    out = df[["file", "benchmark", "impl"] + cols].copy()
    for c in cols:
        if units.get(c) == "s":
            out[c] = out[c].astype(float) * 1e3
            out = out.rename(columns={c: c[:-2] + "_ms" if c.endswith("_s") else c + " (ms)"})
    return out.reset_index(drop=True)


def _bind_extra(fn, op, name):
    def plot(results, *args):
        return fn(results, op, name, *args)
    plot.__name__ = f"{fn.__name__}[{op}.{name}]"
    return plot


def hinted_plots(results: Sequence[Result]):
    """(name, title, function) of every extra plot the ops of these files ask for, per op in
    order of appearance: '<op>_<name>'."""
    out = []
    for op, desc in op_descriptions(results).items():
        for e in desc.extra_plots or []:
            out.append((f"{op}_{e.name}", e.title or f"{op}: {e.y}", _bind_extra(extra_plot, op, e.name)))
    return out


def report_tables(results: Sequence[Result]) -> Dict[str, Tuple[str, object]]:
    """plot name -> (the paragraph above its table, function(results) -> DataFrame) for the extra
    plots that declare a table (the report puts it after the plot)."""
    out = {}
    for op, desc in op_descriptions(results).items():
        for e in desc.extra_plots or []:
            if e.table:
                out[f"{op}_{e.name}"] = (e.table_note, _bind_extra(extra_table, op, e.name))
    return out


# The plots every set of files gets (name, title, function), besides the ops' own (op_plots,
# hinted_plots).
PLOTS = [
    ("rank_variability", "Per-rank variability (stragglers)", rank_variability),
    ("eager_vs_graph", "Eager against graph mode", eager_vs_graph),
]


def _bind(fn, op):
    def plot(results, *args):
        return fn(results, op, *args)
    plot.__name__ = f"{fn.__name__}[{op}]"
    return plot


def op_plots(results: Sequence[Result]):
    """Two lists of (name, title, function): per op of the files, in order of appearance, its
    headline plot, named '<op>_<headline metric without its unit part>' (attention_tflops,
    collective_busbw, decode_GBps) and titled by its plot hints; and its memory plot
    ('<op>_memory')."""
    heads, mems = [], []
    for op, desc in op_descriptions(results).items():
        m = desc.headline_metric
        if m is not None:
            title = desc.plot.title or f"{op}: {m.label}" + (f" against {desc.plot.x}" if desc.plot.x else "")
            heads.append((f"{op}_{short_metric(m.name, m.unit)}", title, _bind(op_plot, op)))
        mems.append((f"{op}_memory", f"{op}: peak memory", _bind(memory_plot, op)))
    return heads, mems


def plots_for(results: Sequence[Result]) -> List[Tuple[str, str, object]]:
    """Every plot for these files, in the report's order: the ops' headline plots, per-rank
    variability, eager against graph, the ops' memory plots, the extra plots the ops ask for.
    Each entry is (name, title, function(results) -> Figure)."""
    heads, mems = op_plots(results)
    return heads + list(PLOTS) + mems + hinted_plots(results)
