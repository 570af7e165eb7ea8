#pragma once
// CPU emulation of kernels/common/fast_math.cuh: exp2 in float, 16-bit packing.
#include <cmath>
#include <cstdint>
#include <cstring>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace genbench {
inline float ex2(float x) { return std::exp2(x); }
template <bool kBF16>
inline std::uint32_t pack2(float lo, float hi) {
  std::uint16_t a, b;
  if constexpr (kBF16) {
    const __nv_bfloat16 x = __float2bfloat16_rn(lo), y = __float2bfloat16_rn(hi);
    std::memcpy(&a, &x, 2);
    std::memcpy(&b, &y, 2);
  } else {
    const __half x = __float2half_rn(lo), y = __float2half_rn(hi);
    std::memcpy(&a, &x, 2);
    std::memcpy(&b, &y, 2);
  }
  return static_cast<std::uint32_t>(a) | (static_cast<std::uint32_t>(b) << 16);
}
}  // namespace genbench
