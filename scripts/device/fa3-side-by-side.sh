#!/usr/bin/env bash
# One device call for the standing of every fa3 target: build (genbench and the tests), the
# attention GPU tests, configs/fa3.yaml (fa3 beside our cudnn, 16-bit) ROUNDS times (default 2)
# and configs/fa3-fp8.yaml through genbench, then torch SDPA (flash and cuDNN backends) on the
# same shapes (scripts/peers/fa3_torch_sdpa.py). Every step has a limit inside DEVICE_BUDGET_S
# (default 480 s); printed last: one line per genbench point of the first round (benchmark,
# point, implementation, TFLOP/s), fa3 against cudnn over the rounds (`genbench_analysis
# versus`: per point the ratio within each round, median and min-max, against the 1.05 target),
# the torch table and the GPU tests' verdict. Logs and result files go to $OUT (default
# results/device-fa3-side-by-side).
set -uo pipefail
. "$(dirname "$0")/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-480}
device_init results/device-fa3-side-by-side
OUT=$(cd "$OUT" && pwd)
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
step build 150 build.txt bash -c "cmake -S . -B '$B' -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DGENBENCH_CUDA_ARCHITECTURES=90a && cmake --build '$B' -j \$(nproc) --target genbench genbench_tests"
step tests 100 tests.txt "$B/tests/genbench_tests" --gtest_filter="${TESTS:-Fa3Gpu.*:Fa3Fp8*:AttentionGpu.*}"
grep -E "^\[  (PASSED|FAILED) |tests ran|Failure" "$OUT/tests.txt" | head -8
rounds=()
for r in $(seq "${ROUNDS:-2}"); do
  step "fa3 round $r" 150 "fa3-r$r.txt" "$B/bin/genbench" run configs/fa3.yaml -o "$OUT/fa3-r$r.h5" --force
  [ -f "$OUT/fa3-r$r.h5" ] && rounds+=("$OUT/fa3-r$r.h5")
done
step fp8 100 fp8.txt "$B/bin/genbench" run configs/fa3-fp8.yaml -o "$OUT/fa3-fp8.h5" --force
step torch 150 torch.txt bash -c "cd scripts/peers && python3 fa3_torch_sdpa.py"
summary_points "$OUT/fa3-r1.txt" "" "fa3|cudnn"; summary_points "$OUT/fp8.txt" "" fa3
(( ${#rounds[@]} )) && PYTHONPATH=analysis python3 -m genbench_analysis versus "${rounds[@]}" --impl fa3 --peer cudnn --target 1.05
cat "$OUT/torch.txt"
# The tests' verdict again, last, where a tail of this output still shows it.
grep -E "^\[  (PASSED|FAILED) " "$OUT/tests.txt" | sed 's/^/tests: /'
echo "== done at $(( $(date +%s) - t0 ))s"
