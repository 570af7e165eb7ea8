#!/usr/bin/env bash
# One device call for decode attention (kernels/decode/fa3_sm90), standalone of the CMake tree:
# build scripts/device/decode_check.cu with nvcc for sm_90a (or use DECODE_BIN, a binary built
# elsewhere, when it starts), ptxas's register/spill report, validation (odd lengths, pages
# 0-256 against the fp64 reference and paged against contiguous, fp8 K/V, graph replays with new
# lengths), compute-sanitizer memcheck and racecheck on small cases, the timing of the target
# shapes (3 rounds, copy ceiling in each) and torch SDPA on the same shapes. Logs go to $OUT.
set -uo pipefail
. "$(dirname "$0")/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-230}
device_init results/decode-check
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader | tee "$OUT/smi.txt"
# A binary built elsewhere is used when it starts here (its usage line; read whole, since
# grep -q under pipefail would see the program's SIGPIPE as a failure).
probe=$([ -n "${DECODE_BIN:-}" ] && "$DECODE_BIN" nomode 2>&1)
echo "$probe" | head -3
if [ -n "${DECODE_BIN:-}" ] && grep -q "^usage" <<<"$probe"; then
  BIN=$DECODE_BIN
  echo "== using $BIN"
else
  BIN=/tmp/decode_check
  step build 120 build.txt nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I. -Isrc -Xptxas -v \
    scripts/device/decode_check.cu kernels/decode/fa3_sm90/decode_sm90.cu kernels/decode/common/decode_reference.cpp \
    src/ops/dtype.cpp -o "$BIN"
  grep -E "error|spill stores" "$OUT/build.txt" | sort | uniq -c | head
fi
step validate 70 validate.txt "$BIN" validate
grep -cE "^PASS" "$OUT/validate.txt"; grep -E "^FAIL|failure" "$OUT/validate.txt" | cut -c1-300
step memcheck 40 memcheck.txt compute-sanitizer --tool memcheck --error-exitcode 9 "$BIN" small
tail -2 "$OUT/memcheck.txt"
step racecheck 45 racecheck.txt compute-sanitizer --tool racecheck --error-exitcode 9 "$BIN" small
tail -2 "$OUT/racecheck.txt"
step bench 40 bench.csv "$BIN" bench 3
cat "$OUT/bench.csv"
step torch 40 torch.csv python3 scripts/peers/decode_torch_sdpa.py --rounds 3
cat "$OUT/torch.csv"
echo "== done at $(( $(date +%s) - t0 ))s"
