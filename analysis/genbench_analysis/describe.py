"""What a result file says about its own columns and ops, as Python objects.

Files of schema version 2 carry it: the root attribute ``schema_description`` (the fixed
columns of every dataset: name, type, unit, meaning) and, per benchmark group, ``op_description``
(the op's axes, its columns with their kind, its metrics with units, the headline metric, the
plot and the comparison the analysis makes) and ``columns`` (every column of that benchmark's
points table). Files of schema version 1 carry none of it, and descriptions stored before ops declared
their extra plots lack ``extra_plots``: oldfiles.py derives what they leave out (the old-file
shims, the only module of this package that names ops).

The plots (plots.py), the report (report.py) and the comparisons (compare.py, versus.py) read
only these objects.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Dict, List, Optional


class DescriptionError(Exception):
    """A description stored in a file that is not what schema version 2 says it is. Raised
    as loader.DescriptionError (a ResultFileError) with the file and benchmark named."""


# The kinds of an op's columns (op_description); the benchmark's `columns` list and the schema
# description name the points table's own parts (fixed, axis, op), which are kept as they are.
KINDS = ("effective", "chosen", "metric", "extra")


@dataclass
class Column:
    """One column of a dataset: name, type (i64, f64, str), unit ('' when dimensionless),
    meaning (one line; '' where the file does not say), and its kind: for an op's columns
    effective, chosen, metric or extra; for the others what the file calls them (fixed, axis)."""

    name: str
    type: str = ""
    unit: str = ""
    meaning: str = ""
    kind: str = ""


@dataclass
class Metric:
    """A rate derived from a point's work and median time (a column of the points table)."""

    name: str
    unit: str = ""
    meaning: str = ""

    @property
    def label(self) -> str:
        return metric_label(self.name, self.unit)


@dataclass
class Axis:
    name: str
    type: str = ""
    help: str = ""
    tuning: bool = False
    unit: str = ""  # of the axis's values: the op description's (files before units: ''); v1: from the shim


@dataclass
class PlotHints:
    """The op's plot: the headline metric against column x (bars per point when x is ''),
    log2 x axis when log_x, one panel per combination of the facets' values, and the /ceilings
    value named by ceiling_line as a horizontal line ('{column}' in the name is filled with the
    panel's value of that column, e.g. 'gemm_{dtype}_tflops')."""

    title: str = ""
    x: str = ""
    log_x: bool = True
    facets: List[str] = field(default_factory=list)
    ceiling_line: str = ""


@dataclass
class CompareHints:
    metric: str = ""
    higher_is_better: bool = True


@dataclass
class Panel:
    """One panel of an extra plot: its column against x (log2 when log_x and x takes more than
    one value; one evenly spaced tick per value when categorical, tick_labels giving a value's
    text, e.g. '0' -> 'default'), one line per combination of the `lines` columns that vary, the
    plot's held axes that are in `free` let vary."""

    x: str
    label: str = ""
    log_x: bool = True
    categorical: bool = False
    tick_labels: Dict[str, str] = field(default_factory=dict)
    lines: List[str] = field(default_factory=list)
    free: List[str] = field(default_factory=list)


@dataclass
class ExtraPlot:
    """A plot an op asks for beyond its headline plot, and its section of the report, named
    <op>_<name>: column y of the ok points where it is finite, one panel per Panel, horizontal
    lines at reference_lines; the axes of `hold` at their values (the axes' defaults) in each
    panel that does not free them, where some points are there; in the report, a table of the
    `table` columns (seconds shown as ms) after table_note."""

    name: str
    y: str
    title: str = ""
    subtitle: str = ""
    y_label: str = ""
    reference_lines: List[float] = field(default_factory=list)
    hold: Dict[str, object] = field(default_factory=dict)
    panels: List[Panel] = field(default_factory=list)
    table: List[str] = field(default_factory=list)
    table_note: str = ""

    def to_dict(self) -> dict:
        return {"name": self.name, "title": self.title, "subtitle": self.subtitle, "y": self.y,
                "y_label": self.y_label, "reference_lines": list(self.reference_lines), "hold": dict(self.hold),
                "panels": [{"x": q.x, "label": q.label, "log_x": q.log_x, "categorical": q.categorical,
                            "tick_labels": dict(q.tick_labels), "lines": list(q.lines), "free": list(q.free)}
                           for q in self.panels],
                "table": list(self.table), "table_note": self.table_note}


@dataclass
class OpDescription:
    """What a benchmark's op declares (schema 2: the file's op_description; schema 1: derived,
    source 'v1')."""

    op: str
    summary: str = ""
    headline: str = ""
    axes: List[Axis] = field(default_factory=list)
    columns: List[Column] = field(default_factory=list)
    metrics: List[Metric] = field(default_factory=list)
    plot: PlotHints = field(default_factory=PlotHints)
    compare: CompareHints = field(default_factory=CompareHints)
    source: str = "file"
    # None: not stored (older files); the loader then fills it from oldfiles.py and sets
    # extra_plots_source to "old-file shim".
    extra_plots: Optional[List[ExtraPlot]] = None
    extra_plots_source: str = "file"

    def metric(self, name: str) -> Optional[Metric]:
        return next((m for m in self.metrics if m.name == name), None)

    @property
    def headline_metric(self) -> Optional[Metric]:
        return self.metric(self.headline) if self.headline else (self.metrics[0] if self.metrics else None)

    @property
    def compare_metric(self) -> str:
        """The column comparisons use: compare.metric, else the headline."""
        return self.compare.metric or self.headline

    def columns_of_kind(self, kind: str) -> List[str]:
        return [c.name for c in self.columns if c.kind == kind]

    def to_dict(self) -> dict:
        """The description in the JSON form schema 2 stores (op_description)."""
        return {
            "op": self.op, "summary": self.summary, "headline": self.headline,
            "axes": [{"name": a.name, "type": a.type, "unit": a.unit, "help": a.help, "tuning": a.tuning}
                     for a in self.axes],
            "columns": [{"name": c.name, "type": c.type, "unit": c.unit, "meaning": c.meaning, "kind": c.kind}
                        for c in self.columns],
            "metrics": [{"name": m.name, "unit": m.unit, "meaning": m.meaning} for m in self.metrics],
            "plot": {"title": self.plot.title, "x": self.plot.x, "log_x": self.plot.log_x,
                     "facets": list(self.plot.facets), "ceiling_line": self.plot.ceiling_line},
            "compare": {"metric": self.compare.metric, "higher_is_better": self.compare.higher_is_better},
            "extra_plots": [e.to_dict() for e in self.extra_plots or []],
        }


def metric_label(name: str, unit: str) -> str:
    """How tables and axes name a metric: its unit when the name is the unit spelled as a word
    ('tflops', 'TFLOP/s' -> 'TFLOP/s'; 'GBps', 'GB/s' -> 'GB/s'; 'tokens_per_s' -> 'tokens/s'),
    the rest of the name and the rate's unit when only its last part is ('busbw_GBps' ->
    'busbw GB/s'; 'overhead_s', 's' -> 'overhead (s)'), else 'name (unit)' ('ceiling_fraction'
    without a unit: 'ceiling_fraction')."""
    if not unit:
        return name
    u = unit.lower().replace(" ", "")
    spellings = {u, u.replace("/", ""), u.replace("/", "p")}

    def spells(s: str) -> bool:
        return s.lower().replace("_per_", "/") in spellings

    if spells(name):
        return unit
    parts = name.split("_")
    for i in range(len(parts) - 1, 0, -1):  # the shortest tail that spells the unit
        if spells("_".join(parts[i:])):
            head = "_".join(parts[:i])
            return f"{head} {unit}" if "/" in unit else f"{head} ({unit})"
    return f"{name} ({unit})"


# --- schema version 2: parsing what the file stores ----------------------------------------

def _json(text, what: str):
    if isinstance(text, (bytes, bytearray)):
        text = text.decode("utf-8", errors="replace")
    if not isinstance(text, str):
        raise DescriptionError(f"{what} is not a JSON string (a {type(text).__name__})")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise DescriptionError(f"{what} is not valid JSON ({e})") from e


def _req(d: dict, key: str, typ, what: str):
    if key not in d:
        raise DescriptionError(f"{what} has no {key!r}")
    v = d[key]
    if not isinstance(v, typ) or (typ is not bool and isinstance(v, bool) and typ in (int, float)):
        tname = typ.__name__ if isinstance(typ, type) else "/".join(t.__name__ for t in typ)
        raise DescriptionError(f"{what}: {key!r} should be a {tname}, not {v!r}")
    return v


def _opt(d: dict, key: str, typ, default, what: str):
    """d[key] checked like _req; default when absent or null."""
    return _req(d, key, typ, what) if d.get(key) is not None else default


def parse_columns(items, what: str, kinds=None) -> List[Column]:
    """A JSON list of columns; with kinds, each column's kind must be one of them."""
    if not isinstance(items, list):
        raise DescriptionError(f"{what} should be a list of columns, not {items!r}")
    out = []
    for i, c in enumerate(items):
        w = f"{what}[{i}]"
        if not isinstance(c, dict):
            raise DescriptionError(f"{w} should be an object with name, type, unit, meaning, not {c!r}")
        kind = _opt(c, "kind", str, "", w)
        if kinds is not None and kind not in kinds:
            raise DescriptionError(f"{w} ({c.get('name')!r}): kind {kind!r} is none of {', '.join(kinds)}")
        out.append(Column(name=_req(c, "name", str, w), type=_opt(c, "type", str, "", w),
                          unit=_opt(c, "unit", str, "", w), meaning=_opt(c, "meaning", str, "", w), kind=kind))
    return out


def parse_op_description(text, what: str) -> OpDescription:
    """An op_description attribute (JSON text) as an OpDescription; DescriptionError naming
    what is wrong otherwise. `what` names the attribute in messages."""
    d = _json(text, what)
    if not isinstance(d, dict):
        raise DescriptionError(f"{what} should be a JSON object, not {d!r}")
    axes = []
    for i, a in enumerate(_opt(d, "axes", list, [], what)):
        w = f"{what}: axes[{i}]"
        if not isinstance(a, dict):
            raise DescriptionError(f"{w} should be an object with a name, not {a!r}")
        axes.append(Axis(name=_req(a, "name", str, w), type=_opt(a, "type", str, "", w),
                         help=_opt(a, "help", str, "", w), tuning=bool(_opt(a, "tuning", bool, False, w)),
                         unit=_opt(a, "unit", str, "", w)))
    metrics = []
    for i, m in enumerate(_opt(d, "metrics", list, [], what)):
        w = f"{what}: metrics[{i}]"
        if not isinstance(m, dict):
            raise DescriptionError(f"{w} should be an object with name and unit, not {m!r}")
        metrics.append(Metric(name=_req(m, "name", str, w), unit=_opt(m, "unit", str, "", w),
                              meaning=_opt(m, "meaning", str, "", w)))
    p = _opt(d, "plot", dict, {}, what)
    pw = f"{what}: plot"
    facets = _opt(p, "facets", list, [], pw)
    if not all(isinstance(x, str) for x in facets):
        raise DescriptionError(f"{pw}: facets should be a list of column names, not {facets!r}")
    plot = PlotHints(title=_opt(p, "title", str, "", pw), x=_opt(p, "x", str, "", pw),
                     log_x=bool(_opt(p, "log_x", bool, True, pw)), facets=list(facets),
                     ceiling_line=_opt(p, "ceiling_line", str, "", pw))
    c = _opt(d, "compare", dict, {}, what)
    cw = f"{what}: compare"
    compare = CompareHints(metric=_opt(c, "metric", str, "", cw),
                           higher_is_better=bool(_opt(c, "higher_is_better", bool, True, cw)))
    extra = None
    if d.get("extra_plots") is not None:
        extra = parse_extra_plots(_req(d, "extra_plots", list, what), f"{what}: extra_plots")
    desc = OpDescription(op=_req(d, "op", str, what), summary=_opt(d, "summary", str, "", what),
                         headline=_opt(d, "headline", str, "", what), axes=axes,
                         columns=parse_columns(_opt(d, "columns", list, [], what), f"{what}: columns", KINDS),
                         metrics=metrics, plot=plot, compare=compare, source="file", extra_plots=extra)
    if not desc.headline and desc.metrics:
        desc.headline = desc.metrics[0].name
    if desc.headline and desc.metric(desc.headline) is None:
        raise DescriptionError(f"{what}: the headline {desc.headline!r} is not among its metrics "
                               f"({', '.join(m.name for m in desc.metrics) or 'none'})")
    return desc


def _names(d: dict, key: str, what: str) -> List[str]:
    v = _opt(d, key, list, [], what)
    if not all(isinstance(x, str) for x in v):
        raise DescriptionError(f"{what}: {key} should be a list of column names, not {v!r}")
    return list(v)


def parse_extra_plots(items, what: str) -> List[ExtraPlot]:
    """The op_description's extra_plots (a JSON list) as ExtraPlots; DescriptionError naming the
    plot and field otherwise."""
    out: List[ExtraPlot] = []
    for i, e in enumerate(items):
        w = f"{what}[{i}]"
        if not isinstance(e, dict):
            raise DescriptionError(f"{w} should be an object with name, y and panels, not {e!r}")
        name = _req(e, "name", str, w)
        w = f"{what}[{i}] ({name!r})"
        if not name or any(not (ch.isalnum() or ch in "_-") for ch in name):
            raise DescriptionError(f"{w}: the name should be letters, digits, '_' or '-' (it names a file)")
        if any(x.name == name for x in out):
            raise DescriptionError(f"{w}: a second extra plot of that name")
        refs = _opt(e, "reference_lines", list, [], w)
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in refs):
            raise DescriptionError(f"{w}: reference_lines should be a list of numbers, not {refs!r}")
        hold = _opt(e, "hold", dict, {}, w)
        if not all(isinstance(v, (int, float, str)) for v in hold.values()):
            raise DescriptionError(f"{w}: hold should map axes to values, not {hold!r}")
        panels = []
        for j, q in enumerate(_req(e, "panels", list, w)):
            pw = f"{w}: panels[{j}]"
            if not isinstance(q, dict):
                raise DescriptionError(f"{pw} should be an object with an x, not {q!r}")
            ticks = _opt(q, "tick_labels", dict, {}, pw)
            if not all(isinstance(v, str) for v in ticks.values()):
                raise DescriptionError(f"{pw}: tick_labels should map values to text, not {ticks!r}")
            free = _names(q, "free", pw)
            unheld = [c for c in free if c not in hold]
            if unheld:
                raise DescriptionError(f"{pw}: frees {', '.join(unheld)}, which the plot does not hold")
            panels.append(Panel(x=_req(q, "x", str, pw), label=_opt(q, "label", str, "", pw),
                                log_x=bool(_opt(q, "log_x", bool, True, pw)),
                                categorical=bool(_opt(q, "categorical", bool, False, pw)),
                                tick_labels=dict(ticks), lines=_names(q, "lines", pw), free=free))
        if not panels:
            raise DescriptionError(f"{w}: no panels")
        out.append(ExtraPlot(name=name, y=_req(e, "y", str, w), title=_opt(e, "title", str, "", w),
                             subtitle=_opt(e, "subtitle", str, "", w), y_label=_opt(e, "y_label", str, "", w),
                             reference_lines=[float(x) for x in refs], hold=dict(hold), panels=panels,
                             table=_names(e, "table", w), table_note=_opt(e, "table_note", str, "", w)))
    return out


def check_against_table(desc: OpDescription, table_columns: List[str], what: str) -> None:
    """DescriptionError when the description names a column the points table lacks."""
    have = set(table_columns)
    named = [("metric", m.name) for m in desc.metrics] + [("plot.x", desc.plot.x)] + \
            [("plot.facets", f) for f in desc.plot.facets] + [("compare.metric", desc.compare.metric)]
    for e in desc.extra_plots or []:
        at = f"extra plot {e.name!r}"
        named += [(f"{at}: y", e.y)] + [(f"{at}: hold", c) for c in e.hold] + \
            [(f"{at}: table", c) for c in e.table]
        for q in e.panels:
            named += [(f"{at}: panel x", q.x)] + [(f"{at}: lines", c) for c in q.lines]
    for role, name in named:
        if name and name not in have:
            raise DescriptionError(f"{what}: {role} {name!r} is not a column of the points table")


def parse_schema_description(text, what: str = "root attribute 'schema_description'") -> dict:
    """The schema description as a dict: {"version": int, "datasets": {name: [Column] or
    {"fixed": [Column], "note": str, ...}}} with the column lists parsed."""
    d = _json(text, what)
    if not isinstance(d, dict):
        raise DescriptionError(f"{what} should be a JSON object, not {d!r}")
    datasets = _opt(d, "datasets", dict, {}, what)
    out = {"version": d.get("version"), "datasets": {}}
    for name, v in datasets.items():
        w = f"{what}: datasets.{name}"
        if isinstance(v, list):
            out["datasets"][name] = parse_columns(v, w)
        elif isinstance(v, dict):
            entry = dict(v)
            for key in ("fixed", "columns"):
                if key in entry:
                    entry[key] = parse_columns(entry[key], f"{w}.{key}")
            out["datasets"][name] = entry
        else:
            raise DescriptionError(f"{w} should be a list of columns or an object, not {v!r}")
    return out


def fixed_columns(schema: dict, dataset: str) -> List[Column]:
    """The fixed columns a schema description lists for one dataset ([] when none)."""
    v = (schema or {}).get("datasets", {}).get(dataset)
    if isinstance(v, list):
        return v
    if isinstance(v, dict):
        return v.get("fixed") or v.get("columns") or []
    return []


def dtype_type(dt) -> str:
    """i64 / f64 / str for a numpy field dtype."""
    k = getattr(dt, "kind", "")
    return {"i": "i64", "u": "i64", "b": "i64", "f": "f64", "S": "str", "O": "str", "U": "str"}.get(k, str(dt))
