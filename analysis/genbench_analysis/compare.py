"""Point-by-point comparison of two result files (B against A).

Points are joined on the benchmark name, the implementation and every axis of the benchmark.
Each benchmark is rated by the metric its op's description names (Benchmark.compare_metric:
compare.metric, else the headline metric; stored in schema 2 files, derived for schema 1), in
the direction it declares: the ratio is B/A when higher is better and A/B when lower is, so
> 1 always means B is better ("faster"). Where that metric is missing or not positive at every
compared point, the inverse of the median time is used. The verdict is noise-aware, like nvbench's compare script: a difference smaller than
the combined relative noise of the two measurements, sqrt(noise_a^2 + noise_b^2), is "same".
A point's relative noise is the spread of its samples: the median absolute deviation of the
per-iteration (slowest-rank) times, scaled to a standard deviation, over their median (see
loader.samples_noise; loader.relative_noise for tables without samples).
"""

from __future__ import annotations

import math
from typing import Dict, List, Optional, Sequence

import numpy as np
import pandas as pd

from .describe import metric_label
from .loader import OK, Result, relative_noise

# The fallback metric: 1 / time_median_s, where a benchmark's own metric cannot rate its points.
INVERSE_TIME = "inverse_time"
INVERSE_TIME_LABEL = "1/time (1/s)"

FASTER, SLOWER, SAME = "faster", "slower", "same"


def verdict(ratio: float, noise_a: float, noise_b: float, threshold: float = 0.0) -> str:
    """faster / slower / same for a throughput ratio B/A.

    "same" when |ratio - 1| is within the combined relative noise sqrt(noise_a^2 + noise_b^2)
    (missing noise counts as 0), or within threshold, whichever is larger.
    """
    if ratio is None or not np.isfinite(ratio) or ratio <= 0:
        return "-"
    tol = max(combined_noise(noise_a, noise_b), threshold)
    if abs(ratio - 1.0) <= tol:
        return SAME
    return FASTER if ratio > 1.0 else SLOWER


def combined_noise(noise_a: float, noise_b: float) -> float:
    a = 0.0 if noise_a is None or not np.isfinite(noise_a) else float(noise_a)
    b = 0.0 if noise_b is None or not np.isfinite(noise_b) else float(noise_b)
    return math.hypot(a, b)


def geomean(values) -> float:
    """Geometric mean of the finite positive values; NaN when there are none."""
    v = np.asarray(pd.to_numeric(pd.Series(list(values), dtype=object), errors="coerce"), dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    return float(np.exp(np.mean(np.log(v)))) if v.size else float("nan")


def choose_metric(a: pd.DataFrame, b: pd.DataFrame, metric: Optional[str]) -> str:
    """metric when both sides have it, positive at every point both measured; else inverse_time."""
    if metric and metric != INVERSE_TIME and metric in a and metric in b and len(a) and len(b):
        va, vb = pd.to_numeric(a[metric], errors="coerce"), pd.to_numeric(b[metric], errors="coerce")
        if (va > 0).all() and (vb > 0).all():
            return metric
    return INVERSE_TIME


def _throughput(df: pd.DataFrame, metric: str) -> pd.Series:
    if metric == INVERSE_TIME:
        t = pd.to_numeric(df["time_median_s"], errors="coerce")
        return (1.0 / t.where(t > 0)).astype(float)
    return pd.to_numeric(df[metric], errors="coerce").astype(float)


def compare_points(a: pd.DataFrame, b: pd.DataFrame, keys: Sequence[str], threshold: float = 0.0,
                   benchmark: Optional[str] = None, metric: Optional[str] = None, higher_is_better: bool = True,
                   unit: str = "") -> pd.DataFrame:
    """Joins two points tables of one benchmark on keys and rates each pair by metric.

    a and b need the key columns, status, time_median_s (and the metric column) and a noise
    column (rel_noise, or the time percentiles it is computed from). metric (a column, with its
    unit for labels) is used where both sides have it positive at every compared point, else
    1/time_median_s. Returns one row per key with: the keys, status_a/b, metric, metric_label,
    higher_is_better, a, b (the metric's values), ratio (B/A, or A/B when lower is better: > 1
    means B is better), noise_a/b, noise (combined), verdict (faster / slower / same, or why
    there is none).
    """
    keys = list(keys)
    a = a.drop_duplicates(subset=keys, keep="last").copy()
    b = b.drop_duplicates(subset=keys, keep="last").copy()
    for df in (a, b):
        if "rel_noise" not in df:
            df["rel_noise"] = relative_noise(df)
        if "status" not in df:
            df["status"] = OK
    ok_a, ok_b = a[a["status"] == OK], b[b["status"] == OK]
    both = ok_a.merge(ok_b[keys], on=keys)[keys]
    metric = choose_metric(ok_a.merge(both, on=keys), ok_b.merge(both, on=keys), metric)
    if metric == INVERSE_TIME:
        higher_is_better, label = True, INVERSE_TIME_LABEL
    else:
        label = metric_label(metric, unit)
    a["_value"] = _throughput(a, metric) if len(a) else pd.Series(dtype=float)
    b["_value"] = _throughput(b, metric) if len(b) else pd.Series(dtype=float)
    cols = keys + ["status", "_value", "rel_noise"]
    m = a[cols].merge(b[cols], on=keys, how="outer", suffixes=("_a", "_b"), indicator=True)
    out = m[keys].copy()
    if benchmark is not None:
        out.insert(0, "benchmark", benchmark)
    out["status_a"] = m["status_a"].fillna("absent")
    out["status_b"] = m["status_b"].fillna("absent")
    out["metric"] = metric
    out["metric_label"] = label
    out["higher_is_better"] = bool(higher_is_better)
    # Values of points that did not run ok mean nothing; leave them empty.
    out["a"] = m["_value_a"].astype(float).where(out["status_a"] == OK)
    out["b"] = m["_value_b"].astype(float).where(out["status_b"] == OK)
    comparable = (out["status_a"] == OK) & (out["status_b"] == OK)
    with np.errstate(divide="ignore", invalid="ignore"):
        if higher_is_better:
            out["ratio"] = np.where(comparable & (out["a"] > 0), out["b"] / out["a"], np.nan)
        else:
            out["ratio"] = np.where(comparable & (out["b"] > 0), out["a"] / out["b"], np.nan)
    out["noise_a"] = m["rel_noise_a"].astype(float)
    out["noise_b"] = m["rel_noise_b"].astype(float)
    out["noise"] = [combined_noise(x, y) if ok else np.nan
                    for x, y, ok in zip(out["noise_a"], out["noise_b"], comparable)]
    verdicts = []
    for ok, sa, sb, r, na, nb in zip(comparable, out["status_a"], out["status_b"], out["ratio"], out["noise_a"],
                                     out["noise_b"]):
        if sa == "absent":
            verdicts.append("only in B")
        elif sb == "absent":
            verdicts.append("only in A")
        elif not ok:
            verdicts.append(f"A {sa}, B {sb}" if sa != sb else sa)
        else:
            verdicts.append(verdict(r, na, nb, threshold))
    out["verdict"] = verdicts
    return out.reset_index(drop=True)


def compare(a: Result, b: Result, threshold: float = 0.0, benchmarks: Optional[List[str]] = None) -> pd.DataFrame:
    """compare_points for every benchmark the two files share (and the ones only one has)."""
    names = list(dict.fromkeys(list(a.benchmarks) + list(b.benchmarks)))
    if benchmarks:
        names = [n for n in names if n in benchmarks]
    frames = []
    for name in names:
        axes_a = a.axes(name) if name in a.benchmarks else []
        axes_b = b.axes(name) if name in b.benchmarks else []
        axes = [x for x in axes_a if x in axes_b] if axes_a and axes_b else (axes_a or axes_b)
        keys = ["impl"] + axes
        ta = a.table(name) if name in a.benchmarks else pd.DataFrame(columns=keys + ["status", "time_median_s"])
        tb = b.table(name) if name in b.benchmarks else pd.DataFrame(columns=keys + ["status", "time_median_s"])
        bench = a.benchmarks[name] if name in a.benchmarks else b.benchmarks[name]
        metric, hib, unit = rating(bench)
        frames.append(compare_points(ta, tb, keys, threshold, benchmark=name, metric=metric, higher_is_better=hib,
                                     unit=unit))
    if not frames:
        return pd.DataFrame(columns=["benchmark", "impl", "ratio", "verdict"])
    out = pd.concat(frames, ignore_index=True, sort=False)
    rated = ["status_a", "status_b", "metric", "metric_label", "higher_is_better", "a", "b", "ratio", "noise_a",
             "noise_b", "noise", "verdict"]
    return out[[c for c in out.columns if c not in rated] + rated]


def rating(bench) -> tuple:
    """(metric column, higher_is_better, unit) a benchmark is compared by, from its description."""
    metric = bench.compare_metric
    return metric, bench.higher_is_better, bench.units.get(metric, "") if metric else ""


def _label(g: pd.DataFrame) -> str:
    if "metric_label" in g and isinstance(g["metric_label"].iloc[0], str):
        return g["metric_label"].iloc[0]
    m = g["metric"].iloc[0]
    return INVERSE_TIME_LABEL if m == INVERSE_TIME else str(m)


def summary(cmp: pd.DataFrame) -> pd.DataFrame:
    """Per benchmark: geometric mean of B/A over the compared points and the verdict counts."""
    rows = []
    for name, g in cmp.groupby("benchmark", sort=False):
        rated = g[g["verdict"].isin([FASTER, SLOWER, SAME])]
        rows.append({
            "benchmark": name,
            "metric": _label(g),
            "points": len(rated),
            "geomean_ratio": geomean(rated["ratio"]),
            FASTER: int((rated["verdict"] == FASTER).sum()),
            SLOWER: int((rated["verdict"] == SLOWER).sum()),
            SAME: int((rated["verdict"] == SAME).sum()),
            "not_compared": int(len(g) - len(rated)),
        })
    return pd.DataFrame(rows, columns=["benchmark", "metric", "points", "geomean_ratio", FASTER, SLOWER, SAME,
                                       "not_compared"])


# --- formatting ---------------------------------------------------------------------------

def _varying(df: pd.DataFrame, cols: List[str]) -> List[str]:
    return [c for c in cols if c in df and df[c].astype(str).nunique(dropna=False) > 1]


def _fmt_value(v) -> str:
    if v is None or (isinstance(v, float) and not np.isfinite(v)) or v is pd.NA:
        return "-"
    if isinstance(v, (float, np.floating)):
        av = abs(v)
        if av == 0:
            return "0"
        return f"{v:.4g}"
    return str(v)


def display_tables(cmp: pd.DataFrame, key_columns: Dict[str, List[str]]) -> Dict[str, pd.DataFrame]:
    """Per benchmark, a table of strings for people: the varying keys, A, B, B/A, noise, verdict."""
    tables = {}
    for name, g in cmp.groupby("benchmark", sort=False):
        keys = key_columns.get(name, [])
        shown = _varying(g, keys) or keys[:1]
        label = _label(g)
        t = pd.DataFrame({c: g[c].map(_fmt_value) for c in shown})
        t[f"A {label}"] = g["a"].map(_fmt_value)
        t[f"B {label}"] = g["b"].map(_fmt_value)
        t[ratio_name(g)] = g["ratio"].map(lambda r: "-" if not np.isfinite(r) else f"{r:.3f}")
        t["noise"] = g["noise"].map(lambda n: "-" if not np.isfinite(n) else f"{100 * n:.1f}%")
        t["verdict"] = g["verdict"]
        tables[name] = t.reset_index(drop=True)
    return tables


def text_table(t: pd.DataFrame) -> str:
    cols = list(t.columns)
    widths = [max([len(str(c))] + [len(str(v)) for v in t[c]]) for c in cols]
    num = [c not in ("verdict",) and all(_looks_numeric(v) for v in t[c]) for c in cols]

    def line(vals):
        return "  ".join(str(v).rjust(w) if n else str(v).ljust(w) for v, w, n in zip(vals, widths, num)).rstrip()

    out = [line(cols), line(["-" * w for w in widths])]
    out += [line(row) for row in t.itertuples(index=False)]
    return "\n".join(out)


def _looks_numeric(v) -> bool:
    s = str(v).rstrip("%")
    if s == "-":
        return True
    try:
        float(s)
        return True
    except ValueError:
        return False


def markdown_table(t: pd.DataFrame) -> str:
    def esc(v):
        return str(v).replace("|", "\\|").replace("\n", " ")

    cols = list(t.columns)
    out = ["| " + " | ".join(esc(c) for c in cols) + " |",
           "|" + "|".join("---:" if c not in ("verdict",) and all(_looks_numeric(v) for v in t[c]) else "---"
                          for c in cols) + "|"]
    out += ["| " + " | ".join(esc(v) for v in row) + " |" for row in t.itertuples(index=False)]
    return "\n".join(out)


def ratio_name(g: pd.DataFrame) -> str:
    """B/A, or A/B for a benchmark whose metric is better when lower."""
    hib = g["higher_is_better"].iloc[0] if "higher_is_better" in g and len(g) else True
    return "B/A" if bool(hib) else "A/B"


def _summary_line(s: pd.Series, ratio: str = "B/A") -> str:
    g = s["geomean_ratio"]
    gm = "-" if not np.isfinite(g) else f"{g:.3f}"
    extra = f", {s['not_compared']} not compared" if s["not_compared"] else ""
    return (f"geomean {ratio} {gm} over {s['points']} points: {s[FASTER]} faster, {s[SLOWER]} slower, "
            f"{s[SAME]} same{extra}")


def format_comparison(cmp: pd.DataFrame, a: Result, b: Result, fmt: str = "text") -> str:
    """The comparison as a text table, Markdown or CSV."""
    if fmt == "csv":
        return cmp.to_csv(index=False)
    keys = {n: ["impl"] + (a.axes(n) if n in a.benchmarks else b.axes(n)) for n in cmp["benchmark"].unique()}
    tables = display_tables(cmp, keys)
    summ = summary(cmp).set_index("benchmark")
    lines = []
    if fmt == "markdown":
        lines += [f"**A**: `{a.path}` ({a.device})  ", f"**B**: `{b.path}` ({b.device})  ",
                  "Ratios are B/A of each benchmark's metric (A/B where lower is better): > 1 means B is faster.", ""]
        for name, t in tables.items():
            s = summ.loc[name]
            r = ratio_name(cmp[cmp["benchmark"] == name])
            lines += [f"### {name} ({s['metric']})", "", markdown_table(t), "", _summary_line(s, r), ""]
    else:
        lines += [f"A: {a.path} ({a.device})", f"B: {b.path} ({b.device})",
                  "Ratios are B/A of each benchmark's metric (A/B where lower is better): > 1 means B is faster.", ""]
        for name, t in tables.items():
            s = summ.loc[name]
            r = ratio_name(cmp[cmp["benchmark"] == name])
            lines += [f"== {name} ({s['metric']}) ==", text_table(t), _summary_line(s, r), ""]
    return "\n".join(lines).rstrip() + "\n"
