#pragma once
// Device-side input fills for every CUDA implementation: the same counter-based normal(0, 1) stream as
// ops/fill.h (splitmix64 + Box-Muller), rounded to the element type on the GPU, so large
// operands need no host generation or transfer.
#include <cuda_runtime.h>

#include <cstdint>

#include "ops/dtype.h"

namespace genbench {

// out[i] = round_to(t, scale * random_normal(seed, i)) for i < n, stored as type t
// (tf32: fp32 storage holding tf32-representable values; int8: round to nearest, clamped).
void fill_normal_device(void* out, std::int64_t n, std::uint64_t seed, DType t, float scale, cudaStream_t stream);

}  // namespace genbench
