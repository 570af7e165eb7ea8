#pragma once
// attention: forward of softmax(Q K^T * scale) V, optionally causal (bottom-right aligned).
#include <cstdint>

#include "ops/dtype.h"
#include "ops/op.h"

namespace genbench {

// Axis indices of the attention op, in schema order (checked by the compiler, not by name).
namespace attention_axis {
enum : std::size_t {
  batch,     // sequences per batch; with `tokens` > 0, batch = tokens / seqlen_q instead
  tokens,    // total query tokens (FlashAttention benchmark convention); 0 = use batch
  heads,     // query heads; with `hidden` > 0, heads = hidden / head_dim instead
  hidden,    // model width; 0 = use heads
  heads_kv,  // key/value heads (GQA/MQA); 0 = same as heads
  seqlen_q,
  seqlen_k,  // 0 = same as seqlen_q
  head_dim,
  causal,
  dtype,
  scale,     // softmax scale; 0 = 1/sqrt(head_dim)
  mode,      // eager | graph
  count
};
}

struct AttentionShape {
  std::int64_t batch, heads, heads_kv, seqlen_q, seqlen_k, head_dim;
  bool causal;
  DType dtype;
  float scale;
  bool graph;

  static AttentionShape from(const Point& p);
  // Unmasked (query, key) pairs per head: sq*sk, or for causal (bottom-right aligned) the
  // exact count; FLOPs use sq*sk/2 for causal with sq == sk, as FlashAttention reports.
  double flops() const;
};

const Op& attention_op();

}  // namespace genbench
