#!/usr/bin/env bash
# One device call: builds and runs the microbenchmarks of experiments/device/microbench/ (standalone
# .cu files for sm_90a, outside the CMake build) and prints what they measure:
#   ex2_throughput       ex2.approx f32 / f16x2 / bf16x2 results per clock per SM, and the
#                        MUFU instructions each compiles to;
#   mufu_wgmma_overlap   one warpgroup's e4m3 wgmma and another's ex2 stream, alone and together.
# Usage: experiments/device/microbench.sh [NAME...]   (default: all)
set -uo pipefail
. "$(dirname "$0")/../../scripts/device/common.sh"
device_init results/device-microbench
dir=experiments/device/microbench
names=("$@"); [ ${#names[@]} -eq 0 ] && names=(ex2_throughput mufu_wgmma_overlap)
for n in "${names[@]}"; do
  echo "== $n"
  nvcc -O2 -std=c++17 --generate-code=arch=compute_90a,code=sm_90a -I. -Isrc -o "$OUT/$n" "$dir/$n.cu" || continue
  "$OUT/$n" | tee "$OUT/$n.txt"
  [ "$n" = ex2_throughput ] && cuobjdump -sass "$OUT/$n" | grep -oE "MUFU\.[A-Z0-9.]+" | sort | uniq -c
done
