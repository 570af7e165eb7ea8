#!/usr/bin/env bash
# One device call comparing builds of scripts/device/decode_check.cu (docs/lab/decode.md):
# .w4/decode_check_base (the kernel before the change), .w4/decode_check (the tree's), and any
# other .w4/decode_check_* given in VARIANTS; validation and memcheck of the tree's build, then
# the bench of each build in turn, ROUNDS times in alternating order (each bench run itself
# 3 rounds with the copy ceiling); summary.txt: decode_variants_summary.py's table.
set -uo pipefail
. "$(dirname "$0")/../../scripts/device/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-400}
device_init results/decode-variants
D=.w4/decode_check
step validate 80 validate.txt "$D" validate
echo "PASS $(grep -cE '^PASS' "$OUT/validate.txt")"; grep -E "^FAIL|failure" "$OUT/validate.txt" | cut -c1-300
step memcheck 40 memcheck.txt compute-sanitizer --tool memcheck --error-exitcode 9 "$D" small
tail -1 "$OUT/memcheck.txt"
step racecheck 45 racecheck.txt compute-sanitizer --tool racecheck --error-exitcode 9 "$D" small
tail -1 "$OUT/racecheck.txt"
builds=(base tree ${VARIANTS:-})
for r in $(seq "${ROUNDS:-2}"); do
  order=("${builds[@]}"); (( r % 2 == 0 )) && order=($(printf '%s\n' "${builds[@]}" | tac))
  for v in "${order[@]}"; do
    bin=.w4/decode_check_$v; [ "$v" = tree ] && bin=$D
    step "bench $v r$r" 60 "bench-$v-r$r.csv" "$bin" bench 3
  done
done
python3 experiments/device/decode_variants_summary.py "$OUT" "${builds[@]}" | tee "$OUT/summary.txt"
cd "$OUT" && tar czf all.tgz ./*.txt ./*.csv 2>/dev/null && rm -f ./*.csv; ls
echo "total $(( $(date +%s) - t0 )) s"
