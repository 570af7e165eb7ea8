"""Checks of the multi-node harness (tests/multinode/multinode_test.sh), read through the
analysis package's loader (analysis/genbench_analysis/loader.py), so they follow the result
file's schema rather than its raw layout.

  check_multinode.py file FILE --hosts node1,node2 --per-node 2 --state complete [--partial] [--resumed]
      /system holds one row per rank, on exactly those hosts, with node-local ranks 0..per-node-1
      on every host; every point is ok or unsupported (an
      implementation the host backend lacks), every ok point has samples and statistics from
      every rank; --partial: not
      every point of the sweep (none if the stop came during start-up); otherwise every point,
      each once.
  check_multinode.py straggler REPORT_MD --slow node2 --fast node1
      the report's straggler line names every rank of the slow host and none of the fast one.
  check_multinode.py size FILE --m M --target-s S
      prints the gemm m whose iteration takes about S seconds, from the run of m = M in FILE.
  check_multinode.py points FILE
      prints "benchmark point" for each completed point (what a progress line reported).
  check_multinode.py progress LOG
      the same, from genbench's progress lines ("[ k/N] bench/impl ... ok ...") in a job's output.
Exit 0 when the check holds, 1 with the reasons otherwise.
"""
import argparse
import os
import re
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "analysis"))

import h5py  # noqa: E402
import numpy as np  # noqa: E402

from genbench_analysis.loader import load  # noqa: E402


def _load(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an interrupted file warns that it is partial
        return load(path)


def check_file(a):
    problems = []
    r = _load(a.file)
    hosts = a.hosts.split(",")
    nranks = len(hosts) * a.per_node
    attrs = r.attrs
    if attrs.get("state") != a.state:
        problems.append(f"state {attrs.get('state')!r}, expected {a.state!r}")
    if int(attrs.get("world_size", -1)) != nranks:
        problems.append(f"world_size {attrs.get('world_size')}, expected {nranks}")
    if attrs.get("backend") != "host":
        problems.append(f"backend {attrs.get('backend')!r}")
    if a.resumed and "resumed_utc" not in attrs:
        problems.append("no resumed_utc attribute")

    sysdf = r.system
    ranks = sorted(int(x) for x in sysdf["rank"])
    if ranks != list(range(nranks)):
        problems.append(f"/system ranks {ranks}, expected 0..{nranks - 1}")
    seen_hosts = sorted(set(str(h) for h in sysdf["host"]))
    if seen_hosts != sorted(hosts):
        problems.append(f"/system hosts {seen_hosts}, expected {sorted(hosts)}")
    for h in hosts:
        local = sorted(int(x) for x in sysdf[sysdf["host"] == h]["local_rank"])
        if local != list(range(a.per_node)):
            problems.append(f"host {h}: node-local ranks {local}, expected 0..{a.per_node - 1}")

    pts = r.points
    done = total = 0
    for name, b in r.benchmarks.items():
        total += int(b.attrs.get("sweep_size", 0))
        mine = pts[pts["benchmark"] == name] if not pts.empty else pts
        done += len(mine)
        if mine.empty:
            continue
        idx = [int(p) for p in mine["point"]]
        if len(set(idx)) != len(idx):
            problems.append(f"{name}: a point appears twice")
        # unsupported: an implementation this backend lacks (smoke.yaml lists the CUDA ones too)
        bad = mine[~mine["status"].isin(["ok", "unsupported"])]
        for _, p in bad.head(3).iterrows():
            problems.append(f"{name} point {p['point']}: {p['status']} ({p['reason']})")
        ok = set(int(p) for p in mine[mine["status"] == "ok"]["point"])
        if not ok:
            problems.append(f"{name}: no ok point")
        s = r.samples(name)
        rk = r.ranks[r.ranks["benchmark"] == name]
        for p in sorted(ok):
            have = set(int(x) for x in s[s["point"] == p]["rank"])
            if have != set(range(nranks)):
                problems.append(f"{name} point {p}: samples from ranks {sorted(have)}")
                break
            med = rk[rk["point"] == p]["median_s"].astype(float).to_numpy()
            if len(med) != nranks or not np.all(np.isfinite(med)) or not np.all(med > 0):
                problems.append(f"{name} point {p}: per-rank medians {med.tolist()}")
                break
    # --partial: fewer than all, none when the stop came during start-up (0 of 0 when no
    # benchmark had begun); otherwise all, and a complete file of no benchmark fails
    if a.partial and total and done >= total:
        problems.append(f"{done} of {total} points, expected fewer than all")
    if not a.partial and (done != total or not total):
        problems.append(f"{done} of {total} points")
    print(f"{a.file}: state {attrs.get('state')}, {nranks} ranks on {','.join(seen_hosts)}, {done}/{total} points"
          + (": " + "; ".join(problems[:6]) if problems else ": ok"))
    return 1 if problems else 0


def check_straggler(a):
    with open(a.report) as f:
        text = f.read()
    line = next((l for l in text.splitlines() if l.startswith("**Stragglers**")), "")
    problems = []
    if not line:
        problems.append("the report names no straggler: "
                        + next((l for l in text.splitlines() if l.startswith("No straggler")), "(no straggler paragraph)"))
    named = re.findall(r"rank (\d+) \(([^)]*)\)", line)
    slow = sorted(int(k) for k, h in named if h == a.slow)
    fast = sorted(int(k) for k, h in named if h == a.fast)
    if line and len(slow) < a.per_node:
        problems.append(f"ranks of {a.slow} named: {slow}, expected {a.per_node}")
    if fast:
        problems.append(f"ranks of the fast host {a.fast} named as stragglers: {fast}")
    print(f"{a.report}: {line or '(no straggler line)'}" + (": " + "; ".join(problems) if problems else ": ok"))
    return 1 if problems else 0


def list_points(a):
    r = _load(a.file)
    for _, p in r.points.iterrows():
        if p["status"] == "ok":
            print(p["benchmark"], int(p["point"]))
    return 0


# "[ 3/19] g/reference  fp32 ... ok  1.8 ms ...": the k-th progress line is the sweep's k-th point,
# numbered from 1 over the whole run; the points are listed here by their index in the benchmark.
PROGRESS = re.compile(r"^\[\s*(\d+)/\s*(\d+)\] ([^/\s]+)/\S+\s.*\s(ok)\s")


def list_progress(a):
    with open(a.log, errors="replace") as f:
        lines = f.read().splitlines()
    order = {}
    for l in lines:
        m = PROGRESS.match(l)
        if m:
            bench = m.group(3)
            order.setdefault(bench, []).append(int(m.group(1)))
    # Within one benchmark the run visits points in index order, so the n-th ok line of a
    # single-benchmark config is point n-1 (the harness's dead-node config has one benchmark).
    for bench, ks in order.items():
        for i, _ in enumerate(ks):
            print(bench, i)
    return 0


def size(a):
    """The m that makes one gemm iteration take about --target-s, from a run of m = --m (the work
    grows with m at fixed n and k): prints it (a multiple of 16, 32 to 16384) and the time taken."""
    with h5py.File(a.file, "r") as f:
        p = f["benchmarks"]["gemm"]["points"][()]
    ok = p[(p["status"] == b"ok") & (p["m"] == a.m)]
    if len(ok) != 1 or not np.isfinite(ok["time_median_s"][0]) or ok["time_median_s"][0] <= 0:
        print(f"{a.file}: no ok point at m = {a.m}")
        return 1
    t = float(ok["time_median_s"][0])
    m = int(min(16384, max(32, round(a.m * a.target_s / t / 16) * 16)))
    print(f"{m} {t * 1e3:.2f} ms")
    return 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("file")
    f.add_argument("file")
    f.add_argument("--hosts", required=True)
    f.add_argument("--per-node", type=int, required=True)
    f.add_argument("--state", required=True, choices=["complete", "interrupted", "running"])
    f.add_argument("--partial", action="store_true")
    f.add_argument("--resumed", action="store_true")
    s = sub.add_parser("straggler")
    s.add_argument("report")
    s.add_argument("--slow", required=True)
    s.add_argument("--fast", required=True)
    s.add_argument("--per-node", type=int, default=2)
    p = sub.add_parser("points")
    p.add_argument("file")
    g = sub.add_parser("progress")
    g.add_argument("log")
    z = sub.add_parser("size")
    z.add_argument("file")
    z.add_argument("--m", type=int, required=True)
    z.add_argument("--target-s", type=float, required=True)
    a = ap.parse_args()
    return {"file": check_file, "straggler": check_straggler, "points": list_points, "progress": list_progress,
            "size": size}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
