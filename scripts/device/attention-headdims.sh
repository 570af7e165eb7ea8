#!/usr/bin/env bash
# One device call for head dims 96 and 192 and MLA prefill (192/128): build genbench and
# genbench_tests for sm_90a, the GPU tests of those dims (fa3 and the other implementations) and
# fa3's d=128 and varlen tests (the kernels the o_dim change touches), then
# configs/attention-headdims.yaml (ROUNDS rounds, default 3) and a table of fa3 / cudnn per point
# with each round's ratio. Logs and result files go to $OUT.
# Usage: scripts/device/attention-headdims.sh   (about 6-8 minutes, 16 cores)
set -uo pipefail
. "$(dirname "$0")/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-570}
device_init results/attention-headdims
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader | tee "$OUT/smi.txt"
device_build 300 genbench genbench_tests
step tests 150 tests.txt "$B/tests/genbench_tests" \
  --gtest_filter="${FILTER:-Fa3Gpu.HeadDims*:Fa3Gpu.Refuses*:AttentionGpu.HeadDims*:Fa3Gpu.Bf16D128OddLengths:Fa3Gpu.VarlenPackedBatches:Fa3Gpu.SplitTailEveryMode}"
grep -E "^\[ +(FAILED|PASSED|OK|SKIPPED) |Failure|Expected|Which is|cudnn " "$OUT/tests.txt" | cut -c1-260 | head -40
step run "${RUN_S:-240}" run.txt "$B/bin/genbench" run configs/attention-headdims.yaml --rounds "${ROUNDS:-3}" \
  -o "$OUT/attention-headdims.h5" --force
grep -E "failed|error|unsupported" "$OUT/run.txt" | cut -c1-240 | head -10
[ -f "$OUT/attention-headdims.h5" ] && step table 30 table.txt env PYTHONPATH=analysis python3 - "$OUT/attention-headdims.h5" <<'PY'
import sys
import genbench_analysis as ga
import pandas as pd
r = ga.load(sys.argv[1])
pd.set_option("display.width", 200)
for name in r.benchmarks:
    t = r.table(name)
    print(name, dict(t["status"].value_counts()))
    t = t[t["status"] == "ok"]
    keys = ["seqlen_q", "head_dim", "head_dim_v", "causal"]
    m = t.groupby(keys + ["impl", "round"])["tflops"].median().unstack("impl")
    if "cudnn" in m.columns:
        m["fa3/cudnn"] = m["fa3"] / m["cudnn"]
    per = m.reset_index()
    print(per.groupby(keys).median(numeric_only=True).drop(columns=["round"]).to_string(float_format=lambda v: f"{v:.3f}"))
    if "fa3/cudnn" in per:
        print("min/max over rounds:", per.groupby(keys)["fa3/cudnn"].agg(["min", "max"]).to_string(float_format=lambda v: f"{v:.3f}"))
PY
[ -f "$OUT/table.txt" ] && cat "$OUT/table.txt"
echo "== done at $(( $(date +%s) - t0 ))s"
