#!/usr/bin/env bash
# Configure and build genbench. Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
# GENBENCH_CUDA_ARCHS narrows the CUDA architectures (e.g. 90a) for development builds.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
args=(-S . -B "$build" -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-RelWithDebInfo})
command -v ninja >/dev/null && args+=(-G Ninja)
[ -n "${GENBENCH_CUDA_ARCHS:-}" ] && args+=(-DGENBENCH_CUDA_ARCHITECTURES="${GENBENCH_CUDA_ARCHS}")
cmake "${args[@]}" "$@"
cmake --build "$build" -j "${GENBENCH_JOBS:-$(nproc)}"
