#!/usr/bin/env python3
"""The table of a decode-variants.sh call: one row per bench shape, each build's time (µs, the
mean over the call's rounds of each bench's median), and each build against `base`.

usage: decode_variants_summary.py DIR [BUILD ...]   (DIR holds bench-BUILD-rN.csv files;
       the builds default to every BUILD found there, base first)
"""
import csv
import glob
import os
import re
import sys
from collections import defaultdict


def read_bench(path):
    """(shape, split) -> median µs, in the file's order."""
    rows = []
    with open(path, newline="") as f:
        for rec in csv.reader(f):
            if len(rec) >= 3 and rec[0] not in ("shape", "copy_ceiling_GBps") and not rec[0].startswith("device"):
                rows.append((rec[0], " ".join(rec[1].split()[:2]), float(rec[2])))
    return rows


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    folder = argv[1]
    files = glob.glob(os.path.join(folder, "bench-*-r*.csv"))
    if not files:
        sys.exit(f"no bench-BUILD-rN.csv in {folder}")
    times = defaultdict(lambda: defaultdict(list))  # build -> shape -> [µs]
    splits = defaultdict(dict)  # build -> shape -> the planner's split
    order = []
    for path in sorted(files):
        m = re.match(r"bench-(.+)-r(\d+)\.csv$", os.path.basename(path))
        if not m:
            continue
        for key, split, us in read_bench(path):
            times[m.group(1)][key].append(us)
            splits[m.group(1)][key] = split
            if key not in order:
                order.append(key)
    builds = argv[2:] or sorted(times, key=lambda b: (b != "base", b))
    missing = [b for b in builds if b not in times]
    if missing:
        sys.exit(f"no files for build(s) {', '.join(missing)} in {folder}")
    head = f"{'shape':<62} {'split':<22}" + "".join(f"{b:>9}" for b in builds)
    others = [b for b in builds if b != "base"] if "base" in builds else []
    print(head + "".join(f"{b + '/base':>12}" for b in others))
    for key in order:
        shape = re.sub(r" d=\d+| causal", "", key)
        split = splits[builds[0]].get(key, "-")
        mean = {b: sum(times[b][key]) / len(times[b][key]) for b in builds if times[b].get(key)}
        line = f"{shape:<62} {split:<22}" + "".join(f"{mean[b]:9.2f}" if b in mean else f"{'-':>9}" for b in builds)
        for b in others:
            line += f"{(mean[b] / mean['base'] - 1) * 100:+11.1f}%" if b in mean and "base" in mean else f"{'-':>12}"
        # where a build's planner split the shape otherwise than the first build's: its split
        line += "".join(f"  [{b}: {splits[b][key]}]" for b in builds[1:] if splits[b].get(key, split) != split)
        print(line)


if __name__ == "__main__":
    main(sys.argv)
