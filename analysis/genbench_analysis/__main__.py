"""Command line: python -m genbench_analysis {report,plot,compare,versus,describe,model,standings,gate} ..."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings

from . import __version__
from .loader import ResultFileError, load


@contextlib.contextmanager
def _warnings_to_stderr():
    """Every warning raised inside, printed to stderr as "warning: ..." once the block ends."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            for w in caught:
                print(f"warning: {w.message}", file=sys.stderr)


def _load_all(paths):
    results = []
    for p in paths:
        with _warnings_to_stderr():
            results.append(load(p))
    return results


def _emit(text: str, output) -> None:
    """text to the file output, or to stdout without one."""
    if output:
        with open(output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


def cmd_report(args) -> int:
    from .report import write_report

    results = _load_all(args.files)
    out = write_report(results, args.output, straggler_threshold=args.straggler_threshold)
    print(f"wrote {out['markdown']} and {out['html']} ({len(out['plots'])} plots, {len(out['skipped'])} skipped)")
    return 0


def cmd_compare(args) -> int:
    from .compare import compare, format_comparison

    a, b = _load_all([args.a, args.b])
    cmp = compare(a, b, threshold=args.threshold, benchmarks=args.benchmark)
    fmt = "csv" if args.csv else "markdown" if args.markdown else "text"
    text = format_comparison(cmp, a, b, fmt)
    _emit(text, args.output)
    return 0


def cmd_versus(args) -> int:
    from .versus import VersusError, format_versus, versus

    results = _load_all(args.files)
    try:
        with _warnings_to_stderr():
            v = versus(results, args.impl, args.peer, target=args.target, benchmarks=args.benchmark, by=args.by,
                       metric=args.metric)
    except VersusError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    fmt = "csv" if args.csv else "markdown" if args.markdown else "text"
    axes = {n: r.axes(n) for r in results for n in r.benchmarks}
    text = format_versus(v, args.impl, args.peer, args.target, fmt, axes=axes, by=args.by)
    _emit(text, args.output)
    return 0


def describe_text(r) -> str:
    """What a file says about its benchmarks: op, metrics with units, plot, comparison and extra
    plots."""
    src = {"file": "from the file", "v1": "derived from schema 1"}
    lines = [f"{r.path}: schema version {r.schema_version} ({r.device})"]
    for name, b in r.benchmarks.items():
        d = b.description
        lines.append(f"{name} (op {b.op}, {src.get(d.source, d.source)})" + (f": {d.summary}" if d.summary else ""))
        tuning = {a.name for a in d.axes if a.tuning}
        lines.append("  axes: " + ", ".join(a + (" (tuning)" if a in tuning else "") for a in b.axes))
        ms = [("headline " if m.name == d.headline else "") + f"{m.name} [{m.unit}]" + (f" {m.meaning}" if m.meaning else "")
              for m in d.metrics]
        lines.append("  metrics: " + ("; ".join(ms) or "none"))
        for kind in ("effective", "chosen", "extra"):
            cols = d.columns_of_kind(kind)
            if cols:
                lines.append(f"  {kind} columns: " + ", ".join(cols))
        p = d.plot
        head = d.headline or "-"
        plot = f"{head} against {p.x}" + (" (log)" if p.log_x else "") if p.x else f"{head}, bars per point"
        if p.facets:
            plot += ", panels by " + ", ".join(p.facets)
        if p.ceiling_line:
            plot += f", ceiling {p.ceiling_line}"
        lines.append(f"  plot: {plot}" + (f" \u2014 {p.title}" if p.title else ""))
        lines.append(f"  compare: {b.compare_metric or '1/time'}, "
                     f"{'higher' if b.higher_is_better else 'lower'} is better")
        for e in d.extra_plots or []:
            shim = " (old-file shim)" if d.extra_plots_source != "file" else ""
            lines.append(f"  extra plot {b.op}_{e.name}{shim}: {e.y} against " + ", ".join(q.x for q in e.panels) +
                         (f"; table of {len(e.table)} columns" if e.table else "") +
                         (f" \u2014 {e.title}" if e.title else ""))
    return "\n".join(lines) + "\n"


def cmd_describe(args) -> int:
    for r in _load_all(args.files):
        sys.stdout.write(describe_text(r))
    return 0


def cmd_model(args) -> int:
    from .model import ModelError, compose, format_model, plot_layer_breakdown

    results = _load_all(args.files)
    try:
        comps = [compose(r) for r in results]
    except ModelError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    fmt = "csv" if args.csv else "markdown" if args.markdown else "text"
    _emit(format_model(comps, fmt), args.output)
    if args.plot:
        fig = plot_layer_breakdown(comps)
        fig.savefig(args.plot, dpi=110, bbox_inches="tight")
        print(f"layer breakdown: {args.plot}", file=sys.stderr)
    if args.parts:
        import pandas as pd
        parts = pd.concat([c.parts.assign(file=c.path) for c in comps], ignore_index=True)
        parts.to_csv(args.parts, index=False)
        print(f"parts: {args.parts}", file=sys.stderr)
    return 0


def cmd_standings(args) -> int:
    """Tables of a standings spec: printed, written into a page, or checked against it."""
    from . import standings as st

    try:
        spec = st.load_spec(args.spec, root=args.root)
        if args.print is not None:
            ids = [args.print] if args.print else None
            blocks = st.make_blocks(spec, ids)
            sys.stdout.write("\n\n".join(blocks.values()) + "\n")
            return 0
        status = 0
        if args.json:
            text = st.standings_json(spec)
            with open(args.json, "w") as f:
                f.write(text)
            print(f"wrote {args.json}", file=sys.stderr)
        for page, write in ((args.write, True), (args.check, False)):
            if not page:
                continue
            with open(page) if os.path.exists(page) else _missing(page) as f:
                old = f.read()
            ids = st.page_ids(old, page)
            unknown = [i for i in ids if i not in {t.id for t in spec.tables}]
            if unknown:
                raise st.StandingsError(f"{page}: unknown table id {unknown[0]!r} in a standings marker (the spec "
                                        f"has: {', '.join(t.id for t in spec.tables)})")
            blocks = st.make_blocks(spec, ids)
            new = st.rewrite_page(old, blocks, page)
            absent = [t.id for t in spec.tables if t.id not in ids]
            if absent:
                print(f"note: {page} has no block for {', '.join(absent)}", file=sys.stderr)
            if write:
                if new != old:
                    with open(page, "w") as f:
                        f.write(new)
                print(f"{page}: {len(ids)} tables written" + ("" if new != old else " (no change)"), file=sys.stderr)
            elif new != old:
                sys.stdout.write(st.unified_diff(old, new, page, f"{page} (as the spec makes it)"))
                print(f"{page} is not current: tables that differ: {', '.join(st.changed_blocks(old, new, page))}; "
                      f"rewrite it with: python -m genbench_analysis standings {args.spec} --write {page}",
                      file=sys.stderr)
                status = 1
        if args.check and spec.json and not args.json:
            path = os.path.join(spec.root, spec.json)
            if not os.path.exists(path):
                raise st.StandingsError(f"{spec.json}: missing standings file (make it with --json {spec.json})")
            with open(path) as f:
                old = f.read()
            new = st.standings_json(spec)
            if new != old:
                sys.stdout.write(st.unified_diff(old, new, spec.json, f"{spec.json} (as the spec makes it)"))
                print(f"{spec.json} is not current; rewrite it with: python -m genbench_analysis standings "
                      f"{args.spec} --json {spec.json}", file=sys.stderr)
                status = 1
        if not (args.json or args.write or args.check):
            print("error: nothing to do: give --print [ID], --write PAGE, --check PAGE or --json OUT", file=sys.stderr)
            return 2
        return status
    except (st.SpecError, st.StandingsError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


def _missing(page):
    from .standings import StandingsError
    raise StandingsError(f"{page}: no such page")


def cmd_gate(args) -> int:
    """The standings' versus tables recomputed from a new run against the committed ratios."""
    import json

    from . import standings as st

    try:
        spec = st.load_spec(args.spec, root=args.root)
        if args.plan:
            for output, config, run_args in st.gate_runs(spec):
                print("\t".join([output, config] + run_args))
            return 0
        if not args.new:
            print("error: --new DIR is required (or --plan)", file=sys.stderr)
            return 2
        committed = args.committed or (os.path.join(spec.root, spec.json) if spec.json else "")
        if not committed or not os.path.exists(committed):
            raise st.StandingsError(f"no committed standings file {committed or '(give --committed)'}")
        with open(committed) as f:
            doc = json.load(f)
        only = list(args.table or [])
        if args.outputs:
            wanted = [o for o in args.outputs.split(",") if o]
            known = {t.output for t in spec.tables if t.output}
            bad = [o for o in wanted if o not in known]
            if bad:
                raise st.StandingsError(f"--outputs: no gated table writes {bad[0]!r} (they write: "
                                        f"{', '.join(sorted(known))})")
            only += [t.id for t in spec.tables if t.kind == "versus" and t.output in wanted]
        lines = st.gate(spec, args.new, doc, tolerance=args.tolerance, only=only or None)
    except (st.SpecError, st.StandingsError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    order = {"card": 0, "fell": 1, "missing": 2, "improved": 3, "new": 4, "within": 5}
    for ln in sorted(lines, key=lambda x: order[x.state]):
        if ln.state != "within" or args.verbose:
            print(ln.text())
    count = {s: sum(1 for x in lines if x.state == s) for s in order}
    bad = count["fell"] + count["missing"] + count["card"]
    print(f"gate: {count['card']} on another card, {count['fell']} fell, {count['missing']} missing, {count['improved']} improved, "
          f"{count['within']} within, {count['new']} new (tolerance {args.tolerance:g} below the committed "
          f"rounds' lowest ratio) -> {'FAIL' if bad else 'pass'}")
    return 1 if bad else 0


def cmd_plot(args) -> int:
    import os

    from .plots import NoData, plots_for

    results = _load_all(args.files)
    os.makedirs(args.output, exist_ok=True)
    available = plots_for(results)
    if args.only:
        unknown = [n for n in args.only if n not in {p[0] for p in available}]
        if unknown:
            print(f"error: no plot {', '.join(unknown)} for these files (have: "
                  f"{', '.join(p[0] for p in available)})", file=sys.stderr)
            return 2
        available = [p for p in available if p[0] in args.only]
    for name, title, fn in available:
        try:
            fig = fn(results)
        except NoData as e:
            print(f"{name}: skipped ({e})")
            continue
        path = os.path.join(args.output, f"{name}.png")
        fig.savefig(path, dpi=110, bbox_inches="tight")
        print(f"{name}: {path}")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m genbench_analysis",
                                description="Reports and comparisons of genbench result files (HDF5).")
    p.add_argument("--version", action="version", version=f"genbench_analysis {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("report", help="write report.md and report.html with plots for one or more result files")
    r.add_argument("files", nargs="+", help="result files (.h5)")
    r.add_argument("-o", "--output", required=True, metavar="DIR", help="folder for report.md, report.html and plots")
    r.add_argument("--straggler-threshold", type=float, default=0.05, metavar="FRAC",
                   help="flag ranks whose median is this much above the cross-rank median (default 0.05)")
    r.set_defaults(func=cmd_report)

    c = sub.add_parser("compare", help="B/A ratios per point with noise-aware verdicts")
    c.add_argument("a", metavar="A.h5", help="baseline")
    c.add_argument("b", metavar="B.h5", help="candidate")
    fmt = c.add_mutually_exclusive_group()
    fmt.add_argument("--csv", action="store_true", help="every joined row as CSV")
    fmt.add_argument("--markdown", action="store_true", help="Markdown tables")
    c.add_argument("--threshold", type=float, default=0.0, metavar="FRAC",
                   help="call differences below this fraction 'same' even when the noise is smaller (default 0)")
    c.add_argument("-b", "--benchmark", action="append", metavar="NAME", help="only this benchmark (repeatable)")
    c.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    c.set_defaults(func=cmd_compare)

    v = sub.add_parser("versus", help="one implementation against another run beside it: per point, the ratio "
                                      "within each file, median and spread over the files (rounds)")
    v.add_argument("files", nargs="+", help="result files (.h5), e.g. rounds of one config")
    v.add_argument("--impl", required=True, help="the implementation rated (numerator), or with --by a value of that axis")
    v.add_argument("--peer", required=True, help="the implementation it is rated against (denominator), or with --by "
                                                 "the other value")
    v.add_argument("--by", default="impl", metavar="AXIS",
                   help="compare two values of this axis instead of two implementations (e.g. --by kv_dtype "
                        "--impl fp8_e4m3 --peer bf16); the implementation is then one of the point's keys")
    v.add_argument("--metric", metavar="COLUMN",
                   help="rate by this points column instead of the benchmark's comparison metric (e.g. "
                        "tokens_per_s; a time_* column is lower-is-better)")
    v.add_argument("--target", type=float, metavar="RATIO",
                   help="verdict per point: met (every round >= RATIO), not met (every round below), spread")
    fmt = v.add_mutually_exclusive_group()
    fmt.add_argument("--csv", action="store_true", help="every point as CSV")
    fmt.add_argument("--markdown", action="store_true", help="Markdown tables")
    v.add_argument("-b", "--benchmark", action="append", metavar="NAME", help="only this benchmark (repeatable)")
    v.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    v.set_defaults(func=cmd_versus)

    d = sub.add_parser("describe", help="what each benchmark of the files declares: metrics with units, the plot "
                                        "and the comparison the analysis makes")
    d.add_argument("files", nargs="+", help="result files (.h5)")
    d.set_defaults(func=cmd_describe)

    mo = sub.add_parser("model", help="model suites (configs/models/): one layer's time as the sum of its parts, "
                                      "the model's time per token and tokens/s per card, files side by side")
    mo.add_argument("files", nargs="+", help="result files of model suites (.h5)")
    fmt = mo.add_mutually_exclusive_group()
    fmt.add_argument("--csv", action="store_true", help="every layer of every file as CSV")
    fmt.add_argument("--markdown", action="store_true", help="Markdown tables")
    mo.add_argument("-o", "--output", metavar="FILE", help="write the tables to FILE instead of stdout")
    mo.add_argument("--plot", metavar="PNG", help="write the stacked bars of where each layer's time goes")
    mo.add_argument("--parts", metavar="CSV", help="write every layer's parts (status, time, reason) as CSV")
    mo.set_defaults(func=cmd_model)

    pl = sub.add_parser("plot", help="one PNG per plot (the report's plots) without the report")
    pl.add_argument("files", nargs="+", help="result files (.h5)")
    pl.add_argument("-o", "--output", required=True, metavar="DIR", help="folder for the PNGs")
    pl.add_argument("--only", action="append", metavar="NAME", help="only this plot, e.g. decode_GBps (repeatable)")
    pl.set_defaults(func=cmd_plot)

    st = sub.add_parser("standings", help="the standings tables of a spec (docs/standings.yaml), made from committed "
                                          "result files: print them, write them into a page, check a page is current")
    st.add_argument("spec", help="the spec (YAML)")
    st.add_argument("--print", nargs="?", const="", metavar="ID", help="print every table (or table ID) to stdout")
    st.add_argument("--write", metavar="PAGE", help="rewrite the blocks between the page's standings markers")
    st.add_argument("--check", metavar="PAGE", help="exit 1 with a diff when the page (or the spec's json file) is "
                                                   "not what the spec makes")
    st.add_argument("--json", metavar="OUT", help="write every table's per-point figures as JSON (docs/standings.json)")
    st.add_argument("--root", metavar="DIR", help="the folder the spec's paths are relative to (default: the spec's "
                                                  "root key, from the spec's folder)")
    st.set_defaults(func=cmd_standings)

    ga = sub.add_parser("gate", help="regression gate: recompute the spec's versus tables from new result files and "
                                     "fail naming every point that fell below the committed rounds' spread")
    ga.add_argument("spec", help="the spec (YAML)")
    ga.add_argument("--new", metavar="DIR", help="folder with the new runs' files (each table's output name)")
    ga.add_argument("--committed", metavar="JSON", help="the committed standings (default: the spec's json key)")
    ga.add_argument("--tolerance", type=float, default=0.03, metavar="FRAC",
                    help="how far below the committed lowest round a new median may fall (default 0.03)")
    ga.add_argument("--root", metavar="DIR", help="the folder the spec's paths are relative to (as for standings)")
    ga.add_argument("--table", action="append", metavar="ID", help="only this table (repeatable)")
    ga.add_argument("--outputs", metavar="A.h5,B.h5", help="only the tables of these runs (a gate run of part of "
                                                          "the plan)")
    ga.add_argument("--plan", action="store_true", help="print the runs the gate needs: output, config, run "
                                                        "arguments, tab-separated, one line each")
    ga.add_argument("-v", "--verbose", action="store_true", help="also list the points within the spread")
    ga.set_defaults(func=cmd_gate)

    args = p.parse_args(argv)
    try:
        return args.func(args)
    except (ResultFileError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
