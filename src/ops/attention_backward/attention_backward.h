#pragma once
// attention_backward: the backward of softmax(Q K^T * scale) V, the training half of attention.
// Inputs Q, K, V, the forward's O and logsumexp (LSE) and the output gradient dO; outputs dQ,
// dK and dV (dK and dV summed over the query heads of a GQA group). Its axes are the forward's
// (src/ops/attention/attention.h, same shapes, masks and layouts; AttentionShape reads them)
// and `deterministic`. FLOPs by the usual convention: 2.5 x the forward's matmul FLOPs (five
// matmuls against the forward's two; causal halved as there).
#include "ops/attention/attention.h"
#include "ops/op.h"

namespace genbench {

namespace attention_backward_axis {
enum : std::size_t {
  // attention_axis::batch .. attention_axis::varlen come first, in the forward's order
  deterministic = attention_axis::count,  // dQ without atomics: the same bits on every run
  count
};
}

// Backward FLOPs of a shape: 2.5 x AttentionShape::flops().
double attention_backward_flops(const AttentionShape& s);
// Bytes one backward must move at least: Q, K, V, O, dO and LSE read, dQ, dK, dV written.
double attention_backward_bytes(const AttentionShape& s);

const Op& attention_backward_op();

}  // namespace genbench
