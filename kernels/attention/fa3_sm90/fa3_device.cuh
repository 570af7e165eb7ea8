#pragma once
// Device helpers shared by the fa3 kernels (16-bit and fp8): exp2 on the special-function
// unit and register fences that keep the compiler from moving accumulator reads across a
// wgmma wait. Include only from .cu files; call only from sm_90a code.
#include <cstdint>

#include "kernels/common/sm90_ptx.cuh"

namespace genbench::fa3 {

#ifdef GENBENCH_SM90A_ENABLED

__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

template <int N>
__device__ __forceinline__ void fence_acc(float (&x)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) sm90::reg_fence(x[i]);
}

template <int N>
__device__ __forceinline__ void fence_frag(std::uint32_t (&x)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) sm90::reg_fence(x[i][j]);
}

#endif  // GENBENCH_SM90A_ENABLED

}  // namespace genbench::fa3
