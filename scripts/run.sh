#!/usr/bin/env bash
# Sets up, builds and runs the main job: configs/smoke.yaml on every GPU of this machine
# (one rank per GPU), or on the host backend with 2 ranks where there is no GPU.
# Usage: scripts/run.sh [CONFIG] [OUTPUT] ; extra genbench arguments via GENBENCH_ARGS.
set -euo pipefail
cd "$(dirname "$0")/.."
config=${1:-configs/smoke.yaml}
output=${2:-results/$(basename "${config%.yaml}").h5}
scripts/install-deps.sh
scripts/build.sh build
mkdir -p "$(dirname "$output")"
exec launch/genbench-local run "$config" -o "$output" --force ${GENBENCH_ARGS:-}
