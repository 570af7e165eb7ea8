#!/usr/bin/env python3
"""Summarises the per-instruction warp-stall samples that `experiments/device/fa3-profile.sh source`
exports (ncu source page, SASS, CSV, gzipped or not): samples by stall reason and by opcode,
the instructions with the most samples, and optionally the share of named instruction ranges.

  sass_stalls.py PROFILE.sass.csv.gz [--top 30] [--regions 810,837,992,1488 --names head,issue,softmax]

Instruction numbers are row indices of the source page (printed with --top); --regions takes
ascending boundaries and --names one name per range between them.
"""
import argparse
import collections
import csv
import gzip
import sys


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        rows = list(csv.reader(f))
    # Row 0 names the kernel, row 1 holds the column names.
    header, data = rows[1], rows[2:]
    return {h: i for i, h in enumerate(header)}, data


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--regions", help="ascending instruction indices")
    ap.add_argument("--names", help="one name per range")
    a = ap.parse_args()
    ix, data = load(a.csv)
    col = ix.get("Warp Stall Sampling (All Samples)")
    if col is None:
        sys.exit("no 'Warp Stall Sampling (All Samples)' column: export with --page source --print-source sass")
    samples = [int(r[col] or 0) for r in data]
    total = sum(samples) or 1
    reasons = [h for h in ix if h.startswith("stall_") and "(Not Issued)" not in h]
    by_reason, by_op = collections.Counter(), collections.Counter()
    for r, s in zip(data, samples):
        src = r[ix["Source"]].split()
        op = (src[1] if src and src[0].startswith("@") else src[0] if src else "?").split(".")[0]
        by_op[op] += s
        for h in reasons:
            by_reason[h[6:]] += int(r[ix[h]] or 0)
    print(f"{total} samples")
    print("by reason:", ", ".join(f"{k} {100 * v / total:.1f}%" for k, v in by_reason.most_common(10)))
    print("by opcode:", ", ".join(f"{k} {100 * v / total:.1f}%" for k, v in by_op.most_common(12)))
    order = sorted(range(len(data)), key=lambda k: -samples[k])[: a.top]
    for k in order:
        top = sorted(((int(data[k][ix[h]] or 0), h[6:]) for h in reasons), reverse=True)[:3]
        src = data[k][ix["Source"]].strip()[:64]
        print(f"{100 * samples[k] / total:5.1f}% #{k:<5d} {src:64s} " + " ".join(f"{n}:{v}" for v, n in top))
    if a.regions:
        b = [int(x) for x in a.regions.split(",")]
        names = a.names.split(",") if a.names else [f"r{i}" for i in range(len(b) - 1)]
        if len(names) != len(b) - 1:
            sys.exit("--names needs one name per range between --regions boundaries")
        for (lo, hi), n in zip(zip(b, b[1:]), names):
            print(f"{n:16s} #{lo}-{hi - 1}: {100 * sum(samples[lo:hi]) / total:5.1f}%")


if __name__ == "__main__":
    main()
