"""What a result file says about its own columns and ops, as Python objects.

Files of schema version 2 carry it: the root attribute ``schema_description`` (the fixed
columns of every dataset: name, type, unit, meaning) and, per benchmark group, ``op_description``
(the op's axes, its columns with their kind, its metrics with units, the headline metric, the
plot and the comparison the analysis makes) and ``columns`` (every column of that benchmark's
points table). Files of schema version 1 carry none of it; ``v1_op_description`` derives an
equivalent description from what they hold (column names, dtypes, ``unit_<column>`` attributes)
and from one table of what the ops of that version declared (``_V1_OPS``, the v1 compatibility
shim: the only place in this package that names ops).

The plots (plots.py) and the comparisons (compare.py, versus.py) read only these objects.
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
    desc = OpDescription(op=_req(d, "op", str, what), summary=_opt(d, "summary", str, "", what),
                         headline=_opt(d, "headline", str, "", what), axes=axes,
                         columns=parse_columns(_opt(d, "columns", list, [], what), f"{what}: columns", KINDS),
                         metrics=metrics, plot=plot, compare=compare, source="file")
    if not desc.headline and desc.metrics:
        desc.headline = desc.metrics[0].name
    if desc.headline and desc.metric(desc.headline) is None:
        raise DescriptionError(f"{what}: the headline {desc.headline!r} is not among its metrics "
                               f"({', '.join(m.name for m in desc.metrics) or 'none'})")
    return desc


def check_against_table(desc: OpDescription, table_columns: List[str], what: str) -> None:
    """DescriptionError when the description names a column the points table lacks."""
    have = set(table_columns)
    named = [("metric", m.name) for m in desc.metrics] + [("plot.x", desc.plot.x)] + \
            [("plot.facets", f) for f in desc.plot.facets] + [("compare.metric", desc.compare.metric)]
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


# --- schema version 1: the compatibility shim ----------------------------------------------

# v1 compatibility shim. Files of schema version 1 do not describe their ops; this table holds
# what those ops declare (src/ops/<op>/: their metrics, headline first, all fixed v1 columns; their
# plot and comparison hints), and the units of axes a v1 file leaves without one. It is the only
# place in genbench_analysis that names ops, and it is read only for files of schema version 1
# (schema 2 files carry their own description). A v1 op missing here gets the generic
# description of v1_op_description.
_V1_OPS = {
    "attention": {"metrics": ["tflops"],
                  "plot": {"title": "Attention throughput against sequence length", "x": "seqlen_q",
                           "facets": ["dtype", "head_dim", "causal"]}},
    "gemm": {"metrics": ["tflops"],
             "plot": {"title": "GEMM throughput per precision and shape", "x": "m", "facets": ["dtype"]}},
    "collective": {"metrics": ["busbw_GBps", "algbw_GBps"], "units": {"bytes": "B"},
                   "plot": {"title": "Collective bus bandwidth against message size", "x": "bytes",
                            "facets": ["collective"]}},
    "overlap": {"metrics": ["tflops"], "units": {"bytes": "B"},
                "plot": {"title": "GEMM and collective overlapped", "x": "bytes", "facets": ["collective", "priority"]},
                "compare": {"metric": "overlap_efficiency"}},
}

# The columns every v1 points table has besides the axes (docs/hdf5-schema.md, version 1), and
# the metric columns among them with their meanings.
V1_FIXED = ["point", "impl", "status", "reason", "variant", "stop_reason", "iterations", "time_median_s",
            "time_mean_s", "time_min_s", "time_max_s", "time_p10_s", "time_p90_s", "time_p99_s", "time_stddev_s",
            "work_flops", "work_bytes", "tflops", "algbw_GBps", "busbw_GBps", "busbw_factor", "peak_memory_bytes",
            "validation_error", "validation_tolerance", "sm_clock_mhz", "mem_clock_mhz", "power_w",
            "temperature_c", "throttle_reasons", "throttled", "ceiling_fraction"]
_V1_METRICS = {
    "tflops": ("TFLOP/s", "work_flops / time_median_s"),
    "busbw_GBps": ("GB/s", "bus bandwidth: algbw_GBps x busbw_factor (nccl-tests)"),
    "algbw_GBps": ("GB/s", "algorithm bandwidth: the collective's size / time_median_s"),
}


def dtype_type(dt) -> str:
    """i64 / f64 / str for a numpy field dtype."""
    k = getattr(dt, "kind", "")
    return {"i": "i64", "u": "i64", "b": "i64", "f": "f64", "S": "str", "O": "str", "U": "str"}.get(k, str(dt))


def v1_op_description(op: str, axes: List[str], table_dtype, units: Dict[str, str]) -> OpDescription:
    """The description a schema-1 benchmark would carry: its axes, columns and units from the
    file, the metrics, plot and comparison of the shim (_V1_OPS); a v1 op not in the shim gets
    tflops as headline and a plot against its first axis."""
    shim = _V1_OPS.get(op, {})
    names = list(table_dtype.names or ()) if table_dtype is not None else []
    units = dict(units)
    units.update({k: v for k, v in shim.get("units", {}).items() if k not in units})
    metric_names = [m for m in shim.get("metrics", ["tflops"]) if m in names or not names]
    metrics = [Metric(m, units.get(m, _V1_METRICS.get(m, ("", ""))[0]), _V1_METRICS.get(m, ("", ""))[1])
               for m in metric_names]
    axis_set = set(axes)
    columns = []
    for n in names:
        if n in axis_set or n in V1_FIXED and n not in metric_names:
            continue
        kind = "metric" if n in metric_names else "extra"
        columns.append(Column(n, dtype_type(table_dtype.fields[n][0]), units.get(n, ""), "", kind))
    p = shim.get("plot", {"title": f"{op}: {metric_names[0] if metric_names else 'throughput'}",
                          "x": axes[0] if axes else "", "facets": []})
    plot = PlotHints(title=p.get("title", ""), x=p.get("x", ""), log_x=p.get("log_x", True),
                     facets=[f for f in p.get("facets", []) if f in axis_set],
                     ceiling_line=p.get("ceiling_line", ""))
    axis_objs = [Axis(a, dtype_type(table_dtype.fields[a][0]) if a in names else "", unit=units.get(a, ""))
                 for a in axes]
    c = shim.get("compare", {})
    compare = CompareHints(metric=c.get("metric", "") if c.get("metric", "") in names else "",
                           higher_is_better=c.get("higher_is_better", True))
    return OpDescription(op=op, summary="", headline=metric_names[0] if metric_names else "", axes=axis_objs,
                         columns=columns, metrics=metrics, plot=plot, compare=compare, source="v1")
