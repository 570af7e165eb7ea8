#!/usr/bin/env bash
# Same-call A/B of source variants: builds the genbench binary of each variant tree (the working
# tree is "new"; others are copies under .var/NAME with CMakeLists.txt, cmake, src, kernels and
# .deps) concurrently, then runs each config with every binary in turn, ROUNDS times, printing
# one line per point: variant, point, TFLOP/s.
# Usage: ROUNDS=2 scripts/device/ab-builds.sh "base ovl" CONFIG...
set -uo pipefail
. "$(dirname "$0")/common.sh"
cd "$(dirname "$0")/../.."
vars=$1; shift
jobs=$(( $(nproc) / ($(echo $vars | wc -w) + 1) ))
build() {  # name srcdir
  cmake -S "$2" -B "build-$1" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGENBENCH_CUDA_ARCHITECTURES=90a \
    -DGENBENCH_BUILD_TESTS=OFF > "/tmp/build-$1.txt" 2>&1 && cmake --build "build-$1" -j "$jobs" --target genbench >> "/tmp/build-$1.txt" 2>&1
  echo "build $1 rc=$? at ${SECONDS}s"; grep -E " error" "/tmp/build-$1.txt" | head -3
}
build new . & for v in $vars; do build "$v" ".var/$v" & done; wait
ab_rounds "$vars" "$@"
echo "end ${SECONDS}s"
