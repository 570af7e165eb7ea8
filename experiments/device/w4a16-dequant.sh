#!/usr/bin/env bash
# One device call for the W4A16 dequantise path (docs/lab/w4a16.md): the kernel's GPU tests,
# the validation (W^T bit-exact included), the dequantise kernel alone with its k-fast grid
# against the n-fast one (alternating, 3 rounds), and m = 1024 / 4096 against fp16 cuBLASLt.
# Prebuilt binaries in .w4/ (w4a16_check, w4a16_gtest).
set -uo pipefail
. "$(dirname "$0")/../../scripts/device/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-400}
device_init results/w4a16-dequant
W=.w4/w4a16_check
step gtest 40 gtest.txt .w4/w4a16_gtest
tail -3 "$OUT/gtest.txt"
step validate 60 check.txt "$W" validate
grep -E "FAIL|FAILURES" "$OUT/check.txt" | head -5; echo "ok lines: $(grep -c '^VALIDATE ok' "$OUT/check.txt")"
step dequant 90 dequant.txt "$W" dequant
grep CSV "$OUT/dequant.txt"
step time 200 time.txt "$W" time-large
python3 scripts/device/w4a16/summarize.py "$OUT/time.txt" > "$OUT/summary.md" 2>&1
cut -c1-200 "$OUT/summary.md"
cd "$OUT" && tar czf all.tgz ./*.txt ./*.md 2>/dev/null && rm -f ./*.txt ./*.md; ls
echo "total $(( $(date +%s) - t0 )) s"
