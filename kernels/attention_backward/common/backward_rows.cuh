#pragma once
// The two row kernels every fused backward here shares (fa2_sm80, fa3_sm90), templated on the
// element type, the head dim and the kernel's argument struct A, which provides: q-side pointers
// o, dout, lse, dq, dk, dv, cu_q, cu_k; the workspace arrays lse2, dsum (each
// [batch][heads][lpad], lpad a multiple of the query block) and dq_acc (fp32 [rows_q][heads][D],
// or nullptr when dQ is written directly); batch, heads, heads_kv, seqlen_q, lpad, rows_q,
// rows_k, lse_head_stride, varlen, scale.
//   bwd_pre:  D = rowsum(dO o O) and LSE x log2(e) (+inf for a row that sees no key and for
//             padding rows, so P = 0 there) per (sequence, head, padded row); zeroes dQ's
//             accumulator rows of the sequences. Grid (lpad / (256 / (D / 8)), heads, batch), 256
//             threads.
//   bwd_post: dQ = scale x accumulator for the sequences' rows (when dq_acc is set); zeros for the
//             rows of the buffers past the last sequence (dQ; dK, dV with varlen). Any 1-D grid
//             of 256 threads.
// Include only from .cu files.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/fast_math.cuh"

namespace genbench::attention_backward::rows {

// Pre: D = rowsum(dO o O) and LSE x log2(e) per (sequence, head, padded row); zeroes dQ's fp32
// accumulator rows of the sequences (atomic mode).
template <typename T, int D, class A>
__global__ void __launch_bounds__(256) bwd_pre(const A a) {
  constexpr int kChunks = D / 8, kRows = 256 / kChunks;
  const int tid = threadIdx.x, c = tid % kChunks;
  const int i = blockIdx.x * kRows + tid / kChunks, h = blockIdx.y, b = blockIdx.z;
  const int start_q = a.cu_q[b], len_q = a.cu_q[b + 1] - start_q;
  const bool valid = i < len_q;
  float sum = 0.f;
  const long long elem = (static_cast<long long>(start_q + i) * a.heads + h) * D + c * 8;
  if (valid) {
    const uint4 vo = *reinterpret_cast<const uint4*>(static_cast<const T*>(a.o) + elem);
    const uint4 vd = *reinterpret_cast<const uint4*>(static_cast<const T*>(a.dout) + elem);
    const std::uint32_t wo[4] = {vo.x, vo.y, vo.z, vo.w}, wd[4] = {vd.x, vd.y, vd.z, vd.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      float2 fo, fd;
      if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        fo = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&wo[j]));
        fd = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&wd[j]));
      } else {
        fo = __half22float2(*reinterpret_cast<const __half2*>(&wo[j]));
        fd = __half22float2(*reinterpret_cast<const __half2*>(&wd[j]));
      }
      sum = fmaf(fo.x, fd.x, sum);
      sum = fmaf(fo.y, fd.y, sum);
    }
    if (a.dq_acc) {
      float4* z = reinterpret_cast<float4*>(a.dq_acc + elem);
      z[0] = make_float4(0.f, 0.f, 0.f, 0.f);
      z[1] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
  }
#pragma unroll
  for (int off = kChunks / 2; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  if (c == 0) {
    const long long w = (static_cast<long long>(b) * a.heads + h) * a.lpad + i;
    float l2 = __int_as_float(0x7f800000);
    if (valid) {
      const long long li = a.varlen ? static_cast<long long>(h) * a.lse_head_stride + start_q + i
                                    : (static_cast<long long>(b) * a.heads + h) * a.seqlen_q + i;
      const float l = a.lse[li];
      l2 = l == __int_as_float(static_cast<int>(0xff800000u)) ? __int_as_float(0x7f800000) : l * 1.4426950408889634f;
    }
    a.lse2[w] = l2;
    a.dsum[w] = valid ? sum : 0.f;
  }
}

// Post: dQ = scale x accumulator (atomic mode) for the sequences' rows; zeros for the rows of the
// buffers past the last sequence (dQ; dK, dV with varlen).
template <typename T, int D, class A>
__global__ void __launch_bounds__(256) bwd_post(const A a) {
  const long long per_q = static_cast<long long>(a.heads) * D / 8, per_k = static_cast<long long>(a.heads_kv) * D / 8;
  const long long total_q = a.cu_q[a.batch], total_k = a.cu_k[a.batch];
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
  const long long first_q = a.dq_acc ? 0 : total_q * per_q;
  for (long long c = first_q + blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; c < a.rows_q * per_q;
       c += stride) {
    uint4 out = zero;
    if (c < total_q * per_q) {
      const float4* src = reinterpret_cast<const float4*>(a.dq_acc + c * 8);
      const float4 x = src[0], y = src[1];
      out.x = pack2<std::is_same_v<T, __nv_bfloat16>>(x.x * a.scale, x.y * a.scale);
      out.y = pack2<std::is_same_v<T, __nv_bfloat16>>(x.z * a.scale, x.w * a.scale);
      out.z = pack2<std::is_same_v<T, __nv_bfloat16>>(y.x * a.scale, y.y * a.scale);
      out.w = pack2<std::is_same_v<T, __nv_bfloat16>>(y.z * a.scale, y.w * a.scale);
    }
    reinterpret_cast<uint4*>(a.dq)[c] = out;
  }
  for (long long c = total_k * per_k + blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
       c < a.rows_k * per_k; c += stride) {
    reinterpret_cast<uint4*>(a.dk)[c] = zero;
    reinterpret_cast<uint4*>(a.dv)[c] = zero;
  }
}

}  // namespace genbench::attention_backward::rows
