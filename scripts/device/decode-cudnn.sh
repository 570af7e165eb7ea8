#!/usr/bin/env bash
# One device call for decode/cudnn (kernels/decode/cudnn, cuDNN's SDPA with paged K/V caches)
# beside decode/fa3: build genbench and genbench_tests for sm_90a, the GPU tests of both decode
# implementations (DecodeCudnnGpu.*: odd lengths with pages 0-256, groups, graph replays, and
# the shapes cuDNN refuses with its reason; DecodeGpu.*), then configs/decode-cudnn-smoke.yaml
# (fa3 and cudnn on nine serving shapes) and a compact table of it. Logs go to $OUT.
# Usage: scripts/device/decode-cudnn.sh   (about 4-6 minutes on an H200 with 16 cores)
set -uo pipefail
. "$(dirname "$0")/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-560}
device_init results/decode-cudnn
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader | tee "$OUT/smi.txt"
device_build 330 genbench genbench_tests
grep -E "cuDNN|CUDA backend" "$OUT/configure.txt"
step tests 120 tests.txt "$B/tests/genbench_tests" --gtest_filter='DecodeCudnnGpu.*:DecodeGpu.*:DecodeOp.*'
grep -E "^\[ +(FAILED|PASSED|OK|SKIPPED) |^\[ (refused|variant)|Failure|Expected|Which is|validation" "$OUT/tests.txt" | cut -c1-400 | head -60
step smoke 150 smoke.txt "$B/bin/genbench" run configs/decode-cudnn-smoke.yaml -o "$OUT/decode-cudnn-smoke.h5" --force
# The summary table, then one line per point from the result file (genbench export): benchmark,
# page size, implementation, status, time, GB/s, fraction of the copy ceiling, variant or reason.
sed -n '/^Summary/,$p' "$OUT/smoke.txt" | cut -c1-220
step export 30 export.txt "$B/bin/genbench" export "$OUT/decode-cudnn-smoke.h5" --csv -o "$OUT/smoke-csv"
step table 30 table.txt python3 - "$OUT/smoke-csv" <<'PY'
import csv, glob, os, sys
print(f"{'benchmark':<20} {'page':>4} {'impl':<6} {'status':<11} {'time us':>9} {'GB/s':>7} {'of ceil':>7}  variant / reason")
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.csv"))):
    if os.path.basename(path) == "system.csv":
        continue
    for r in csv.DictReader(open(path)):
        if not r.get("status"):
            continue
        num = lambda k, f=1.0: f"{float(r[k]) * f:.5g}" if r.get(k) not in (None, "", "nan") else "-"
        note = r.get("variant") if r["status"] == "ok" else r.get("reason", "")
        print(f"{os.path.basename(path)[:-4]:<20} {r.get('page_size', ''):>4} {r['impl']:<6} {r['status']:<11} "
              f"{num('time_median_s', 1e6):>9} {num('GBps'):>7} {num('ceiling_fraction'):>7}  {note[:110]}")
PY
cat "$OUT/table.txt"
echo "== done at $(( $(date +%s) - t0 ))s"
