#pragma once
// Thin wrappers around the sm_80+ PTX that the mma.sync kernels share (decode/fa3_sm90,
// w4a16/mma_sm80): cp.async into shared memory and the m16n8k16 tensor-core product. The
// Hopper-only instructions are in sm90_ptx.cuh. Include only from .cu files.
//
// mma.sync m16n8k16 register layouts (lane l, g = l / 4, t = l % 4; low half = lower k):
//   A (row-major 16 x 16): a0 = A[g][2t..2t+1], a1 = A[g+8][2t..], a2 = A[g][2t+8..], a3 = A[g+8][2t+8..]
//   B (16 x 8, "col"):     b0 = B[2t..2t+1][g], b1 = B[2t+8..2t+9][g]
//   D (fp32 16 x 8):       d0, d1 = D[g][2t, 2t+1], d2, d3 = D[g+8][2t, 2t+1]
#include <cstdint>

namespace genbench::sm80 {

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte asynchronous copy to shared address `dst`; when !valid the destination is zero-filled
// and nothing is read.
__device__ __forceinline__ void cp_async16(std::uint32_t dst, const void* src, bool valid) {
  const int n = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(n));
}
// 16 or 4 bytes when `pred`, else nothing: a predicated instruction, no branch.
__device__ __forceinline__ void cp_async16_if(bool pred, std::uint32_t dst, const void* src) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %0, 0;\n @p cp.async.cg.shared.global [%1], [%2], 16;\n}\n" ::"r"(
                   static_cast<int>(pred)),
               "r"(dst), "l"(src));
}
__device__ __forceinline__ void cp_async4_if(bool pred, std::uint32_t dst, const void* src) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %0, 0;\n @p cp.async.ca.shared.global [%1], [%2], 4;\n}\n" ::"r"(
                   static_cast<int>(pred)),
               "r"(dst), "l"(src));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// d += a * b, fp32 accumulators, bf16 or fp16 operands.
template <bool BF16>
__device__ __forceinline__ void mma16816(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                         std::uint32_t b1) {
  if constexpr (BF16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

}  // namespace genbench::sm80
