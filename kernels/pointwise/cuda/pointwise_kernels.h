#pragma once
// The CUDA kernels of pointwise/cuda (ops/pointwise/pointwise.h): 16-byte loads and stores where
// a row's width allows (a multiple of 8 elements; else one element at a time), fp32 math.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "ops/dtype.h"

namespace genbench::pointwise {

// "" when rmsnorm (or `kind`: the norms' backward, same limits) of this row width can run (a row
// is held in registers: up to 32768 elements, 4096 when the width is not a multiple of 8), else why not.
std::string rmsnorm_unsupported(std::int64_t hidden, const char* kind = "rmsnorm");

// y = rmsnorm(x) * w; with residual != nullptr, residual <- x + residual first and y its norm.
void rmsnorm(const void* x, void* residual, const void* w, void* y, std::int64_t rows, std::int64_t hidden, float eps,
             DType t, cudaStream_t stream);
// Q|K rows [rows, width] rotated in place by head of head_dim at the rows' positions (inverse:
// by -angle, rope_backward's dQ|dK).
void rope(void* qk, const std::int32_t* pos, const float* cos, const float* sin, std::int64_t rows, std::int64_t width,
          std::int64_t head_dim, DType t, cudaStream_t stream, bool inverse = false);
// y[r] = silu(x[r, :hidden]) * x[r, hidden:]
void silu_mul(const void* x, void* y, std::int64_t rows, std::int64_t hidden, DType t, cudaStream_t stream);
// y[r] = table[ids[r]]
void embedding(const std::int32_t* ids, const void* table, void* y, std::int64_t rows, std::int64_t hidden, DType t,
               cudaStream_t stream);

// Blocks rmsnorm_backward runs (add: with dr) on this device: as many as fit on it at once, at
// most one a row; its `partial` holds that many rows of hidden floats.
int rmsnorm_backward_blocks(std::int64_t rows, std::int64_t hidden, bool add, DType t);
// dx = w*dy/rms - x*sum(w*dy*x)/(hidden*rms^3) (+ dr unless null), rms of the row of x; dw [hidden]
// (fp32) = the sum over rows of dy*x/rms: each block's rows summed in fp32 into its row of
// `partial` [blocks, hidden], then a second kernel adding the blocks' rows in order (no atomics).
void rmsnorm_backward(const void* x, const void* w, const void* dy, const void* dr, void* dx, float* dw, float* partial,
                      int blocks, std::int64_t rows, std::int64_t hidden, float eps, DType t, cudaStream_t stream);
// dx [rows, 2 x hidden] = [dy*u*sig(g)*(1 + g*(1 - sig(g))) | dy*silu(g)] of x = [g | u], dy [rows, hidden]
void silu_mul_backward(const void* x, const void* dy, void* dx, std::int64_t rows, std::int64_t hidden, DType t,
                       cudaStream_t stream);
// table[ids[r]] += dy[r] in fp32 atomics (ids may repeat); the table [vocab, hidden] is not zeroed here
void embedding_backward(const std::int32_t* ids, const void* dy, float* table, std::int64_t rows, std::int64_t hidden,
                        DType t, cudaStream_t stream);

}  // namespace genbench::pointwise
