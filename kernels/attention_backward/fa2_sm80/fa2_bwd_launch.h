#pragma once
// The kernels' arguments and the per-(dtype, head dim) launcher: Backward<T, D>::run is defined
// in fa2_bwd_run.cuh and instantiated once per dtype and head dim in fa2_bwd_d*_*.cu, the
// only files that compile the kernels; fa2_backward.cu dispatches to them.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace genbench::attention_backward::fa2 {

struct Args {
  const void *q, *k, *v, *o, *dout;
  const float* lse;
  void *dq, *dk, *dv;
  const int *cu_q, *cu_k;
  // Workspace: LSE x log2(e) (+inf for rows that see no key and padding rows) and D, both
  // [batch][heads][lpad]; the fp32 dQ accumulator [rows_q][heads][head_dim], or nullptr in
  // deterministic mode (dQ by the dQ kernel).
  float *lse2, *dsum, *dq_acc;
  int batch, heads, heads_kv, group, seqlen_q, seqlen_k;
  int lpad;  // seqlen_q rounded up to whole query blocks (kQueryBlock)
  long long rows_q, rows_k, lse_head_stride;
  bool varlen, causal;
  float scale, scale_log2;
};

template <typename T, int D>
struct Backward {
  static void run(const Args& a, cudaStream_t stream);
};

extern template struct Backward<__half, 64>;
extern template struct Backward<__nv_bfloat16, 64>;
extern template struct Backward<__half, 128>;
extern template struct Backward<__nv_bfloat16, 128>;
extern template struct Backward<__half, 256>;
extern template struct Backward<__nv_bfloat16, 256>;

}  // namespace genbench::attention_backward::fa2
