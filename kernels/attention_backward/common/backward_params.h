#pragma once
// The arguments every CUDA implementation of attention_backward receives: device pointers and
// sizes only, so a kernel folder needs nothing else of the framework.
//
// Layouts (FlashAttention's, as the forward): rows of all sequences packed one after the other;
// sequence b occupies query rows [cu_q[b], cu_q[b + 1]) and key rows [cu_k[b], cu_k[b + 1]).
//   Q, O, dO, dQ   [rows_q, heads, head_dim]      (dtype)
//   K, V, dK, dV   [rows_k, heads_kv, head_dim]   (dtype)
//   LSE            fp32, the forward's natural-log logsumexp of the scaled scores of a row
//                  (scale x q.k over the row's visible keys), -inf for a row that sees no key:
//                  without varlen [batch, heads, seqlen_q]; with varlen [heads, lse_head_stride]
//                  indexed by the packed query row.
// Without varlen cu_q[b] = b x seqlen_q and cu_k[b] = b x seqlen_k. The causal mask is
// bottom-right aligned per sequence: row i sees keys j <= i + len_k - len_q.
// The backward: P = exp(scale S - LSE), dV = P^T dO, dP = dO V^T, D = rowsum(dO o O),
// dS = P o (dP - D), dQ = scale dS K, dK = scale dS^T Q. With GQA (heads = group x heads_kv)
// dK and dV of a key head are summed over the query heads of its group. Key rows no query sees
// get dK = dV = 0; query rows that see no key get dQ = 0. Every element of dQ, dK and dV is
// written.
#include <cstdint>

#include "ops/dtype.h"

namespace genbench::attention_backward {

struct BackwardParams {
  const void *q, *k, *v, *o, *dout;
  const float* lse;
  void *dq, *dk, *dv;
  const int *cu_q, *cu_k;  // cumulative lengths, batch + 1 entries, device memory (always set)
  int batch, heads, heads_kv, head_dim;
  int seqlen_q, seqlen_k;     // the lengths; with varlen their maxima
  long long rows_q, rows_k;   // rows of the buffers (batch x seqlen_q, batch x seqlen_k)
  long long lse_head_stride;  // varlen: LSE's row count per head (= rows_q); else seqlen_q
  bool varlen, causal, deterministic;
  DType dtype;  // fp16 or bf16
  float scale;  // softmax scale (scores are scale x q.k)
};

// LSE's index of packed query row `row` (of sequence b, local row i) and head h.
inline long long lse_index(const BackwardParams& p, int b, int h, long long i, long long row) {
  return p.varlen ? static_cast<long long>(h) * p.lse_head_stride + row
                  : (static_cast<long long>(b) * p.heads + h) * p.seqlen_q + i;
}

}  // namespace genbench::attention_backward
