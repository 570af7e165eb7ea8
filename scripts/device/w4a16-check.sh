#!/bin/bash
# One device call for the W4A16 / grouped GEMM work (docs/int4-gemm.md). Runs the standalone
# check (scripts/device/w4a16/w4a16_check.cu: the kernel, the host layout code and a driver;
# no genbench build), carried prebuilt as .w4/w4a16_check when it runs there, else built with
# nvcc; then the SASS instruction mix of the 16-row kernel, validation + timings + grouped +
# fp8 candidates, torch's peers, compute-sanitizer memcheck on small cases, and the joined table.
# Usage on the device: OUT=... DEVICE_BUDGET_S=185 scripts/device/w4a16-check.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
device_init results/w4a16
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.mem --format=csv > "$OUT/nvidia-smi.txt" 2>&1
BIN=.w4/w4a16_check
if ! timeout 30 "$BIN" probe > "$OUT/probe.txt" 2>&1; then
  echo "carried binary does not run ($(tail -1 "$OUT/probe.txt")); building"
  SRC="scripts/device/w4a16/w4a16_check.cu kernels/w4a16/mma_sm80/w4a16_mma.cu kernels/w4a16/common/w4a16_layout.cpp"
  step build 100 build.txt nvcc -std=c++17 -O3 -lineinfo -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -I. $SRC \
    -lcublasLt -lcublas -o /tmp/w4a16_check
  BIN=/tmp/w4a16_check
fi
head -1 "$OUT/probe.txt"
# Opcode mix of the fp16 int4 16-row kernel (the small-m path)
cuobjdump --dump-sass "$BIN" 2>/dev/null | awk '/Function : .*w4a16_mma_kernelI6__halfLi1ELb0/{f=1;next} /Function :/{f=0} f' |
  grep -oE "^\s+/\*[0-9a-f]{4}\*/\s+[A-Z0-9_.]+" | awk '{print $2}' | sed 's/\..*//' | sort | uniq -c | sort -rn | head -14 | tr '\n' ' '
echo
step check 105 check.txt "$BIN" all
grep -E "FAIL|FAILURES|GROUPED" "$OUT/check.txt" | head
grep -c "^VALIDATE ok\|^SAMPLED ok" "$OUT/check.txt"
step torch 45 torch.txt python3 scripts/device/w4a16/torch_peers.py all
grep -E "CHECK|Error|error" "$OUT/torch.txt" | head -8
step sanitize 30 sanitize.txt compute-sanitizer --tool memcheck "$BIN" sanitize
grep -E "ERROR SUMMARY|FAILURES" "$OUT/sanitize.txt"
python3 scripts/device/w4a16/summarize.py "$OUT/check.txt" "$OUT/torch.txt" > "$OUT/summary.md" 2>&1
cat "$OUT/summary.md"
grep "^CSV,grouped\|^CSV,fp8\|^CSV,torch_scaled" "$OUT/check.txt" "$OUT/torch.txt" | cut -c1-400
echo "total $(( $(date +%s) - t0 )) s"
