#pragma once
// The CUDA kernels of pointwise/cuda (ops/pointwise/pointwise.h): 16-byte loads and stores where
// a row's width allows (a multiple of 8 elements; else one element at a time), fp32 math.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "ops/dtype.h"

namespace genbench::pointwise {

// "" when rmsnorm of this row width can run (a row is held in registers: up to 32768 elements,
// 4096 when the width is not a multiple of 8), else why not.
std::string rmsnorm_unsupported(std::int64_t hidden);

// y = rmsnorm(x) * w; with residual != nullptr, residual <- x + residual first and y its norm.
void rmsnorm(const void* x, void* residual, const void* w, void* y, std::int64_t rows, std::int64_t hidden, float eps,
             DType t, cudaStream_t stream);
// Q|K rows [rows, width] rotated in place by head of head_dim at the rows' positions.
void rope(void* qk, const std::int32_t* pos, const float* cos, const float* sin, std::int64_t rows, std::int64_t width,
          std::int64_t head_dim, DType t, cudaStream_t stream);
// y[r] = silu(x[r, :hidden]) * x[r, hidden:]
void silu_mul(const void* x, void* y, std::int64_t rows, std::int64_t hidden, DType t, cudaStream_t stream);
// y[r] = table[ids[r]]
void embedding(const std::int32_t* ids, const void* table, void* y, std::int64_t rows, std::int64_t hidden, DType t,
               cudaStream_t stream);

}  // namespace genbench::pointwise
