#!/usr/bin/env bash
# Builds the W4A16 device check and the kernel's GPU tests with nvcc alone into .w4/ (sm_90a),
# to carry to the device (scripts/device/w4a16-check.sh and experiments/device/w4a16-*.sh run
# them from there). Usage: scripts/device/w4a16/build-local.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
mkdir -p .w4
SRC="kernels/w4a16/mma_sm80/w4a16_mma.cu kernels/w4a16/common/w4a16_layout.cpp"
NVCC="${NVCC:-/usr/local/cuda/bin/nvcc} -std=c++17 -O3 -lineinfo -gencode=arch=compute_90a,code=sm_90a -I."
$NVCC scripts/device/w4a16/w4a16_check.cu $SRC -lcublasLt -lcublas -o .w4/w4a16_check &
$NVCC tests/kernels/w4a16/w4a16_mma_test.cu $SRC -lgtest -lgtest_main -lpthread -o .w4/w4a16_gtest
wait
git rev-parse --short HEAD > .w4/commit
git diff --quiet HEAD -- kernels scripts tests || echo "+ uncommitted changes" >> .w4/commit
