#!/usr/bin/env bash
# One device call for decode fa3's split order (docs/lab/decode.md): validation with
# the orders, memcheck/racecheck, the bench (ranges, interleaved, rotated by sequence, side by
# side, 3 rounds, copy ceiling in each), torch SDPA on the same shapes, Nsight Compute of b=64
# fp8, 128K and 70B (ranges). Prebuilt .w4/decode_check used when it starts.
set -uo pipefail
. "$(dirname "$0")/../../scripts/device/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-300}
device_init results/decode-order
D=.w4/decode_check
step validate 80 validate.txt "$D" validate
echo "PASS $(grep -cE '^PASS' "$OUT/validate.txt")"; grep -E "^FAIL|failure" "$OUT/validate.txt" | cut -c1-300
step memcheck 40 memcheck.txt compute-sanitizer --tool memcheck --error-exitcode 9 "$D" small
tail -2 "$OUT/memcheck.txt"
step racecheck 45 racecheck.txt compute-sanitizer --tool racecheck --error-exitcode 9 "$D" small
tail -2 "$OUT/racecheck.txt"
step bench 80 bench.csv "$D" bench 3
cut -d, -f1,2,3,6 "$OUT/bench.csv"
step torch 40 torch.csv python3 scripts/peers/decode_torch_sdpa.py --rounds 3
grep -E "cudnn,|auto," "$OUT/torch.csv"
step ncu 60 ncu.txt ncu --clock-control none -k regex:decode_kernel --section SpeedOfLight \
  --section WarpStateStats --section LaunchStats "$D" profile
grep -E "^\s+void|Elapsed Cycles|SM Active Cycles|DRAM Throughput" "$OUT/ncu.txt" | cut -c1-120
cd "$OUT" && tar czf all.tgz ./*.txt ./*.csv 2>/dev/null && rm -f ./*.txt ./*.csv; ls
echo "total $(( $(date +%s) - t0 )) s"
