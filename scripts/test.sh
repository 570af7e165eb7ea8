#!/usr/bin/env bash
# Sets up, builds and runs every test (unit, multi-rank, end to end, analysis, Slurm). GPU tests
# skip themselves where there is no GPU. Ends with ctest's summary line.
#
# One build, build-test/, serves every test: its host C++ is compiled by clang with
# AddressSanitizer + UBSan (and the config fuzzer with libFuzzer), its CUDA translation units by
# nvcc with g++ as the host compiler (not sanitized), for GENBENCH_TEST_CUDA_ARCHS (default 90a,
# the kernels' Hopper paths; "80;90a;100a" compiles all three as a release does). Warnings are
# errors in both (cmake/GenbenchWarnings.cmake). Where clang or its sanitizer runtimes are
# missing, it builds with the default compiler and no sanitizers and says so.
#   GENBENCH_JOBS        parallel compile jobs (default: the core count)
#   GENBENCH_TEST_JOBS   parallel tests (default: the core count + 1; most tests wait on
#                        the processes they start, the two Slurm tests on a job's time limit)
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS
scripts/install-deps.sh
t_deps=$SECONDS
build=build-test
args=(-DGENBENCH_WARNINGS_AS_ERRORS=ON -DGENBENCH_CUDA_ARCHITECTURES="${GENBENCH_TEST_CUDA_ARCHS:-90a}")
probe=$(mktemp)
if command -v clang++ >/dev/null &&
   echo 'int main() { return 0; }' | clang++ -x c++ -fsanitize=address,undefined - -o "$probe" 2>/dev/null; then
  args+=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CUDA_HOST_COMPILER=g++ -DGENBENCH_SANITIZE=ON)
else
  echo "test.sh: no clang++ with sanitizer runtimes; building without ASan + UBSan" >&2
fi
rm -f "$probe"
scripts/build.sh "$build" "${args[@]}"
t_build=$SECONDS
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
cd "$build"
# ctest's own last line gives the tests' time
echo "test.sh: packages $((t_deps - t0)) s, configure and build $((t_build - t_deps)) s"
exec ctest --output-on-failure --timeout 900 -j "${GENBENCH_TEST_JOBS:-$(($(nproc) + 1))}"
