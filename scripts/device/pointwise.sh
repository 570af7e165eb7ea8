#!/usr/bin/env bash
# One device call for the pointwise op (docs/pointwise.md): build genbench and genbench_tests for
# sm_90a, the GPU tests of pointwise/cuda (PointwiseGpu.*) and the op's host tests, then
# configs/pointwise.yaml (L2 cold, 3 rounds) and its torch peer (scripts/peers/pointwise_torch.py)
# on the same card, and a table of both: GB/s, the fraction of the copy ceiling, ours / torch.
# With MODEL=<suite> (configs/models/<suite>.yaml) the suite runs too and genbench_analysis model
# composes it. Logs and result files go to $OUT.
# Usage: scripts/device/pointwise.sh   (about 3-5 minutes on an H100 or H200 with 16 cores)
set -uo pipefail
. "$(dirname "$0")/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-560}
device_init results/pointwise
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader | tee "$OUT/smi.txt"
device_build 300 genbench genbench_tests
step tests 120 tests.txt "$B/tests/genbench_tests" --gtest_filter='PointwiseGpu.*:PointwiseOp.*:PointwiseReference.*'
grep -E "^\[ +(FAILED|PASSED|OK|SKIPPED) |Failure|Expected|Which is|max error" "$OUT/tests.txt" | cut -c1-300 | head -40
step run 200 run.txt "$B/bin/genbench" run configs/pointwise.yaml -o "$OUT/pointwise.h5" --force
sed -n '/^Summary/,$p' "$OUT/run.txt" | cut -c1-200 | head -70
step torch 150 torch.txt python3 scripts/peers/pointwise_torch.py
grep -E "^(CHECK|torch )" "$OUT/torch.txt"
tail -3 "$OUT/torch.txt"
step table 60 table.txt env PYTHONPATH=analysis python3 - "$OUT/pointwise.h5" "$OUT/torch.txt" <<'PY'
import sys
import genbench_analysis as ga
import pandas as pd
r = ga.load(sys.argv[1])
rows = []
for name in r.benchmarks:
    t = r.table(name)
    t = t[t["status"] == "ok"]
    for (kind, rows_, hidden, heads), d in t.groupby(["kind", "rows", "hidden", "heads"]):
        width = f"{heads}/8" if kind.startswith("rope") else str(hidden)
        rows.append(dict(kind=kind, rows=int(rows_), width=width, ours_GBps=d["GBps"].median(),
                         ours_min=d["GBps"].min(), ours_max=d["GBps"].max(),
                         of_copy=d["ceiling_fraction"].median()))
ours = pd.DataFrame(rows)
peer = []
for line in open(sys.argv[2]):
    if line.startswith("CSV,torch,"):
        _, _, kind, n, width, t, gbps = line.strip().split(",")
        peer.append(dict(kind=kind, rows=int(n), width=width, torch_GBps=float(gbps)))
m = ours.merge(pd.DataFrame(peer), on=["kind", "rows", "width"], how="left")
m["ours/torch"] = m["ours_GBps"] / m["torch_GBps"]
pd.set_option("display.width", 200)
print(m.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
PY
cat "$OUT/table.txt"
if [ -n "${MODEL:-}" ]; then
  step model 200 model.txt "$B/bin/genbench" run "configs/models/$MODEL.yaml" -o "$OUT/$MODEL.h5" --force
  tail -3 "$OUT/model.txt"
  step compose 60 compose.txt env PYTHONPATH=analysis python3 -m genbench_analysis model "$OUT/$MODEL.h5" --plot "$OUT/$MODEL.png"
  cut -c1-250 "$OUT/compose.txt" | head -60
fi
echo "== done at $(( $(date +%s) - t0 ))s"
