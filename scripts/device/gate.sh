#!/usr/bin/env bash
# One device call (one GPU, e.g. an nvidia-h200) for the GPU regression gate: build genbench for
# sm_90a, run every gated table of docs/standings.yaml (its config with its run_args, e.g.
# --rounds 3) into $OUT/gate/<output>, then `genbench_analysis gate`, which fails naming every
# point whose new median ratio fell more than TOLERANCE (default 0.03) below the committed
# rounds' lowest ratio in docs/standings.json, and every point the new run lacks. Exits with the
# gate's status (1: a point fell or is missing; 2: the spec or the committed file is unusable;
# 3: the build failed). Results go to $OUT (default results/device-gate): build.txt, gate/*.h5
# and the run logs gate/*.txt, gate.txt (the gate's report).
#   TESTS=FILTER      also build genbench_tests and run this gtest filter first (tests.txt)
#   ONLY="a.h5 b.h5"  only these runs of the plan, and the gate of their tables only
#   DEVICE_BUDGET_S   seconds the whole call may take: each run's limit shrinks to what is left
#   RUN_LIMIT_S       the most one run may take (default 300)
set -uo pipefail   # no -e: a run that fails is reported and the others go on
. "$(dirname "$0")/common.sh"
device_init results/device-gate
OUT=$(cd "$OUT" && pwd)
SPEC=${SPEC:-docs/standings.yaml}
TOLERANCE=${TOLERANCE:-0.03}
PYTHON=${PYTHON:-python3}   # a Python with h5py, pandas and PyYAML
export PYTHONPATH=analysis
mkdir -p "$OUT/gate"
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv,noheader || true
echo "== build"
targets=(genbench)
[ -n "${TESTS:-}" ] && targets+=(genbench_tests)
if ! { cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGENBENCH_CUDA_ARCHITECTURES=90a &&
       cmake --build "$B" -j "$(nproc)" --target "${targets[@]}"; } > "$OUT/build.txt" 2>&1; then
  tail -20 "$OUT/build.txt"
  echo "gate: the build failed"
  exit 3
fi
tail -1 "$OUT/build.txt"
echo "   built at $(( $(date +%s) - t0 ))s"
if [ -n "${TESTS:-}" ]; then
  step "tests $TESTS" 300 tests.txt "$B/tests/genbench_tests" --gtest_filter="$TESTS"
  grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED) +\]|Failure" "$OUT/tests.txt" | tail -30
fi
# One line per run: output, config, run arguments (tab-separated).
plan=$("$PYTHON" -m genbench_analysis gate "$SPEC" --plan)
while IFS=$'\t' read -r -a run; do
  [ -n "${run[0]:-}" ] || continue
  output=${run[0]} config=${run[1]}
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $output "* ]]; then echo "== $output: not in ONLY"; continue; fi
  # A run that fails leaves its points missing, which the gate reports; go on with the others.
  step "$output: $config ${run[*]:2}" "${RUN_LIMIT_S:-300}" "gate/${output%.h5}.txt" \
    "$B/bin/genbench" run "$config" "${run[@]:2}" -o "$OUT/gate/$output" --force -q
  grep -E "error|refused|failed" "$OUT/gate/${output%.h5}.txt" | head -5
done <<< "$plan"
echo "== gate (tolerance $TOLERANCE)"

only=()
[ -n "${ONLY:-}" ] && only=(--outputs "$(echo $ONLY | tr ' ' ',')")
"$PYTHON" -m genbench_analysis gate "$SPEC" --new "$OUT/gate" --tolerance "$TOLERANCE" "${only[@]}" | tee "$OUT/gate.txt"
rc=${PIPESTATUS[0]}

echo "== done at $(( $(date +%s) - t0 ))s, gate rc=$rc"
exit "$rc"
