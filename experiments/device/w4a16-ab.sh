#!/usr/bin/env bash
# Side-by-side A/B of W4A16 check builds in one device call (docs/lab/w4a16.md): each build's
# whole `MODE` list (default time-mid) in turn, ROUNDS rounds (default 2), the order reversed
# every other round, then each build's fp16 g128 wgmma-form and mma.sync-form times per shape.
# Builds: .w4/w4a16_check (new) and .w4/w4a16_check_<name> for each name given.
#   experiments/device/w4a16-ab.sh v1        # new against .w4/w4a16_check_v1
set -uo pipefail
. "$(dirname "$0")/../../scripts/device/common.sh"
device_init results/w4a16-ab
for r in $(seq "${ROUNDS:-2}"); do
  for v in $(round_order "$r" new "$@"); do
    b=.w4/w4a16_check; [ "$v" != new ] && b=.w4/w4a16_check_$v
    step "$v r$r" 200 "time-$v-r$r.txt" "$b" "${MODE:-time-mid}"
  done
done
grep -h "SAMPLED FAIL\|FAILURES" "$OUT"/time-*.txt | head
for f in "$OUT"/time-*.txt; do
  echo "== $(basename "$f") (m n k: wgmma-form us / mma.sync-form us)"
  grep '^CSV,w4a16,fp16,int4' "$f" | awk -F, '$8 == 128 { w = s = ""; for (i = 9; i <= NF; ++i) {
    if ($i ~ /^wgmma_us=/) w = substr($i, 10); if ($i ~ /^fused_us=/) s = substr($i, 10) }
    printf "%s %s %s: %s / %s; ", $5, $6, $7, w, s } END { print "" }'
done
cd "$OUT" && tar czf all.tgz ./*.txt 2>/dev/null && rm -f ./*.txt
echo "total $(( $(date +%s) - t0 )) s"
