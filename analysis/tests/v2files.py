"""Synthetic result files of schema version 2, written with h5py the way docs/hdf5-schema.md
and the framework's seams describe them: root attribute schema_description, per benchmark
op_description and columns, pre-sized points tables whose rows that did not run have status "",
samples rows past a point's iterations left undefined (0 here, as a pre-sized dataset holds).

The times are chosen so that the expected values are known: every point's slowest-rank median
is the `time` given, its metrics are computed from its work and that time.
"""

import json

import h5py
import numpy as np

RANKS = 2
MAX_ITERS = 8

# The fixed points columns of schema 2 (name, type, unit, meaning), after point, impl and the axes.
FIXED_HEAD = [("point", "i64", "", "index of the point in the benchmark's sweep"),
              ("impl", "str", "", "implementation")]
FIXED_TAIL = [
    ("status", "str", "", "ok, failed, skipped, unsupported; empty: not run"),
    ("reason", "str", "", "why not ok"),
    ("variant", "str", "", "kernel configuration that ran"),
    ("stop_reason", "str", "", "converged, max_iterations or max_time"),
    ("iterations", "i64", "", "timed iterations"),
] + [(f"time_{s}_s", "f64", "s", f"{s} of the per-iteration maximum over ranks")
     for s in ("median", "mean", "min", "max", "p10", "p90", "p99", "stddev")] + [
    ("work_flops", "f64", "FLOP", "operations of one iteration"),
    ("work_bytes", "f64", "B", "bytes of one iteration"),
    ("work_tokens", "f64", "", "tokens of one iteration"),
    ("peak_memory_bytes", "i64", "B", "largest per-rank peak of counted allocations"),
    ("validation_error", "f64", "", "error measure"),
    ("validation_tolerance", "f64", "", "its bound"),
    ("sm_clock_mhz", "f64", "MHz", "SM clock"),
    ("mem_clock_mhz", "f64", "MHz", "memory clock"),
    ("power_w", "f64", "W", "power"),
    ("temperature_c", "f64", "C", "temperature"),
    ("throttle_reasons", "i64", "", "NVML clocks-event reasons"),
    ("throttled", "i64", "", "1 when held back"),
    ("ceiling_fraction", "f64", "", "the rate over the op's ceiling"),
]
RANK_STATS = [("iterations", "i64", "", "timed iterations of this rank")] + [
    (f"{s}_s", "f64", "s", f"{s} of this rank's samples")
    for s in ("mean", "median", "stddev", "min", "max", "p10", "p90", "p99")] + [
    ("peak_memory_bytes", "i64", "B", "this rank's counted allocations"),
    ("memory_delta_bytes", "i64", "B", "free memory before minus after set-up")]
SYSTEM = [("rank", "i64", "", ""), ("host", "str", "", ""), ("backend", "str", "", ""), ("name", "str", "", "")]
CEILINGS = [("rank", "i64", "", ""), ("name", "str", "", ""), ("value", "f64", "", ""), ("unit", "str", "", ""),
            ("detail", "str", "", "")]

STR = h5py.string_dtype("utf-8")
NP = {"i64": "<i8", "f64": "<f8", "str": STR}


def _cols(spec, kind=None):
    """JSON columns; string columns carry their length, as the writer stores them."""
    out = []
    for n, t, u, m in spec:
        c = {"name": n, "type": t, "unit": u, "meaning": m}
        if t == "str":
            c["length"] = 64
        if kind:
            c["kind"] = kind(n) if callable(kind) else kind
        out.append(c)
    return out


def schema_description():
    return {"version": 2, "datasets": {
        "points": {"fixed": _cols(FIXED_HEAD + FIXED_TAIL, "fixed"), "axes_after": "impl",
                   "note": "then the benchmark's axes after impl and the op's columns at the end"},
        "rank_stats": _cols(RANK_STATS), "system": _cols(SYSTEM), "ceilings": _cols(CEILINGS),
        "samples": {"type": "f64", "unit": "s", "dims": ["point", "rank", "iteration"],
                    "meaning": "per-iteration times; valid below points.iterations of a row that ran"}}}


def _compound(spec):
    return np.dtype([(n, NP[t]) for n, t, _, _ in spec])


def _samples(time, iterations, spread):
    """Rank 0 is the slowest at every iteration; its times have median `time` and a relative
    spread `spread` (alternating above and below)."""
    r0 = np.full(iterations, time)
    r0[1::4] = time * (1 + spread)
    r0[3::4] = time * (1 - spread)
    return np.vstack([r0, r0 * 0.9])


# --- ops the fixtures use --------------------------------------------------------------------

# An op the analysis package has never heard of: GB/s of the KV cache read, tokens/s, plotted
# against the cache length, bounded by the copy ceiling.
DECODE = {
    "op": "decode", "summary": "one decode step over a paged KV cache", "headline": "GBps",
    "axes": [{"name": "batch", "type": "integer", "help": "sequences", "tuning": False},
             {"name": "cache_len", "type": "size", "help": "cached tokens per sequence", "tuning": False},
             {"name": "dtype", "type": "choice", "help": "cache precision", "tuning": False},
             {"name": "split", "type": "choice", "help": "split-K", "tuning": True}],
    "columns": [{"name": "effective_pages", "type": "i64", "unit": "", "meaning": "pages read", "kind": "effective"},
                {"name": "split_chosen", "type": "str", "unit": "", "meaning": "split chosen", "kind": "chosen"},
                {"name": "GBps", "type": "f64", "unit": "GB/s", "meaning": "KV bytes / time", "kind": "metric"},
                {"name": "tokens_per_s", "type": "f64", "unit": "tokens/s", "meaning": "tokens / time",
                 "kind": "metric"},
                {"name": "launch_overhead_s", "type": "f64", "unit": "s", "meaning": "host time per step",
                 "kind": "extra"}],
    "metrics": [{"name": "GBps", "unit": "GB/s", "meaning": "KV bytes / time"},
                {"name": "tokens_per_s", "unit": "tokens/s", "meaning": "tokens / time"}],
    "plot": {"title": "Decode KV-cache bandwidth against cache length", "x": "cache_len", "log_x": True,
             "facets": ["dtype"], "ceiling_line": "copy_GBps"},
    "compare": {"metric": "GBps", "higher_is_better": True},
}
AXIS_TYPES = {"decode": {"batch": "i64", "cache_len": "i64", "dtype": "str", "split": "str"}}
AXIS_UNITS = {"cache_len": ""}


def decode_metrics(p):
    t = p["time"]
    return {"GBps": p["work_bytes"] / t / 1e9, "tokens_per_s": p["work_tokens"] / t}


# A known op name in its schema-2 form: the file's hints (x = k, a line plot) win over the v1 shim
# (which draws gemm as bars per shape).
GEMM = {
    "op": "gemm", "summary": "C = A B", "headline": "tflops",
    "axes": [{"name": "m", "type": "size", "help": "", "tuning": False},
             {"name": "k", "type": "size", "help": "", "tuning": False},
             {"name": "dtype", "type": "choice", "help": "", "tuning": False}],
    "columns": [{"name": "tflops", "type": "f64", "unit": "TFLOP/s", "meaning": "work_flops / time",
                 "kind": "metric"}],
    "metrics": [{"name": "tflops", "unit": "TFLOP/s", "meaning": "work_flops / time"}],
    "plot": {"title": "GEMM throughput against k", "x": "k", "log_x": True, "facets": ["m"],
             "ceiling_line": "gemm_{dtype}_tflops"},
    "compare": {"metric": "", "higher_is_better": True},
}
AXIS_TYPES["gemm"] = {"m": "i64", "k": "i64", "dtype": "str"}


def gemm_metrics(p):
    return {"tflops": p["work_flops"] / p["time"] / 1e12}


# An op compared by an extra column where lower is better.
PROBE = {
    "op": "probe", "summary": "host round trip", "headline": "ops_per_s",
    "axes": [{"name": "depth", "type": "integer", "help": "", "tuning": False}],
    "columns": [{"name": "ops_per_s", "type": "f64", "unit": "1/s", "meaning": "round trips per second",
                 "kind": "metric"},
                {"name": "overhead_s", "type": "f64", "unit": "s", "meaning": "time beyond the transfer",
                 "kind": "extra"}],
    "metrics": [{"name": "ops_per_s", "unit": "1/s", "meaning": "round trips per second"}],
    "plot": {"title": "Probe rate against depth", "x": "depth", "log_x": False, "facets": [], "ceiling_line": ""},
    "compare": {"metric": "overhead_s", "higher_is_better": False},
}
AXIS_TYPES["probe"] = {"depth": "i64"}


def probe_metrics(p):
    return {"ops_per_s": 1.0 / p["time"], "overhead_s": p["overhead_s"]}


def op_columns(desc):
    """Op.columns(): effective, chosen, metric, extra, in that order."""
    order = {"effective": 0, "chosen": 1, "metric": 2, "extra": 3}
    return sorted(desc["columns"], key=lambda c: order[c["kind"]])


def write_v2(path, benchmarks, ceilings=(), backend="host", state="complete", device="host CPU",
             description_edit=None):
    """benchmarks: [(name, op_description, metrics_fn, sweep_size, points)] where each point is a
    dict with point, impl, the axes, status, time (s), iterations and work_flops / work_bytes /
    work_tokens, plus any op column it sets itself (effective, chosen, extra). Rows of the
    pre-sized tables that no point fills keep status "" (not run). ceilings: [(rank, name,
    value, unit)]. description_edit(name, dict) may change a benchmark's op_description JSON
    before it is stored (for the bad-file tests)."""
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "genbench-results"
        f.attrs["schema_version"] = np.int64(2)
        f.attrs["schema_description"] = json.dumps(schema_description())
        f.attrs["backend"] = backend
        f.attrs["state"] = state
        f.attrs["world_size"] = np.int64(RANKS)
        f.attrs["config"] = "genbench: 1\n# synthetic schema-2 file\nbenchmarks: []\n"
        f.attrs["start_utc"] = "2026-12-01T00:00:00Z"
        sys_t = np.zeros(RANKS, dtype=_compound(SYSTEM))
        sys_t["rank"] = np.arange(RANKS)
        sys_t["host"] = ["node0"] * RANKS
        sys_t["backend"] = [backend] * RANKS
        sys_t["name"] = [device] * RANKS
        f.create_dataset("system", data=sys_t)
        if ceilings:
            c = np.zeros(len(ceilings), dtype=_compound(CEILINGS))
            for i, (rank, name, value, unit) in enumerate(ceilings):
                c[i] = (rank, name, value, unit, "synthetic")
            f.create_dataset("ceilings", data=c)
        for name, desc, metrics_fn, sweep, points in benchmarks:
            axes = [a["name"] for a in desc["axes"]]
            types = AXIS_TYPES[desc["op"]]
            opcols = op_columns(desc)
            spec = FIXED_HEAD + [(a, types[a], AXIS_UNITS.get(a, ""), a) for a in axes] + FIXED_TAIL + \
                [(c["name"], c["type"], c["unit"], c["meaning"]) for c in opcols]
            pts = np.zeros(sweep, dtype=_compound(spec))
            for n, t, _, _ in spec:  # pre-sized: strings empty, floats NaN
                pts[n] = "" if t == "str" else (np.nan if t == "f64" else 0)
            pts["point"] = np.arange(sweep)
            samples = np.zeros((sweep, RANKS, MAX_ITERS))  # undefined past a point's iterations: 0 here
            rs = np.zeros((sweep, RANKS), dtype=_compound(RANK_STATS))
            for p in points:
                i = p["point"]
                row = pts[i]
                for k in ["impl"] + axes:
                    row[k] = p[k]
                row["status"] = p.get("status", "ok")
                row["reason"] = p.get("reason", "")
                row["variant"] = p.get("variant", "v0")
                row["throttled"] = 0
                for k in ("work_flops", "work_bytes", "work_tokens"):
                    row[k] = p.get(k, 0.0)
                for c in opcols:
                    if c["name"] in p:
                        row[c["name"]] = p[c["name"]]
                if row["status"] != "ok":
                    row["iterations"] = 0
                    pts[i] = row
                    continue
                it = p.get("iterations", 6)
                s = _samples(p["time"], it, p.get("spread", 0.02))
                samples[i, :, :it] = s
                slow = s.max(axis=0)
                row["iterations"] = it
                row["stop_reason"] = "converged"
                for stat, fn in (("median", np.median), ("mean", np.mean), ("min", np.min), ("max", np.max),
                                 ("stddev", np.std)):
                    row[f"time_{stat}_s"] = fn(slow)
                for q in (10, 90, 99):
                    row[f"time_p{q}_s"] = np.percentile(slow, q)
                row["peak_memory_bytes"] = p.get("peak_memory_bytes", 1 << 20)
                row["ceiling_fraction"] = p.get("ceiling_fraction", np.nan)
                for k, v in metrics_fn(p).items():
                    row[k] = v
                pts[i] = row
                for rank in range(RANKS):
                    rs["iterations"][i, rank] = it
                    rs["median_s"][i, rank] = np.median(s[rank])
                    rs["mean_s"][i, rank] = np.mean(s[rank])
            g = f.create_group(f"benchmarks/{name}")
            g.attrs["op"] = desc["op"]
            g.attrs["implementations"] = np.array(sorted({p["impl"] for p in points}), dtype=STR)
            g.attrs["sweep_size"] = np.int64(sweep)
            d = dict(desc)
            if description_edit is not None:
                d = description_edit(name, json.loads(json.dumps(desc)))
            g.attrs["op_description"] = d if isinstance(d, str) else json.dumps(d)
            fixed = {n for n, _, _, _ in FIXED_HEAD + FIXED_TAIL}
            g.attrs["axes"] = np.array(axes, dtype=STR)
            g.attrs["columns"] = json.dumps(_cols(spec, lambda n: "fixed" if n in fixed else
                                                  "axis" if n in axes else "op"))
            g.create_dataset("points", data=pts)
            g.create_dataset("samples", data=samples)
            g.create_dataset("rank_stats", data=rs)
    return str(path)


def decode_points(scale=1.0, impls=("fa3", "flashinfer")):
    """Decode points: impl x cache_len (1K, 4K, 16K) x dtype (bf16, fp8), batch 8, in a sweep of
    14 rows per impl (the last two never run: status ""). Times grow with the cache; `scale`
    multiplies every time (B of a comparison)."""
    out = []
    lens, dtypes = (1024, 4096, 16384), ("bf16", "fp8")
    per_impl = len(lens) * len(dtypes) + 2
    for j, impl in enumerate(impls):
        n = 0
        for dt in dtypes:
            for L in lens:
                bytes_ = 8 * L * 2 * 128 * 8 * (2 if dt == "bf16" else 1)
                t = (2e-6 + bytes_ / 3.0e12) * (1.0 if impl == impls[0] else 1.2) * scale
                out.append({"point": j * per_impl + n, "impl": impl, "batch": 8, "cache_len": L, "dtype": dt,
                            "split": "auto", "split_chosen": "4" if L >= 4096 else "1",
                            "effective_pages": L // 16, "time": t, "work_bytes": float(bytes_),
                            "work_tokens": 8.0, "launch_overhead_s": 1e-6, "iterations": 4 + n % 3})
                n += 1
    return out, per_impl * len(impls)


def gemm_points(scale=1.0):
    out, i = [], 0
    for m in (256, 1024):
        for k in (512, 2048, 8192):
            t = (2.0 * m * 1024 * k / 500e12) * scale
            out.append({"point": i, "impl": "cublas", "m": m, "k": k, "dtype": "bf16", "time": t,
                        "work_flops": 2.0 * m * 1024 * k})
            i += 1
    out.append({"point": i, "impl": "cublas", "m": 4096, "k": 64, "dtype": "bf16", "status": "skipped",
                "reason": "rank 0: too small", "time": 0})
    return out, i + 1


def probe_points(overhead_scale=1.0):
    return [{"point": i, "impl": "host", "depth": d, "time": 1e-5 * d, "overhead_s": 2e-6 * d * overhead_scale}
            for i, d in enumerate((1, 2, 4))], 3


def standard_file(path, scale=1.0, overhead_scale=1.0, **kw):
    """decode (unknown op), gemm (schema-2 hints) and probe (lower is better) in one file, with
    the copy and bf16 GEMM ceilings of two ranks."""
    dec, dn = decode_points(scale)
    gem, gn = gemm_points(scale)
    prb, pn = probe_points(overhead_scale)
    ceilings = [(0, "copy_GBps", 4000.0, "GB/s"), (1, "copy_GBps", 3900.0, "GB/s"),
                (0, "gemm_bf16_tflops", 700.0, "TFLOP/s"), (1, "gemm_bf16_tflops", 710.0, "TFLOP/s")]
    return write_v2(path, [("decode", DECODE, decode_metrics, dn, dec), ("gemm", GEMM, gemm_metrics, gn, gem),
                           ("probe", PROBE, probe_metrics, pn, prb)], ceilings=ceilings, backend="cuda",
                    device="NVIDIA H200", **kw)
