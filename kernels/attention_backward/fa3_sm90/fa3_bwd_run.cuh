#pragma once
// Backward<T, D>::run: the launches of the fa3 backward for one dtype and head dim, in stream
// order. Included only by the fa3_bwd_d*.cu files, which instantiate it.
#include "backend/cuda/check.h"
#include "kernels/attention_backward/common/backward_rows_run.cuh"
#include "kernels/attention_backward/fa3_sm90/fa3_bwd_kernel.cuh"
#include "kernels/attention_backward/fa3_sm90/fa3_bwd_launch.h"

// Other architectures' passes compile the main kernel without its body (sm90_ptx.cuh).
#ifndef GENBENCH_SM90A_ENABLED
#pragma nv_diag_suppress 177
#endif

namespace genbench::attention_backward::fa3 {

template <typename T, int D>
const void* Backward<T, D>::main_kernel() {
  return reinterpret_cast<const void*>(bwd_main<T, D>);
}

template <typename T, int D>
void Backward<T, D>::run(const Args& a, const Maps& m, cudaStream_t stream) {
  static const bool once = [] {
    GENBENCH_CHECK_CUDA(
        cudaFuncSetAttribute(bwd_main<T, D>, cudaFuncAttributeMaxDynamicSharedMemorySize, Layout<D>::kBytes));
    return true;
  }();
  (void)once;
  const auto u = [](long long x) { return static_cast<unsigned>(x); };
  rows::launch_pre<T, D>(a, stream);
  if (a.seqlen_k > 0) {
    bwd_main<T, D><<<dim3(u((a.seqlen_k + kBlockN - 1) / kBlockN), u(a.heads_kv), u(a.batch)), kThreads,
                     Layout<D>::kBytes, stream>>>(m.q, m.k, m.v, m.dout, m.dq, a);
    GENBENCH_CHECK_LAUNCH();
  }
  rows::launch_post<T, D>(a, stream);
}

}  // namespace genbench::attention_backward::fa3
