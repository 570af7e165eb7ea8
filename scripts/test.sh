#!/usr/bin/env bash
# Sets up, builds and runs every test (unit, multi-rank, end to end, analysis). GPU tests
# skip themselves where there is no GPU. Ends with ctest's summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
cd build
exec ctest --output-on-failure --timeout 900 -j "${GENBENCH_TEST_JOBS:-1}"
