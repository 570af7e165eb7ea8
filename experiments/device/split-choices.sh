#!/usr/bin/env bash
# One device call for two launch-shape questions (docs/lab/w4a16.md, docs/lab/decode.md):
#   W4A16's streaming kernel with one CTA per SM in its split-k choice: its GPU tests, the
#   validation, m = 1-16 against fp16 cuBLASLt and torch's int4 kernel, the forced-split sweep;
#   decode fa3 (scripts/device/decode_check.cu): validation, memcheck/racecheck, the bench and
#   torch SDPA, Nsight Compute of bf16/fp8 b=64, 70B and the 128K sequence. (On 2026-12-02 the
#   bench also held the interleaved split order of 0b2e7a0, since dropped: docs/lab/decode.md.)
# Prebuilt binaries in .w4/ (w4a16_check, w4a16_gtest, decode_check) are used when they start.
set -uo pipefail
. "$(dirname "$0")/../../scripts/device/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-540}
device_init results/split-choices
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.mem --format=csv > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
W=.w4/w4a16_check
step w4-gtest 40 w4-gtest.txt .w4/w4a16_gtest
tail -3 "$OUT/w4-gtest.txt"
step w4-validate 60 w4-check.txt "$W" validate
grep -E "FAIL|FAILURES" "$OUT/w4-check.txt" | head -5; echo "ok lines: $(grep -c '^VALIDATE ok' "$OUT/w4-check.txt")"
step w4-time 60 w4-time.txt "$W" time-small
step w4-torch 40 w4-torch.txt python3 scripts/device/w4a16/torch_peers.py int4-small
python3 scripts/device/w4a16/summarize.py "$OUT/w4-time.txt" "$OUT/w4-torch.txt" > "$OUT/w4-summary.md" 2>&1
cut -c1-200 "$OUT/w4-summary.md"
step w4-sweep 80 w4-sweep.txt "$W" sweep
grep CSV,sweep "$OUT/w4-sweep.txt" | cut -c1-250
D=.w4/decode_check
step dc-validate 70 dc-validate.txt "$D" validate
echo "PASS $(grep -cE '^PASS' "$OUT/dc-validate.txt")"; grep -E "^FAIL|failure" "$OUT/dc-validate.txt" | cut -c1-300
step dc-memcheck 40 dc-memcheck.txt compute-sanitizer --tool memcheck --error-exitcode 9 "$D" small
tail -2 "$OUT/dc-memcheck.txt"
step dc-racecheck 45 dc-racecheck.txt compute-sanitizer --tool racecheck --error-exitcode 9 "$D" small
tail -2 "$OUT/dc-racecheck.txt"
step dc-bench 60 dc-bench.csv "$D" bench 3
cat "$OUT/dc-bench.csv"
step dc-torch 40 dc-torch.csv python3 scripts/peers/decode_torch_sdpa.py --rounds 3
grep -E "cudnn,|auto," "$OUT/dc-torch.csv"
step dc-ncu 60 dc-ncu.txt ncu --clock-control none -k regex:decode_kernel --section SpeedOfLight \
  --section WarpStateStats --section InstructionStats --section MemoryWorkloadAnalysis "$D" profile
grep -E "decode_kernel|Duration|DRAM Throughput|Issue Slots Busy|Executed Ipc A|Stall|L2 Hit" "$OUT/dc-ncu.txt" | head -80
cd "$OUT" && tar czf all.tgz ./*.txt ./*.csv ./*.md 2>/dev/null && rm -f ./*.txt ./*.csv ./*.md; ls
echo "total $(( $(date +%s) - t0 )) s"
