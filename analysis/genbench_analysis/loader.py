"""Reading genbench result files (HDF5, schema versions 1 and 2) into pandas DataFrames.

The file layout is described in docs/hdf5-schema.md. In short: root attributes describe the
run, /system has one row per rank, and /benchmarks/<name>/ holds three datasets whose first
dimension is the point row: ``points`` (one compound row per point), ``samples``
(float64 [row, rank, iteration]) and ``rank_stats`` (compound [row, rank]).

Schema 2 files describe themselves (root attribute ``schema_description``, per benchmark
``op_description`` and ``columns``); their points tables are pre-sized, so rows whose status is
"" were not run and are dropped here, and samples past a rank's ``iterations`` are undefined and
cut here. For schema 1 files an equivalent description is derived, and descriptions stored
before ops declared extra plots get those of oldfiles.py (the old-file shims). Either way each
Benchmark carries an OpDescription: its metrics with units, headline, plot, comparison and
extra plots.
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np
import pandas as pd

from . import describe as _describe
from . import oldfiles as _oldfiles
from .describe import Column, Metric, OpDescription

FORMAT = "genbench-results"
SCHEMA_VERSIONS = (1, 2)   # the versions this package reads
SCHEMA_VERSION = max(SCHEMA_VERSIONS)

# Columns the loader adds to every points table.
_ADDED_COLUMNS = ("benchmark", "op", "row", "samples_per_rank", "rel_noise")

# Columns of a file that holds several rounds of its sweep (benchmark attribute `rounds` > 1):
# the round a row belongs to (0-based) and its position in that round's shuffled run order. A
# file without them is one round, round 0; the loader then adds `round` (0) itself.
ROUND_COLUMNS = ("round", "order")

# Columns of a points table that are not benchmark parameters.
STATUS_COLUMNS = ["status", "reason", "variant", "stop_reason"]
OK = "ok"


class ResultFileError(Exception):
    """A file that this package cannot read as a genbench result file."""


class NotHDF5Error(ResultFileError):
    """Not an HDF5 file at all, or one cut short (truncated, damaged)."""


class NotGenbenchFileError(ResultFileError):
    """A readable HDF5 file that genbench did not write (no format='genbench-results')."""


class SchemaVersionError(ResultFileError):
    """A genbench file of a schema version this package does not know."""


class DescriptionError(ResultFileError):
    """A schema 2 file whose stored description (schema_description, op_description, columns)
    is malformed or names columns its tables lack."""


class ResultStateWarning(UserWarning):
    """The run that wrote the file did not finish (state running, interrupted or failed)."""


class HeldBackWarning(UserWarning):
    """Points of the file were timed while the card was held back (the points table's
    `throttled`: software power cap, hardware slowdown, thermal slowdown or power brake)."""


# NVML clocks-event reasons that hold the card back, as genbench names them (the bits:
# clocks_event in src/backend/backend.h; the words: holding_reasons in src/runner/state_monitor.cpp).
_HOLDING_REASONS = ((0x4, "software power cap"), (0x8, "hardware slowdown"), (0x20, "software thermal"),
                    (0x40, "hardware thermal"), (0x80, "power brake"))


def holding_reasons(bits: int) -> str:
    """The holding reasons among clocks-event bits, in words ("" for none)."""
    return ", ".join(name for bit, name in _HOLDING_REASONS if bits & bit)


def _decode(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", errors="replace").rstrip("\x00")
    if isinstance(v, np.ndarray):
        if v.dtype.kind in "SO":
            return [_decode(x) for x in v.tolist()]
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    return v


def _frame(data: np.ndarray) -> pd.DataFrame:
    """A compound (structured) array as a DataFrame; fixed-length byte strings decoded."""
    cols = {}
    for name in data.dtype.names or ():
        col = data[name]
        if col.dtype.kind == "S":
            cols[name] = np.array([_decode(x) for x in col.tolist()], dtype=object)
        elif col.dtype.kind == "O":
            cols[name] = np.array([_decode(x) for x in col.tolist()], dtype=object)
        elif col.ndim > 1:  # array-valued column: keep one Python list per row
            cols[name] = list(col)
        else:
            cols[name] = col
    return pd.DataFrame(cols)


def _units(dset) -> Dict[str, str]:
    out = {}
    for k, v in dset.attrs.items():
        if k.startswith("unit_"):
            out[k[len("unit_"):]] = _decode(v)
    return out


@dataclass
class Benchmark:
    """What one /benchmarks/<name> group says about itself.

    description  the op's OpDescription (schema 2: stored in the file; schema 1: derived)
    columns      every column of its points table (Column: name, type, unit, meaning, kind)
    tags         the config's labels of the benchmark (group attribute 'tags', a JSON object:
                 name -> value as written, a string); {} where it has none (schema 1 files)
    """

    name: str
    op: str
    axes: List[str]
    implementations: List[str]
    attrs: Dict[str, object] = field(default_factory=dict)
    description: Optional[OpDescription] = None
    columns: List[Column] = field(default_factory=list)
    table_columns: List[str] = field(default_factory=list, repr=False)  # as stored, in order
    tags: Dict[str, str] = field(default_factory=dict)

    @property
    def metrics(self) -> List[Metric]:
        return list(self.description.metrics) if self.description else []

    @property
    def headline(self) -> Optional[Metric]:
        """The op's headline metric (name, unit, meaning), or None when it declares none."""
        return self.description.headline_metric if self.description else None

    @property
    def units(self) -> Dict[str, str]:
        """column -> unit ('' when dimensionless) for every column of the points table."""
        return {c.name: c.unit for c in self.columns}

    @property
    def meanings(self) -> Dict[str, str]:
        return {c.name: c.meaning for c in self.columns}

    @property
    def compare_metric(self) -> str:
        """The column compare and versus rate by: the op's compare.metric, else its headline."""
        return self.description.compare_metric if self.description else ""

    @property
    def higher_is_better(self) -> bool:
        return self.description.compare.higher_is_better if self.description else True

    def label(self, column: str) -> str:
        """How tables and axes name a column: its metric label ('TFLOP/s', 'busbw GB/s')."""
        return _describe.metric_label(column, self.units.get(column, ""))


def device_label(backend: str, system: pd.DataFrame) -> str:
    """How plots name the hardware of one file: 'host backend (CPU)' or e.g. '8x NVIDIA H200'."""
    if backend == "host" or system.empty:
        return "host backend (CPU)" if backend in ("host", "") else f"{backend} backend"
    names = system["name"].tolist() if "name" in system else []
    uniq = list(dict.fromkeys(n for n in names if n))
    if not uniq:
        return f"{backend} backend"
    if len(uniq) == 1:
        return f"{len(names)}x {uniq[0]}" if len(names) > 1 else uniq[0]
    return " + ".join(f"{names.count(n)}x {n}" for n in uniq)


class Result:
    """One genbench result file.

    attrs       root attributes (dict)
    system      one row per rank (DataFrame)
    benchmarks  name -> Benchmark (op, axes, implementations, group attributes)
    points      one row per (benchmark, point): parameters, status, metrics (DataFrame)
    ranks       one row per (benchmark, point, rank): that rank's own statistics, plus
                ``rel_median`` = rank median / median over ranks of the point
    units       column -> unit of the points table (every benchmark's; Benchmark.units is one's)
    schema      the schema description: stored (schema 2) or derived from the file (schema 1)
    ceilings    /ceilings (rank, name, value, unit, detail); empty where none was measured
    samples(b)  long-form raw samples of benchmark b (read on request)
    rounds()    one view per round of the sweep the file holds (benchmark attribute `rounds`):
                each a Result of that round's rows only, named "file.h5#roundN" (N from 0)

    A file of several rounds holds sweep_size x rounds rows per benchmark (row = round *
    sweep_size + point); its points table has the columns `round` and `order` (the point's
    place in its round's run order). Every points table here has `round` (0 where the file
    has none).
    """

    def __init__(self, path: str, attrs: dict, system: pd.DataFrame, benchmarks: Dict[str, Benchmark],
                 points: pd.DataFrame, ranks: pd.DataFrame, units: Optional[Dict[str, str]] = None,
                 schema: Optional[dict] = None, ceilings: Optional[pd.DataFrame] = None,
                 source: Optional[str] = None, round_index: Optional[int] = None):
        self.path = path
        self.source = source or path    # the file on disk (path is a label for a round's view)
        self.round_index = round_index  # the round a view holds; None for the whole file
        self.attrs = attrs
        self.system = system
        self.benchmarks = benchmarks
        self.points = points
        self.ranks = ranks
        self.units = units or {}
        self.schema = schema or {"version": attrs.get("schema_version"), "datasets": {}}
        self.ceilings = ceilings if ceilings is not None else pd.DataFrame(
            columns=["rank", "name", "value", "unit", "detail"])

    @property
    def schema_version(self) -> int:
        return int(self.attrs.get("schema_version", 0) or 0)

    def ceiling(self, name: str) -> Optional[tuple]:
        """(value, unit) of a /ceilings entry, the lowest over ranks; None when not measured."""
        c = self.ceilings
        if c.empty or "name" not in c:
            return None
        rows = c[(c["name"] == name) & np.isfinite(pd.to_numeric(c["value"], errors="coerce"))]
        if rows.empty:
            return None
        i = pd.to_numeric(rows["value"]).idxmin()
        return float(rows.loc[i, "value"]), str(rows.loc[i, "unit"]) if "unit" in rows else ""

    # --- rounds -------------------------------------------------------------------------
    @property
    def round_count(self) -> int:
        """Rounds of the sweep in the file: the largest `rounds` attribute of its benchmarks,
        or the rounds its rows name, whichever is more (1 for files without rounds)."""
        declared = [int(b.attrs.get("rounds", 1) or 1) for b in self.benchmarks.values()]
        seen = int(self.points["round"].max()) + 1 if "round" in self.points and len(self.points) else 1
        return max(declared + [seen, 1])

    def rounds(self) -> List["Result"]:
        """One Result per round of the file, each holding only that round's points and rank
        statistics, its path "file.h5#roundN"; [self] for a file of one round (and for a view)."""
        if self.round_index is not None or self.round_count <= 1 or "round" not in self.points:
            return [self]
        views = []
        for r in sorted(int(x) for x in pd.unique(self.points["round"])):
            pts = self.points[self.points["round"] == r].reset_index(drop=True)
            rk = self.ranks
            if not rk.empty and "row" in rk:
                keep = pts[["benchmark", "row"]].drop_duplicates()
                rk = rk.merge(keep, on=["benchmark", "row"], how="inner")
            views.append(Result(f"{self.path}#round{r}", self.attrs, self.system, self.benchmarks, pts, rk,
                                self.units, schema=self.schema, ceilings=self.ceilings, source=self.source,
                                round_index=r))
        return views

    # --- labels -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return os.path.basename(self.path)

    @property
    def backend(self) -> str:
        return str(self.attrs.get("backend", ""))

    @property
    def device(self) -> str:
        return device_label(self.backend, self.system)

    @property
    def label(self) -> str:
        """Device and file, as plots and tables name this result."""
        return f"{self.device} \u2014 {self.name}"

    def __repr__(self) -> str:
        return (f"Result({self.path!r}, {self.device}, {len(self.benchmarks)} benchmarks, "
                f"{len(self.points)} points, state={self.attrs.get('state')!r})")

    # --- access -------------------------------------------------------------------------
    def table(self, benchmark: str) -> pd.DataFrame:
        """The points of one benchmark with only the columns that benchmark has (its stored
        table's, plus benchmark, op, row, samples_per_rank and rel_noise)."""
        b = self.benchmarks[benchmark]
        df = self.points[self.points["benchmark"] == benchmark]
        if b.table_columns:  # the stored order, with the loader's columns around it
            order = ["benchmark", "op", "row"] + list(b.table_columns) + ["samples_per_rank", "rel_noise"]
            keep = [c for c in dict.fromkeys(order) if c in df.columns]
        else:
            keep = [c for c in df.columns if c not in self._axis_union() or c in b.axes]
        return df[keep].reset_index(drop=True)

    def _axis_union(self) -> set:
        return {a for b in self.benchmarks.values() for a in b.axes}

    def samples(self, benchmark: str) -> pd.DataFrame:
        """Raw per-iteration times of one benchmark, long form.

        Columns: benchmark, point, impl, rank, iteration, time_s. NaN padding is dropped.
        """
        if benchmark not in self.benchmarks:
            raise KeyError(f"{self.path}: no benchmark {benchmark!r} (have: {', '.join(self.benchmarks)})")
        import h5py

        try:
            with h5py.File(self.source, "r") as f:
                data = f["benchmarks"][benchmark]["samples"][()]
        except (OSError, KeyError) as e:
            raise ResultFileError(f"{self.path}: cannot read the samples of {benchmark!r}: {e}") from e
        pts = self.points[self.points["benchmark"] == benchmark]
        pts = pts[pts["row"] < data.shape[0]].sort_values("row")
        rows = pts["row"].to_numpy()
        rk = self.ranks[self.ranks["benchmark"] == benchmark] if not self.ranks.empty else self.ranks
        data = _cut_samples(data[rows], _iterations_per_rank(rows, data.shape[1], rk, pts))
        r, k, i = np.nonzero(~np.isnan(data))
        # np.nonzero walks row-major, so the result is ordered by point row, rank, iteration.
        return pd.DataFrame({
            "benchmark": benchmark,
            "point": pts["point"].to_numpy()[r] if len(r) else np.array([], dtype=np.int64),
            "impl": pts["impl"].to_numpy()[r] if len(r) else np.array([], dtype=object),
            "rank": k.astype(np.int64),
            "iteration": i.astype(np.int64),
            "time_s": data[r, k, i],
        })

    def axes(self, benchmark: str) -> List[str]:
        return list(self.benchmarks[benchmark].axes)


def _check_file(path: str):
    """Opens path as a genbench file of a known schema, or raises a ResultFileError."""
    import h5py

    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    try:
        is_h5 = h5py.is_hdf5(path)
    except OSError:
        is_h5 = False
    if not is_h5:
        raise NotHDF5Error(f"{path}: not an HDF5 file (no HDF5 signature); is it a genbench result file?")
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise NotHDF5Error(f"{path}: cannot be opened as HDF5, the file is damaged or truncated ({e})") from e
    try:
        fmt = _decode(f.attrs["format"]) if "format" in f.attrs else None
        if fmt != FORMAT:
            what = "no 'format' attribute" if fmt is None else f"format={fmt!r}"
            raise NotGenbenchFileError(f"{path}: not a genbench result file ({what}; expected format={FORMAT!r})")
        version = _decode(f.attrs["schema_version"]) if "schema_version" in f.attrs else None
        if version not in SCHEMA_VERSIONS:
            known = " and ".join(str(v) for v in SCHEMA_VERSIONS)
            raise SchemaVersionError(
                f"{path}: schema version {version}, but this genbench_analysis reads versions {known}; "
                "use the analysis package of the genbench release that wrote the file")
    except BaseException:
        f.close()
        raise
    return f


def load(path) -> Result:
    """Reads a genbench result file.

    Raises NotHDF5Error (not HDF5, truncated), NotGenbenchFileError (another tool's file) or
    SchemaVersionError (unknown schema version); all three are ResultFileError.
    """
    path = os.fspath(path)
    f = _check_file(path)
    try:
        with f:
            return _read(path, f)
    except ResultFileError:
        raise
    except (OSError, KeyError, ValueError) as e:
        raise NotHDF5Error(f"{path}: cannot be read, the file is damaged or truncated ({e})") from e


def _read(path: str, f) -> Result:
    attrs = {k: _decode(v) for k, v in f.attrs.items() if k != "schema_description"}
    version = attrs.get("schema_version")
    state = attrs.get("state")
    if state != "complete":
        warnings.warn(f"{path}: the run is not complete (state={state!r}); its results may be partial",
                      ResultStateWarning, stacklevel=3)

    if version >= 2:
        if "schema_description" not in f.attrs:
            raise DescriptionError(f"{path}: schema version {version} but no root attribute 'schema_description'")
        try:
            schema = _describe.parse_schema_description(f.attrs["schema_description"])
        except _describe.DescriptionError as e:
            raise DescriptionError(f"{path}: {e}") from e
    else:
        schema = _v1_schema(f)

    system = _frame(f["system"][()]) if "system" in f else pd.DataFrame()
    ceilings = _frame(f["ceilings"][()]) if "ceilings" in f else None

    benchmarks: Dict[str, Benchmark] = {}
    point_frames, rank_frames = [], []
    units: Dict[str, str] = {}
    int_axes = set()
    group = f["benchmarks"] if "benchmarks" in f else {}
    for name in group:
        g = group[name]
        gattrs = {k: _decode(v) for k, v in g.attrs.items() if k not in ("op_description", "columns", "tags")}
        pdset = g["points"] if "points" in g else None
        b = _benchmark(path, name, g, gattrs, pdset, version, schema)
        benchmarks[name] = b
        if pdset is None:
            continue
        units.update({c.name: c.unit for c in b.columns if c.unit or c.name not in units})
        pts = _frame(pdset[()])
        pts.insert(0, "benchmark", name)
        pts.insert(1, "op", b.op)
        pts.insert(2, "row", np.arange(len(pts), dtype=np.int64))
        # Rounds: a file of several rounds says which round each row is (column `round`); older
        # files are one round, round 0.
        if "round" not in pts:
            nrounds = int(gattrs.get("rounds", 1) or 1)
            sweep = int(gattrs.get("sweep_size", 0) or 0)
            if nrounds > 1 and sweep > 0:
                pts["round"] = (pts["row"] // sweep).astype(np.int64)
            else:
                pts["round"] = np.int64(0)
        # Schema 2 tables are pre-sized: a row whose status is "" is a point that was not run.
        if "status" in pts:
            pts = pts[pts["status"].astype(str) != ""].reset_index(drop=True)
        rows = pts["row"].to_numpy()
        for a in b.axes:
            if a in pts and pts[a].dtype.kind in "iu":
                int_axes.add(a)

        # Per-rank statistics of the rows that ran.
        rk = pd.DataFrame()
        if "rank_stats" in g:
            rs_d = g["rank_stats"]
            sel = rows[rows < rs_d.shape[0]]
            rs = rs_d[()][sel] if len(sel) else rs_d[()][:0]
            nranks = rs.shape[1] if rs.ndim == 2 else 0
            flat = _frame(rs.reshape(-1)) if rs.size else pd.DataFrame()
            if not flat.empty:
                flat.insert(0, "benchmark", name)
                flat.insert(1, "row", np.repeat(sel.astype(np.int64), nranks))
                flat.insert(2, "rank", np.tile(np.arange(nranks, dtype=np.int64), len(sel)))
                key = pts[["row", "point", "impl", "status"]]
                flat = flat.merge(key, on="row", how="inner")
                rank_frames.append(flat)
                rk = flat

        # Iterations recorded per rank: the samples up to each rank's iteration count (schema 2
        # leaves the rest undefined; schema 1 pads with NaN).
        if "samples" in g:
            s = g["samples"]
            n = len(pts)
            counts = np.zeros(n, dtype=np.int64)
            noise = np.full(n, np.nan)
            inside = rows < s.shape[0]
            if inside.any():
                data = s[()][rows[inside]]
                data = _cut_samples(data, _iterations_per_rank(rows[inside], s.shape[1], rk, pts[inside]))
                per_rank = (~np.isnan(data)).sum(axis=2)
                counts[inside] = per_rank.max(axis=1) if per_rank.size else 0
                noise[inside] = samples_noise(data)
            pts["samples_per_rank"] = counts
            pts["rel_noise"] = noise
        point_frames.append(pts)

    points = _concat(point_frames, int_axes)
    if not points.empty:
        fallback = relative_noise(points)
        points["rel_noise"] = points["rel_noise"].where(points["rel_noise"].notna(), fallback) \
            if "rel_noise" in points else fallback
    _warn_held_back(path, points)
    ranks = pd.concat(rank_frames, ignore_index=True) if rank_frames else pd.DataFrame(
        columns=["benchmark", "row", "rank", "point", "impl", "status", "median_s"])
    if not ranks.empty and "median_s" in ranks:
        med = ranks.groupby(["benchmark", "row"])["median_s"].transform("median")
        with np.errstate(divide="ignore", invalid="ignore"):
            ranks["rel_median"] = ranks["median_s"] / med
        if "host" in system and "rank" in system:
            ranks = ranks.merge(system[["rank", "host"]], on="rank", how="left")
    return Result(path, attrs, system, benchmarks, points, ranks, units, schema=schema, ceilings=ceilings)


def _benchmark(path: str, name: str, g, gattrs: dict, pdset, version: int, schema: dict) -> Benchmark:
    """The Benchmark of group g: description and columns from the file (schema 2) or derived
    (schema 1)."""
    names = list(pdset.dtype.names or ()) if pdset is not None else []
    impls = list(gattrs.get("implementations", []) or [])
    if version >= 2:
        what = f"{path}: benchmark {name!r}"
        if "op_description" not in g.attrs:
            raise DescriptionError(f"{what} has no attribute 'op_description' (schema version {version})")
        try:
            desc = _describe.parse_op_description(g.attrs["op_description"], f"{what}: op_description")
            if "columns" in g.attrs:
                columns = _describe.parse_columns(_describe._json(g.attrs["columns"], f"{what}: columns"),
                                                  f"{what}: columns")
            else:  # the fixed columns of the schema, the op's own, the axes typed from the table
                columns = _columns_from_parts(names, pdset, _describe.fixed_columns(schema, "points"), desc)
            if names:
                missing = [c.name for c in columns if c.name not in names]
                if missing:
                    raise _describe.DescriptionError(f"{what}: columns lists {', '.join(missing)}, "
                                                     "which the points table lacks")
                _describe.check_against_table(desc, names, f"{what}: op_description")
        except _describe.DescriptionError as e:
            raise DescriptionError(str(e) if str(e).startswith(path) else f"{path}: {e}") from e
        axes = list(gattrs.get("axes", []) or []) or [a.name for a in desc.axes]
        # The op's columns take the kind its description gives them (the list says only "op").
        kinds = {c.name: c.kind for c in desc.columns}
        # Axes take the unit the description gives them where the list has none.
        axis_units = {a.name: a.unit for a in desc.axes if a.unit}
        for c in columns:
            if c.name in kinds and c.kind in ("", "op"):
                c.kind = kinds[c.name]
            if not c.unit and c.name in axis_units:
                c.unit = axis_units[c.name]
        op = str(gattrs.get("op", desc.op))
    else:
        axes = list(gattrs.get("axes", []) or [])
        op = str(gattrs.get("op", name))
        units = _units(pdset) if pdset is not None else {}
        desc = _oldfiles.v1_op_description(op, axes, pdset.dtype if pdset is not None else None, units)
        columns = _columns_from_parts(names, pdset, _describe.fixed_columns(schema, "points"), desc)
    if desc.extra_plots is None:  # stored before ops declared them
        desc.extra_plots = _oldfiles.pre_hint_extra_plots(version, names)
        desc.extra_plots_source = "old-file shim"
    return Benchmark(name=name, op=op, axes=axes, implementations=impls, attrs=gattrs, description=desc,
                     columns=columns, table_columns=names, tags=_tags(path, name, g))


def _tags(path: str, name: str, g) -> Dict[str, str]:
    """The benchmark's 'tags' attribute (a JSON object of names to scalar values) as a dict of
    strings; {} without one. A malformed attribute is a DescriptionError naming the benchmark."""
    if "tags" not in g.attrs:
        return {}
    what = f"{path}: benchmark {name!r}: tags"
    try:
        obj = _describe._json(g.attrs["tags"], what)
    except _describe.DescriptionError as e:
        raise DescriptionError(str(e)) from e
    if not isinstance(obj, dict):
        raise DescriptionError(f"{what}: expected a JSON object of names to values, got {type(obj).__name__}")
    out = {}
    for k, v in obj.items():
        if isinstance(v, (dict, list)):
            raise DescriptionError(f"{what}: tag {k!r} has a {type(v).__name__} value; tags hold one value each")
        out[str(k)] = v if isinstance(v, str) else json.dumps(v)
    return out


def _columns_from_parts(names: List[str], pdset, fixed: List[Column], desc: OpDescription) -> List[Column]:
    """Every column of a points table, in table order: described by the schema's fixed columns
    or the op's, else typed from the table (axes: unit from the op description's columns)."""
    known = {c.name: c for c in fixed}
    known.update({c.name: c for c in desc.columns})
    out = []
    for n in names:
        c = known.get(n)
        if c is None:
            axis = next((a for a in desc.axes if a.name == n), None)
            c = Column(n, _describe.dtype_type(pdset.dtype.fields[n][0]), axis.unit if axis else "",
                       axis.help if axis else "")
        out.append(Column(c.name, c.type, c.unit, c.meaning, c.kind))
    return out


def _v1_schema(f) -> dict:
    """A schema description for a schema 1 file: the columns its datasets have, with their
    types and units (unit_<column> attributes); v1 files hold no meanings. The points' fixed
    columns are those of oldfiles.V1_FIXED that the tables have."""
    def cols(dset, only=None):
        if dset is None or dset.dtype.names is None:
            return []
        u = _units(dset)
        return [Column(n, _describe.dtype_type(dset.dtype.fields[n][0]), u.get(n, ""), "")
                for n in dset.dtype.names if only is None or n in only]

    datasets = {}
    pts = None
    if "benchmarks" in f:
        for name in f["benchmarks"]:
            if "points" in f["benchmarks"][name]:
                pts = f["benchmarks"][name]["points"]
                break
    datasets["points"] = {"fixed": cols(pts, set(_oldfiles.V1_FIXED)),
                          "note": "derived from a schema 1 file: types and units of its columns, no meanings"}
    for ds in ("system", "ceilings"):
        if ds in f:
            datasets[ds] = cols(f[ds])
    if pts is not None and "rank_stats" in pts.parent:
        datasets["rank_stats"] = cols(pts.parent["rank_stats"])
    return {"version": 1, "datasets": datasets}


def _iterations_per_rank(rows: np.ndarray, nranks: int, ranks: pd.DataFrame, pts: pd.DataFrame) -> np.ndarray:
    """[len(rows), nranks] iterations each rank timed at each row: the point's iterations, or
    the rank's own (rank_stats) where smaller; unknown (no column) -> a large number."""
    rows = np.asarray(rows, dtype=np.int64)
    out = np.full((len(rows), nranks), np.iinfo(np.int64).max, dtype=np.int64)
    if not len(rows):
        return out
    order = np.argsort(rows, kind="stable")

    def positions(r):
        r = np.asarray(r, dtype=np.int64)
        i = np.clip(np.searchsorted(rows[order], r), 0, len(rows) - 1)
        found = rows[order][i] == r
        return order[i], found

    if "iterations" in pts:
        pos, found = positions(pts["row"].to_numpy())
        it = pd.to_numeric(pts["iterations"], errors="coerce").fillna(0).astype(np.int64).to_numpy()
        out[pos[found], :] = it[found, None]
    if ranks is not None and not ranks.empty and "iterations" in ranks:
        # A rank's own count where it is smaller (never more than the point's)
        pos, found = positions(ranks["row"].to_numpy())
        k = ranks["rank"].to_numpy().astype(np.int64)
        found &= (k >= 0) & (k < nranks)
        it = pd.to_numeric(ranks["iterations"], errors="coerce").fillna(0).astype(np.int64).to_numpy()
        out[pos[found], k[found]] = np.minimum(out[pos[found], k[found]], it[found])
    return out


def _cut_samples(data: np.ndarray, iters: np.ndarray) -> np.ndarray:
    """data [row, rank, iteration] with every entry past its rank's iteration count NaN."""
    data = np.array(data, dtype=float, copy=True)
    if data.size == 0:
        return data
    idx = np.arange(data.shape[2])[None, None, :]
    data[idx >= iters[:, :, None]] = np.nan
    return data


def _warn_held_back(path: str, points: pd.DataFrame) -> None:
    """HeldBackWarning when points that ran ok were timed with the card held back."""
    if points.empty or "throttled" not in points or "status" not in points:
        return
    ok = points[points["status"] == "ok"]
    held = ok[ok["throttled"].fillna(0).astype(np.int64) != 0]
    if held.empty:
        return
    bits = 0
    if "throttle_reasons" in held:
        for r in held["throttle_reasons"].fillna(0).astype(np.int64):
            bits |= int(r)
    why = holding_reasons(bits) or "reasons not recorded"
    warnings.warn(f"{path}: {len(held)} of {len(ok)} points were timed with the card held back ({why}); "
                  "their rates are the held-back card's (points table: throttled, throttle_reasons)",
                  HeldBackWarning, stacklevel=4)


# p90 - p10 of a normal distribution spans 2 * 1.2816 standard deviations.
_P10_P90_SIGMAS = 2 * 1.2815515655446004


# MAD * 1.4826 estimates the standard deviation of normally distributed values.
_MAD_SIGMA = 1.482602218505602


def samples_noise(samples: np.ndarray) -> np.ndarray:
    """Relative noise per point of a samples array [row, rank, iteration].

    The series is the one the point's statistics describe: per iteration, the slowest rank.
    Noise is its median absolute deviation scaled to a standard deviation (x 1.4826), over
    its median: stddev / median for normally distributed times, and robust against the odd
    slow iteration (a descheduled process, a page fault) that stddev / mean is not.
    NaN for points with fewer than 2 iterations.
    """
    out = np.full(samples.shape[0], np.nan)
    if samples.size == 0:
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN padding columns and rows
        slowest = np.nanmax(samples, axis=1) if samples.ndim == 3 else np.asarray(samples, dtype=float)
        slowest = np.where(np.isfinite(slowest), slowest, np.nan)
        enough = np.isfinite(slowest).sum(axis=1) >= 2
        med = np.nanmedian(slowest, axis=1)
        mad = np.nanmedian(np.abs(slowest - med[:, None]), axis=1)
        ok = enough & (med > 0)
        out[ok] = _MAD_SIGMA * mad[ok] / med[ok]
    return out


def relative_noise(points: pd.DataFrame) -> pd.Series:
    """Relative noise from a points table's statistics, for tables without samples:
    (p90 - p10) / (2.563 * median), which is stddev / median for normally distributed
    times; stddev / mean where the percentiles are missing. NaN for points without samples.
    """
    med = points.get("time_median_s")
    p10, p90 = points.get("time_p10_s"), points.get("time_p90_s")
    with np.errstate(divide="ignore", invalid="ignore"):
        if med is not None and p10 is not None and p90 is not None:
            noise = (p90 - p10) / (_P10_P90_SIGMAS * med)
        else:
            noise = pd.Series(np.nan, index=points.index)
        mean, std = points.get("time_mean_s"), points.get("time_stddev_s")
        if mean is not None and std is not None:
            noise = noise.where(noise.notna(), std / mean)
        if med is not None:
            noise = noise.where(med > 0)
    return noise.astype(float)


def _concat(frames: List[pd.DataFrame], int_axes: set) -> pd.DataFrame:
    if not frames:
        return pd.DataFrame(columns=["benchmark", "op", "row", "point", "impl", "status"])
    if len(frames) > 1:
        # Integer axes that some benchmark lacks become nullable integers, not floats. An axis
        # name two ops type differently (one's cache "hot", another's cache 4096) stays as it is
        # in each benchmark's rows (the column is then of mixed type).
        for fr in frames:
            for a in int_axes:
                if a in fr and fr[a].dtype.kind in "iu":
                    fr[a] = fr[a].astype("Int64")
    out = pd.concat(frames, ignore_index=True, sort=False)
    # Keep the natural order: identification, axes, then status and metrics.
    first = ["benchmark", "op", "row", "point", "impl"]
    axes = []
    for fr in frames:
        for c in fr.columns:
            if c in first or c in axes:
                continue
            if c == "status":
                break
            axes.append(c)
    rest = [c for c in out.columns if c not in first and c not in axes]
    return out[first + axes + rest]

