"""report.md and report.html with PNG plots for one or more result files."""

from __future__ import annotations

import base64
import html
import os
from typing import Dict, List, Sequence

import numpy as np
import pandas as pd

from .compare import markdown_table
from .loader import Result
from .plots import NoData, plots_for, rank_table, report_tables

STATUSES = ["ok", "failed", "skipped", "unsupported"]
MAX_LISTED_FAILURES = 30


def files_table(results: Sequence[Result]) -> pd.DataFrame:
    rows = []
    for r in results:
        a = r.attrs
        rows.append({
            "file": r.name,
            "device": r.device,
            "backend": r.backend,
            "ranks": a.get("world_size", ""),
            "state": a.get("state", ""),
            "started (UTC)": a.get("start_utc", ""),
            "git revision": a.get("git_revision", ""),
            "config": a.get("config_path", ""),
        })
    return pd.DataFrame(rows)


def status_table(results: Sequence[Result]) -> pd.DataFrame:
    rows = []
    for r in results:
        for name, g in r.points.groupby("benchmark", sort=False):
            counts = g["status"].value_counts()
            row = {"file": r.name, "benchmark": name, "points": len(g)}
            for s in STATUSES:
                row[s] = int(counts.get(s, 0))
            others = {k: v for k, v in counts.items() if k not in STATUSES}
            row["other"] = ", ".join(f"{k}: {v}" for k, v in others.items())
            rows.append(row)
    df = pd.DataFrame(rows, columns=["file", "benchmark", "points"] + STATUSES + ["other"])
    if not df.empty and not df["other"].astype(bool).any():
        df = df.drop(columns="other")
    return df


def failures_table(results: Sequence[Result]) -> pd.DataFrame:
    rows = []
    for r in results:
        bad = r.points[r.points["status"] == "failed"]
        for _, p in bad.iterrows():
            axes = r.axes(p["benchmark"])
            desc = ", ".join(f"{a}={p[a]}" for a in axes if a in p and not pd.isna(p[a]))
            rows.append({"file": r.name, "benchmark": p["benchmark"], "impl": p["impl"], "point": desc,
                         "reason": p["reason"]})
    return pd.DataFrame(rows, columns=["file", "benchmark", "impl", "point", "reason"])


def _fmt_cell(v) -> str:
    if isinstance(v, (float, np.floating)):
        return f"{v:.3f}" if np.isfinite(v) else "-"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else ""
    return str(v)


def _strings(df: pd.DataFrame) -> pd.DataFrame:
    return df.apply(lambda c: c.map(_fmt_cell)) if not df.empty else df


# Blocks: ("h", level, text) | ("p", text) | ("table", DataFrame) | ("img", path, alt)

def _to_markdown(blocks) -> str:
    out = []
    for b in blocks:
        if b[0] == "h":
            out += ["#" * b[1] + " " + b[2], ""]
        elif b[0] == "p":
            out += [b[1], ""]
        elif b[0] == "table":
            out += [markdown_table(_strings(b[1])), ""]
        elif b[0] == "img":
            out += [f"![{b[2]}]({os.path.basename(b[1])})", ""]
    return "\n".join(out).rstrip() + "\n"


_CSS = """
body { font-family: system-ui, sans-serif; max-width: 1300px; margin: 2em auto; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }
th { background: #f2f2f2; }
img { max-width: 100%; border: 1px solid #eee; }
code { background: #f4f4f4; padding: 0 0.2em; }
"""


def _inline(text: str) -> str:
    """The little Markdown the report's paragraphs use: `code` and **bold**."""
    parts = html.escape(text).split("`")
    out = []
    for i, p in enumerate(parts):
        if i % 2:
            out.append(f"<code>{p}</code>")
        else:
            bold = p.split("**")
            out.append("".join(f"<b>{x}</b>" if j % 2 else x for j, x in enumerate(bold)))
    return "".join(out)


def _to_html(blocks, title: str) -> str:
    out = ["<!DOCTYPE html>", "<html><head><meta charset='utf-8'>", f"<title>{html.escape(title)}</title>",
           f"<style>{_CSS}</style></head><body>"]
    for b in blocks:
        if b[0] == "h":
            out.append(f"<h{b[1]}>{html.escape(b[2])}</h{b[1]}>")
        elif b[0] == "p":
            out.append(f"<p>{_inline(b[1])}</p>")
        elif b[0] == "table":
            df = _strings(b[1])
            out.append("<table><tr>" + "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns) + "</tr>")
            for row in df.itertuples(index=False):
                out.append("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>")
            out.append("</table>")
        elif b[0] == "img":
            with open(b[1], "rb") as f:
                data = base64.b64encode(f.read()).decode("ascii")
            out.append(f"<p><img alt='{html.escape(b[2])}' src='data:image/png;base64,{data}'></p>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write_report(results: Sequence[Result], outdir: str, straggler_threshold: float = 0.05) -> Dict[str, object]:
    """Writes report.md, report.html and one PNG per plot with data into outdir.

    Returns {"markdown": path, "html": path, "plots": {name: png path}, "skipped": {name: reason}}.
    """
    os.makedirs(outdir, exist_ok=True)
    blocks: List[tuple] = [("h", 1, "genbench report")]
    blocks.append(("p", "Files: " + ", ".join(f"`{r.path}`" for r in results)))
    blocks += [("table", files_table(results))]
    blocks += [("h", 2, "Point statuses"), ("table", status_table(results))]
    fails = failures_table(results)
    if not fails.empty:
        blocks.append(("h", 3, "Failed points"))
        if len(fails) > MAX_LISTED_FAILURES:
            blocks.append(("p", f"The first {MAX_LISTED_FAILURES} of {len(fails)} failed points:"))
        blocks.append(("table", fails.head(MAX_LISTED_FAILURES)))

    plots: Dict[str, str] = {}
    skipped: Dict[str, str] = {}
    tables = report_tables(results)
    for name, title, fn in plots_for(results):
        blocks.append(("h", 2, title))
        try:
            fig = fn(results, straggler_threshold) if name == "rank_variability" else fn(results)
        except NoData as e:
            skipped[name] = str(e)
            blocks.append(("p", f"Plot skipped: {e}."))
            continue
        path = os.path.join(outdir, f"{name}.png")
        fig.savefig(path, dpi=110, bbox_inches="tight")
        plots[name] = path
        blocks.append(("img", path, title))
        if name in tables:  # the table an op's extra plot declares
            note, table = tables[name]
            if note:
                blocks.append(("p", note))
            blocks.append(("table", table(results)))
        if name == "rank_variability":
            t = rank_table(results, straggler_threshold)
            flagged = t[t["straggler"]]
            if flagged.empty:
                blocks.append(("p", f"No straggler: no rank's median time is more than "
                                    f"{100 * straggler_threshold:g}% above the cross-rank median."))
            else:
                blocks.append(("p", "**Stragglers**: " + "; ".join(
                    f"rank {int(x['rank'])} ({x['host']}) of `{x['file']}`, typically "
                    f"{100 * (x['median_rel'] - 1):.1f}% slower" for _, x in flagged.iterrows()) + "."))
            blocks.append(("p", "median_rel: the rank's median time over ok points relative to the median over "
                                "ranks of the same point (its median over points); frac_slow_points: share of "
                                f"points where the rank is more than {100 * straggler_threshold:g}% slower."))
            blocks.append(("table", t))

    md_path = os.path.join(outdir, "report.md")
    html_path = os.path.join(outdir, "report.html")
    with open(md_path, "w") as f:
        f.write(_to_markdown(blocks))
    with open(html_path, "w") as f:
        f.write(_to_html(blocks, "genbench report"))
    return {"markdown": md_path, "html": html_path, "plots": plots, "skipped": skipped}
