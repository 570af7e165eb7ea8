#!/bin/bash
# One device call for the W4A16 / grouped GEMM work (docs/int4-gemm.md). Runs the standalone
# check (scripts/device/w4a16/w4a16_check.cu: the kernel, the host layout code and a driver;
# no genbench build) and the kernel's GPU tests (tests/kernels/w4a16/w4a16_mma_test.cu with
# gtest), both carried prebuilt in .w4/ when they run there, else built with nvcc; then:
#   env.txt      device, clocks, the opcode mix of the fp16 int4 kernels (16 and 64 rows)
#   gtest.txt    the GPU tests
#   sweep.txt    the streaming kernel (m <= 16) at forced split-k beside the automatic choice
#   check.txt    validation, timings against fp16 cuBLASLt, grouped GEMMs, fp8 candidates
#   torch.txt    torch's int4 kernel, fp16 torch.matmul, torch._scaled_mm and its kernel name
#   sanitize.txt compute-sanitizer memcheck of the small validation cases and the GPU tests
#   ncu.txt      Nsight Compute sections of the fused kernel at 28672 x 8192, m = 1 and 64
#   summary.md   the joined table (scripts/device/w4a16/summarize.py)
# Usage on the device: OUT=... DEVICE_BUDGET_S=190 scripts/device/w4a16-check.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
device_init results/w4a16
E=$OUT/env.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.mem --format=csv > "$E" 2>&1
BIN=.w4/w4a16_check
GT=.w4/w4a16_gtest
SRC="kernels/w4a16/mma_sm80/w4a16_mma.cu kernels/w4a16/common/w4a16_layout.cpp"
if ! timeout 30 "$BIN" probe >> "$E" 2>&1; then
  echo "carried binaries do not run; building"
  step build 100 build.txt nvcc -std=c++17 -O3 -lineinfo -gencode=arch=compute_90a,code=sm_90a -I. \
    scripts/device/w4a16/w4a16_check.cu $SRC -lcublasLt -lcublas -o /tmp/w4a16_check
  BIN=/tmp/w4a16_check
fi
for k in w4a16_stream_kernelI6__halfLb0ELb0ELb0E w4a16_mma_kernelI6__halfLi4ELb0; do
  echo "opcodes of $k:" >> "$E"
  cuobjdump --dump-sass "$BIN" 2>/dev/null | awk -v k="$k" '$0 ~ "Function : .*" k {f=1;next} /Function :/{f=0} f' |
    grep -oE "^\s+/\*[0-9a-f]{4}\*/\s+[A-Z0-9_.]+" | awk '{print $2}' | sed 's/\..*//' | sort | uniq -c | sort -rn | tr '\n' ' ' >> "$E"
  echo >> "$E"
done
cat "$E"
step gtest 40 gtest.txt "$GT"
tail -4 "$OUT/gtest.txt"
step check 100 check.txt "$BIN" all
grep -E "FAIL|FAILURES|GROUPED|none of" "$OUT/check.txt" | head
echo "ok lines: $(grep -c '^VALIDATE ok\|^SAMPLED ok' "$OUT/check.txt")"
step sweep 60 sweep.txt "$BIN" sweep
grep CSV,sweep "$OUT/sweep.txt" | cut -c1-250
step torch 40 torch.txt python3 scripts/device/w4a16/torch_peers.py all
grep -E "CHECK|rror" "$OUT/torch.txt" | head -8
step sanitize 35 sanitize.txt bash -c "compute-sanitizer --tool memcheck $BIN sanitize; compute-sanitizer --tool memcheck $GT"
grep -E "ERROR SUMMARY|FAILURES|PASSED|FAILED" "$OUT/sanitize.txt"
python3 scripts/device/w4a16/summarize.py "$OUT/check.txt" "$OUT/torch.txt" > "$OUT/summary.md" 2>&1
cat "$OUT/summary.md" | cut -c1-250
step ncu 30 ncu.txt ncu --clock-control none -k regex:w4a16_ --launch-skip 3 --launch-count 5 \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy "$BIN" profile
grep -E "Duration|Memory Throughput|DRAM Throughput|Compute \(SM\)|Stall|Achieved Occupancy" "$OUT/ncu.txt" | head -20
echo "total $(( $(date +%s) - t0 )) s"
