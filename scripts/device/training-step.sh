#!/usr/bin/env bash
# One device call for the training half: build genbench and genbench_tests for sm_90a, the fused
# backward's GPU tests (FILTER, default Fa3Backward*), fa3 beside cudnn (and fa2 with FA2=1) on
# the backward anchors' Hopper shapes (hidden 2048, 16K tokens, head_dim 64 and 128, SEQS, causal
# and not; ROUNDS rounds in one run, default 3: medians per point), then with MODEL=<suite> the
# model suite (configs/models/<suite>.yaml) and `genbench_analysis model` on it (step time,
# tokens/s, MFU). Logs and result files go to $OUT.
# Usage: MODEL=llama3-8b-tp1-prefill scripts/device/training-step.sh   (about 7 minutes, 16 cores)
set -uo pipefail
. "$(dirname "$0")/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-560}
device_init results/training-step
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader | tee "$OUT/smi.txt"
device_build 300 genbench genbench_tests
step tests 120 tests.txt "$B/tests/genbench_tests" --gtest_filter="${FILTER:-Fa3Backward*}"
grep -E "^\[ +(FAILED|PASSED|OK|SKIPPED) |Failure|Expected|Which is" "$OUT/tests.txt" | cut -c1-240 | head -30
impls="fa3, cudnn"
[ "${FA2:-0}" = 1 ] && impls="fa3, fa2, cudnn"
cat >"$OUT/standing.yaml" <<YAML
genbench: 1
settings:
  backend: auto
  timing: {warmup: 3, min_iterations: 10, max_iterations: 100, min_time: 0.05, max_time: 1, target_noise: 0.01}
benchmarks:
  - name: fa3-standing
    op: attention_backward
    implementations: [$impls]
    axes: {hidden: 2048, tokens: 16K, seqlen_q: [${SEQS:-2K, 8K, 16K}], head_dim: [64, 128], causal: [false, true], dtype: bf16}
YAML
step standing "${STANDING_S:-150}" standing.txt "$B/bin/genbench" run "$OUT/standing.yaml" --rounds "${ROUNDS:-3}" -o "$OUT/standing.h5" --force
[ -f "$OUT/standing.h5" ] && step versus 30 versus.txt env PYTHONPATH=analysis python3 - "$OUT/standing.h5" <<'PY'
import sys
import genbench_analysis as ga
t = ga.load(sys.argv[1]).table("fa3-standing")
t = t[t["status"] == "ok"]
keys = ["seqlen_q", "head_dim", "causal"]
m = t.groupby(keys + ["impl", "round"])["tflops"].median().unstack("impl")
for col in [c for c in m.columns if c != "cudnn"]:
    m[col + "/cudnn"] = m[col] / m["cudnn"]
per_round = m.reset_index()
med = per_round.groupby(keys).median(numeric_only=True).drop(columns=["round"])
lo = per_round.groupby(keys).min(numeric_only=True).drop(columns=["round"])
hi = per_round.groupby(keys).max(numeric_only=True).drop(columns=["round"])
print("median over rounds (TFLOP/s; ratios within each round, then the median):")
print(med.to_string(float_format=lambda v: f"{v:.3g}"))
for c in [c for c in med.columns if c.endswith("/cudnn")]:
    print(f"{c}: min over rounds", " ".join(f"{v:.3f}" for v in lo[c]), "| max", " ".join(f"{v:.3f}" for v in hi[c]))
PY
[ -f "$OUT/versus.txt" ] && cat "$OUT/versus.txt"
if [ -n "${MODEL:-}" ]; then
  step model "${MODEL_S:-200}" model.txt "$B/bin/genbench" run "configs/models/$MODEL.yaml" -o "$OUT/$MODEL.h5" --force
  grep -cE " ok " "$OUT/model.txt"; grep -E "failed|error" "$OUT/model.txt" | head -5
  step compose 60 compose.txt env PYTHONPATH=analysis python3 -m genbench_analysis model "$OUT/$MODEL.h5" --plot "$OUT/$MODEL.png"
  cut -c1-200 "$OUT/compose.txt" | head -80
fi
[ -f "$OUT/tests.txt" ] && grep -E "^\[  (PASSED|FAILED) " "$OUT/tests.txt" | sed 's/^/tests: /'
echo "== done at $(( $(date +%s) - t0 ))s"
