#pragma once
// Backward<T, D>::run: the launches of the fa2 backward kernels for one dtype and head dim, in
// stream order. Included only by the fa2_bwd_d*_*.cu files, which instantiate it.
#include <cstddef>

#include "backend/cuda/check.h"
#include "kernels/attention_backward/common/backward_rows_run.cuh"
#include "kernels/attention_backward/fa2_sm80/fa2_bwd_kernel.cuh"

namespace genbench::attention_backward::fa2 {

namespace detail {

template <typename K>
void raise_smem(K kernel, std::size_t bytes) {
  if (bytes > 48 * 1024)
    GENBENCH_CHECK_CUDA(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
}

}  // namespace detail

template <typename T, int D>
void Backward<T, D>::run(const Args& a, cudaStream_t stream) {
  constexpr BwdTile tile = *bwd_tile(D);
  constexpr int BC = tile.bc, BR = tile.br, W = tile.warps, WD = tile.wd;
  constexpr int BM = tile.dq_bm, BN = tile.dq_bn, WQ = tile.dq_warps;
  constexpr std::size_t kMainSmem = main_smem_bytes(tile), kDqSmem = dq_smem_bytes(tile);
  static const bool once = [] {
    detail::raise_smem(detail::bwd_main<T, D, BC, BR, W, WD>, kMainSmem);
    detail::raise_smem(detail::bwd_dq<T, D, BM, BN, WQ>, kDqSmem);
    return true;
  }();
  (void)once;
  const auto u = [](long long x) { return static_cast<unsigned>(x); };
  rows::launch_pre<T, D>(a, stream);
  if (a.seqlen_k > 0) {
    detail::bwd_main<T, D, BC, BR, W, WD>
        <<<dim3(u((a.seqlen_k + BC - 1) / BC), u(a.heads_kv), u(a.batch)), W * 32, kMainSmem, stream>>>(a);
    GENBENCH_CHECK_LAUNCH();
  }
  if (!a.dq_acc && a.seqlen_q > 0) {
    detail::bwd_dq<T, D, BM, BN, WQ>
        <<<dim3(u((a.seqlen_q + BM - 1) / BM), u(a.heads), u(a.batch)), WQ * 32, kDqSmem, stream>>>(a);
    GENBENCH_CHECK_LAUNCH();
  }
  if (a.dq_acc || a.varlen) rows::launch_post<T, D>(a, stream);
}

}  // namespace genbench::attention_backward::fa2
