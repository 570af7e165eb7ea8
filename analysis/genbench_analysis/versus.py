"""One implementation against another measured in the same runs, over repeated runs.

A race between two implementations is decided point by point inside each file: both ran in
the same job, on the same device, in the same state, so their ratio (impl / peer of the metric
the benchmark's description names for comparisons, peer / impl where lower is better; as in
compare.py) is the measurement; what one file measured is not divided by
another file's number. Given several files (rounds of the same config), each point gets the
median, the smallest and the largest of its per-file ratios, and the medians of both
throughputs. With a target ratio the verdict is "met" (every round at or above it), "not met"
(every round below) or "spread" (the rounds fall on both sides: the target lies within the
run-to-run spread). A point that never ran ok on both sides says why, naming the side that did
not ("not compared: cudnn unsupported, fa3 ok").

The two sides need not be implementations: `by` names another axis (kv_dtype, page_size, mode,
...) whose two values are compared point by point within each file, the implementation then
being one of the point's keys (fa3's fp8 K/V against its bf16 K/V in the same run). `metric`
overrides the column the benchmark's description rates by (tokens_per_s where the bytes differ
between the sides; a column named time_* is lower-is-better).

A round is one run of the sweep: a file of one round, or each round of a file that holds
several (Result.rounds()), so one file of three rounds gives the same median (min-max) as
three files of one round each.
"""

from __future__ import annotations

import warnings
from typing import List, Optional, Sequence

import numpy as np
import pandas as pd

from .compare import _fmt_value, _label, _varying, compare_points, markdown_table, rating, text_table
from .loader import OK, Result

MET, NOT_MET, SPREAD = "met", "not met", "spread"
# Columns of per_file's rows that rate a point (the rest are its benchmark, file and axes), and
# of versus's rows that summarise one.
_RATED = {"status_peer", "status_impl", "metric", "metric_label", "higher_is_better", "peer", "impl", "ratio",
          "noise_a", "noise_b", "noise", "verdict"}
_SUMMARY = {"benchmark", "metric", "metric_label", "rounds", "files", "impl", "peer", "ratio", "ratio_min",
            "ratio_max", "verdict"}


class VersusError(ValueError):
    """Nothing to compare: the implementations are the same or never ran side by side."""


def target_verdict(ratios: Sequence[float], target: Optional[float]) -> str:
    """met / not met / spread of the per-round ratios against target ('' without one)."""
    r = np.asarray([x for x in ratios if x is not None and np.isfinite(x)], dtype=float)
    if target is None:
        return ""
    if r.size == 0:
        return "-"
    if (r >= target).all():
        return MET
    if (r < target).all():
        return NOT_MET
    return SPREAD


# The implementation's column, renamed where it is one of the keys (by is another axis), so that
# it does not meet the rated "impl" value column.
IMPL_KEY = "implementation"


def side_labels(impl: str, peer: str, by: str = "impl") -> tuple:
    """How the two sides are named in the output: the implementations, or by=value."""
    if by != "impl":
        return f"{by}={impl}", f"{by}={peer}"
    return impl, peer


def not_compared(status_impl: str, status_peer: str, impl: str, peer: str) -> str:
    """Why a point has no ratio, each side named by its label: the side(s) that did not run ok
    first ("cudnn unsupported, fa3 ok"; "fa3 failed, cudnn unsupported"), or both at once where
    they share a status ("fa3 and cudnn unsupported"). "absent": the file has no such point for
    that side."""
    if status_impl == status_peer:
        return f"{impl} and {peer} {status_impl}"
    if status_impl == OK:
        return f"{peer} {status_peer}, {impl} {status_impl}"
    return f"{impl} {status_impl}, {peer} {status_peer}"


def _rating(bench, t: pd.DataFrame, name: str, metric: Optional[str]) -> tuple:
    """(metric, higher_is_better, unit): the description's, or the requested column's."""
    if metric is None:
        return rating(bench)
    if metric not in t:
        raise VersusError(f"benchmark {name!r} has no column {metric!r}")
    return metric, not metric.startswith("time_"), bench.units.get(metric, "")


def per_file(result: Result, impl: str, peer: str, benchmarks: Optional[List[str]] = None, by: str = "impl",
             metric: Optional[str] = None) -> pd.DataFrame:
    """impl against peer (two values of the column `by`) in one file: a row per point of every
    benchmark where both appear."""
    frames = []
    for name, b in result.benchmarks.items():
        if benchmarks and name not in benchmarks:
            continue
        t = result.table(name)
        if t.empty or by not in t:
            continue
        side = t[by].astype(str)
        mine, theirs = t[side == impl], t[side == peer]
        if mine.empty or theirs.empty:
            continue
        keys = [a for a in b.axes if a in t and a != by]
        if by != "impl":
            mine, theirs = (x.rename(columns={"impl": IMPL_KEY}) for x in (mine, theirs))
            keys = [IMPL_KEY] + keys
        # compare_points rates B against A: the peer is A, the implementation B.
        metric_col, hib, unit = _rating(b, t, name, metric)
        cmp = compare_points(theirs.drop(columns=by), mine.drop(columns=by), keys, benchmark=name,
                             metric=metric_col, higher_is_better=hib, unit=unit)
        cmp = cmp.rename(columns={"a": "peer", "b": "impl", "status_a": "status_peer", "status_b": "status_impl"})
        # compare_points says why a point has no ratio in its own terms (A, B: here the peer and the
        # implementation, the reverse of the order they are named in); name the sides instead.
        names = side_labels(impl, peer, by)
        bad = (cmp["status_impl"] != OK) | (cmp["status_peer"] != OK)
        cmp.loc[bad, "verdict"] = [not_compared(si, sp, *names)
                                   for si, sp in zip(cmp.loc[bad, "status_impl"], cmp.loc[bad, "status_peer"])]
        cmp.insert(0, "file", result.path)
        frames.append(cmp)
    return pd.concat(frames, ignore_index=True, sort=False) if frames else pd.DataFrame()


def versus(results: Sequence[Result], impl: str, peer: str, target: Optional[float] = None,
           benchmarks: Optional[List[str]] = None, by: str = "impl", metric: Optional[str] = None) -> pd.DataFrame:
    """Per benchmark and point: rounds (rounds where both ran ok: files, or each round of a file
    of several), medians of impl and peer, median / min / max of the per-round ratios impl / peer, and the target verdict. impl and peer
    are implementations, or with `by` two values of that axis (compared as text).

    Raises VersusError when impl == peer, when no file has a benchmark running both, or when a
    requested metric is not a column of a benchmark that has both.
    """
    if impl == peer:
        what = "implementation and its peer" if by == "impl" else f"two sides of {by!r}"
        raise VersusError(f"the {what} are both {impl!r}")
    if target is not None and not (np.isfinite(target) and target > 0):
        raise VersusError(f"target must be a positive ratio, not {target}")
    devices = sorted({r.device for r in results})
    if len(devices) > 1:
        warnings.warn("the files come from different devices (" + "; ".join(devices) + "): each ratio is "
                      "still taken within one file, but their spread mixes devices", stacklevel=2)
    # Each round of each file is one round of the race (a file of one round is itself).
    rounds = [view for r in results for view in r.rounds()]
    frames = [f for f in (per_file(r, impl, peer, benchmarks, by, metric) for r in rounds) if not f.empty]
    if not frames:
        seen = sorted({str(i) for r in results for i in r.points.get(by, pd.Series(dtype=object)).unique()})
        what = "implementations" if by == "impl" else f"values of {by}"
        raise VersusError(f"no benchmark ran both {impl!r} and {peer!r} in these files "
                          f"({what} seen: {', '.join(seen) or 'none'})")
    allf = pd.concat(frames, ignore_index=True, sort=False)
    rows = []
    for name in dict.fromkeys(allf["benchmark"]):
        g = allf[allf["benchmark"] == name]
        # This benchmark's axes (the concatenation holds every benchmark's, NaN in the others').
        keys = [c for c in g.columns if c not in _RATED and c not in ("file", "benchmark") and g[c].notna().any()]
        for key, p in g.groupby(keys, sort=False, dropna=False) if keys else [((), g)]:
            key = key if isinstance(key, tuple) else (key,)
            ok = p[np.isfinite(p["ratio"].astype(float))]
            ratios = ok["ratio"].astype(float).to_numpy()
            row = {"benchmark": name, **dict(zip(keys, key)), "metric": p["metric"].iloc[0],
                   "metric_label": _label(p),
                   "rounds": int(len(ratios)), "files": int(p["file"].nunique()),
                   "impl": float(np.median(ok["impl"])) if len(ok) else np.nan,
                   "peer": float(np.median(ok["peer"])) if len(ok) else np.nan,
                   "ratio": float(np.median(ratios)) if len(ratios) else np.nan,
                   "ratio_min": float(ratios.min()) if len(ratios) else np.nan,
                   "ratio_max": float(ratios.max()) if len(ratios) else np.nan}
            if not len(ratios):
                # One reason per distinct case over the files ("; " between them: a reason has commas).
                why = sorted(set(p["verdict"].astype(str)))
                row["verdict"] = "not compared: " + "; ".join(why)
            else:
                row["verdict"] = target_verdict(ratios, target)
            rows.append(row)
    return pd.DataFrame(rows)



def format_versus(v: pd.DataFrame, impl: str, peer: str, target: Optional[float] = None, fmt: str = "text",
                  axes: Optional[dict] = None, by: str = "impl") -> str:
    """The race as text tables, Markdown or CSV (one table per benchmark)."""
    if fmt == "csv":
        return v.to_csv(index=False)
    impl, peer = side_labels(impl, peer, by)
    lines = [f"{impl} against {peer}: ratio = {impl} / {peer} within each file, median (min-max) over the files"
             + (f"; target {target:g}" if target is not None else ""), ""]
    for name in dict.fromkeys(v["benchmark"]):
        g = v[v["benchmark"] == name]
        keys = [k for k in ((axes or {}).get(name) or [c for c in g.columns if c not in _SUMMARY]) if k in g]
        shown = _varying(g, keys) or keys[:1]
        if IMPL_KEY in g and IMPL_KEY not in shown:
            shown = [IMPL_KEY] + shown
        label = _label(g)
        t = pd.DataFrame({c: g[c].map(_fmt_value) for c in shown})
        # "2/3": a point that ran side by side in fewer files than the benchmark appears in.
        t["rounds"] = [str(r) if r == f else f"{r}/{f}" for r, f in zip(g["rounds"], g["files"])]
        t[f"{impl} {label}"] = g["impl"].map(_fmt_value)
        t[f"{peer} {label}"] = g["peer"].map(_fmt_value)
        t["ratio"] = g["ratio"].map(lambda r: "-" if not np.isfinite(r) else f"{r:.3f}")
        t["min-max"] = [("-" if not np.isfinite(a) else f"{a:.3f}-{b:.3f}") for a, b in zip(g["ratio_min"], g["ratio_max"])]
        if target is not None or (g["verdict"] != "").any():
            t["verdict"] = g["verdict"]
        t = t.reset_index(drop=True)
        if fmt == "markdown":
            lines += [f"### {name} ({label})", "", markdown_table(t), ""]
        else:
            lines += [f"== {name} ({label}) ==", text_table(t), ""]
    return "\n".join(lines).rstrip() + "\n"
