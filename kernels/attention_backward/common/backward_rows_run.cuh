#pragma once
// The launches of the row kernels (backward_rows.cuh) as the fused backwards enqueue them, on
// `stream`, for the kernel argument struct A (the fields backward_rows.cuh lists). Included by
// the fused backwards' launchers (fa2_bwd_run.cuh, fa3_bwd_run.cuh); include only from .cu files.
#include <cuda_runtime.h>

#include "backend/cuda/check.h"
#include "kernels/attention_backward/common/backward_rows.cuh"

namespace genbench::attention_backward::rows {

// pre over the padded query rows of every (sequence, head); nothing when there are none.
template <typename T, int D, class A>
void launch_pre(const A& a, cudaStream_t stream) {
  const auto u = [](long long x) { return static_cast<unsigned>(x); };
  if (a.lpad > 0) {
    constexpr int kRows = 256 / (D / 8);
    bwd_pre<T, D, A><<<dim3(u(a.lpad / kRows), u(a.heads), u(a.batch)), 256, 0, stream>>>(a);
    GENBENCH_CHECK_LAUNCH();
  }
}

// post over dQ's 16-byte chunks, at most 4096 blocks of 256 threads (its loops stride the grid).
template <typename T, int D, class A>
void launch_post(const A& a, cudaStream_t stream) {
  const long long chunks = a.rows_q * a.heads * (D / 8);
  const long long blocks = chunks / 256 + 1 < 4096 ? chunks / 256 + 1 : 4096;
  bwd_post<T, D, A><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(a);
  GENBENCH_CHECK_LAUNCH();
}

}  // namespace genbench::attention_backward::rows
