"""Standings: the tables of docs/performance.md, made from committed result files by a spec.

A spec (YAML, docs/standings.yaml; the format is in docs/analysis.md, "standings") lists tables.
Each names its result files (paths or globs under the project root) and a kind:

  versus  one implementation against a peer run beside it (versus.py): per point, both sides'
          medians, the ratio's median (min-max) over rounds, the rounds and a verdict against a
          target;
  values  one implementation's metric per point, median (min-max) over rounds, or with one
          round the p10-p90 of its timed samples.

Either kind may join a committed CSV of figures measured outside genbench (a peer's numbers
taken by another tool), matched on axes, and show ours over them. A page keeps free prose; each
generated table sits between `<!-- standings:ID begin -->` and `<!-- standings:ID end -->` and
ends with a line naming its files, the card, dates, trees and the command that reprints it.

  make_blocks(spec)            id -> the Markdown of each table's block
  rewrite_page(text, blocks)   the page with every block replaced (text outside untouched)
  standings_json(spec)         every table's per-point figures, for docs/standings.json
  gate(spec, new_dir, committed, tolerance)   each versus table recomputed from new files
                               against the committed ratios

Errors of the spec raise SpecError (naming the key), missing files and page markers without
their pair StandingsError; the command line turns both into exit status 2.
"""

from __future__ import annotations

import difflib
import glob
import json
import math
import os
import re
import warnings
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

import numpy as np
import pandas as pd

from .compare import _label
from .describe import metric_label
from .loader import OK, Result, load
from .versus import VersusError, side_labels, versus

KINDS = ("versus", "values")
SPREADS = ("auto", "rounds", "samples", "none")
_COMMON_KEYS = {"id", "title", "kind", "files", "impl", "benchmark", "where", "label", "sort", "format", "join",
                "metric", "config", "run_args", "output"}
_KIND_KEYS = {"versus": {"peer", "by", "target"}, "values": {"spread"}}
_TOP_KEYS = {"standings", "root", "json", "command", "tables", "gate_baselines"}
_JOIN_KEYS = {"file", "on", "value", "name", "unit"}
_FORMAT_KEYS = {"value", "ratio", "peer"}
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
DEFAULT_COMMAND = "PYTHONPATH=analysis python3 -m genbench_analysis standings {spec} --print {id}"


class SpecError(ValueError):
    """The spec is malformed: the message names the key."""


class StandingsError(RuntimeError):
    """A file the spec names is missing, or a page's markers do not pair up."""


# --- the spec -------------------------------------------------------------------------------

@dataclass
class Join:
    file: str
    on: Dict[str, str]
    value: List[str]
    name: str
    unit: str = ""


@dataclass
class Table:
    id: str
    title: str
    kind: str
    files: List[str]
    impl: str
    where_key: str
    peer: str = ""
    by: str = "impl"
    metric: Optional[str] = None
    target: Optional[float] = None
    benchmark: List[str] = field(default_factory=list)
    where: Dict[str, list] = field(default_factory=dict)
    label: str = ""
    sort: List[str] = field(default_factory=list)
    formats: Dict[str, str] = field(default_factory=dict)
    spread: str = "auto"
    join: Optional[Join] = None
    config: str = ""
    run_args: List[str] = field(default_factory=list)
    output: str = ""


@dataclass
class Spec:
    path: str
    root: str
    tables: List[Table]
    json: str = ""
    command: str = DEFAULT_COMMAND
    # card (as the files name it) -> folder of a gate run on that card, the gate's baseline
    # there (the committed standings are one card's)
    baselines: Dict[str, str] = field(default_factory=dict)

    @property
    def rel_path(self) -> str:
        """The spec's path as the page names it: relative to the project root."""
        return _rel(self.path, self.root)

    def table(self, tid: str) -> Table:
        for t in self.tables:
            if t.id == tid:
                return t
        raise StandingsError(f"unknown table id {tid!r} (the spec has: {', '.join(t.id for t in self.tables)})")


def _rel(path: str, root: str) -> str:
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    return rel.replace(os.sep, "/")


def _strings(v, key: str) -> List[str]:
    if isinstance(v, str):
        return [v]
    if isinstance(v, list) and v and all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in v):
        return [str(x) for x in v]
    raise SpecError(f"{key}: expected a string or a non-empty list of strings")


def load_spec(path: str, root: Optional[str] = None) -> Spec:
    """Reads and checks a spec. root: the folder its paths are relative to (default: the spec's
    `root` key, relative to the spec's folder, else the spec's folder)."""
    import yaml

    if not os.path.exists(path):
        raise StandingsError(f"{path}: no such spec file")
    with open(path) as f:
        try:
            doc = yaml.safe_load(f)
        except yaml.YAMLError as e:
            raise SpecError(f"{path}: not valid YAML: {e}") from e
    if not isinstance(doc, dict):
        raise SpecError(f"{path}: expected a mapping with the key 'tables'")
    unknown = sorted(set(doc) - _TOP_KEYS)
    if unknown:
        raise SpecError(f"{path}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_TOP_KEYS))})")
    if root is None:
        r = doc.get("root", ".")
        if not isinstance(r, str):
            raise SpecError(f"{path}: root: expected a path")
        root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(path)), r))
    tables_doc = doc.get("tables")
    if not isinstance(tables_doc, list) or not tables_doc:
        raise SpecError(f"{path}: tables: expected a non-empty list of tables")
    tables, seen = [], set()
    for i, td in enumerate(tables_doc):
        t = _table(td, f"{path}: tables[{i}]")
        if t.id in seen:
            raise SpecError(f"{path}: tables[{i}].id: {t.id!r} is used twice")
        seen.add(t.id)
        tables.append(t)
    outputs = {}
    for t in tables:
        if t.output:
            run = (t.config, tuple(t.run_args))
            if outputs.setdefault(t.output, run) != run:
                raise SpecError(f"{path}: table {t.id!r}: output {t.output!r} is named by another table with "
                                "another config or run_args")
    js = doc.get("json", "")
    command = doc.get("command", DEFAULT_COMMAND)
    if not isinstance(js, str):
        raise SpecError(f"{path}: json: expected a path")
    if not isinstance(command, str) or "{id}" not in command:
        raise SpecError(f"{path}: command: expected a string with {{id}} (and {{spec}}) in it")
    baselines = doc.get("gate_baselines", {}) or {}
    if not isinstance(baselines, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in baselines.items()):
        raise SpecError(f"{path}: gate_baselines: expected a mapping of card name to a folder")
    return Spec(path=path, root=root, tables=tables, json=js, command=command, baselines=baselines)


def _table(td, where: str) -> Table:
    if not isinstance(td, dict):
        raise SpecError(f"{where}: expected a mapping")
    tid = td.get("id")
    if not isinstance(tid, str) or not _ID.match(tid):
        raise SpecError(f"{where}.id: expected an id of letters, digits, '-', '_' and '.'")
    where = f"{where} ({tid})"
    kind = td.get("kind")
    if kind not in KINDS:
        raise SpecError(f"{where}.kind: expected one of {', '.join(KINDS)}, not {kind!r}")
    allowed = _COMMON_KEYS | _KIND_KEYS[kind]
    unknown = sorted(set(td) - allowed)
    if unknown:
        raise SpecError(f"{where}: unknown key {unknown[0]!r} for a {kind} table (known: {', '.join(sorted(allowed))})")
    for key in ("title", "impl") + (("peer",) if kind == "versus" else ()):
        if not isinstance(td.get(key), str) or not td[key]:
            raise SpecError(f"{where}.{key}: required, a string")
    if "files" not in td:
        raise SpecError(f"{where}.files: required, a path or glob (or a list of them) under the project root")
    t = Table(id=tid, title=td["title"], kind=kind, files=_strings(td["files"], f"{where}.files"), impl=td["impl"],
              where_key=where)
    if kind == "versus":
        t.peer = td["peer"]
        t.by = td.get("by", "impl")
        if not isinstance(t.by, str):
            raise SpecError(f"{where}.by: expected an axis name")
        if "target" in td:
            tg = td["target"]
            if isinstance(tg, bool) or not isinstance(tg, (int, float)) or not tg > 0:
                raise SpecError(f"{where}.target: expected a positive ratio")
            t.target = float(tg)
    else:
        t.spread = td.get("spread", "auto")
        if t.spread not in SPREADS:
            raise SpecError(f"{where}.spread: expected one of {', '.join(SPREADS)}")
    if "metric" in td:
        if not isinstance(td["metric"], str):
            raise SpecError(f"{where}.metric: expected a column name")
        t.metric = td["metric"]
    if "benchmark" in td:
        t.benchmark = _strings(td["benchmark"], f"{where}.benchmark")
    if "where" in td:
        w = td["where"]
        if not isinstance(w, dict) or not w:
            raise SpecError(f"{where}.where: expected a mapping of axis -> value or list of values")
        t.where = {str(k): (v if isinstance(v, list) else [v]) for k, v in w.items()}
    if "label" in td:
        if not isinstance(td["label"], str) or not td["label"].strip():
            raise SpecError(f"{where}.label: expected a template such as \"d={{head_dim}} {{seqlen_q|size}}\"")
        t.label = td["label"]
        for m in _PLACEHOLDER.finditer(t.label):
            _filter_check(m.group(2), f"{where}.label")
    if "sort" in td:
        t.sort = _strings(td["sort"], f"{where}.sort")
    if "format" in td:
        fm = td["format"]
        if not isinstance(fm, dict) or set(fm) - _FORMAT_KEYS:
            raise SpecError(f"{where}.format: expected a mapping with keys among {', '.join(sorted(_FORMAT_KEYS))}")
        for k, v in fm.items():
            try:
                format(1.5, str(v))
            except (ValueError, TypeError) as e:
                raise SpecError(f"{where}.format.{k}: {v!r} is not a number format ({e})") from e
        t.formats = {k: str(v) for k, v in fm.items()}
    if "join" in td:
        t.join = _join(td["join"], f"{where}.join")
    for key in ("config", "output"):
        if key in td:
            if not isinstance(td[key], str) or not td[key]:
                raise SpecError(f"{where}.{key}: expected a path")
            setattr(t, key, td[key])
    if "run_args" in td:
        ra = td["run_args"]
        if not isinstance(ra, list) or not all(isinstance(x, (str, int, float)) for x in ra):
            raise SpecError(f"{where}.run_args: expected a list of arguments")
        t.run_args = [str(x) for x in ra]
    if bool(t.config) != bool(t.output):
        raise SpecError(f"{where}: config and output go together (the gate runs config into output)")
    if t.output and (os.path.dirname(t.output) or t.output in (".", "..")):
        raise SpecError(f"{where}.output: expected a file name, no folder")
    return t


def _join(jd, where: str) -> Join:
    if not isinstance(jd, dict):
        raise SpecError(f"{where}: expected a mapping with file, on, value and name")
    if True in jd and "on" not in jd:  # YAML 1.1 reads a bare `on:` key as true
        jd = {("on" if k is True else k): v for k, v in jd.items()}
    unknown = sorted(set(jd) - _JOIN_KEYS)
    if unknown:
        raise SpecError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_JOIN_KEYS))})")
    for key in ("file", "name"):
        if not isinstance(jd.get(key), str) or not jd[key]:
            raise SpecError(f"{where}.{key}: required, a string")
    on = jd.get("on")
    if not isinstance(on, dict) or not on:
        raise SpecError(f"{where}.on: required, a mapping of the table's axis -> the CSV's column")
    return Join(file=jd["file"], on={str(k): str(v) for k, v in on.items()},
                value=_strings(jd.get("value"), f"{where}.value"), name=jd["name"], unit=str(jd.get("unit", "")))


# --- labels and values ----------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_-]*)(\|[^{}]*)?\}")


def _filter_check(flt: Optional[str], where: str) -> None:
    if not flt:
        return
    name = flt[1:].split(":", 1)[0]
    if name not in ("size", "bytes", "if", "unless", "map"):
        raise SpecError(f"{where}: unknown filter {name!r} (known: size, bytes, if:TEXT, unless:TEXT, map:A=B,...)")


def _norm(v) -> str:
    """A value as text for matching: integral numbers without '.0', booleans as 0/1, lower case."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    s = str(v).strip()
    low = s.lower()
    if low in ("true", "yes"):
        return "1"
    if low in ("false", "no"):
        return "0"
    try:
        x = float(s)
        if math.isfinite(x) and x == int(x):
            return str(int(x))
        return repr(x)
    except ValueError:
        return low


def _truthy(v) -> bool:
    return _norm(v) not in ("", "0", "none", "off")


def _size(v, binary_units: bool) -> str:
    try:
        n = int(float(v))
    except (TypeError, ValueError):
        return str(v)
    units = ("B", "KiB", "MiB", "GiB", "TiB") if binary_units else ("", "K", "M", "G", "T")
    i = 0
    while i + 1 < len(units) and n >= 1024 and n % 1024 == 0:
        n //= 1024
        i += 1
    return f"{n} {units[i]}" if binary_units else f"{n}{units[i]}"


def _apply_filter(v, flt: Optional[str]) -> str:
    if not flt:
        if isinstance(v, float) and v == int(v):
            return str(int(v))
        return str(v)
    name, _, arg = flt[1:].partition(":")
    if name == "size":
        return _size(v, False)
    if name == "bytes":
        return _size(v, True)
    if name == "if":
        return arg if _truthy(v) else ""
    if name == "unless":
        return "" if _truthy(v) else arg
    pairs = dict(p.split("=", 1) for p in arg.split(",") if "=" in p)
    return pairs.get(str(v), pairs.get(_norm(v), str(v)))


def point_label(template: str, row: pd.Series, where: str) -> str:
    def sub(m):
        col = m.group(1)
        if col not in row.index or (not isinstance(row[col], str) and pd.isna(row[col])):
            raise SpecError(f"{where}.label: no column {col!r} at a point of benchmark {row.get('benchmark')!r}")
        return _apply_filter(row[col], m.group(2))
    return " ".join(_PLACEHOLDER.sub(sub, template).split())


def _num(x, spec: Optional[str]) -> str:
    """x in the format spec, or with 4 significant digits (no exponent); '-' for NaN."""
    if x is None or not np.isfinite(x):
        return "-"
    if spec:
        return format(float(x), spec)
    if x == 0:
        return "0"
    decimals = max(0, 3 - int(math.floor(math.log10(abs(x)))))
    return f"{x:.{decimals}f}"


def _spread(mid, lo, hi, spec: Optional[str]) -> str:
    if not np.isfinite(mid):
        return "-"
    if lo is None or not np.isfinite(lo) or not np.isfinite(hi):
        return _num(mid, spec)
    return f"{_num(mid, spec)} ({_num(lo, spec)}-{_num(hi, spec)})"


def _round6(x):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return None
    if isinstance(x, (int, np.integer)):
        return int(x)
    return float(f"{float(x):.6g}")


# --- files ----------------------------------------------------------------------------------

def table_files(spec: Spec, t: Table) -> List[str]:
    """The table's files under the root, globs expanded (sorted), each at least once."""
    out = []
    for pat in t.files:
        full = os.path.join(spec.root, pat)
        if glob.has_magic(pat):
            hits = sorted(glob.glob(full))
            if not hits:
                raise StandingsError(f"table {t.id!r}: no file matches {pat!r} (under {spec.root})")
            out += hits
        elif not os.path.exists(full):
            raise StandingsError(f"table {t.id!r}: missing file {pat!r} (under {spec.root})")
        else:
            out.append(full)
    return list(dict.fromkeys(out))


_LOADED: Dict[tuple, Result] = {}


def _load(path: str) -> Result:
    st = os.stat(path)
    key = (os.path.abspath(path), st.st_mtime_ns, st.st_size)
    if key not in _LOADED:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the held-back and state warnings: the page shows the figures
            _LOADED[key] = load(path)
    return _LOADED[key]


def _read_join(spec: Spec, t: Table) -> pd.DataFrame:
    j = t.join
    path = os.path.join(spec.root, j.file)
    if not os.path.exists(path):
        raise StandingsError(f"table {t.id!r}: missing join file {j.file!r} (under {spec.root})")
    df = pd.read_csv(path, comment="#", dtype=str, skipinitialspace=True)
    df.columns = [c.strip() for c in df.columns]
    missing = [c for c in list(j.on.values()) + j.value if c not in df.columns]
    if missing:
        raise SpecError(f"{t.where_key}.join: {j.file} has no column {missing[0]!r} (has: {', '.join(df.columns)})")
    return df


def _join_values(spec: Spec, t: Table, rows: pd.DataFrame) -> List[float]:
    """Per row of the table, the joined figure (mean of the join's value columns), NaN where
    the CSV has no row for the point."""
    j = t.join
    df = _read_join(spec, t)
    keys = [tuple(_norm(x) for x in r) for r in df[list(j.on.values())].itertuples(index=False)]
    vals = df[j.value].apply(pd.to_numeric, errors="coerce").mean(axis=1).to_numpy()
    index = {}
    for k, v in zip(keys, vals):
        if k in index:
            raise StandingsError(f"table {t.id!r}: {j.file} has two rows for {dict(zip(j.on.values(), k))}")
        index[k] = v
    out = []
    for _, r in rows.iterrows():
        for axis in j.on:
            if axis not in r.index:
                raise SpecError(f"{t.where_key}.join.on: the table has no axis {axis!r}")
        out.append(float(index.get(tuple(_norm(r[a]) for a in j.on), np.nan)))
    return out


def _select(t: Table, df: pd.DataFrame) -> pd.DataFrame:
    if t.benchmark:
        import fnmatch
        keep = df["benchmark"].map(lambda b: any(fnmatch.fnmatchcase(str(b), p) for p in t.benchmark))
        df = df[keep]
    for axis, values in t.where.items():
        if axis not in df.columns:
            raise SpecError(f"{t.where_key}.where: no axis {axis!r} in the table's points")
        want = {_norm(v) for v in values}
        df = df[df[axis].map(lambda x: _norm(x) in want)]
    if t.sort:
        for s in t.sort:
            if s not in df.columns:
                raise SpecError(f"{t.where_key}.sort: no axis {s!r} in the table's points")
        df = df.sort_values(t.sort, kind="stable")
    return df.reset_index(drop=True)


# --- building a table ------------------------------------------------------------------------

@dataclass
class Built:
    """A table's rows: label plus the figures (a DataFrame) and what its footer names."""
    table: Table
    rows: pd.DataFrame
    files: List[str]
    results: List[Result]
    unit: str = ""


def _labels(t: Table, df: pd.DataFrame, axes: List[str]) -> List[str]:
    if t.label:
        labels = [point_label(t.label, r, t.where_key) for _, r in df.iterrows()]
    else:
        vary = [a for a in axes if a in df and df[a].astype(str).nunique() > 1]
        if df["benchmark"].nunique() > 1:
            vary = ["benchmark"] + vary
        labels = [" ".join(f"{a}={_apply_filter(r[a], None)}" if a != "benchmark" else str(r[a]) for a in vary)
                  or str(r["benchmark"]) for _, r in df.iterrows()]
    seen = {}
    for lab in labels:
        if lab in seen:
            raise SpecError(f"{t.where_key}.label: two points are both labelled {lab!r}; add the axes that tell "
                            "them apart, or narrow the table (where, benchmark)")
        seen[lab] = True
    return labels


def build(spec: Spec, t: Table, files: Optional[List[str]] = None) -> Built:
    """The table's rows from its files (or from `files` instead: the gate's new run)."""
    files = table_files(spec, t) if files is None else files
    results = [_load(p) for p in files]
    if t.kind == "versus":
        return _build_versus(spec, t, files, results)
    return _build_values(spec, t, files, results)


def _axes(results: Sequence[Result]) -> List[str]:
    return list(dict.fromkeys(a for r in results for b in r.benchmarks.values() for a in b.axes))


def _build_versus(spec, t, files, results) -> Built:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v = versus(results, t.impl, t.peer, target=t.target, benchmarks=None, by=t.by, metric=t.metric)
    except VersusError as e:
        raise StandingsError(f"table {t.id!r}: {e}") from e
    v = _select(t, v)
    if v.empty:
        raise StandingsError(f"table {t.id!r}: no point of the files passes the table's benchmark and where")
    v.insert(0, "label", _labels(t, v, _axes(results)))
    if t.join:
        v["join"] = _join_values(spec, t, v)
    return Built(t, v, files, results, unit=_label(v))


def _rate_spread(row: pd.Series, metric: str) -> tuple:
    """The metric at the p10 and p90 of the timed samples (rates: work over time)."""
    med, p10, p90 = (row.get(c) for c in ("time_median_s", "time_p10_s", "time_p90_s"))
    v = row.get(metric)
    try:
        if metric.startswith("time_"):
            return float(p10), float(p90)
        return float(v) * float(med) / float(p90), float(v) * float(med) / float(p10)
    except (TypeError, ValueError, ZeroDivisionError):
        return np.nan, np.nan


def _build_values(spec, t, files, results) -> Built:
    frames = []
    unit = ""
    for r in results:
        for view in r.rounds():
            for name, b in view.benchmarks.items():
                tab = view.table(name)
                if tab.empty or t.impl not in set(tab["impl"].astype(str)):
                    continue
                metric = t.metric or b.compare_metric or (b.headline.name if b.headline else "")
                if metric not in tab:
                    raise StandingsError(f"table {t.id!r}: benchmark {name!r} has no column {metric!r}")
                unit = unit or metric_label(metric, b.units.get(metric, ""))
                mine = tab[tab["impl"].astype(str) == t.impl].copy()
                mine["_value"] = pd.to_numeric(mine[metric], errors="coerce").where(mine["status"] == OK)
                spread = [_rate_spread(row, metric) if row["status"] == OK else (np.nan, np.nan)
                          for _, row in mine.iterrows()]
                mine["_p_lo"] = [s[0] for s in spread]
                mine["_p_hi"] = [s[1] for s in spread]
                mine["_file"] = view.path
                mine["_keys"] = [tuple(b.axes)] * len(mine)
                frames.append(mine)
    if not frames:
        raise StandingsError(f"table {t.id!r}: no benchmark of the files ran {t.impl!r}")
    allp = pd.concat(frames, ignore_index=True, sort=False)
    rows = []
    for name in dict.fromkeys(allp["benchmark"]):
        g = allp[allp["benchmark"] == name]
        keys = [a for a in g["_keys"].iloc[0] if a in g and a != "impl"]
        for key, p in g.groupby(keys, sort=False, dropna=False) if keys else [((), g)]:
            key = key if isinstance(key, tuple) else (key,)
            ok = p[np.isfinite(p["_value"].astype(float))]
            vals = ok["_value"].astype(float).to_numpy()
            row = {"benchmark": name, **dict(zip(keys, key)), "rounds": int(len(vals)),
                   "files": int(p["_file"].nunique()),
                   "value": float(np.median(vals)) if len(vals) else np.nan,
                   "value_min": float(vals.min()) if len(vals) else np.nan,
                   "value_max": float(vals.max()) if len(vals) else np.nan,
                   "p10": float(ok["_p_lo"].iloc[0]) if len(vals) == 1 else np.nan,
                   "p90": float(ok["_p_hi"].iloc[0]) if len(vals) == 1 else np.nan,
                   "status": OK if len(vals) else "; ".join(sorted(set(p["status"].astype(str))))}
            rows.append(row)
    df = _select(t, pd.DataFrame(rows))
    if df.empty:
        raise StandingsError(f"table {t.id!r}: no point of the files passes the table's benchmark and where")
    df.insert(0, "label", _labels(t, df, _axes(results)))
    if t.join:
        df["join"] = _join_values(spec, t, df)
    return Built(t, df, files, results, unit=unit)


# --- rendering ------------------------------------------------------------------------------

def _md_table(header: List[str], body: List[List[str]]) -> List[str]:
    esc = lambda s: str(s).replace("|", "\\|")
    out = ["| " + " | ".join(esc(h) for h in header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(esc(c) for c in r) + " |" for r in body]
    return out


def _values_spread_kind(t: Table, df: pd.DataFrame) -> str:
    if t.spread != "auto":
        return t.spread
    return "rounds" if (df["rounds"] > 1).any() else "samples"


def render(spec: Spec, built: Built) -> str:
    """The Markdown of a table's block (without the markers)."""
    t, df = built.table, built.rows
    fv, fr, fp = t.formats.get("value"), t.formats.get("ratio", ".3f"), t.formats.get("peer", t.formats.get("value"))
    unit = built.unit
    lines = [f"*{t.title}*", ""]
    header, body = ["point"], []
    jname = t.join.name if t.join else ""
    junit = (t.join.unit or unit) if t.join else ""
    if t.kind == "versus":
        impl, peer = side_labels(t.impl, t.peer, t.by)
        many = bool((df["rounds"] > 1).any())
        header += [f"{impl} {unit}", f"{peer} {unit}", f"{impl} / {peer}" + (", median (min-max)" if many else ""),
                   "rounds"]
        if t.target is not None:
            header.append(f"target {t.target:g}")
        if t.join:
            header += [f"{jname} {junit}", f"{impl} / {jname}"]
        for _, r in df.iterrows():
            rounds = str(r["rounds"]) if r["rounds"] == r["files"] else f"{r['rounds']}/{r['files']}"
            cells = [r["label"], _num(r["impl"], fv), _num(r["peer"], fv)]
            if r["rounds"]:
                cells.append(_spread(r["ratio"], r["ratio_min"], r["ratio_max"], fr) if r["rounds"] > 1
                             else _num(r["ratio"], fr))
            else:
                cells.append(str(r["verdict"]))
            cells.append(rounds)
            if t.target is not None:
                cells.append(str(r["verdict"]) if r["rounds"] else "-")
            if t.join:
                cells += [_num(r["join"], fp), _num(r["impl"] / r["join"] if r["join"] else np.nan, fr)]
            body.append(cells)
    else:
        kind = _values_spread_kind(t, df)
        what = {"rounds": "median (min-max)", "samples": "(p10-p90 of samples)", "none": ""}[kind]
        header += [f"{t.impl} {unit}" + (f" {what}" if what.startswith("(") else f", {what}" if what else ""),
                   "rounds"]
        if t.join:
            header += [f"{jname} {junit}", f"{t.impl} / {jname}"]
        for _, r in df.iterrows():
            if not r["rounds"]:
                cell = r["status"]
            elif kind == "rounds":
                cell = _spread(r["value"], r["value_min"], r["value_max"], fv) if r["rounds"] > 1 else _num(r["value"], fv)
            elif kind == "samples":
                cell = _spread(r["value"], r["p10"], r["p90"], fv) if r["rounds"] == 1 else \
                    _spread(r["value"], r["value_min"], r["value_max"], fv) + " (rounds)"
            else:
                cell = _num(r["value"], fv)
            rounds = str(r["rounds"]) if r["rounds"] == r["files"] else f"{r['rounds']}/{r['files']}"
            cells = [r["label"], cell, rounds]
            if t.join:
                j = r["join"]
                ratio = r["value"] / j if j and np.isfinite(j) else np.nan
                lo = r["value_min"] / j if j and np.isfinite(j) else np.nan
                hi = r["value_max"] / j if j and np.isfinite(j) else np.nan
                cells += [_num(j, fp), _spread(ratio, lo, hi, fr) if r["rounds"] > 1 else _num(ratio, fr)]
            body.append(cells)
    lines += _md_table(header, body)
    lines += ["", footer(spec, built)]
    return "\n".join(lines)


def _distinct(values) -> str:
    vals = [str(v) for v in dict.fromkeys(values) if v not in (None, "")]
    return ", ".join(vals)


def footer(spec: Spec, built: Built) -> str:
    """The block's last line: files, card, dates, trees and the command."""
    t = built.table
    files = ", ".join(f"`{_rel(p, spec.root)}`" for p in built.files)
    rounds = sum(len(r.rounds()) for r in built.results)
    parts = [f"Files: {files} ({rounds} round{'s' if rounds != 1 else ''})"]
    if t.join:
        parts.append(f"{t.join.name}: `{t.join.file}`")
    parts.append("card: " + _distinct(r.device for r in built.results))
    dates = _distinct(str(r.attrs.get("start_utc", ""))[:10] for r in built.results)
    if dates:
        parts.append("date: " + dates)
    for key in ("source_tree", "git_revision"):
        v = _distinct(r.attrs.get(key, "") for r in built.results)
        if v:
            parts.append(f"{key}: {v}")
    cmd = spec.command.format(spec=spec.rel_path, id=t.id)
    return "; ".join(parts) + f". Made by `{cmd}`."


def make_blocks(spec: Spec, ids: Optional[Sequence[str]] = None) -> Dict[str, str]:
    tables = [spec.table(i) for i in ids] if ids else spec.tables
    return {t.id: render(spec, build(spec, t)) for t in tables}


# --- the page -------------------------------------------------------------------------------

_MARKER = re.compile(r"^<!--\s*standings:([^\s]+)\s+(begin|end)\s*-->\s*$")


def page_blocks(text: str, page: str = "page") -> List[tuple]:
    """(id, begin line, end line) of each block of the page, in order; StandingsError for a
    marker without its pair, nested or repeated blocks."""
    out, open_ = [], None
    seen = set()
    for i, line in enumerate(text.split("\n")):
        m = _MARKER.match(line.strip())
        if not m:
            continue
        tid, what = m.groups()
        if what == "begin":
            if open_ is not None:
                raise StandingsError(f"{page}:{i + 1}: begin of {tid!r} inside the block of {open_[0]!r} "
                                     f"(line {open_[1] + 1}), whose end marker is missing")
            if tid in seen:
                raise StandingsError(f"{page}:{i + 1}: a second block of {tid!r}")
            open_ = (tid, i)
        else:
            if open_ is None or open_[0] != tid:
                raise StandingsError(f"{page}:{i + 1}: end of {tid!r} without its begin marker")
            out.append((tid, open_[1], i))
            seen.add(tid)
            open_ = None
    if open_ is not None:
        raise StandingsError(f"{page}:{open_[1] + 1}: begin of {open_[0]!r} without its end marker")
    return out


def rewrite_page(text: str, blocks: Dict[str, str], page: str = "page") -> str:
    """The page with each block's content replaced; the text outside the markers untouched.
    StandingsError for a block whose id the spec lacks."""
    found = page_blocks(text, page)
    unknown = [tid for tid, _, _ in found if tid not in blocks]
    if unknown:
        raise StandingsError(f"{page}: unknown table id {unknown[0]!r} in a standings marker (the spec has: "
                             f"{', '.join(blocks)})")
    lines = text.split("\n")
    out, pos = [], 0
    for tid, b, e in found:
        out += lines[pos:b + 1]
        out += blocks[tid].rstrip("\n").split("\n")
        out.append(lines[e])
        pos = e + 1
    out += lines[pos:]
    return "\n".join(out)


def page_ids(text: str, page: str = "page") -> List[str]:
    return [tid for tid, _, _ in page_blocks(text, page)]


def changed_blocks(old: str, new: str, page: str = "page") -> List[str]:
    """Ids whose block content differs between two versions of a page."""
    def contents(text):
        lines = text.split("\n")
        return {tid: "\n".join(lines[b + 1:e]) for tid, b, e in page_blocks(text, page)}
    a, b = contents(old), contents(new)
    return [tid for tid in b if a.get(tid) != b[tid]]


def unified_diff(old: str, new: str, a: str, b: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), a, b))


# --- the machine-readable standings ----------------------------------------------------------

def table_json(spec: Spec, built: Built) -> dict:
    t, df = built.table, built.rows
    points = {}
    for _, r in df.iterrows():
        if t.kind == "versus":
            p = {"ratio": r["ratio"], "ratio_min": r["ratio_min"], "ratio_max": r["ratio_max"],
                 "rounds": int(r["rounds"]), "impl": r["impl"], "peer": r["peer"]}
            if t.target is not None:
                p["verdict"] = r["verdict"]
        else:
            p = {"value": r["value"], "value_min": r["value_min"], "value_max": r["value_max"],
                 "rounds": int(r["rounds"])}
        if t.join:
            j = r["join"]
            base = r["impl"] if t.kind == "versus" else r["value"]
            p[t.join.name] = j
            p[f"ratio_{t.join.name}"] = base / j if j and np.isfinite(j) else None
        points[r["label"]] = {k: (_round6(v) if not isinstance(v, str) else v) for k, v in p.items()}
    out = {"kind": t.kind, "title": t.title, "impl": t.impl, "metric": built.unit,
           "card": _distinct(r.device for r in built.results),
           "files": [_rel(p, spec.root) for p in built.files], "points": points}
    if t.kind == "versus":
        out["peer"] = t.peer
        if t.by != "impl":
            out["by"] = t.by
    return out


def standings_json(spec: Spec) -> str:
    doc = {"generated_by": spec.command.format(spec=spec.rel_path, id="ID").replace("--print ID", f"--json {spec.json or 'OUT'}"),
           "spec": spec.rel_path,
           "tables": {t.id: table_json(spec, build(spec, t)) for t in spec.tables}}
    return json.dumps(doc, indent=1, allow_nan=False) + "\n"


# --- the gate -------------------------------------------------------------------------------

@dataclass
class GateLine:
    table: str
    label: str
    state: str        # fell, missing, card, improved, within, new
    new: Optional[float] = None
    committed: Optional[dict] = None
    bound: Optional[float] = None

    def text(self) -> str:
        c = self.committed or {}
        was = (f"committed {c.get('ratio'):.3f} ({c.get('ratio_min'):.3f}-{c.get('ratio_max'):.3f}, "
               f"{c.get('rounds')} rounds)") if c.get("ratio") is not None else "committed -"
        now = f"new {self.new:.3f}" if self.new is not None and np.isfinite(self.new) else "no new ratio"
        if self.state == "fell":
            return f"FELL      {self.table}: {self.label}: {now} < {self.bound:.3f} (committed min x (1 - tolerance)); {was}"
        if self.state == "missing":
            return f"MISSING   {self.table}: {self.label}: {now}; {was}"
        if self.state == "card":
            return f"CARD      {self.table}: {self.label}"
        if self.state == "improved":
            return f"improved  {self.table}: {self.label}: {now} > {self.bound:.3f} (committed max x (1 + tolerance)); {was}"
        if self.state == "new":
            return f"new point {self.table}: {self.label}: {now} (not in the committed standings)"
        return f"within    {self.table}: {self.label}: {now}; {was}"


def baseline_points(spec: Spec, t: Table, card: str) -> Optional[dict]:
    """The committed points of table t on another card: from the gate run the spec's
    gate_baselines names for that card (its file t.output), as the standings file holds them;
    None where the spec names none."""
    folder = spec.baselines.get(card) or spec.baselines.get(re.sub(r"^\d+x ", "", card))  # "8x NAME": NAME
    if not folder:
        return None
    path = os.path.join(spec.root, folder, t.output)
    if not os.path.exists(path):
        raise StandingsError(f"gate_baselines: {card}: no file {_rel(path, spec.root)} for table {t.id!r}")
    built = build(spec, t, files=[path])
    return table_json(spec, built)["points"]


def gate_runs(spec: Spec) -> List[tuple]:
    """(output, config, run_args) of each distinct run the gate's tables need."""
    out = {}
    for t in spec.tables:
        if t.kind == "versus" and t.output:
            out.setdefault(t.output, (t.output, t.config, list(t.run_args)))
    return list(out.values())


def gate(spec: Spec, new_dir: str, committed: dict, tolerance: float = 0.03,
         only: Optional[Sequence[str]] = None) -> List[GateLine]:
    """Every point of every gated table (kind versus with an output): its new median ratio
    against the committed one. A point fell when new < committed ratio_min x (1 - tolerance),
    improved when new > committed ratio_max x (1 + tolerance); a committed point the new run
    lacks (or could not rate) is missing. A new run on another card than the committed one
    (the table's "card") is a "card" line, which fails too: a ratio is compared on its card."""
    lines = []
    ctables = committed.get("tables", {})
    tables = [t for t in spec.tables if t.kind == "versus" and t.output and (not only or t.id in only)]
    if only:
        unknown = [i for i in only if i not in {t.id for t in spec.tables}]
        if unknown:
            raise StandingsError(f"unknown table id {unknown[0]!r}")
    if not tables:
        raise StandingsError("the spec has no versus table with an output to gate")
    for t in tables:
        cpoints = ctables.get(t.id, {}).get("points")
        if cpoints is None:
            raise StandingsError(f"table {t.id!r}: not in the committed standings file")
        path = os.path.join(new_dir, t.output)
        new = {}
        if os.path.exists(path):
            try:
                built = build(spec, t, files=[path])
                new = {r["label"]: float(r["ratio"]) for _, r in built.rows.iterrows()}
                card, was = _distinct(r.device for r in built.results), ctables.get(t.id, {}).get("card")
                if was and card != was:
                    base = baseline_points(spec, t, card)
                    if base is None:
                        lines.append(GateLine(t.id, f"the new run is on {card}, the committed standings on {was}, "
                                              "and the spec's gate_baselines has none for it: rerun on that card "
                                              "(or commit a gate run of this one and name it there)", "card"))
                    else:
                        cpoints = base
            except StandingsError as e:
                lines.append(GateLine(t.id, f"(whole table: {e})", "missing"))
        else:
            lines.append(GateLine(t.id, f"(whole table: no file {path})", "missing"))
        for label, c in cpoints.items():
            n = new.get(label)
            lo, hi = c.get("ratio_min"), c.get("ratio_max")
            if n is None or not np.isfinite(n):
                lines.append(GateLine(t.id, label, "missing", n, c))
            elif lo is not None and n < lo * (1 - tolerance):
                lines.append(GateLine(t.id, label, "fell", n, c, lo * (1 - tolerance)))
            elif hi is not None and n > hi * (1 + tolerance):
                lines.append(GateLine(t.id, label, "improved", n, c, hi * (1 + tolerance)))
            else:
                lines.append(GateLine(t.id, label, "within", n, c))
        for label, n in new.items():
            if label not in cpoints:
                lines.append(GateLine(t.id, label, "new", n))
    return lines
