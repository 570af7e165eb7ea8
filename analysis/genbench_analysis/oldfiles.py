"""Old-file shims: what files written by earlier versions of genbench leave out of their
descriptions, by the schema version they were stored with. This is the only module of
genbench_analysis that names ops or keys anything by an op's columns; the rest of the package
reads the descriptions (describe.py) and what the loader fills in from here.

schema 1  files describe nothing: v1_op_description derives each benchmark's description from
          the file (column names, dtypes, ``unit_<column>`` attributes) and from V1_OPS, what the
          ops of that version declared, keyed by op name (schema 1 stores nothing else to key by).
schema 1, 2  descriptions stored before ops declared their extra plots (no ``extra_plots`` in
          op_description; every schema 1 file): PRE_HINT_EXTRA_PLOTS gives the extra plots of
          the op whose points had those columns, keyed by the columns, so that a benchmark gets
          them whatever its op was called. A benchmark without them gets none.
"""

from __future__ import annotations

from typing import Dict, List, Sequence

from .describe import (Axis, Column, CompareHints, ExtraPlot, Metric, OpDescription, PlotHints, dtype_type,
                       parse_extra_plots)

# --- schema 1: the ops' descriptions ---------------------------------------------------------

# Files of schema version 1 do not describe their ops; this table holds what those ops declared
# (src/ops/<op>/: their metrics, headline first, all fixed v1 columns; their plot and comparison
# hints), and the units of axes a v1 file leaves without one. A v1 op missing here gets the
# generic description of v1_op_description.
V1_OPS = {
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


def v1_op_description(op: str, axes: List[str], table_dtype, units: Dict[str, str]) -> OpDescription:
    """The description a schema-1 benchmark would carry: its axes, columns and units from the
    file, the metrics, plot and comparison of the shim (V1_OPS); a v1 op not in the shim gets
    tflops as headline and a plot against its first axis."""
    shim = V1_OPS.get(op, {})
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


# --- schema 1 and 2 before extra plots: by the columns the points have ----------------------

# An entry: (the columns a benchmark's points must all have, its extra plots in the form
# op_description stores them). This one is what src/ops/overlap/ declares.
_EFFICIENCY = (
    ("t_compute_s", "t_comm_s", "t_both_s", "overlap_efficiency", "m", "n", "k", "bytes", "work_flops"), [{
        "name": "efficiency", "title": "Compute-communication overlap",
        "subtitle": "(t_compute + t_comm - t_both) / min(t_compute, t_comm); 1 = the shorter one fully hidden",
        "y": "overlap_efficiency", "y_label": "overlap efficiency", "reference_lines": [0.0, 1.0],
        "hold": {"nccl_ctas": 0, "chunks": 1, "priority": "equal"},
        "panels": [
            {"x": "bytes", "label": "collective size", "lines": ["collective", "m", "n", "k"]},
            {"x": "work_flops", "label": "GEMM size (FLOP)", "lines": ["collective", "bytes"]},
            {"x": "nccl_ctas", "label": "NCCL CTAs (0: NCCL's default)", "categorical": True,
             "tick_labels": {"0": "default"},
             "lines": ["collective", "bytes", "m", "n", "k", "chunks", "priority"],
             "free": ["nccl_ctas", "chunks", "priority"]}],
        "table": ["m", "n", "k", "dtype", "collective", "bytes", "coll_dtype", "priority", "nccl_ctas", "chunks",
                  "t_compute_s", "t_comm_s", "t_both_s", "overlap_efficiency", "compute_slowdown",
                  "comm_slowdown"],
        "table_note": "Times are medians (ms) on rank 0: the GEMM alone, the collective alone, both together; "
                      "slowdowns are each part's time inside the overlap over its time alone."}],
)

# Read for descriptions without "extra_plots" only: schema 1 files, and schema 2 files written
# before ops declared them.
PRE_HINT_EXTRA_PLOTS = {1: [_EFFICIENCY], 2: [_EFFICIENCY]}


def pre_hint_extra_plots(version: int, table_columns: Sequence[str]) -> List[ExtraPlot]:
    """The extra plots of a benchmark whose description (schema `version`) stores none, from the
    columns of its points table; [] when no entry matches."""
    have = set(table_columns)
    out: List[ExtraPlot] = []
    for needs, plots in PRE_HINT_EXTRA_PLOTS.get(int(version or 0), []):
        if all(c in have for c in needs):
            out += parse_extra_plots(plots, f"oldfiles.PRE_HINT_EXTRA_PLOTS[{version}]")
    return out
