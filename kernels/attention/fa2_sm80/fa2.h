#pragma once
// fa2: a fused FlashAttention-2-style forward for sm80 and later (mma.sync m16n8k16,
// ldmatrix, cp.async double buffering). One thread block computes BM query rows of one
// (sequence, head); key/value tiles of BN rows stream through shared memory while an online
// softmax (in exp2, the scale folded in) keeps running row maxima and sums in registers.
#include <cuda_runtime.h>

#include <cstdint>

namespace genbench::fa2 {

struct Params {
  const void* q;  // [rows_q, heads, D]
  const void* k;  // [rows_k, heads_kv, D]
  const void* v;
  void* o;          // [rows_q, heads, D]
  float* lse;       // [batch, heads, seqlen_q], or varlen [heads, lse_head_stride]
  const int* cu_q;  // varlen: cumulative lengths (batch + 1), read on the device; else nullptr
  const int* cu_k;
  int batch, heads, heads_kv, group;      // group = heads / heads_kv
  int seqlen_q, seqlen_k;                 // lengths (varlen: the maxima, which size the grid)
  long long q_row_stride, kv_row_stride;  // elements between consecutive rows (heads * D ...)
  long long lse_head_stride;              // varlen only
  float scale;                            // softmax scale
  float scale_log2;                       // scale * log2(e)
};

// One kernel instantiation: element type, head dim, tile rows (BM queries, BN keys), warps,
// causal. Defined in fa2_kernel.cuh, instantiated deliberately in fa2_d*_*.cu.
template <typename T, int D, int BM, int BN, int W, bool Causal>
struct Kernel {
  static void setup();  // raises the dynamic shared-memory limit (once per process)
  static void launch(const Params& p, cudaStream_t stream);
  static constexpr int kSmemBytes = (BM + 4 * BN) * D * 2;
};

}  // namespace genbench::fa2
