#pragma once
// Small device helpers the attention kernels share: exp2 on the special-function unit and
// packing two floats into one 32-bit register of 16-bit values (the layout mma/wgmma take).
// Include only from .cu files.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace genbench {

__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// lo in the low half, hi in the high half; bf16 (kBF16) or fp16, round to nearest.
template <bool kBF16>
__device__ __forceinline__ std::uint32_t pack2(float lo, float hi) {
  if constexpr (kBF16) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const std::uint32_t*>(&v);
  } else {
    const __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const std::uint32_t*>(&v);
  }
}

}  // namespace genbench
