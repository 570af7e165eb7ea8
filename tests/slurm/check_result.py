"""Checks a genbench result file written under Slurm: its state, that every rank is in /system
and in every benchmark's samples, that every point is ok, and (--partial) that an interrupted
file holds fewer than all points (none if the signal came during the ranks' start-up) while
(--resumed) a continued one holds each point once."""
import argparse
import sys

import h5py
import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--state", required=True, choices=["complete", "interrupted", "running"])
    ap.add_argument("--partial", action="store_true", help="expect fewer than all points")
    ap.add_argument("--resumed", action="store_true", help="expect a resumed_utc attribute")
    a = ap.parse_args()
    problems = []
    with h5py.File(a.file, "r") as f:
        attrs = f.attrs
        if attrs.get("format") != "genbench-results":
            problems.append("not a genbench result file")
        if attrs.get("state") != a.state:
            problems.append(f"state {attrs.get('state')!r}, expected {a.state!r}")
        if attrs.get("world_size") != a.ranks:
            problems.append(f"world_size {attrs.get('world_size')}, expected {a.ranks}")
        if attrs.get("backend") != "host":
            problems.append(f"backend {attrs.get('backend')!r}")
        if a.resumed and "resumed_utc" not in attrs:
            problems.append("no resumed_utc attribute")
        ranks = sorted(int(r) for r in f["system"]["rank"])
        if ranks != list(range(a.ranks)):
            problems.append(f"/system ranks {ranks}")
        done = total = 0
        for name, g in f["benchmarks"].items():
            points = g["points"][:]
            samples = g["samples"][:]
            total += int(g.attrs["sweep_size"])
            if samples.shape[:2] != (len(points), a.ranks):
                problems.append(f"{name}: samples shape {samples.shape}")
                continue
            # schema 2: one row per sweep point, row = point index; empty status = not completed
            written = points["status"] != b""
            done += int(np.count_nonzero(written))
            if not np.array_equal(points["point"][written], np.nonzero(written)[0]):
                problems.append(f"{name}: a completed row is not at its point's index")
            for row, s in zip(points[written], samples[written]):
                if row["status"] != b"ok":
                    problems.append(f"{name} point {row['point']}: {row['status']!r} {row['reason']!r}")
                n = int(row["iterations"])
                if n < 1 or not np.all(np.isfinite(s[:, :n])):
                    problems.append(f"{name} point {row['point']}: missing samples for some rank")
        # --partial: fewer than all, none when the stop came during start-up (0 of 0 when no
        # benchmark had begun); otherwise all, and a complete file of no benchmark fails
        if a.partial and total and done >= total:
            problems.append(f"{done} of {total} points, expected fewer than all")
        if not a.partial and (done != total or not total):
            problems.append(f"{done} of {total} points")
    print(f"{a.file}: state {a.state}, {a.ranks} ranks, {done}/{total} points"
          + (": " + "; ".join(problems[:5]) if problems else ": ok"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
