#!/usr/bin/env bash
# Same-call A/B of source variants: builds the genbench binary of each variant tree (the working
# tree is "new"; others are copies under .var/NAME with CMakeLists.txt, cmake, src, kernels and
# .deps) concurrently, then runs each config with every binary in turn, ROUNDS times, printing
# one line per point: round, variant, benchmark, point, TFLOP/s.
# Usage: ROUNDS=2 experiments/device/ab-builds.sh "base ovl" CONFIG...
set -uo pipefail
. "$(dirname "$0")/../../scripts/device/common.sh"
cd "$(dirname "$0")/../.."
vars=$1; shift
jobs=$(( $(nproc) / ($(echo $vars | wc -w) + 1) ))
build_tree new . "$jobs" genbench & for v in $vars; do build_tree "$v" ".var/$v" "$jobs" genbench & done; wait
ab_rounds "$vars" "$@"
echo "end ${SECONDS}s"
