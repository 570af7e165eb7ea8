#!/usr/bin/env bash
# Device calls for attention/fa3, one stage per call so each stays under the per-call limit
# (the build stays on a warm machine between calls):
#   experiments/device/fa3.sh build   configure and build for sm_90a (torch SDPA peers run on GPU 1
#                                 meanwhile: scripts/peers/fa3_torch_sdpa.py)
#   experiments/device/fa3.sh tests   the attention and fa3 GPU tests, compute-sanitizer memcheck on
#                                 fa3 varlen
#   experiments/device/fa3.sh perf    configs/fa3.yaml (persistent, then one CTA per tile),
#                                 configs/fa3-tails.yaml and the d=64 A/B of experiments/configs/fa3_ab.yaml
#                                 (2 vs 3 consumer warpgroups)
# Logs and result files go to $OUT (default results/device-fa3); BUILD names the build tree.
set -uo pipefail
. "$(dirname "$0")/../../scripts/device/common.sh"
device_init results/device-fa3
OUT=$(cd "$OUT" && pwd)
summary() { sed -n '/^Summary/,$p' "$1" | cut -c1-170; }
case "${1:-}" in
  build)
    nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
    (cd scripts/peers && CUDA_VISIBLE_DEVICES=1 timeout 240 python3 fa3_torch_sdpa.py > "$OUT/torch-sdpa.txt" 2>&1) &
    tp=$!
    env GENBENCH_CUDA_ARCHS=90a GENBENCH_JOBS="${GENBENCH_JOBS:-32}" timeout 400 scripts/build.sh "$B" > "$OUT/build.txt" 2>&1
    rc=$?
    echo "build rc=$rc at ${SECONDS}s"
    grep -iE "warning|error" "$OUT/build.txt" | head -20
    [ "${PEERS_WAIT:-1}" = 1 ] && { wait $tp; cat "$OUT/torch-sdpa.txt"; }
    exit $rc
    ;;
  tests)
    timeout 300 "$B/tests/genbench_tests" --gtest_filter="${TEST_FILTER:-Fa3Gpu.*:AttentionGpu.*}" > "$OUT/attention-tests.txt" 2>&1
    echo "attention tests rc=$? at ${SECONDS}s"
    grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran|Failure" "$OUT/attention-tests.txt" | head -30
    grep -E "varlen|consumer|m192" "$OUT/attention-tests.txt" | cut -c1-260 | head -12
    timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/tests/genbench_tests" \
      --gtest_filter='Fa3Gpu.VarlenPackedBatches:Fa3Gpu.HeadDim64' > "$OUT/memcheck.txt" 2>&1
    echo "memcheck rc=$?"; tail -3 "$OUT/memcheck.txt"
    timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 "$B/tests/genbench_tests" \
      --gtest_filter='Fa3Gpu.VarlenGraphServesNewLengthsWithoutRecapture' > "$OUT/racecheck.txt" 2>&1
    echo "racecheck rc=$?"; tail -3 "$OUT/racecheck.txt"
    ;;
  perf)
    timeout 150 "$B/bin/genbench" run configs/fa3.yaml -o "$OUT/fa3.h5" --force > "$OUT/fa3.txt" 2>&1
    echo "fa3.yaml rc=$? at ${SECONDS}s"; summary "$OUT/fa3.txt"
    GENBENCH_FA3_PERSISTENT=0 timeout 100 "$B/bin/genbench" run configs/fa3.yaml -o "$OUT/fa3-nonpersistent.h5" --force \
      > "$OUT/fa3-nonpersistent.txt" 2>&1
    echo "fa3.yaml, one CTA per tile, rc=$? at ${SECONDS}s"; summary "$OUT/fa3-nonpersistent.txt"
    for c in 2 3; do
      GENBENCH_FA3_CONSUMERS=$c timeout 100 "$B/bin/genbench" run experiments/configs/fa3_ab.yaml -o "$OUT/fa3-ab-c$c.h5" --force \
        > "$OUT/ab-c$c.txt" 2>&1
      echo "fa3_ab consumers=$c rc=$? at ${SECONDS}s"; summary "$OUT/ab-c$c.txt"
    done
    timeout 200 "$B/bin/genbench" run configs/fa3-tails.yaml -o "$OUT/fa3-tails.h5" --force > "$OUT/tails.txt" 2>&1
    echo "fa3-tails.yaml rc=$? at ${SECONDS}s"; summary "$OUT/tails.txt"
    # torch SDPA on the same GPU, after genbench (PEERS=0 skips it).
    if [ "${PEERS:-1}" = 1 ]; then
      (cd scripts/peers && timeout 200 python3 fa3_torch_sdpa.py > "$OUT/torch-sdpa-gpu0.txt" 2>&1)
      echo "torch SDPA rc=$? at ${SECONDS}s"; cat "$OUT/torch-sdpa-gpu0.txt"
    fi
    ;;
  *) echo "usage: $0 build|tests|perf" >&2; exit 2 ;;
esac
