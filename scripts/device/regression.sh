#!/usr/bin/env bash
# One device call for the single-GPU regression run (docs/performance.md's attention rows and
# the GPU tests): build genbench and the tests for sm_90a; every GPU test (gtest's counts: none
# may skip on an H200); compute-sanitizer memcheck and racecheck on fa3 and fa2 tests;
# configs/fa3.yaml ROUNDS times (default 3) through genbench (fa3 beside our cudnn), torch SDPA
# on the same shapes, and `genbench_analysis versus` of the rounds. Every step has a limit
# inside DEVICE_BUDGET_S (default 540 s). Results go to $OUT (default results/device-regression):
# fa3-rN.h5, tests.txt, sanitizers.txt, torch.txt; the file's source_tree attribute names the
# tree (scripts/tree-hash.sh).
set -uo pipefail
. "$(dirname "$0")/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-540}
device_init results/device-regression
OUT=$(cd "$OUT" && pwd)
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
step build 200 build.txt bash -c "cmake -S . -B '$B' -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DGENBENCH_CUDA_ARCHITECTURES=90a && cmake --build '$B' -j \$(nproc) --target genbench genbench_tests"
tail -3 "$OUT/build.txt"
step tests 150 tests.txt "$B/tests/genbench_tests" --gtest_brief=1
grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran|Failure" "$OUT/tests.txt" | head -20
filter16='Fa3Gpu.UnequalLengths:Fa3Gpu.Fp8UnequalLengths:AttentionGpu.Fa2ScaleAndLargeBatch'
{
  echo "== memcheck $filter16"
  timeout 70 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/tests/genbench_tests" --gtest_filter="$filter16" 2>&1 | tail -4
  echo "rc=${PIPESTATUS[0]}"
  echo "== racecheck Fa3Gpu.UnequalLengths:AttentionGpu.Fa2ScaleAndLargeBatch"
  timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 "$B/tests/genbench_tests" \
    --gtest_filter='Fa3Gpu.UnequalLengths:AttentionGpu.Fa2ScaleAndLargeBatch' 2>&1 | tail -4
  echo "rc=${PIPESTATUS[0]}"
} > "$OUT/sanitizers.txt" 2>&1
cat "$OUT/sanitizers.txt"
rounds=()
for r in $(seq "${ROUNDS:-3}"); do
  step "fa3 round $r" 110 "fa3-r$r.txt" "$B/bin/genbench" run configs/fa3.yaml -o "$OUT/fa3-r$r.h5" --force -q
  [ -f "$OUT/fa3-r$r.h5" ] && rounds+=("$OUT/fa3-r$r.h5")
done
step torch 100 torch.txt bash -c "cd scripts/peers && python3 fa3_torch_sdpa.py"
(( ${#rounds[@]} )) && PYTHONPATH=analysis python3 -m genbench_analysis versus "${rounds[@]}" --impl fa3 --peer cudnn --target 1.05
cat "$OUT/torch.txt"
python3 -c "import h5py, sys; f = h5py.File(sys.argv[1]); print('source_tree', f.attrs['source_tree'], 'git', f.attrs['git_revision'])" "${rounds[0]:-/dev/null}" 2>&1 | tail -1
grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$OUT/tests.txt" | sed 's/^/tests: /'
echo "== done at $(( $(date +%s) - t0 ))s"
