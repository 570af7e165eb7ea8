# Sourced by the one-call device scripts here and in experiments/device/ (not run on its own).
#   device_init DEFAULT_OUT   repository root as working directory; OUT (the results folder,
#                             created; DEFAULT_OUT unless set), B (the build tree: BUILD or
#                             build-dev), t0 (start time), and what every run here needs:
#                             Open MPI as root, NVLink SHARP off, unbuffered Python.
#   step NAME LIMIT_S LOG cmd...  runs cmd under timeout into $OUT/LOG, printing name, limit and
#                             rc; the limit shrinks to what is left of DEVICE_BUDGET_S (when set,
#                             seconds since device_init) and the step is skipped below 10 s.
#   device_build LIMIT_S TARGET...  configures $B (RelWithDebInfo, sm_90a) and builds TARGETs
#                             (genbench, genbench_tests, genbench_mpi_tests) as the steps
#                             `configure` and `build` (logs configure.txt, build.txt); prints the
#                             build's errors and warnings and exits 1 when a target's binary is
#                             missing afterwards.
device_init() {
  cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
  OUT=${OUT:-$1}
  B=${BUILD:-build-dev}
  mkdir -p "$OUT"
  [ -d .git ] || [ -f .genbench-revision ] || echo "device_init: no .git and no .genbench-revision here:" \
    "result files will say git_revision unknown (scripts/stamp-revision.sh, then carry .genbench-revision)"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
  t0=$(date +%s)
}

step() {
  local name=$1 limit=$2 log=$3; shift 3
  if [ -n "${DEVICE_BUDGET_S:-}" ]; then
    local l=$(( DEVICE_BUDGET_S - ($(date +%s) - t0) ))
    (( l < limit )) && limit=$l
  fi
  if (( limit < 10 )); then echo "== $name: skipped, no time left"; return; fi
  echo "== $name (limit ${limit}s, at $(( $(date +%s) - t0 ))s)"
  timeout "$limit" "$@" >"$OUT/$log" 2>&1
  echo "   rc=$?"
}

device_build() {
  local limit=$1 t bin; shift
  step configure 60 configure.txt cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGENBENCH_CUDA_ARCHITECTURES=90a
  step build "$limit" build.txt cmake --build "$B" -j "${GENBENCH_JOBS:-16}" --target "$@"
  grep -E " error|warning:|FAILED" "$OUT/build.txt" | head -20
  for t in "$@"; do
    case $t in genbench) bin=$B/bin/genbench ;; *) bin=$B/tests/$t ;; esac
    if [ ! -x "$bin" ]; then echo "device_build: $bin was not built"; tail -30 "$OUT/build.txt"; exit 1; fi
  done
}

# summary_points LOG PREFIX IMPLS: one line per point of a genbench run's summary table: PREFIX,
# benchmark, dtype, causal, sq=, d= (and, with IMPLS="fa3|cudnn|...", the implementation), TFLOP/s.
summary_points() {
  local log=$1 prefix=$2 impls=${3:-}
  sed -n '/^Summary/,$p' "$log" | grep TFLOP | sed -E 's/ +/ /g; s/eager ok //' |
    awk -v pre="$prefix" -v impls="$impls" '{ printf "%s%s", pre, $1; for (i = 2; i <= NF; ++i)
      if ($i ~ /^(fp8_e4m3|bf16|fp16|causal)$|^(sq|d)=/ || (impls != "" && $i ~ ("^(" impls ")$"))) printf " %s", $i
      printf " %s\n", $(NF-1) }'
}

# round_order R ITEM...: the items one per line, reversed when round R is even (the GPU's state
# after the previous run moved a 3-warmup point by ~1%: docs/lab/fa3-v10-v12.md, fa3 v12).
round_order() {
  local r=$1; shift
  if (( r % 2 == 0 )); then printf '%s\n' "$@" | tac; else printf '%s\n' "$@"; fi
}

# ab_rounds VARIANTS CONFIG...: each config with build-new and every build-VARIANT, ROUNDS times,
# in round_order.
ab_rounds() {
  local vars=$1 r cfg v; shift
  for r in $(seq "${ROUNDS:-2}"); do
    for cfg in "$@"; do
      for v in $(round_order "$r" new $vars); do
        timeout 200 "build-$v/bin/genbench" run "$cfg" -o /tmp/ab.h5 --force > /tmp/ab.txt 2>&1 || echo "$v $cfg rc=$?"
        summary_points /tmp/ab.txt "$(printf 'r%s %-5s ' "$r" "$v")"
      done
    done
  done
}

build_tree() {
  local name=$1 src=$2 jobs=$3; shift 3
  local tests=OFF log="${OUT:-/tmp}/build-$name.txt" rc
  [[ " $* " == *" genbench_tests "* ]] && tests=ON
  { cmake -S "$src" -B "build-$name" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGENBENCH_CUDA_ARCHITECTURES=90a \
      -DGENBENCH_BUILD_TESTS=$tests && cmake --build "build-$name" -j "$jobs" --target "$@"; } > "$log" 2>&1
  rc=$?
  echo "build $name rc=$rc at ${SECONDS}s"; grep -E " error|warning" "$log" | head -3
  return $rc
}
