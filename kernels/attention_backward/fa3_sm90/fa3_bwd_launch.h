#pragma once
// The per-(dtype, head dim) launcher of the fa3 backward: Backward<T, D>::run is defined in
// fa3_bwd_run.cuh and instantiated once per head dim (both dtypes) in fa3_bwd_d*.cu, the only
// files that compile the main kernel; fa3_backward.cu dispatches to them.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace genbench::attention_backward::fa3 {

struct Args;

// TMA maps of Q and dO (64-row boxes) and K and V (128-row boxes), 128-byte swizzle; the fp32 dQ
// accumulator [rows_q][heads][D] for the reductions (boxes of 32 columns x 1 x 64 rows).
struct Maps {
  CUtensorMap q, k, v, dout, dq;
};

template <typename T, int D>
struct Backward {
  // pre, main, post on `stream`.
  static void run(const Args& a, const Maps& m, cudaStream_t stream);
  // The main kernel (for the build's sm_90a check).
  static const void* main_kernel();
};

extern template struct Backward<__half, 64>;
extern template struct Backward<__nv_bfloat16, 64>;
extern template struct Backward<__half, 128>;
extern template struct Backward<__nv_bfloat16, 128>;

}  // namespace genbench::attention_backward::fa3
