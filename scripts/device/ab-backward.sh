#!/usr/bin/env bash
# One device call comparing two commits' attention_backward kernels on the same card:
# build-ab/new.tar.gz and build-ab/base.tar.gz (made here with scripts/ab-pack.sh NEW BASE,
# carried as build-ab) are unpacked and built side by side; then the new tree's tests (FILTER),
# ROUNDS rounds (default 2) of the anchors' shapes at SEQS x DS (default 2K, 8K x 64, 128), causal
# and not, with each build in alternating order (IMPLS from each, default fa3;
# cudnn from the new one only). Profiling is scripts/device/profile-backward.sh's. Logs go to $OUT.
set -uo pipefail
. "$(dirname "$0")/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-560}
device_init results/ab-backward
here=$(pwd)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader | tee "$OUT/smi.txt"
for v in new base; do
  rm -rf "/tmp/ab-$v" && mkdir -p "/tmp/ab-$v" && tar -xzf "build-ab/$v.tar.gz" -C "/tmp/ab-$v" && ln -sfn "$here/.deps" "/tmp/ab-$v/.deps"
  cat "/tmp/ab-$v/COMMIT" 2>/dev/null | sed "s/^/$v: /"
done
build() {  # tree targets...
  local t=$1; shift
  cmake -S "/tmp/ab-$t" -B "/tmp/ab-$t/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGENBENCH_CUDA_ARCHITECTURES=90a >/dev/null &&
    cmake --build "/tmp/ab-$t/build" -j 8 --target "$@"
}
step build 300 build.txt bash -c "$(declare -f build); build new genbench genbench_tests > $OUT/build-new.txt 2>&1 & build base genbench > $OUT/build-base.txt 2>&1; wait"
for v in new base; do grep -E " error|FAILED" "$OUT/build-$v.txt" | head -5; [ -x "/tmp/ab-$v/build/bin/genbench" ] || { echo "$v: no genbench"; tail -20 "$OUT/build-$v.txt"; }; done
if [ -n "${FILTER:-}" ]; then
  step tests 150 tests.txt /tmp/ab-new/build/tests/genbench_tests --gtest_filter="$FILTER"
  grep -E "^\[ +(FAILED|PASSED|OK|SKIPPED) |Failure|Expected|Which is" "$OUT/tests.txt" | cut -c1-240 | head -40
fi
mk() {  # name impls
  cat <<YAML
genbench: 1
settings:
  backend: auto
  timing: {warmup: 3, min_iterations: 10, max_iterations: 100, min_time: 0.05, max_time: 1, target_noise: 0.01}
benchmarks:
  - name: ab
    op: attention_backward
    implementations: [$2]
    axes: {hidden: 2048, tokens: 16K, seqlen_q: [${SEQS:-2K, 8K}], head_dim: [${DS:-64, 128}], causal: [false, true], dtype: bf16}
YAML
}
mk ab "${IMPLS:-fa3}, cudnn" >"$OUT/ab-new.yaml"
mk ab "${IMPLS:-fa3}" >"$OUT/ab-base.yaml"
for r in $(seq "${ROUNDS:-2}"); do
  for v in $(round_order "$r" new base); do
    step "round $r $v" 120 "r$r-$v.txt" "/tmp/ab-$v/build/bin/genbench" run "$OUT/ab-$v.yaml" -o "$OUT/r$r-$v.h5" --force
    summary_points "$OUT/r$r-$v.txt" "$(printf 'r%s %-4s ' "$r" "$v")" "fa3|fa2|cudnn"
  done
done
# The tests' verdict again, last, where a tail of this output still shows it.
[ -f "$OUT/tests.txt" ] && grep -E "^\[  (PASSED|FAILED) |^\[  SKIPPED|tests ran" "$OUT/tests.txt" | sed 's/^/tests: /'
echo "== done at $(( $(date +%s) - t0 ))s"
