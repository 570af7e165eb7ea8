#pragma once
// Softmax statistics of one row spread over a thread block, shared by the row-per-block
// kernels (attention/reference, attention/unfused).
#include <cmath>

namespace genbench {

// Merges a running (max, sum of exp(x - max)) pair with another one.
__device__ inline void merge_max_sum(float& m, float& l, float mo, float lo) {
  const float mn = fmaxf(m, mo);
  l = (mn == -INFINITY) ? 0.f : l * expf(m - mn) + lo * expf(mo - mn);
  m = mn;
}

// Each thread holds (m, l) over its share of the row; on return every thread holds the
// row's max and sum. red_m and red_l are shared arrays of Threads / 32 floats.
template <int Threads>
__device__ inline void block_max_sum(float& m, float& l, float* red_m, float* red_l) {
  static_assert(Threads % 32 == 0, "whole warps");
  for (int off = 16; off > 0; off >>= 1)
    merge_max_sum(m, l, __shfl_xor_sync(0xffffffffu, m, off), __shfl_xor_sync(0xffffffffu, l, off));
  const int tid = static_cast<int>(threadIdx.x);
  if ((tid & 31) == 0) {
    red_m[tid >> 5] = m;
    red_l[tid >> 5] = l;
  }
  __syncthreads();
  m = -INFINITY;
  l = 0.f;
  for (int w = 0; w < Threads / 32; ++w) merge_max_sum(m, l, red_m[w], red_l[w]);
}

}  // namespace genbench
