#!/usr/bin/env bash
# Sets up, builds and runs every test (unit, multi-rank, end to end, analysis). GPU tests
# skip themselves where there is no GPU. Ends with ctest's summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# Warnings are errors here (CI runs this script): -Werror on every C++ translation unit, nvcc's
# -Werror=all-warnings on every CUDA one (cmake/GenbenchWarnings.cmake).
scripts/build.sh build -DGENBENCH_WARNINGS_AS_ERRORS=ON
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
# The unit and multi-rank tests, and 60 s of config fuzzing, under AddressSanitizer + UBSan
# (clang, host code only, build-asan/). GENBENCH_SKIP_ASAN=1 skips this stage.
if [ "${GENBENCH_SKIP_ASAN:-0}" != 1 ]; then
  asan_probe=$(mktemp)
  if command -v clang++ >/dev/null &&
     echo 'int main() { return 0; }' | clang++ -x c++ -fsanitize=address,undefined - -o "$asan_probe" 2>/dev/null; then
    cmake --preset asan >/dev/null
    cmake --build --preset asan -j "${GENBENCH_JOBS:-$(nproc)}"
    (cd build-asan && ctest --output-on-failure --timeout 900 -j "${GENBENCH_TEST_JOBS:-1}" -E '^(e2e|analysis|reliability|slurm)[.]')
  else
    echo "test.sh: no clang++ with sanitizer runtimes; skipping the ASan + UBSan stage" >&2
  fi
  rm -f "$asan_probe"
fi
cd build
exec ctest --output-on-failure --timeout 900 -j "${GENBENCH_TEST_JOBS:-1}"
